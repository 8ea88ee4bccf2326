import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bearerToken, mintRunnerToken, verifyRunnerToken } from "./token.js";
import { decodeRunnerToken, mayPresentRunnerToken, normalizeAudience, RUNNER_TOKEN_TTL_MS } from "./token-claims.js";

// The numbers in test names follow OpenWork's runner-token compatibility checklist.
const secret = "s".repeat(32);
const audience = "https://gateway.example.test/api/den";
const audiences = [audience];
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
/** A token signed the way den-api signs, over any claims. */
const signed = (claims: unknown) => {
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${payload}.${createHmac("sha256", secret).update(`openwork-automation-runner-v1.${payload}`).digest("base64url")}`;
};

describe("runner tokens", () => {
  it("(1, 2) mints v2 claims in the order v,o,m,r,c,a,e, signed over the prefix plus the payload, living 12 h", () => {
    const token = mint();
    const [payload, signature] = token.split(".") as [string, string];
    expect(Buffer.from(payload, "base64url").toString()).toBe(
      JSON.stringify({ v: 2, o: "org_1", m: "mem_1", r: "runner-0001", c: ["remote_session_v1"], a: audience, e: now + RUNNER_TOKEN_TTL_MS }),
    );
    expect(signature).toBe(createHmac("sha256", secret).update(`openwork-automation-runner-v1.${payload}`).digest("base64url"));
    expect(signature).toHaveLength(43);
    expect(verifyRunnerToken(token, { secret, audiences, now: now + 1 })).toMatchObject({ ok: true, claims: { v: 2, a: audience } });
  });

  it("(3) compares the signature as its canonical base64url spelling: another spelling of the same bytes is refused", () => {
    const [payload, signature] = mint().split(".") as [string, string];
    // The last character of a 43-character base64url string carries 2 unused bits: 4 spellings decode alike.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(signature.at(-1)!);
    const spellings = [0, 1, 2, 3].map((bits) => signature.slice(0, -1) + alphabet[(last & ~3) | bits]);
    expect(spellings.map((s) => Buffer.from(s, "base64url").equals(Buffer.from(signature, "base64url")))).toEqual([true, true, true, true]);
    const accepted = spellings.filter((s) => verifyRunnerToken(`${payload}.${s}`, { secret, now }).ok);
    expect(accepted).toEqual([signature]);
  });

  it("(4) accepts den-api's legacy v1 claims {v:1,o,m,r,e}, c optional", () => {
    const legacy = signed({ v: 1, o: "org_1", m: "mem_1", r: "runner-0001", e: now + 10 });
    expect(verifyRunnerToken(legacy, { secret, now })).toEqual({ ok: true, claims: { v: 1, o: "org_1", m: "mem_1", r: "runner-0001", c: [], e: now + 10 } });
    // A v1 token names no audience: where audiences are required it is refused.
    expect(verifyRunnerToken(legacy, { secret, audiences, now })).toEqual({ ok: false, reason: "wrong_audience" });
  });

  it("(5) accepts only OpenWork's five capability strings in c, at most five, and mints nothing else", () => {
    const claims = { v: 2, o: "org_1", m: "mem_1", r: "runner-0001", a: audience, e: now + 10 };
    expect(verifyRunnerToken(signed({ ...claims, c: ["model_attention_v1", "remote_session_control_v1"] }), { secret, now }).ok).toBe(true);
    expect(verifyRunnerToken(signed({ ...claims, c: ["session_create_v1"] }), { secret, now })).toEqual({ ok: false, reason: "malformed" });
    expect(verifyRunnerToken(signed({ ...claims, c: Array(6).fill("remote_session_v1") }), { secret, now })).toEqual({ ok: false, reason: "malformed" });
    expect(() => mint({ capabilities: ["session_create_v1" as never] })).toThrow();
  });

  it("(6) reads Bearer in any case, after any whitespace", () => {
    expect(bearerToken("Bearer abc.def")).toBe("abc.def");
    expect(bearerToken("  bearer \t abc.def  ")).toBe("abc.def");
    expect(bearerToken("BEARER abc.def")).toBe("abc.def");
    expect(bearerToken("Basic abc")).toBe("");
    expect(bearerToken(null)).toBe("");
  });

  it("(7) refuses changed, expired and malformed tokens, each with its reason", () => {
    const token = mint({ ttlMs: 1_000 });
    const [payload, signature] = token.split(".") as [string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), m: "mem_2" })).toString("base64url");
    expect(verifyRunnerToken(`${forged}.${signature}`, { secret, now })).toEqual({ ok: false, reason: "bad_signature" });
    expect(verifyRunnerToken(token, { secret: "t".repeat(32), now })).toEqual({ ok: false, reason: "bad_signature" });
    expect(verifyRunnerToken(token, { secret, now: now + 999 }).ok).toBe(true);
    expect(verifyRunnerToken(token, { secret, now: now + 1_000 })).toEqual({ ok: false, reason: "expired" });
    for (const bad of ["", "abc", "a.b.c", "a+b.c/d"]) expect(verifyRunnerToken(bad, { secret, now })).toEqual({ ok: false, reason: "malformed" });
    expect(verifyRunnerToken(signed({ v: 3, o: "o", m: "m", r: "r", c: [], e: now + 10 }), { secret, now })).toEqual({ ok: false, reason: "malformed" });
  });

  it("refuses, never throws on, a signature of another length or with a byte such as 0xE9", () => {
    const [payload, signature] = mint().split(".") as [string, string];
    for (const other of [signature.slice(1), `${signature}A`, `${signature.slice(0, -1)}\u00e9`, `${signature.slice(0, -2)}\u00e9`]) {
      expect(verifyRunnerToken(`${payload}.${other}`, { secret, now }).ok).toBe(false);
    }
  });

  it("(9) checks the audience only when asked to: OpenWork's rule is not to compare it with the request", () => {
    expect(verifyRunnerToken(mint(), { secret, now }).ok).toBe(true);
    expect(verifyRunnerToken(mint(), { secret, audiences: ["https://other.example.test/api/den"], now })).toEqual({ ok: false, reason: "wrong_audience" });
    // Normalization: a trailing slash, a query or a fragment is the same audience.
    expect(verifyRunnerToken(mint(), { secret, audiences: [`${audience}/?x=1#y`], now }).ok).toBe(true);
  });

  it("(13) refuses a short secret and an unusable audience at mint time", () => {
    expect(() => mint({ secret: "short" })).toThrow(TypeError);
    expect(() => mint({ audience: "ftp://gateway.example.test" })).toThrow(TypeError);
    expect(() => mint({ audience: "https://user:pw@gateway.example.test" })).toThrow(TypeError);
  });

  it("lets the runner read claims without the key and decide where the token may go", () => {
    const token = mint();
    const claims = decodeRunnerToken(token);
    expect(claims?.v === 2 && claims.a).toBe(audience);
    expect(decodeRunnerToken("garbage")).toBeNull();
    expect(mayPresentRunnerToken(token, audience)).toBe(true);
    expect(mayPresentRunnerToken(token, "https://evil.example.test/api/den")).toBe(false);
    expect(mayPresentRunnerToken(mint({ audience: "http://127.0.0.1:8787" }), "http://127.0.0.1:8787/")).toBe(true);
    expect(mayPresentRunnerToken(mint({ audience: "http://desk.localhost:8787" }), "http://desk.localhost:8787")).toBe(true);
    expect(mayPresentRunnerToken(mint({ audience: "http://gateway.example.test" }), "http://gateway.example.test")).toBe(false);
  });

  it("normalizes audiences", () => {
    expect(normalizeAudience("https://Gateway.example.test:443/api/den/")).toBe("https://gateway.example.test/api/den");
    expect(normalizeAudience("http://127.0.0.1:8787")).toBe("http://127.0.0.1:8787");
  });
});
