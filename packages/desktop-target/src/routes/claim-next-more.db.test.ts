import { createRunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterEach, describe, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "../testing/runner-gateway.js";

// A claim-next says whether more of the kinds asked still waits, so a runner with a free slot
// asks again only when that finds something: one request less per turn.
const db = useTestDatabase();
const open: RunnerGateway[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((gateway) => gateway.close()));
});

describe("claim-next's more", () => {
  it("is true while another task of the kinds asked waits for this runner, false for the last one and when none is claimed", async () => {
    const gateway = await startRunnerGateway(db.current.url);
    open.push(gateway);
    const member = { organizationId: "org_more", memberId: `mem_more_${Date.now()}` };
    const client = createRunnerClient({ baseUrl: gateway.serverUrl, token: await gateway.registerRunner(member, "runner-more-1") });
    for (const title of ["one", "two"]) await gateway.sessions.create(gateway.call(member), { title, prompt: `do ${title}` });
    const first = await client.claimNextReply(["remote_session.create"]);
    expect(first).toMatchObject({ assignment: { kind: "remote_session.create", title: "one" }, more: true });
    // Asked only for answers: none waits, whatever turns do.
    expect(await client.claimNextReply(["remote_session.respond"])).toEqual({ assignment: null, more: false });
    const second = await client.claimNextReply(["remote_session.create"]);
    expect(second).toMatchObject({ assignment: { title: "two" }, more: false });
    expect(await client.claimNextReply()).toEqual({ assignment: null, more: false });
  });
});
