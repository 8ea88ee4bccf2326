import { describe, expect, it } from "vitest";
import type { RegisteredRunner } from "../store/touch-runner.js";
import { createRegistrationCache } from "./registration-cache.js";

const holder = { organizationId: "org_1", memberId: "mem_1", runnerId: "runner-0001", mintedAt: 1_000 };
const registered: RegisteredRunner = { protocolVersion: 3, capabilities: ["session_create_v1"], dialect: "desktop-runner" };

/** A cache on a clock the test moves, and a read that counts how often it ran. */
function setup(ttlMs = 1_000) {
  const clock = { now: 0 };
  const cache = createRegistrationCache({ ttlMs, now: () => clock.now });
  let reads = 0;
  const read = async () => {
    reads++;
    return registered;
  };
  return { clock, cache, read, reads: () => reads };
}

describe("createRegistrationCache", () => {
  it("serves a registration read less than ttlMs ago, then reads again", async () => {
    const { clock, cache, read, reads } = setup();
    await cache.registration(holder, read);
    clock.now = 999;
    await cache.registration(holder, read);
    expect(reads()).toBe(1);
    clock.now = 1_000;
    await cache.registration(holder, read);
    expect(reads()).toBe(2);
  });

  it("keeps each token mint apart, and forgets every mint of a revoked runner", async () => {
    const { cache, read, reads } = setup();
    await cache.registration(holder, read);
    await cache.registration({ ...holder, mintedAt: 2_000 }, read);
    expect(reads()).toBe(2);
    cache.forget(holder);
    await cache.registration(holder, read);
    await cache.registration({ ...holder, mintedAt: 2_000 }, read);
    expect(reads()).toBe(4);
  });

  it("does not keep a read that was under way when the runner was forgotten (it may predate the revocation)", async () => {
    const { cache, read, reads } = setup();
    let release = () => {};
    const slow = cache.registration(holder, () => new Promise<RegisteredRunner>((resolve) => (release = () => resolve(registered))));
    cache.forget(holder);
    release();
    await slow;
    await cache.registration(holder, read);
    expect(reads()).toBe(1);
  });

  it("keeps no refusal, reads past the cache when asked to, and keeps nothing at ttlMs 0", async () => {
    const { cache, read, reads } = setup();
    await expect(cache.registration(holder, async () => Promise.reject(new Error("revoked")))).rejects.toThrow("revoked");
    await cache.registration(holder, read);
    await cache.registration(holder, read, { fresh: true });
    expect(reads()).toBe(2);
    cache.clear();
    await cache.registration(holder, read);
    expect(reads()).toBe(3);
    const off = setup(0);
    await off.cache.registration(holder, off.read);
    await off.cache.registration(holder, off.read);
    expect(off.reads()).toBe(2);
  });
});
