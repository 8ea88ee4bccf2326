import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { createRunnerClient } from "@openwork/runner-protocol/client";
import { openWakeStream, type WakeEvent } from "@openwork/runner-protocol/internal";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { expect, it } from "vitest";
import { startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();

it("resumes a dropped wake stream after Last-Event-ID without missing a hint", async () => {
  // A proxy in front of the gateway, so the test can cut the stream mid-flow as a network would.
  let upstream = "";
  const proxy = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const forwarded = await fetch(`${upstream}${request.url}`, {
      method: request.method,
      headers: Object.fromEntries(Object.entries(request.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)) as [string, string][]),
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    response.writeHead(forwarded.status, Object.fromEntries(forwarded.headers));
    Readable.fromWeb(forwarded.body as never)
      .on("error", () => response.destroy())
      .pipe(response);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  // Tokens are bound to the URL the runner uses: the gateway's public URL is the proxy's.
  const gateway = await startRunnerGateway(db.current.url, { baseUrl: proxyUrl });
  upstream = gateway.serverUrl;
  try {
    const member = { organizationId: "org_resume", memberId: "mem_resume" };
    const client = createRunnerClient({ baseUrl: proxyUrl, token: await gateway.registerRunner(member, "runner-resume-01") });
    const events: WakeEvent[] = [];
    let opens = 0;
    const stream = openWakeStream({
      client,
      // The hints only: each opening also says whether work waits (protocol 5).
      onEvent: (event) => {
        if (event.type === "remote_session_work_available") events.push(event);
      },
      onOpen: () => opens++,
      backoff: { baseMs: 600, maxMs: 600, random: () => 0.5 },
    });
    await eventually(() => (opens === 1 ? true : undefined));
    await gateway.sessions.create(gateway.call(member), { title: "one" });
    await eventually(() => (events.length === 1 ? true : undefined));

    // Cut the stream; while the runner is away, two more tasks are enqueued.
    proxy.closeAllConnections();
    await gateway.sessions.create(gateway.call(member), { title: "two" });
    await gateway.sessions.create(gateway.call(member), { title: "three" });
    await eventually(() => (opens === 2 && events.length === 3 ? true : undefined), 5_000);
    const cursors = events.map((e) => (e.type === "remote_session_work_available" ? Number(e.cursor) : 0));
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(new Set(cursors).size).toBe(3);
    expect(Number(stream.lastEventId)).toBe(cursors[2]);
    stream.close();
    await stream.closed;
  } finally {
    proxy.closeAllConnections();
    proxy.close();
    await gateway.close();
  }
});
