import { SESSION_LIMITS, type TranscriptMessage } from "@openwork/remote-session-core";
import type { PendingInput } from "@openwork/remote-session-core/internal";

/** Text as HTML: everything a target or a model wrote goes through this. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

// One small inline style sheet: the page loads nothing else (its CSP allows nothing else).
const STYLE = `body{font:16px/1.45 system-ui,sans-serif;max-width:40rem;margin:1.5rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.3rem}h2{font-size:1rem;margin-top:1.5rem;color:#555}pre{white-space:pre-wrap;word-break:break-word;background:#f3f3f3;padding:.6rem;border-radius:6px}
.msg{border-left:3px solid #ccc;padding:.2rem .6rem;margin:.5rem 0;white-space:pre-wrap;word-break:break-word}.msg.user{border-color:#6a8}.who{font-size:.8rem;color:#666}
form{margin-top:1rem}button{font:inherit;padding:.5rem 1rem;margin:.25rem .25rem .25rem 0;border-radius:6px;border:1px solid #888;background:#fff;cursor:pointer}
button.primary{background:#1d5fd1;color:#fff;border-color:#1d5fd1}button.danger{border-color:#b33;color:#b33}input[type=text]{font:inherit;width:100%;box-sizing:border-box;padding:.5rem}`;

/** The headers every answer page carries: nothing cached, nothing framed, no referrer (the URL is a credential), no script. */
export const PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">` +
  `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;

/** A page that says why nothing can be answered here, and what to do instead. */
export const notice = (title: string, message: string): string => page(title, `<h1>${escapeHtml(title)}</h1><p id="notice">${escapeHtml(message)}</p>`);

export interface AnswerForm {
  sessionTitle: string;
  pending: PendingInput;
  messages: readonly TranscriptMessage[];
  /** The hidden fields the POST must carry back (anti-forgery and the cookie's double). */
  hidden: Record<string, string>;
}

// A message is shown up to this many characters: the page is a glance, the session has the rest.
const MESSAGE_SHOWN = 600;

const messageHtml = (message: TranscriptMessage) => {
  const text = message.text ?? "(its text stays on the desktop)";
  const shown = text.length > MESSAGE_SHOWN ? `${text.slice(0, MESSAGE_SHOWN)}…` : text;
  const tools = message.toolCalls.map((call) => `${call.name} (${call.status})`).join(", ");
  return `<div class="msg ${message.role}"><div class="who">${message.role === "user" ? "Prompt" : "Agent"}${tools ? ` · ${escapeHtml(tools)}` : ""}</div>${escapeHtml(shown)}</div>`;
};

// What each "add more" button adds to a budget it raises: half, all, three times it again.
const RAISES = [0.5, 1, 3];

/** A budget dimension's amount as a person reads it. */
const amountOf = (dimension: string, value: number) =>
  dimension === "costUsd"
    ? `$${value.toFixed(2)}`
    : dimension === "runningMs"
      ? `${Math.round(value / 1000)} s of running time`
      : `${value.toLocaleString("en")} tokens`;

/** What a budget request's tree spent in one dimension. */
const spentOf = (pending: PendingInput, dimension: string): number => {
  const spent = pending.spent as unknown as Record<string, number | null> | undefined;
  return spent?.[dimension] ?? 0;
};

/** A budget request's choices: add more of each dimension the budget sets (each button names its new total), or stop. */
function budgetControls(pending: PendingInput): string {
  const raises = Object.entries(pending.budget ?? {}).flatMap(([dimension, set]) =>
    RAISES.map((share) => {
      // From what was spent when a step passed the budget: every choice then ends the pause.
      const from = Math.max(set, spentOf(pending, dimension));
      const raised = dimension === "costUsd" ? Math.ceil((from + set * share) * 100) / 100 : Math.ceil(from + set * share);
      return `<button name="raise" value="${escapeHtml(`${dimension}:${raised}`)}">Add ${escapeHtml(amountOf(dimension, raised - set))} (to ${escapeHtml(amountOf(dimension, raised))})</button>`;
    }),
  );
  return (
    `<p>The session paused at a budget:</p><pre id="request">${escapeHtml(pending.detail)}</pre>` +
    `<div>${raises.join("")}</div><button class="danger" name="stop" value="1">Stop the session</button>`
  );
}

/** The request and the buttons (a permission, a budget) or the answer box (a question); plain HTML, one form, no script. */
function controls(pending: PendingInput): string {
  if (pending.kind === "budget") return budgetControls(pending);
  if (pending.kind === "permission") {
    return (
      `<p>The session asks permission to use <strong>${escapeHtml(pending.title)}</strong>:</p><pre id="request">${escapeHtml(pending.detail)}</pre>` +
      `<button class="primary" name="permission" value="once">Allow once</button>` +
      `<button name="permission" value="always">Always allow</button>` +
      `<button class="danger" name="permission" value="reject">Reject</button>`
    );
  }
  const choices = (pending.options ?? [])
    .map((option) => `<button name="choice" value="${escapeHtml(option.label)}">${escapeHtml(option.label)}</button>`)
    .join("");
  return (
    `<p>The session asks <strong>${escapeHtml(pending.title)}</strong>:</p><pre id="request">${escapeHtml(pending.detail)}</pre>` +
    (choices ? `<div>${choices}</div><p>Or answer in your own words:</p>` : "") +
    `<input type="text" name="text" maxlength="${SESSION_LIMITS.answerText}" aria-label="Your answer" autocomplete="off"><button class="primary" name="send" value="1">Send answer</button>`
  );
}

/** The page of one pending request: what it asks, the session's title and last messages, and the form that answers it. */
export function answerPage(form: AnswerForm): string {
  const hidden = Object.entries(form.hidden)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
  const messages = form.messages.length > 0 ? `<h2>Last messages</h2>${form.messages.map(messageHtml).join("")}` : "";
  return page(
    `Answer: ${form.sessionTitle}`,
    `<h1 id="session-title">${escapeHtml(form.sessionTitle)}</h1>` +
      `<form method="post">${hidden}${controls(form.pending)}</form>${messages}` +
      `<p class="who">This link works once and expires soon. Answering here is the same as answering through your agent.</p>`,
  );
}
