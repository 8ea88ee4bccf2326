import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { RegistryContext, RemoteSessionSource } from "@openwork/mcp-capability";
import { BudgetSchema, errorFacts, type Logger, newReferenceId, SESSION_LIMITS } from "@openwork/remote-session-core";
import { BODY_TOO_LARGE_HEADERS, BodyTooLarge, readBodyWithin } from "@openwork/remote-session-core/internal";
import type { RespondAnswer } from "@openwork/remote-session-core/wire";
import { AnswerLinkError, type AnswerLinks } from "@openwork/session-notify";
import type { LinkGrant } from "@openwork/session-notify/internal";
import { Hono } from "hono";
import { answerPage, notice, PAGE_HEADERS } from "./answer-page-html.js";
import { ANSWER_PATH, glanceAt, RESPOND, STOP } from "./answer-requests.js";
// The form is a few short fields; an answer is at most SESSION_LIMITS.answerText characters.
const MAX_FORM_BYTES = 64 * 1024;
// The session's last messages shown beside the request.
const MESSAGES_SHOWN = 4;
const COOKIE = "ow_answer";

type Status = 200 | 400 | 403 | 404 | 409 | 410 | 413 | 503;
type Page = { status: Status; html: string };

const noticePage = (status: Status, title: string, message: string): Page => ({ status, html: notice(title, message) });

/** Each refusal of a link, as the member reads it. */
const LINK_PAGES: Record<AnswerLinkError["code"], Page> = {
  link_invalid: noticePage(404, "Link not found", "This answer link is not valid. Open the session in OpenWork or ask your agent."),
  link_expired: noticePage(410, "Link expired", "This answer link has expired. Open the session in OpenWork, or answer through your agent."),
  link_used: noticePage(410, "Link already used", "This answer link was already used: the request was answered."),
  // Another POST of this link is answering now (a double click, a second tab): refused at once, never queued behind it.
  link_busy: noticePage(409, "Answer in progress", "An answer from this link is being sent now. Reload this page in a moment to see how it went."),
  forgery: noticePage(403, "Not accepted", "This form does not belong to this link. Open the link again and answer from that page."),
};
const NOT_WAITING = noticePage(410, "Nothing to answer", "The session no longer waits on this request: it was answered or it moved on.");
const NO_SESSION = noticePage(404, "Link not found", "This answer link is not valid for any session you can see.");
const NO_COOKIE = noticePage(403, "Not accepted", "Open the link again and answer from that page (this browser must keep its cookie for the page).");
const RETRY = noticePage(503, "Try again", "The gateway could not reach the session just now. Reload this page in a moment.");

/** The refusal a page shows for a capability's typed error (the codes a read or respond of a link's session can give). */
function errorPage(error: unknown): Page {
  if (error === "unknown_session" || error === "membership_required") return NO_SESSION;
  if (error === "input_not_pending") return NOT_WAITING;
  if (error === "invalid_capability_arguments") return noticePage(400, "Not an answer", "That answer does not fit the request. Go back and choose again.");
  return RETRY;
}

/** Thrown inside a redeem to leave the link unspent (its lease is cleared): the member may try again. */
class Unspent extends Error {
  constructor(readonly page: Page) {
    super("answer not taken");
  }
}

/**
 * The page a notification's answer link opens: `GET /notify/answer/:token` shows the pending
 * request (the command to allow, or the question and its options), the session's title and last
 * messages, and one plain HTML form; `POST` answers it through the capability's own `respond`
 * (exactly once: the link is leased before the answer and spent after it, with no transaction
 * held while the session answers; a second POST meanwhile is refused at once, and a replay after a
 * crash between the answer and the spend is replayed by respond's own idempotency, keyed by the
 * request and the answer). The link is the member's
 * credential for this one request: bound to the member and the request, single use, expiring.
 * A POST needs the page's anti-forgery field and, as its double, a SameSite=Strict cookie the
 * page set, so a form posted from anywhere but the page is refused. The cookie's nonce is signed
 * for the link by the server (`nonceSecret`): a pair made up elsewhere, or taken from another
 * link's page, is refused even when the cookie and the field match each other.
 */
export function answerPageRoutes(options: {
  source: RemoteSessionSource;
  links: AnswerLinks;
  /** The member's context for the link's calls (`recipientContext`); null when they are no longer a member. */
  contextOf: (grant: LinkGrant) => Promise<RegistryContext | null>;
  secureCookies: boolean;
  /** Signs each page's nonce for its link (at least 32 characters; the gateway derives it from its secret). */
  nonceSecret: string;
  logger: Logger;
}) {
  const { source, links, contextOf } = options;
  const app = new Hono();
  // Not the gateway's shared handler: that one logs the path, and this path holds a live link.
  app.onError((error) => {
    const referenceId = newReferenceId();
    options.logger.error("answer page: request failed", { referenceId, error: errorFacts(error) });
    return show(noticePage(503, "Try again", `The gateway could not answer just now. Reload this page in a moment (reference ${referenceId}).`));
  });

  app.get("/:token", async (c) => {
    const token = c.req.param("token");
    const grant = await links.open(token);
    if (grant instanceof AnswerLinkError) return show(LINK_PAGES[grant.code]);
    const ctx = await contextOf(grant);
    if (!ctx) return show(NO_SESSION);
    const glance = await glanceAt(source, ctx, grant.sessionId, MESSAGES_SHOWN, c.req.raw.signal);
    if ("error" in glance) return show(errorPage(glance.error));
    const { pending } = glance;
    if (!pending || pending.id !== grant.requestId) return show(NOT_WAITING);
    if (pending.inAppOnly) return show(noticePage(409, "Answer on the desktop", "Only the person at the desktop can answer this, in the app."));
    const nonce = signedNonce(options.nonceSecret, token, randomBytes(16).toString("base64url"));
    const maxAge = Math.max(1, Math.floor((grant.expiresAt.getTime() - Date.now()) / 1000));
    const cookie = `${COOKIE}=${nonce}; Path=${ANSWER_PATH}/${token}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${options.secureCookies ? "; Secure" : ""}`;
    const html = answerPage({ sessionTitle: glance.title, pending, messages: glance.messages, hidden: { antiForgery: grant.antiForgery, nonce } });
    return show({ status: 200, html }, { "set-cookie": cookie });
  });

  app.post("/:token", async (c) => {
    const token = c.req.param("token");
    const form = await readForm(c.req.raw);
    if (!form) return show(noticePage(413, "Not accepted", "That answer is too long."), BODY_TOO_LARGE_HEADERS);
    const nonce = form.get("nonce");
    if (!sameNonce(cookieOf(c.req.header("cookie"), COOKIE), nonce) || !signedFor(options.nonceSecret, token, nonce!)) return show(NO_COOKIE);
    const answer = answerOf(form);
    const outcome = await links
      .redeem(token, form.get("antiForgery") ?? "", async (grant) => {
        const ctx = await contextOf(grant);
        if (!ctx) throw new Unspent(NO_SESSION);
        // A budget's link may also stop its session: stopping is the other answer to a pause.
        if (form.get("stop") === "1" && isBudgetRequest(grant.requestId)) return stopFromLink(source, ctx, grant.sessionId, c.req.raw.signal);
        if (!answer) throw new Unspent(noticePage(400, "No answer", "Choose an answer, or write one, and send it again."));
        const body = { sessionId: grant.sessionId, requestId: grant.requestId, answer };
        // The member's request may go away (a closed tab): the respond stops waiting with it and the lease is cleared.
        const result = await source.execute(ctx, RESPOND, { body }, { signal: c.req.raw.signal });
        const error = (result.structuredContent as { error?: string } | undefined)?.error;
        // A request no longer pending stays answered: the link is spent with it. Any other refusal leaves the link for another try.
        if (result.isError && error !== "input_not_pending") throw new Unspent(errorPage(error));
        return result.isError ? NOT_WAITING : noticePage(200, "Answer sent", "Your answer was sent to the session. You can close this page.");
      })
      .catch((error: unknown) => {
        if (error instanceof Unspent) return error.page;
        throw error;
      });
    if (outcome instanceof AnswerLinkError) return show(LINK_PAGES[outcome.code]);
    return show("html" in outcome ? outcome : outcome.result);
  });

  return app;
}

/** A budget request's id (the core names its pauses so): its link may stop the session instead of raising it. */
const isBudgetRequest = (requestId: string) => requestId.startsWith("budget_");

/** Stops the link's session through the capability's own stop; a refusal leaves the link for another try. */
async function stopFromLink(source: RemoteSessionSource, ctx: RegistryContext, sessionId: string, signal: AbortSignal): Promise<Page> {
  const result = await source.execute(ctx, STOP, { body: { sessionId } }, { signal });
  if (result.isError) throw new Unspent(errorPage((result.structuredContent as { error?: string } | undefined)?.error));
  return noticePage(200, "Session stopped", "The session was stopped at its budget. You can close this page.");
}

const show = (shown: Page, extra: Record<string, string> = {}) => new Response(shown.html, { status: shown.status, headers: { ...PAGE_HEADERS, ...extra } });

/** The form's fields, or null past MAX_FORM_BYTES (read no further). Only urlencoded forms (what the page posts). */
async function readForm(request: Request): Promise<URLSearchParams | null> {
  const bytes = await readBodyWithin(request, MAX_FORM_BYTES).catch((error: unknown) => {
    if (error instanceof BodyTooLarge) return null;
    throw error;
  });
  return bytes && new URLSearchParams(new TextDecoder().decode(bytes));
}

/** The answer the form carries: a permission button, a budget's raise, an option's button, or the text box. */
function answerOf(form: URLSearchParams): RespondAnswer | null {
  const permission = form.get("permission");
  if (permission === "once" || permission === "always" || permission === "reject") return { permission };
  const raise = /^(tokens|costUsd|runningMs):(\d+(?:\.\d+)?)$/.exec(form.get("raise") ?? "");
  if (raise) {
    const budget = BudgetSchema.safeParse({ [raise[1]!]: Number(raise[2]) });
    return budget.success ? { budget: budget.data } : null;
  }
  const text = (form.get("choice") ?? form.get("text") ?? "").trim();
  return text.length > 0 && text.length <= SESSION_LIMITS.answerText ? { text } : null;
}

function cookieOf(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return null;
}

/** `<random>.<HMAC of the link and the random part>`: only this server makes one, for this link only. */
function signedNonce(secret: string, token: string, random: string): string {
  return `${random}.${createHmac("sha256", secret).update(`answer-page-nonce\u0000${token}\u0000${random}`).digest("base64url")}`;
}

function signedFor(secret: string, token: string, nonce: string): boolean {
  const random = nonce.split(".")[0] ?? "";
  return sameNonce(signedNonce(secret, token, random), nonce);
}

function sameNonce(cookie: string | null, field: string | null): boolean {
  if (!cookie || !field) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(field);
  return a.length === b.length && timingSafeEqual(a, b);
}
