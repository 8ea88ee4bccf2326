import { mintRunnerToken, verifyRunnerToken } from "@openwork/runner-protocol/server";
import { describe, expect, it } from "vitest";
import { createVerifiedTokens } from "./verified-tokens.js";

const secret = "s".repeat(32);
const audience = "https://gateway.example";

/** A cache on a clock the test moves, around the real verification, counting its calls. */
function setup(maxEntries?: number, audiences = [audience]) {
  const clock = { now: Date.now() };
  let verifications = 0;
  const tokens = createVerifiedTokens({
    secret,
    audiences,
    ...(maxEntries ? { maxEntries } : {}),
    now: () => clock.now,
    verify: (token, options) => {
      verifications++;
      return verifyRunnerToken(token, options);
    },
  });
  const mint = (runnerId = "runner-0001") =>
    mintRunnerToken({ secret, organizationId: "org_1", memberId: "mem_1", runnerId, capabilities: [], audience, now: clock.now }).token;
  return { clock, tokens, mint, verifications: () => verifications };
}

describe("createVerifiedTokens", () => {
  it("verifies an accepted token once, answering the same claims after", () => {
    const { tokens, mint, verifications } = setup();
    const token = mint();
    const first = tokens.verify(token, { checksAudience: true });
    expect(first).toMatchObject({ ok: true, claims: { r: "runner-0001" } });
    expect(tokens.verify(token, { checksAudience: true })).toEqual(first);
    expect(verifications()).toBe(1);
  });

  it("refuses a kept token once it expires, as a fresh verification does", () => {
    const { clock, tokens, mint } = setup();
    const token = mint();
    const verified = tokens.verify(token, { checksAudience: false });
    if (!verified.ok) throw new Error("refused");
    clock.now = verified.claims.e;
    expect(tokens.verify(token, { checksAudience: false })).toEqual({ ok: false, reason: "expired" });
    expect(verifyRunnerToken(token, { secret, now: clock.now })).toEqual({ ok: false, reason: "expired" });
  });

  it("never keeps a refusal, and keeps an acceptance under the options that accepted it", () => {
    const { tokens, mint, verifications } = setup();
    const token = mint();
    const forged = `${token.slice(0, -2)}xx`;
    expect(tokens.verify(forged, { checksAudience: false })).toEqual({ ok: false, reason: "bad_signature" });
    expect(tokens.verify(forged, { checksAudience: false })).toEqual({ ok: false, reason: "bad_signature" });
    expect(verifications()).toBe(2);
    // Accepted without the audience check: asked with it, verified again (and refused by a
    // channel whose audiences the token does not name).
    expect(tokens.verify(token, { checksAudience: false })).toMatchObject({ ok: true });
    expect(tokens.verify(token, { checksAudience: true })).toMatchObject({ ok: true });
    expect(verifications()).toBe(4);
    const other = setup(undefined, ["https://other.example"]).tokens;
    expect(other.verify(token, { checksAudience: false })).toMatchObject({ ok: true });
    expect(other.verify(token, { checksAudience: true })).toEqual({ ok: false, reason: "wrong_audience" });
  });

  it("keeps at most maxEntries, dropping the oldest", () => {
    const { tokens, mint, verifications } = setup(2);
    const [a, b, c] = ["runner-000a", "runner-000b", "runner-000c"].map((runnerId) => mint(runnerId));
    for (const token of [a!, b!, c!]) tokens.verify(token, { checksAudience: false });
    expect(verifications()).toBe(3);
    tokens.verify(c!, { checksAudience: false });
    tokens.verify(b!, { checksAudience: false });
    expect(verifications()).toBe(3);
    tokens.verify(a!, { checksAudience: false });
    expect(verifications()).toBe(4);
  });
});
