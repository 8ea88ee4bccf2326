type Payload = Record<string, any>;
type Execute = (name: string, body: Record<string, unknown>) => Promise<{ isError?: boolean; structuredContent: unknown }>;

/** `execute_capability` calls as one caller (`execute`): one that must succeed, and a read until `done` holds. */
export function sessionCalls(execute: Execute) {
  const ok = async (name: string, body: Record<string, unknown>): Promise<Payload> => {
    const result = await execute(name, body);
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
    return result.structuredContent as Payload;
  };
  /** Reads the session (waiting 2 s at a time, from the end) until `done` holds of a read; that read. */
  const readUntil = async (sessionId: string, done: (read: Payload) => boolean, timeoutMs = 60_000): Promise<Payload> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const read = await ok("remote-session:read", { sessionId, waitMs: 2_000, from: "end" });
      if (done(read)) return read;
      if (Date.now() > deadline) throw new Error(`session ${sessionId} stayed ${read.state}: ${JSON.stringify(read).slice(0, 800)}`);
    }
  };
  return { ok, readUntil };
}
