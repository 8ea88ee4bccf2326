import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

/**
 * Whether a presented credential is the expected one, in constant time. Digests of equal length
 * are compared, never the strings' bytes: a header may carry any byte (0xE9 is one character but
 * two UTF-8 bytes), and timingSafeEqual throws on buffers of different lengths.
 */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** A secret's SHA-256 digest (base64url): the key a secret is looked up by, never the secret itself. */
export function secretDigest(value: string): string {
  return digest(value).toString("base64url");
}
