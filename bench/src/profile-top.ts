// Summarizes a .cpuprofile: self time by function and by where its code lives (a package under
// node_modules, a workspace package, node's own code), the largest first.
// Usage: tsx src/profile-top.ts FILE.cpuprofile [N]
import { readFile } from "node:fs/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, count = "30"] = process.argv.slice(2);
if (!file) throw new Error("usage: profile-top.ts FILE.cpuprofile [N]");
const profile = JSON.parse(await readFile(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** Where a frame's code lives: the npm package, the workspace package, node's internals, or V8. */
function placeOf(url: string): string {
  const npm = url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/);
  if (npm) return npm[1]!;
  const workspace = url.match(/\/(packages|apps)\/([^/]+)\//);
  if (workspace) return `${workspace[1]}/${workspace[2]}`;
  if (url.startsWith("node:")) return "node";
  return url ? url : "(native / gc / idle)";
}

const functions = new Map<string, number>();
const places = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const place = placeOf(url);
  const key = `${functionName || "(anonymous)"} ${place}:${lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
  places.set(place, (places.get(place) ?? 0) + us);
}
const top = (map: Map<string, number>, n: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`)
    .join("\n");
console.log(`total ${(total / 1000).toFixed(0)} ms sampled\n\nby place:\n${top(places, 25)}\n\nby function (self):\n${top(functions, Number(count))}`);
