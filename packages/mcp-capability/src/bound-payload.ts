import { boundText } from "@openwork/remote-session-core/target";

/**
 * The most a result's text may hold, in UTF-8 bytes (so in characters too). Codex hands its model
 * at most about 12 000 characters of a tool result and cuts the middle out of longer ones; Codex
 * and Claude Code hand it `structuredContent` serialized when there is one, other clients the text
 * part. Both are the same JSON here, so each stays within this bound and whichever a client reads
 * arrives whole.
 */
export const RESULT_MAX_BYTES = 11_000;

// Room kept for what a capability adds around a page it sized (label, activity, `next`,
// `ignored`) and for the `bounded` notice.
const RESERVE_BYTES = 1_200;
// A shortened text keeps at least this much: beyond it, lists are cut instead.
const MIN_TEXT = 200;
// Lists a cursor pages through: cutting them here would skip items, so their capability sizes its
// page instead (`itemsWithin`).
const PAGED = new Set(["messages", "sessions"]);
// Never shortened: the follow-up calls and the position to go on from.
const KEPT = new Set(["next", "cursor", "finalTextContinues"]);

export const sizeOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** How many of `payload[key]`, from the first, fit a result of `max` bytes beside everything else it carries. */
export function itemsWithin(payload: object, key: string, max: number = RESULT_MAX_BYTES): number {
  const items = (payload as Record<string, unknown>)[key];
  if (!Array.isArray(items)) return 0;
  let used = sizeOf({ ...payload, [key]: [] }) + RESERVE_BYTES;
  let count = 0;
  for (const item of items) {
    used += sizeOf(item) + 1;
    if (used > max) break;
    count++;
  }
  return count;
}

/** The longest start of the text `payload[key]` that fits a result of `max` bytes beside everything else it carries. */
export function textWithin(payload: object, key: string, max: number = RESULT_MAX_BYTES): string {
  const text = (payload as Record<string, unknown>)[key];
  if (typeof text !== "string") return "";
  const room = max - sizeOf({ ...payload, [key]: "" }) - RESERVE_BYTES;
  const fits = (length: number) => sizeOf(boundText(text, length).text) - 2 <= room;
  if (fits(text.length)) return text;
  // The longest length that fits, found by halving (escapes and multi-byte characters vary).
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle - 1;
  }
  return boundText(text, low).text;
}

/** How many of a read's messages fit one result. */
export const messagesWithin = (result: { messages: unknown[] }, max: number = RESULT_MAX_BYTES) => itemsWithin(result, "messages", max);

type Container = Record<string, unknown> | unknown[];
interface Found {
  parent: Container;
  key: string | number;
  path: string;
  size: number;
}

/** The longest string, or (`arrays`) the longest list, outside what is never cut. */
function largest(value: unknown, arrays: boolean, path = ""): Found | null {
  if (typeof value !== "object" || value === null) return null;
  let best: Found | null = null;
  for (const [key, child] of Object.entries(value)) {
    if (KEPT.has(key) && !Array.isArray(value)) continue;
    const at = path ? `${path}.${key}` : key;
    const index = Array.isArray(value) ? Number(key) : key;
    const here =
      !arrays && typeof child === "string" && child.length > MIN_TEXT
        ? { parent: value as Container, key: index, path: at, size: child.length }
        : arrays && Array.isArray(child) && child.length > 1 && !PAGED.has(key)
          ? { parent: value as Container, key: index, path: at, size: sizeOf(child) }
          : null;
    const inner = largest(child, arrays, at);
    for (const candidate of [here, inner]) if (candidate && (!best || candidate.size > best.size)) best = candidate;
  }
  return best;
}

const slot = (found: Found) => (found.parent as Record<string | number, unknown>)[found.key];
const put = (found: Found, value: unknown) => {
  (found.parent as Record<string | number, unknown>)[found.key] = value;
};

/**
 * The payload cut to `max` bytes of JSON: the longest texts are shortened first (a message's
 * `truncated` is set), then the longest lists lose their last items; `next`, cursors and paged
 * lists are never touched. What was cut is named in `bounded`, so the reader knows.
 */
export function boundPayload(payload: Record<string, unknown>, max: number = RESULT_MAX_BYTES): Record<string, unknown> {
  if (sizeOf(payload) <= max) return payload;
  const copy = structuredClone(payload);
  const budget = max - RESERVE_BYTES;
  const shortened = new Set<string>();
  const omitted: Record<string, number> = {};
  for (let found = largest(copy, false); found && sizeOf(copy) > budget; found = largest(copy, false)) {
    const text = slot(found) as string;
    // Each character cut saves at least one byte of JSON.
    put(found, boundText(text, Math.max(MIN_TEXT, text.length - (sizeOf(copy) - budget))).text);
    if (!Array.isArray(found.parent) && typeof found.parent.truncated === "boolean") found.parent.truncated = true;
    shortened.add(found.path);
  }
  for (let found = largest(copy, true); found && sizeOf(copy) > budget; found = largest(copy, true)) {
    // The last item goes (search's matches are best first), one at a time.
    put(found, (slot(found) as unknown[]).slice(0, -1));
    omitted[found.path] = (omitted[found.path] ?? 0) + 1;
  }
  return {
    ...copy,
    bounded: {
      maxBytes: max,
      ...(shortened.size > 0 ? { shortened: [...shortened] } : {}),
      ...(Object.keys(omitted).length > 0 ? { omitted } : {}),
      note: "cut to fit one tool result; `next` and any cursor are whole",
    },
  };
}
