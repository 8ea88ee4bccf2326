import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
let last = 0;
let counter = 0;

/**
 * A message id in opencode's own ascending format — `msg_` + 12 hex digits of
 * (milliseconds · 4096 + counter), low 48 bits, + 14 base62 characters — so a prompt id the
 * gateway picks sorts among the ids opencode makes (it orders messages by id).
 */
export function newOpencodeMessageId(now: number = Date.now()): string {
  if (now !== last) {
    last = now;
    counter = 0;
  }
  counter++;
  const time = ((BigInt(now) * 4096n + BigInt(counter)) & 0xffffffffffffn).toString(16).padStart(12, "0");
  const random = [...randomBytes(14)].map((byte) => BASE62[byte % 62]).join("");
  return `msg_${time}${random}`;
}
