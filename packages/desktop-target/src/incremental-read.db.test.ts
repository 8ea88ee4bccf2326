import { createSessionLedger, type LedgerSession, type ReadResult } from "@openwork/remote-session-core";
import { createRunnerClient, type Runner, runRunner } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadSessionTasks } from "./store/load-session-tasks.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
let gateway: RunnerGateway;
let runner: Runner;
const member = { organizationId: "org_incremental", memberId: "mem_incremental" };

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: await gateway.registerRunner(member, "runner-incremental") });
  // Each turn: its user marker, a tool call before any text (it joins m1), m1, and m2 left open until the end.
  const turn =
    (localSessionId: string) =>
    async (_: unknown, { emit }: { emit: (e: never) => void }) => {
      emit({ type: "session.bound", payload: { localSessionId } } as never);
      emit({ type: "tool.call", payload: { callId: "c1", name: "bash", status: "completed" } } as never);
      emit({ type: "assistant.delta", payload: { messageId: "m1", text: "thinking " } } as never);
      emit({ type: "assistant.final", payload: { messageId: "m1", text: "first part" } } as never);
      emit({ type: "assistant.delta", payload: { messageId: "m2", text: "the answer" } } as never);
      return { status: "done" as const, localSessionId };
    };
  runner = runRunner({
    client,
    pollIntervalMs: 600_000,
    backoff: { baseMs: 20, maxMs: 100, random: () => 0.5 },
    handlers: { "remote_session.create": turn("ses_incremental"), "remote_session.send": (a, tools) => turn(a.localSessionId)(a, tools) },
  });
});
afterAll(async () => {
  await runner.stop();
  await gateway.close();
});

const find = (id: string) => createSessionLedger(gateway.sql).find(gateway.call(member), id) as Promise<LedgerSession>;
const decoded = (cursor: string) => JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { p: number; f?: number; a?: string };
const withAnchor = (cursor: string, anchor: string | undefined) => {
  const { a: _, ...rest } = decoded(cursor);
  return Buffer.from(JSON.stringify(anchor === undefined ? rest : { ...rest, a: anchor })).toString("base64url");
};
/** A read result without its cursor's anchor: what a reader can see. */
const seen = (read: ReadResult) => ({ ...read, cursor: withAnchor(read.cursor, undefined) });

it("reads only the turns from the cursor's on, and gives exactly what reading every turn gives", async () => {
  const created = await gateway.sessions.create(gateway.call(member), { title: "long", prompt: "turn 0" });
  const idle = async () => {
    let read: ReadResult;
    do read = await gateway.sessions.read(gateway.call(member), await find(created.sessionId), { limit: 100, waitMs: 2_000 });
    while (read.state !== "idle");
    return read;
  };
  await idle();
  for (let i = 1; i < 6; i++) {
    await gateway.sessions.send(gateway.call(member), await find(created.sessionId), { prompt: `turn ${i}` });
    await idle();
  }
  const all = await gateway.sessions.read(gateway.call(member), await find(created.sessionId), { limit: 100, waitMs: 0 });
  expect(all.messages).toHaveLength(6 * 3);

  for (const limit of [1, 3, 7]) {
    let anchored: string | undefined;
    let plain: string | undefined;
    const pages: ReadResult[] = [];
    for (;;) {
      const page = await gateway.sessions.read(gateway.call(member), await find(created.sessionId), {
        limit,
        waitMs: 0,
        ...(anchored ? { cursor: anchored } : {}),
      });
      // The same cursor without its anchor loads every turn: the two reads must not differ.
      const full = await gateway.sessions.read(gateway.call(member), await find(created.sessionId), { limit, waitMs: 0, ...(plain ? { cursor: plain } : {}) });
      expect(seen(page)).toEqual(seen(full));
      pages.push(page);
      anchored = page.cursor;
      plain = withAnchor(full.cursor, undefined);
      if (!page.hasMore) break;
    }
    expect(pages.flatMap((p) => p.messages)).toEqual(all.messages);
    expect(pages.filter((p) => p.finalAssistantText !== undefined)).toHaveLength(1);
  }

  // At the end, the cursor names the last turn: the next read loads that one turn alone.
  const turns = await gateway.sql<{ id: string }[]>`
    select id from desktop_task where session_id = ${created.sessionId} order by created_at, id`;
  const anchor = decoded(all.cursor).a!;
  expect(anchor).toBe(`${5 * 3}:${turns.at(-1)!.id}`);
  expect((await loadSessionTasks(gateway.sql, { organizationId: member.organizationId, id: created.sessionId }, turns.at(-1)!.id)).map((t) => t.id)).toEqual([
    turns.at(-1)!.id,
  ]);
  expect(await loadSessionTasks(gateway.sql, { organizationId: member.organizationId, id: created.sessionId }, "dt_not_this_sessions")).toHaveLength(6);
});

it("ignores an anchor that would skip messages, and one naming another session's turn", async () => {
  const one = await gateway.sessions.create(gateway.call(member), { title: "one", prompt: "p" });
  const two = await gateway.sessions.create(gateway.call(member), { title: "two", prompt: "p" });
  let read: ReadResult;
  do read = await gateway.sessions.read(gateway.call(member), await find(two.sessionId), { limit: 100, waitMs: 2_000 });
  while (read.state !== "idle");
  const start = await gateway.sessions.read(gateway.call(member), await find(two.sessionId), { limit: 1, waitMs: 0 });
  const [otherTurn] = await gateway.sql<{ id: string }[]>`select id from desktop_task where session_id = ${one.sessionId}`;
  const truth = await gateway.sessions.read(gateway.call(member), await find(two.sessionId), {
    limit: 100,
    waitMs: 0,
    cursor: withAnchor(start.cursor, undefined),
  });
  for (const forged of ["3:whatever", `0:${otherTurn!.id}`, "not an anchor"]) {
    const got = await gateway.sessions.read(gateway.call(member), await find(two.sessionId), {
      limit: 100,
      waitMs: 0,
      cursor: withAnchor(start.cursor, forged),
    });
    expect(seen(got)).toEqual(seen(truth));
  }
});
