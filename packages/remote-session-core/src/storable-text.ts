// A lone half of a surrogate pair: JSON carries it as an escape PostgreSQL's jsonb refuses.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text made storable in PostgreSQL: NUL (which `text` and `jsonb` refuse) and lone surrogates
 * (a reply cut mid-emoji) become U+FFFD. Text from a model is data: it is kept, never refused.
 */
export function storableText(text: string): string {
  return text.replaceAll("\u0000", "\uFFFD").replace(LONE_SURROGATE, "\uFFFD");
}

/** {@link storableText} applied to every string (and key) of a parsed JSON value. */
export function storableJson(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), storableJson(item)]));
  }
  return value;
}

/** The path of the first string (or key) holding NUL, or null: for inputs that must refuse it. */
export function findNul(value: unknown, path: string[] = []): string | null {
  if (typeof value === "string") return value.includes("\u0000") ? path.join(".") : null;
  if (value === null || typeof value !== "object") return null;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes("\u0000")) return [...path, key].join(".");
    const found = findNul(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}
