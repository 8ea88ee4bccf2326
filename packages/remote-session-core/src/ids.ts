import { randomBytes } from "node:crypto";

// Crockford's base32, lower case: no i, l, o, u, so ids survive being read aloud or retyped.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * A sortable unique id with a prefix naming its kind: `prefix_` + 10 characters of millisecond
 * time + 16 random characters (80 bits), like a ULID. Ids made later sort later.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  let time = "";
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = ALPHABET[rest % 32] + time;
  const random = randomBytes(10);
  let tail = "";
  // 80 random bits as 16 base32 digits, five bits at a time.
  let bits = 0;
  let value = 0;
  for (const byte of random) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      tail += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `${prefix}_${time}${tail}`;
}

const SESSION_ID = /^rs_[0-9a-hjkmnp-tv-z]{26}$/;

/** A new gateway session id: `rs_` + a sortable unique id. */
export function newSessionId(now?: number): string {
  return newId("rs", now);
}

/** Whether `value` has the shape of a gateway session id (it may still not exist). */
export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}
