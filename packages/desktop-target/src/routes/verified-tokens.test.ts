import { mintRunnerToken, verifyRunnerToken } from "@openwork/runner-protocol/server";
import { describe, expect, it } from "vitest";
import { createVerifiedTokens } from "./verified-tokens.js";

const secret = "s".repeat(32);
const audience = "https://gateway.example";

/** A cache on a clock the test moves, around the real verification, counting its calls. */
function setup(maxEntries?: number) {
  const clock = { now: Date.now() };
  let verifications = 0;
  const tokens = createVerifiedTokens({
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
    const first = tokens.verify(token, { secret, audiences: [audience] });
    expect(first).toMatchObject({ ok: true, claims: { r: "runner-0001" } });
    expect(tokens.verify(token, { secret, audiences: [audience] })).toEqual(first);
    expect(verifications()).toBe(1);
  });

  it("refuses a kept token once it expires, as a fresh verification does", () => {
    const { clock, tokens, mint } = setup();
    const token = mint();
    const verified = tokens.verify(token, { secret });
    if (!verified.ok) throw new Error("refused");
    clock.now = verified.claims.e;
    expect(tokens.verify(token, { secret })).toEqual({ ok: false, reason: "expired" });
    expect(verifyRunnerToken(token, { secret, now: clock.now })).toEqual({ ok: false, reason: "expired" });
  });

  it("never keeps a refusal, and keeps an acceptance under the options that accepted it", () => {
    const { tokens, mint, verifications } = setup();
    const token = mint();
    const forged = `${token.slice(0, -2)}xx`;
    expect(tokens.verify(forged, { secret })).toEqual({ ok: false, reason: "bad_signature" });
    expect(tokens.verify(forged, { secret })).toEqual({ ok: false, reason: "bad_signature" });
    expect(verifications()).toBe(2);
    // Accepted without an audience check, then asked with a wrong audience: verified again, refused.
    expect(tokens.verify(token, { secret })).toMatchObject({ ok: true });
    expect(tokens.verify(token, { secret, audiences: ["https://other.example"] })).toEqual({ ok: false, reason: "wrong_audience" });
    expect(verifications()).toBe(4);
  });

  it("keeps at most maxEntries, dropping the oldest", () => {
    const { tokens, mint, verifications } = setup(2);
    const [a, b, c] = ["runner-000a", "runner-000b", "runner-000c"].map((runnerId) => mint(runnerId));
    for (const token of [a!, b!, c!]) tokens.verify(token, { secret });
    expect(verifications()).toBe(3);
    tokens.verify(c!, { secret });
    tokens.verify(b!, { secret });
    expect(verifications()).toBe(3);
    tokens.verify(a!, { secret });
    expect(verifications()).toBe(4);
  });
});
