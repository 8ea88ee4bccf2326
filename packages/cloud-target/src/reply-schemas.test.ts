import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { ResolveResponseSchema } from "./http-worker-resolver.js";
import { MessagesSchema, OpencodeSessionSchema, PermissionRequestsSchema, QuestionRequestsSchema } from "@openwork/opencode-client";
import { EventMessageSchema, EventPartSchema, EventSchema, EventStatusSchema, OpencodeErrorSchema, StatusMapSchema } from "@openwork/opencode-client/internal";
import { OpenworkErrorSchema, WorkspacesSchema } from "./openwork-schemas.js";

/** The same value with an unknown member added to every object, at every depth. */
function withUnknownEverywhere(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withUnknownEverywhere);
  if (value === null || typeof value !== "object") return value;
  const copy = Object.fromEntries(Object.entries(value).map(([key, member]) => [key, withUnknownEverywhere(member)]));
  return { ...copy, addedByANewerPeer: { nested: [1, { deeper: true }] } };
}

// Replies as openwork-server, opencode and den-api's resolver answer them (shapes seen on the real peers).
const replies: [string, z.ZodType, unknown][] = [
  [
    "GET /workspaces",
    WorkspacesSchema,
    {
      items: [{ id: "ws_f49f3034aa5d", name: "w", path: "/p", opencode: { baseUrl: "http://x", directory: "/p" } }],
      workspaces: [],
      activeId: "ws_f49f3034aa5d",
    },
  ],
  ["POST session", OpencodeSessionSchema, { id: "ses_1", slug: "s", title: "t", tokens: { input: 0, cache: { read: 0 } }, time: { created: 1, updated: 1 } }],
  [
    "GET session/:id/message",
    MessagesSchema,
    [
      {
        info: { id: "msg_1", sessionID: "ses_1", role: "user", time: { created: 1 }, model: { providerID: "p", modelID: "m" } },
        parts: [{ id: "prt_1", type: "text", text: "hi" }],
      },
      {
        info: {
          id: "msg_2",
          role: "assistant",
          parentID: "msg_1",
          time: { created: 2, completed: 3 },
          finish: "stop",
          path: { cwd: "/", root: "/" },
          error: { name: "MessageAbortedError", data: { message: "Aborted" } },
        },
        parts: [
          { id: "prt_2", type: "step-start" },
          {
            id: "prt_3",
            type: "tool",
            tool: "bash",
            callID: "c1",
            state: { status: "error", error: "refused", input: { command: "x" }, time: { start: 1, end: 2 } },
          },
        ],
      },
    ],
  ],
  ["GET session/status", StatusMapSchema, { ses_1: { type: "retry", attempt: 2, message: "down", next: 5 } }],
  [
    "GET permission",
    PermissionRequestsSchema,
    [
      {
        id: "per_1",
        sessionID: "ses_1",
        permission: "bash",
        patterns: ["x"],
        metadata: { command: "x" },
        always: ["x *"],
        tool: { messageID: "msg_2", callID: "c1" },
      },
    ],
  ],
  [
    "GET question",
    QuestionRequestsSchema,
    [
      {
        id: "que_1",
        sessionID: "ses_1",
        questions: [{ question: "q", header: "h", options: [{ label: "a", description: "d" }], multiple: false }],
        tool: { messageID: "msg_2", callID: "c1" },
      },
    ],
  ],
  ["opencode error", OpencodeErrorSchema, { name: "NotFoundError", data: { message: "Session not found: ses_1", kind: "x" } }],
  ["openwork error", OpenworkErrorSchema, { code: "session_not_found", message: "m", details: { status: 404, body: { name: "NotFoundError" } } }],
  [
    "event",
    EventSchema,
    { id: "evt_1", type: "message.part.delta", properties: { sessionID: "ses_1", messageID: "msg_2", partID: "prt_3", field: "text", delta: "x" } },
  ],
  ["session.status status", EventStatusSchema, { type: "retry", attempt: 1, message: "down", next: 5, action: { kind: "x" } }],
  [
    "message.updated info",
    EventMessageSchema,
    { id: "msg_2", role: "assistant", time: { created: 2, completed: 3 }, error: { name: "E" }, tokens: { cache: { read: 0 } } },
  ],
  ["message.part.updated part", EventPartSchema, { id: "prt_3", messageID: "msg_2", type: "text", text: "", time: { start: 1 } }],
  [
    "GET /v1/cloud/gateway/resolve",
    ResolveResponseSchema,
    {
      status: "waking",
      url: null,
      clientToken: null,
      hostToken: null,
      expiresAt: null,
      failure: { code: "stopped", stage: "runtime", reference: "r", occurredAt: "t" },
      providerSync: { status: "degraded", reason: "unsupported" },
    },
  ],
];

describe("reply schemas", () => {
  it.each(replies)("parse %s with unknown members at every depth", (_name, schema, reply) => {
    expect(schema.safeParse(reply).success).toBe(true);
    const extended = schema.safeParse(withUnknownEverywhere(reply));
    expect(extended.error?.issues ?? []).toEqual([]);
  });

  it("reads the status map entry by entry: one it cannot read does not hide the others", () => {
    expect(StatusMapSchema.parse({ ses_1: { type: "busy" }, ses_2: "odd", ses_3: { kind: "new" } })).toEqual({ ses_1: { type: "busy" } });
  });
});
