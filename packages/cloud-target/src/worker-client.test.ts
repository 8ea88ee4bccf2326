import { SessionFailure } from "@openwork/remote-session-core";
import { expect, it } from "vitest";
import { createWorkerClient } from "./worker-client.js";

const answering = (status: number, body: unknown) =>
  createWorkerClient({ workerId: "w1", url: "http://worker.test", clientToken: "c" }, { fetch: async () => Response.json(body, { status }) });
const errorOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error : error);

it("maps the worker's refusals to what the caller can act on", async () => {
  // A refused credential: not a missing session, and a person knows what to do.
  expect(await answering(401, { code: "unauthorized", message: "Invalid bearer token" }).workspaces().catch(errorOf)).toMatchObject({
    error: "cloud_runtime_failed",
    action: expect.stringContaining("Reconnect OpenWork Cloud"),
  });
  expect(await answering(404, { code: "workspace_not_found", message: "Workspace not found" }).status("ws_x").catch(errorOf)).toMatchObject({ error: "unknown_workspace" });
  expect(await answering(404, { name: "NotFoundError", data: { message: "Session not found: ses_x" } }).messages("ws_1", "ses_x").catch(errorOf)).toMatchObject({
    error: "unknown_session",
  });
  expect(await answering(500, { code: "internal_error", message: "engine down" }).status("ws_1").catch(errorOf)).toMatchObject({ error: "cloud_runtime_unreachable", retryable: true });
});
