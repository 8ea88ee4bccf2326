import { type MemberScope, SessionFailure } from "@openwork/remote-session-core";
import type { InventoryRequest } from "@openwork/runner-protocol";
import { createRunnerClient, type RunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openworkMintRequest } from "./testing/openwork-desktop-bridge.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

// What a desktop has — workspaces, engines, models — reported over both dialects' inventory
// routes, shown by `targets`, and used by create: placed by workspace, checked for engine and
// model before anything is written.
const db = useTestDatabase();
let gateway: RunnerGateway;
let members = 0;

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url, { dialects: ["desktop-runner", "openwork"] });
});
afterAll(async () => {
  await gateway.close();
});

const newMember = (): MemberScope => ({ organizationId: `org_inv_${++members}_${Date.now()}`, memberId: `mem_inv_${members}` });
const codeOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error : error);
const CAPABILITIES = ["session_create_v1", "session_followup_v1", "model_variant_v1"];
const sonnet = { providerId: "anthropic", modelId: "claude-sonnet", name: "Claude Sonnet" };
const gpt = { providerId: "openai", modelId: "gpt-5" };

const repo = (overrides: Partial<InventoryRequest["workspaces"][number]> = {}) => ({
  workspaceId: "ws_repo",
  name: "repo",
  active: true,
  engine: "opencode",
  models: [sonnet],
  ...overrides,
});

/** A desktop of ours that registered and reported `workspaces`. */
async function desktop(member: MemberScope, runnerId: string, workspaces: InventoryRequest["workspaces"], capabilities = CAPABILITIES): Promise<RunnerClient> {
  const token = await gateway.registerRunner(member, runnerId, { name: `Desktop ${runnerId}`, capabilities });
  const client = createRunnerClient({ baseUrl: gateway.baseUrl, token });
  await client.putInventory({ workspaces });
  return client;
}

/** An OpenWork desktop of the member, minted through OpenWork's own route: its runner token. */
async function openworkDesktop(member: MemberScope, runnerId: string, capabilities: string[]): Promise<string> {
  const mint = openworkMintRequest(runnerId, capabilities);
  const headers = { authorization: `Bearer ${gateway.memberToken(member)}`, "content-type": "application/json" };
  const minted = await gateway.request("/v1/automation-runners/token", { method: "POST", headers, body: JSON.stringify(mint) });
  return ((await minted.json()) as { token: string }).token;
}

const seen = (runnerId: string, interval: string, disconnected = false) =>
  gateway.sql`update desktop_runner set last_seen_at = now() - ${interval}::interval,
    disconnected_at = ${disconnected ? gateway.sql`now()` : null} where runner_id = ${runnerId}`;

/** What the member's create left behind: its tasks and session rows. */
async function written(member: MemberScope) {
  const [tasks] = await gateway.sql<{ n: number }[]>`select count(*)::int as n from desktop_task where organization_id = ${member.organizationId}`;
  const [sessions] = await gateway.sql<{ n: number }[]>`select count(*)::int as n from remote_session where organization_id = ${member.organizationId}`;
  return { tasks: tasks!.n, sessions: sessions!.n };
}

const machinesOf = async (member: MemberScope) =>
  ((await gateway.target.availability(gateway.call(member))).fields as { machines: Record<string, unknown>[] }).machines;

describe("inventory reports", () => {
  it("are stored per desktop from our protocol's route and shown by targets; a request with an unknown field is refused", async () => {
    const member = newMember();
    const client = await desktop(member, "inv-ours-0001", [
      repo({ defaultModel: { providerId: "anthropic", modelId: "claude-sonnet" } }),
      repo({ workspaceId: "ws_docs", name: "docs", active: false, engine: "echo", models: [] }),
    ]);
    const [machine] = await machinesOf(member);
    expect(machine).toMatchObject({
      computerId: "inv-ours-0001",
      online: true,
      workspaces: [
        { workspaceId: "ws_repo", name: "repo", active: true, engine: "opencode", defaultModel: { providerId: "anthropic", modelId: "claude-sonnet" } },
        { workspaceId: "ws_docs", name: "docs", active: false, engine: "echo", defaultModel: null },
      ],
      engines: ["opencode", "echo"],
      models: [sonnet],
      inventoryUpdatedAt: expect.any(String),
    });
    // The latest report replaces the one before.
    await client.putInventory({ workspaces: [repo({ name: "renamed" })] });
    expect((await machinesOf(member))[0]).toMatchObject({ workspaces: [{ workspaceId: "ws_repo", name: "renamed" }] });

    const strict = await gateway.request("/v1/desktop-runner/inventory", {
      method: "PUT",
      headers: { authorization: await client.authorization(), "content-type": "application/json" },
      body: JSON.stringify({ workspaces: [{ ...repo(), path: "/home/me/repo" }] }),
    });
    expect([strict.status, ((await strict.json()) as { error: string }).error]).toEqual([400, "invalid_request"]);
    expect((await machinesOf(member))[0]).toMatchObject({ workspaces: [{ name: "renamed" }] });
  });

  it("from an OpenWork desktop (its route and body) are shown by targets the same way; a desktop that never reported shows null", async () => {
    const member = newMember();
    await gateway.registerRunner(member, "inv-silent-0001");
    const token = await openworkDesktop(member, "inv-openwork-0001", ["remote_session_v1"]);
    const put = await gateway.request("/v1/session-runners/inventory", {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        computer: { label: "Work Laptop", platform: "darwin", appVersion: "0.19.0" },
        workspaces: [{ workspaceId: "ws_ow", name: "site", active: true, engine: "v2", defaultModel: null, models: [{ ...gpt, name: "GPT-5" }] }],
      }),
    });
    expect(await put.json()).toEqual({ ok: true, updatedAt: expect.any(Number) });
    const machines = await machinesOf(member);
    expect(machines.find((m) => m.computerId === "inv-openwork-0001")).toMatchObject({
      label: "Work Laptop",
      workspaces: [{ workspaceId: "ws_ow", name: "site", active: true, engine: "v2", defaultModel: null }],
      engines: ["v2"],
      models: [{ ...gpt, name: "GPT-5" }],
    });
    expect(machines.find((m) => m.computerId === "inv-silent-0001")).toMatchObject({ workspaces: null, engines: null, models: null });

    // Placed by its workspace's name, the OpenWork desktop's command names the workspace to create in.
    const created = await gateway.sessions.create(gateway.call(member), { title: "on the laptop", workspace: "site", model: gpt });
    expect(created.fields).toMatchObject({ runner: { runnerId: "inv-openwork-0001" } });
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const work = (await (await gateway.request("/v1/session-runners/work", { headers: auth })).json()) as { items: { commandId: string }[] };
    const claim = await gateway.request(`/v1/remote-session-commands/${work.items[0]!.commandId}/claim`, { method: "POST", headers: auth, body: "{}" });
    expect(await claim.json()).toMatchObject({ assignment: { workspaceId: "ws_ow", model: { providerId: "openai", modelId: "gpt-5" } } });
  });
});

describe("create by workspace", () => {
  it("goes to the online desktop that has it, before a more recently seen one that is offline; with every holder offline, to the most recently seen", async () => {
    const member = newMember();
    const call = gateway.call(member);
    await desktop(member, "inv-other-0001", [repo({ workspaceId: "ws_other", name: "other" })]);
    await desktop(member, "inv-older-0001", [repo()]);
    await desktop(member, "inv-newer-0001", [repo()]);
    await seen("inv-older-0001", "2 minutes");
    // Seen a moment ago, but its wake stream closed since: offline.
    await seen("inv-newer-0001", "1 second", true);
    const created = await gateway.sessions.create(call, { title: "by name", workspace: "repo" });
    expect(created.fields).toMatchObject({ runner: { runnerId: "inv-older-0001" } });
    const [task] = await gateway.sql<{ pinned_runner_id: string; workspace_id: string }[]>`
      select pinned_runner_id, workspace_id from desktop_task where session_id = ${created.sessionId}`;
    expect(task).toEqual({ pinned_runner_id: "inv-older-0001", workspace_id: "ws_repo" });

    await seen("inv-older-0001", "20 minutes");
    await seen("inv-newer-0001", "15 minutes");
    // Offline everywhere: store-and-forward waits for the most recently seen holder; without it, that one is named.
    const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
    const waiting = await gateway.sessions.create(call, { title: "later", workspace: "ws_repo", deliverBy });
    expect(waiting.fields).toMatchObject({ runner: { runnerId: "inv-newer-0001" } });
    const offline = await gateway.sessions.create(call, { title: "now", workspace: "repo" }).catch(codeOf);
    expect(offline).toMatchObject({ error: "computer_offline", message: expect.stringContaining("Desktop inv-newer-0001") });
  });

  it("refuses an unknown workspace listing each desktop's workspaces, and writes nothing", async () => {
    const member = newMember();
    await desktop(member, "inv-mac-0001", [repo(), repo({ workspaceId: "ws_site", name: "site", active: false })]);
    await gateway.registerRunner(member, "inv-unreported-01");
    const refused = await gateway.sessions.create(gateway.call(member), { title: "t", prompt: "p", workspace: "nope" }).catch(codeOf);
    expect(refused).toMatchObject({
      error: "unknown_workspace",
      retryable: false,
      context: {
        target: "desktop",
        computers: expect.arrayContaining([
          {
            computerId: "inv-mac-0001",
            name: "Desktop inv-mac-0001",
            online: true,
            workspaces: [
              { workspaceId: "ws_repo", name: "repo", engine: "opencode" },
              { workspaceId: "ws_site", name: "site", engine: "opencode" },
            ],
          },
          expect.objectContaining({ computerId: "inv-unreported-01", workspaces: null }),
        ]),
      },
    });
    // Pinned to a desktop that lacks it: that desktop's workspaces.
    const pinned = await gateway.sessions.create(gateway.call(member), { title: "t", runner: "inv-mac-0001", workspace: "docs" }).catch(codeOf);
    expect(pinned).toMatchObject({ error: "unknown_workspace", context: { computers: [expect.objectContaining({ computerId: "inv-mac-0001" })] } });
    expect(await written(member)).toEqual({ tasks: 0, sessions: 0 });
  });

  it("keeps a workspaceId as given for desktops that never reported what they have", async () => {
    const member = newMember();
    await gateway.registerRunner(member, "inv-legacy-0001");
    const created = await gateway.sessions.create(gateway.call(member), { title: "t", workspaceId: "ws_unreported" });
    const [task] = await gateway.sql<{ workspace_id: string }[]>`select workspace_id from desktop_task where session_id = ${created.sessionId}`;
    expect(task?.workspace_id).toBe("ws_unreported");
  });
});

describe("engine and model against the chosen desktop's inventory", () => {
  it("refuses a model that desktop did not report, listing its models, and writes nothing", async () => {
    const member = newMember();
    await desktop(member, "inv-models-0001", [repo()]);
    const refused = await gateway.sessions.create(gateway.call(member), { title: "t", prompt: "p", model: gpt }).catch(codeOf);
    expect(refused).toMatchObject({
      error: "model_unavailable",
      message: expect.stringContaining("openai/gpt-5"),
      context: { target: "desktop", computerId: "inv-models-0001", models: [sonnet] },
    });
    expect(await written(member)).toEqual({ tasks: 0, sessions: 0 });
    const accepted = await gateway.sessions.create(gateway.call(member), { title: "t", model: { providerId: "anthropic", modelId: "claude-sonnet" } });
    expect(accepted.state).toBe("queued");
  });

  it("runs in the workspace using the engine asked for, and refuses an engine the desktop lacks, listing its workspaces with their engines", async () => {
    const member = newMember();
    await desktop(member, "inv-engines-01", [repo(), repo({ workspaceId: "ws_notes", name: "notes", active: false, engine: "echo", models: [] })]);
    const created = await gateway.sessions.create(gateway.call(member), { title: "t", engine: "echo" });
    const [task] = await gateway.sql<{ workspace_id: string }[]>`select workspace_id from desktop_task where session_id = ${created.sessionId}`;
    expect(task?.workspace_id).toBe("ws_notes");
    const before = await written(member);
    const refused = await gateway.sessions.create(gateway.call(member), { title: "t", engine: "claude-code" }).catch(codeOf);
    expect(refused).toMatchObject({
      error: "unknown_engine",
      retryable: false,
      context: { computers: [{ computerId: "inv-engines-01", workspaces: [{ engine: "opencode" }, { engine: "echo" }] }] },
    });
    const mismatch = await gateway.sessions.create(gateway.call(member), { title: "t", workspace: "repo", engine: "echo" }).catch(codeOf);
    expect(mismatch).toMatchObject({ error: "unknown_engine" });
    expect(await written(member)).toEqual(before);
  });
});

describe("worktree", () => {
  it("is never offered to a runner without worktree_v1 (ours or OpenWork's); the one with it gets worktree: true", async () => {
    const member = newMember();
    const call = gateway.call(member);
    const plain = await desktop(member, "inv-plain-0001", [repo()]);
    const pinned = await gateway.sessions.create(call, { title: "t", runner: "inv-plain-0001", worktree: true }).catch(codeOf);
    expect(pinned).toMatchObject({ error: "desktop_update_required" });
    const unpinned = await gateway.sessions.create(call, { title: "t", worktree: true }).catch(codeOf);
    expect(unpinned).toMatchObject({ error: "desktop_offline", message: expect.stringContaining("cannot run") });
    expect(await written(member)).toEqual({ tasks: 0, sessions: 0 });

    // Store-and-forward, unpinned: it waits for a runner able to take it.
    const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
    const queued = await gateway.sessions.create(call, { title: "t", worktree: true, deliverBy });
    expect(queued.state).toBe("queued");
    expect((await plain.work()).items).toEqual([]);
    expect(await plain.claimNext()).toBeNull();
    const token = await openworkDesktop(member, "inv-openwork-wt-01", ["remote_session_v1", "remote_session_control_v1"]);
    const openworkWork = await gateway.request("/v1/automation-runner/work", { headers: { authorization: `Bearer ${token}` } });
    expect(await openworkWork.json()).toEqual({ items: [] });

    const able = await desktop(member, "inv-worktree-01", [repo()], [...CAPABILITIES, "worktree_v1"]);
    const assignment = await able.claimNext();
    expect(assignment).toMatchObject({ kind: "remote_session.create", sessionId: queued.sessionId, worktree: true });
  });
});
