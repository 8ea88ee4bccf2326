import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";

/**
 * Starts a CPU profile of this process (200 µs sampling) and returns what stops it and writes it
 * to a `.cpuprofile` file (open it in Chrome's DevTools, or summarize it with `profile-top.ts`).
 */
export async function startProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return async (file) => {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
  };
}
