import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  RUNNER_TOKEN_TTL_MS,
  decodeRunnerToken,
  mayPresentRunnerToken,
  mintRunnerToken,
  normalizeAudience,
  verifyRunnerToken,
} from "./token.js";

const secret = "s".repeat(32);
const audience = "https://gateway.example.test/api/den";
const now = 1_800_000_000_000;
const mint = (overrides: Partial<Parameters<typeof mintRunnerToken>[0]> = {}) =>
  mintRunnerToken({
    secret,
    organizationId: "org_1",
    memberId: "mem_1",
    runnerId: "runner-0001",
    capabilities: ["remote_session_v1"],
    audience,
    now,
    ...overrides,
  }).token;

describe("runner tokens", () => {
  it("verifies what it mints, with OpenWork's claims and a 12 h lifetime", () => {
    const result = verifyRunnerToken(mint(), { secret, audience, now: now + 1 });
    expect(result).toEqual({
      ok: true,
      claims: { v: 2, o: "org_1", m: "mem_1", r: "runner-0001", c: ["remote_session_v1"], a: audience, e: now + RUNNER_TOKEN_TTL_MS },
    });
  });

  it("is wire-compatible: base64url JSON claims, HMAC-SHA256 over the fixed prefix plus the payload", () => {
    const [payload, signature] = mint().split(".") as [string, string];
    const expected = createHmac("sha256", secret).update(`openwork-automation-runner-v1.${payload}`).digest("base64url");
    expect(signature).toBe(expected);
    expect(JSON.parse(Buffer.from(payload, "base64url").toString())).toMatchObject({ v: 2, o: "org_1", a: audience });
  });

  it("refuses a changed payload or signature as bad_signature", () => {
    const token = mint();
    const [payload, signature] = token.split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, m: "mem_2" })).toString("base64url");
    expect(verifyRunnerToken(`${forged}.${signature}`, { secret, audience, now })).toEqual({ ok: false, reason: "bad_signature" });
    const flipped = signature.slice(0, -2) + (signature.endsWith("AA") ? "BB" : "AA");
    expect(verifyRunnerToken(`${payload}.${flipped}`, { secret, audience, now })).toEqual({ ok: false, reason: "bad_signature" });
    expect(verifyRunnerToken(token, { secret: "t".repeat(32), audience, now })).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("refuses an expired token", () => {
    const token = mint({ ttlMs: 1_000 });
    expect(verifyRunnerToken(token, { secret, audience, now: now + 999 }).ok).toBe(true);
    expect(verifyRunnerToken(token, { secret, audience, now: now + 1_000 })).toEqual({ ok: false, reason: "expired" });
  });

  it("refuses a token minted for another gateway", () => {
    expect(verifyRunnerToken(mint(), { secret, audience: "https://other.example.test/api/den", now })).toEqual({
      ok: false,
      reason: "wrong_audience",
    });
    // Normalization: a trailing slash, a query or a fragment is the same audience.
    expect(verifyRunnerToken(mint(), { secret, audience: `${audience}/?x=1#y`, now }).ok).toBe(true);
  });

  it.each([
    ["empty", ""],
    ["one segment", "abc"],
    ["three segments", "a.b.c"],
    ["not base64url", "a+b.c/d"],
  ])("refuses a malformed token (%s)", (_, token) => {
    expect(verifyRunnerToken(token, { secret, audience, now })).toEqual({ ok: false, reason: "malformed" });
  });

  it("refuses correctly signed claims of the wrong shape as malformed", () => {
    const payload = Buffer.from(JSON.stringify({ v: 1, o: "org_1", m: "mem_1", r: "runner-0001", e: now + 10 })).toString("base64url");
    const signature = createHmac("sha256", secret).update(`openwork-automation-runner-v1.${payload}`).digest("base64url");
    expect(verifyRunnerToken(`${payload}.${signature}`, { secret, audience, now })).toEqual({ ok: false, reason: "malformed" });
  });

  it("refuses a short secret and an unusable audience at mint time", () => {
    expect(() => mint({ secret: "short" })).toThrow(TypeError);
    expect(() => mint({ audience: "ftp://gateway.example.test" })).toThrow(TypeError);
    expect(() => mint({ audience: "https://user:pw@gateway.example.test" })).toThrow(TypeError);
  });

  it("lets the runner read claims without the key and decide where the token may go", () => {
    const token = mint();
    expect(decodeRunnerToken(token)?.a).toBe(audience);
    expect(decodeRunnerToken("garbage")).toBeNull();
    expect(mayPresentRunnerToken(token, audience)).toBe(true);
    expect(mayPresentRunnerToken(token, "https://evil.example.test/api/den")).toBe(false);
    expect(mayPresentRunnerToken(mint({ audience: "http://127.0.0.1:8787" }), "http://127.0.0.1:8787/")).toBe(true);
    expect(mayPresentRunnerToken(mint({ audience: "http://gateway.example.test" }), "http://gateway.example.test")).toBe(false);
  });

  it("normalizes audiences", () => {
    expect(normalizeAudience("https://Gateway.example.test:443/api/den/")).toBe("https://gateway.example.test/api/den");
    expect(normalizeAudience("http://127.0.0.1:8787")).toBe("http://127.0.0.1:8787");
  });
});
