import { BODY_TOO_LARGE_HEADERS, BodyTooLarge, readBodyWithin } from "@openwork/remote-session-core/internal";
import { InvalidNotification, TooManyChannels } from "@openwork/session-notify";
import { type NotifyChannelInput, NotifyChannelPatchSchema } from "@openwork/session-notify/internal";
import { Hono } from "hono";
import type { NotifyParts } from "./notifications.js";

/**
 * Who the notifications of a request are for: the organization and the user that owns the
 * sessions. Channels are keyed by that user id, because the state-change trigger addresses each
 * event to the session's owner (`remote_session.user_id`).
 */
export interface NotifyRecipient {
  organizationId: string;
  userId: string;
}

// A channel is a few hundred bytes of JSON; anything far larger is a mistake or an attack.
const MAX_BODY_BYTES = 16_384;
/** Channels one member may keep: each event fans out to every one of them. */
export const MAX_CHANNELS_PER_MEMBER = 20;

/** A typed refusal: `error` a stable code, never a 500 for what the caller sent. */
const refuse = (status: 400 | 401 | 404 | 409 | 413, error: string, message: string, extra: Record<string, unknown> = {}) =>
  Response.json(
    { error, message, retryable: false, ...extra },
    { status, headers: status === 401 ? { "www-authenticate": 'Bearer realm="member"' } : status === 413 ? BODY_TOO_LARGE_HEADERS : {} },
  );

class BadBody extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** The body as JSON, at most MAX_BODY_BYTES; refuses what is not a JSON object. */
async function readObject(request: Request): Promise<Record<string, unknown>> {
  const bytes = await readBodyWithin(request, MAX_BODY_BYTES).catch((error: unknown) => {
    throw error instanceof BodyTooLarge ? new BadBody(413, error.message) : error;
  });
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new BadBody(400, "the request body is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new BadBody(400, "the request body must be a JSON object");
  return value as Record<string, unknown>;
}

/**
 * The member's notification channels: `GET /member/notify/channels`, `POST` (create; a secret, for
 * a kind that keeps one, is in this answer only), `PATCH /:id` (enabled, eventKinds, allowText),
 * `DELETE /:id`, and `GET /member/notify/kinds` (the kinds a member may create here, with what
 * each takes). What a kind takes is its notifier's: these routes name no kind.
 * Authenticated by the member's session token (`authenticate`), never an MCP token: the model
 * cannot reach these routes, so an agent can never redirect where its member is told things.
 * Another member's channel answers exactly as one that does not exist.
 */
export function memberNotifyRoutes(options: {
  notifications: Pick<NotifyParts, "channels" | "unavailable">;
  authenticate: (request: Request) => Promise<NotifyRecipient | null>;
  /** The answer to an error nobody expected (the gateway's typed 500, its referenceId logged). */
  unexpected: (request: Request, error: unknown) => Response;
}) {
  const { channels, unavailable } = options.notifications;
  const app = new Hono<{ Variables: { recipient: NotifyRecipient } }>();
  const noSuchChannel = () => refuse(404, "not_found", "no such notification channel");
  app.onError((error, c) => {
    if (error instanceof BadBody) return refuse(error.status, error.status === 413 ? "payload_too_large" : "invalid_request", error.message);
    if (error instanceof InvalidNotification) return refuse(400, "invalid_channel", error.message, { issues: error.issues });
    if (error instanceof TooManyChannels) return refuse(409, "too_many_channels", error.message);
    return options.unexpected(c.req.raw, error);
  });
  app.use("*", async (c, next) => {
    const recipient = await options.authenticate(c.req.raw);
    if (!recipient) return refuse(401, "unauthorized", "sign in with your member session token (an MCP token is not accepted here)");
    c.set("recipient", recipient);
    await next();
  });

  app.get("/kinds", (c) => c.json({ kinds: channels.kinds() }));

  app.get("/channels", async (c) => {
    const { organizationId, userId } = c.get("recipient");
    return c.json({ channels: await channels.list(organizationId, userId) });
  });

  app.post("/channels", async (c) => {
    const { organizationId, userId } = c.get("recipient");
    const body = await readObject(c.req.raw);
    if ("memberId" in body) return refuse(400, "invalid_channel", "memberId is not yours to set: a channel belongs to whoever creates it");
    // A kind the host knows but is not set up to send to: the operator's to mend, not the member's input.
    const missing = typeof body.kind === "string" ? unavailable.get(body.kind) : undefined;
    if (missing) return refuse(400, "channel_kind_unavailable", missing);
    // The cap is checked with the insert, under the member's lock: concurrent creates cannot pass it together.
    const { channel, secret } = await channels.create(organizationId, { ...body, memberId: userId } as NotifyChannelInput, {
      maxPerMember: MAX_CHANNELS_PER_MEMBER,
    });
    // A secret (a webhook's signing secret) is never read back: this answer is the only place it appears.
    return c.json({ channel, ...(secret ? { secret } : {}) }, 201);
  });

  app.patch("/channels/:id", async (c) => {
    const { organizationId, userId } = c.get("recipient");
    const parsed = NotifyChannelPatchSchema.safeParse(await readObject(c.req.raw));
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
      return refuse(400, "invalid_channel", issues.map((i) => `${i.path || "body"}: ${i.message}`).join("; "), { issues });
    }
    const channel = await channels.update(organizationId, userId, c.req.param("id"), parsed.data);
    return channel ? c.json({ channel }) : noSuchChannel();
  });

  app.delete("/channels/:id", async (c) => {
    const { organizationId, userId } = c.get("recipient");
    return (await channels.remove(organizationId, userId, c.req.param("id"))) ? c.json({ removed: true }) : noSuchChannel();
  });

  // Mounted as a plain Hono app: the recipient variable is this app's own.
  return new Hono().route("/", app);
}
