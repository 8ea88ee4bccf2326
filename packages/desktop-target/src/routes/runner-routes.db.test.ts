import { useTestDatabase } from "@openwork/test-postgres";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "../testing/runner-gateway.js";

// The routes as a Hono app, answered in process (`routes.fetch`, `app.request`): the router's
// edges — unknown paths, HEAD, ids that cannot name a task, an unexpected error — and the app
// mounted in a host's own Hono app.
const db = useTestDatabase();
let gateway: RunnerGateway;
let failMember = false;
const alice = { organizationId: "org_routes", memberId: "mem_routes_alice" };

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url, {
    dialects: ["desktop-runner", "openwork"],
    authenticateMember: async (request) => {
      if (failMember) throw new Error("member lookup down: secret-detail");
      const [kind, organizationId, memberId] = (request.headers.get("authorization") ?? "").replace(/^Bearer /, "").split(":");
      return kind === "member" && organizationId && memberId ? { organizationId, memberId } : null;
    },
  });
});
afterAll(async () => {
  await gateway.close();
});

const at = (path: string, init?: RequestInit) => new Request(`${gateway.serverUrl}${path}`, init);

describe("runner routes in process", () => {
  it("answers an unknown path of our prefix with the typed 404, before any authentication", async () => {
    for (const [method, path] of [
      ["GET", "/v1/desktop-runner"],
      ["GET", "/v1/desktop-runner/"],
      ["GET", "/v1/desktop-runner/nope"],
      ["POST", "/v1/desktop-runner/work"],
      ["GET", "/v1/desktop-runner/token"],
      ["POST", "/v1/desktop-runner/tasks/rst_short/claim"],
      ["POST", `/v1/desktop-runner/tasks/rst_${"a".repeat(27)}/claim`],
      ["POST", `/v1/desktop-runner/tasks/task_${"a".repeat(26)}/claim`],
      ["PATCH", "/v1/desktop-runner/runners/short"],
    ] as const) {
      const response = await gateway.routes.fetch(at(path, { method }));
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.json()).toEqual({ error: "not_found", message: "no such route" });
      expect(response.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("answers an unknown path of OpenWork's families with its JSON 404, under each base path", async () => {
    for (const path of ["/v1/automation-runs", "/v1/automation-runners/nope", "/api/den/v1/session-runners/x/y", "/api/den/v1/remote-session-requests"]) {
      const response = await gateway.routes.fetch(at(path, { method: "DELETE" }));
      expect(response.status, path).toBe(404);
      expect(await response.json()).toEqual({ error: "not_found" });
    }
  });

  it("leaves every other path to the host: handle is null, fetch the typed 404", async () => {
    for (const path of ["/", "/v1/desktop-runnerx", "/api/den/v1/other", "/v1/automation-runs-x"]) {
      expect(await gateway.routes.handle(at(path)), path).toBeNull();
      const response = await gateway.routes.fetch(at(path));
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: "not_found", message: "no such route" });
    }
  });

  it("serves no HEAD: a runner's stream is never opened for one", async () => {
    const token = await gateway.registerRunner(alice, "routes-runner-0001");
    const ours = await gateway.routes.fetch(at("/v1/desktop-runner/events", { method: "HEAD", headers: { authorization: `Bearer ${token}` } }));
    // A HEAD answer has no body: the status says it.
    expect(ours.status).toBe(404);
    const theirs = await gateway.routes.fetch(at("/v1/automation-runners/events", { method: "HEAD", headers: { authorization: `Bearer ${token}` } }));
    expect(theirs.status).toBe(404);
    expect(gateway.hub.runnerStreamCount({ ...alice, runnerId: "routes-runner-0001" })).toBe(0);
  });

  it("answers an unexpected error with a 500 and a reference id its one log line carries, never the error's text", async () => {
    failMember = true;
    try {
      const lines = gateway.logger.lines.length;
      const ours = await gateway.routes.fetch(
        at("/v1/desktop-runner/token", { method: "POST", headers: { authorization: "Bearer member:org:mem" }, body: "{}" }),
      );
      expect(ours.status).toBe(500);
      const body = (await ours.json()) as { error: string; message: string; referenceId: string };
      expect(body).toEqual({ error: "internal_error", message: "the gateway could not answer; retry", referenceId: expect.any(String) });
      const theirs = await gateway.routes.fetch(at("/api/den/v1/automation-runners/presence", { headers: { authorization: "Bearer member:org:mem" } }));
      expect(theirs.status).toBe(500);
      const their = (await theirs.json()) as { error: string; referenceId: string };
      expect(their).toEqual({ error: "internal_error", referenceId: expect.any(String) });
      const logged = gateway.logger.lines.slice(lines);
      expect(logged).toHaveLength(2);
      expect(logged[0]).toContain("desktop runner: request failed");
      expect(logged[0]).toContain(body.referenceId);
      expect(logged[1]).toContain("desktop runner: OpenWork request failed");
      expect(logged[1]).toContain(their.referenceId);
      expect(logged.join("\n")).not.toContain("secret-detail");
    } finally {
      failMember = false;
    }
  });

  it("mounts in a host's Hono app with app.route(): the same answers, the host's own 404 elsewhere", async () => {
    const host = new Hono();
    host.get("/health", (c) => c.text("ok"));
    host.route("/", gateway.routes.app);
    host.notFound((c) => c.text("host 404", 404));
    const presence = await host.request(`${gateway.serverUrl}/v1/desktop-runner/presence`, {
      headers: { authorization: `Bearer ${gateway.memberToken(alice)}` },
    });
    expect(presence.status).toBe(200);
    expect(await presence.json()).toMatchObject({ connected: expect.any(Boolean), desktops: expect.any(Array) });
    const unauthorized = await host.request(`${gateway.serverUrl}/v1/desktop-runner/work`);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("www-authenticate")).toBe('Bearer realm="desktop-runner"');
    const unknown = await host.request(`${gateway.serverUrl}/v1/desktop-runner/nope`);
    expect(await unknown.json()).toEqual({ error: "not_found", message: "no such route" });
    const theirs = await host.request(`${gateway.serverUrl}/api/den/v1/automation-runs/arun_1/claim`, { method: "POST", body: "{}" });
    expect(theirs.status).toBe(401);
    expect(await theirs.json()).toEqual({ error: "runner_unauthorized" });
    expect(await (await host.request(`${gateway.serverUrl}/health`)).text()).toBe("ok");
    expect(await (await host.request(`${gateway.serverUrl}/elsewhere`)).text()).toBe("host 404");
  });
});
