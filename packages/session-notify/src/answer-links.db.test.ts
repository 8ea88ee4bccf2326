import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { type AnswerLinkTarget, createAnswerLinks, type LinkGrant } from "./answer-links.js";
import { useNotifyDatabase } from "./testing/notify-database.js";

// Answer links on a real PostgreSQL: signed, bound to one member's one request, single use, short-lived.
const db = useNotifyDatabase();
const SECRET = "a test secret that is at least thirty-two bytes long";
const target = (requestId: string): AnswerLinkTarget => ({ organizationId: "org_links", memberId: "member_links", sessionId: "rs_links", requestId });

const links = (now?: () => Date) => createAnswerLinks({ sql: db.current.sql, secret: SECRET, ...(now ? { now } : {}) });
const usedAt = async (token: string) =>
  (await db.current.sql<{ used: Date | null }[]>`select used_at as used from notify_answer_link where id = ${token.split(".")[0]!}`)[0]?.used;
const flip = (text: string) => `${text.startsWith("A") ? "B" : "A"}${text.slice(1)}`;
const errorCode = (outcome: unknown) => (outcome instanceof Error ? (outcome as { code?: string }).code : "granted");

describe("answer links", () => {
  it("mints a url-safe token that opens to the grant of that member's request, and redeems once", async () => {
    const answerLinks = links();
    const { token, expiresAt } = await answerLinks.mint(target("per_1"));
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(expiresAt.getTime() - Date.now()).toBeGreaterThan(14 * 60_000);
    const grant = (await answerLinks.open(token)) as LinkGrant;
    expect(grant).toMatchObject({ ...target("per_1"), expiresAt });
    expect(grant.antiForgery).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ran: string[] = [];
    const outcome = await answerLinks.redeem(token, grant.antiForgery, async (granted) => {
      ran.push(granted.requestId);
      return "answered";
    });
    expect(outcome).toMatchObject({ result: "answered", grant: target("per_1") });
    expect(ran).toEqual(["per_1"]);
    expect(await usedAt(token)).toBeInstanceOf(Date);
  });

  it("refuses a replay: link_used on open and on redeem, and run is not called again", async () => {
    const answerLinks = links();
    const { token } = await answerLinks.mint(target("per_replay"));
    const { antiForgery } = (await answerLinks.open(token)) as LinkGrant;
    let runs = 0;
    const run = async () => ++runs;
    await answerLinks.redeem(token, antiForgery, run);
    expect(errorCode(await answerLinks.redeem(token, antiForgery, run))).toBe("link_used");
    expect(errorCode(await answerLinks.open(token))).toBe("link_used");
    expect(runs).toBe(1);
  });

  it("refuses an expired link (link_expired) on open and redeem, leaving it unused", async () => {
    let clock = new Date("2026-12-01T12:00:00Z");
    const answerLinks = links(() => clock);
    const { token, expiresAt } = await answerLinks.mint(target("per_expiry"));
    expect(expiresAt).toEqual(new Date("2026-12-01T12:15:00Z"));
    const { antiForgery } = (await answerLinks.open(token)) as LinkGrant;
    clock = new Date("2026-12-01T12:15:00Z");
    expect(errorCode(await answerLinks.open(token))).toBe("link_expired");
    expect(errorCode(await answerLinks.redeem(token, antiForgery, async () => "late"))).toBe("link_expired");
    expect(await usedAt(token)).toBeNull();
  });

  it("refuses a tampered token (link_invalid), a link signed with another secret, and garbage, changing nothing", async () => {
    const answerLinks = links();
    const { token } = await answerLinks.mint(target("per_tamper"));
    const { antiForgery } = (await answerLinks.open(token)) as LinkGrant;
    const [linkId, signature] = token.split(".") as [string, string];
    const otherSecret = createAnswerLinks({ sql: db.current.sql, secret: `${SECRET} but another one` });
    const { token: foreign } = await otherSecret.mint(target("per_foreign"));
    for (const bad of [`${linkId}.${flip(signature)}`, `${flip(linkId)}.${signature}`, `${foreign.split(".")[0]}.${signature}`, "not a token", ""]) {
      expect(errorCode(await answerLinks.open(bad))).toBe("link_invalid");
      expect(errorCode(await answerLinks.redeem(bad, antiForgery, async () => "no"))).toBe("link_invalid");
    }
    expect(errorCode(await otherSecret.open(token))).toBe("link_invalid");
    expect(await usedAt(token)).toBeNull();
    expect(await answerLinks.open(token)).toMatchObject(target("per_tamper"));
  });

  it("refuses another link's anti-forgery token, or none (forgery), leaving the link unused", async () => {
    const answerLinks = links();
    const { token } = await answerLinks.mint(target("per_victim"));
    const { token: other } = await answerLinks.mint(target("per_other"));
    const { antiForgery: othersAntiForgery } = (await answerLinks.open(other)) as LinkGrant;
    for (const bad of [othersAntiForgery, "", token.split(".")[1]!]) {
      expect(errorCode(await answerLinks.redeem(token, bad, async () => "forged"))).toBe("forgery");
    }
    expect(await usedAt(token)).toBeNull();
  });

  it("concurrent redeems of one link: exactly one runs, the others get link_busy at once, and the pool stays free", async () => {
    // A small pool, as a replica's under load: a redeem that held a connection while its answer ran
    // (or waited on the row's lock) would leave none for anyone else.
    const sql = postgres(db.current.url, { max: 3, onnotice: () => {} });
    try {
      const answerLinks = createAnswerLinks({ sql, secret: SECRET });
      const { token } = await answerLinks.mint(target("per_race"));
      const { antiForgery } = (await answerLinks.open(token)) as LinkGrant;
      let runs = 0;
      let release!: () => void;
      const answered = new Promise<void>((resolve) => {
        release = resolve;
      });
      const redeems = Array.from({ length: 10 }, () =>
        answerLinks.redeem(token, antiForgery, async () => {
          runs++;
          await answered; // a slow answer (a desktop's relay wait)
          return "won";
        }),
      );
      const within = <T>(promise: Promise<T>, ms: number) =>
        Promise.race([promise, new Promise<"timed out">((resolve) => setTimeout(() => resolve("timed out"), ms))]);
      // While the one answer is in flight: the nine others are already refused, and the pool still answers.
      const settled = await within(Promise.all(redeems.map((redeem) => within(redeem, 2_000))), 3_000);
      expect(await within(sql`select 1 as one`, 2_000)).toEqual([{ one: 1 }]);
      const early = (settled as unknown[]).map((outcome) => (outcome === "timed out" ? outcome : errorCode(outcome)));
      expect(early.sort()).toEqual([...Array.from({ length: 9 }, () => "link_busy"), "timed out"]);
      expect(runs).toBe(1);
      expect(await usedAt(token)).toBeNull();
      release();
      const outcomes = await Promise.all(redeems);
      expect(outcomes.map(errorCode).sort()).toEqual(["granted", ...Array.from({ length: 9 }, () => "link_busy")]);
      expect(await usedAt(token)).toBeInstanceOf(Date);
      expect(errorCode(await answerLinks.redeem(token, antiForgery, async () => "again"))).toBe("link_used");
    } finally {
      await sql.end();
    }
  });

  it("a lease that lapsed (its replica died mid-answer) lets the link be redeemed again", async () => {
    let clock = new Date();
    const answerLinks = links(() => clock);
    const { token } = await answerLinks.mint(target("per_lapsed"));
    const { antiForgery } = (await answerLinks.open(token)) as LinkGrant;
    // A claim whose redeem never came back: the lease is left in place.
    await db.current.sql`update notify_answer_link set answering_until = ${new Date(clock.getTime() + 60_000)} where id = ${token.split(".")[0]!}`;
    expect(errorCode(await answerLinks.redeem(token, antiForgery, async () => "too soon"))).toBe("link_busy");
    clock = new Date(clock.getTime() + 60_000);
    expect(await answerLinks.redeem(token, antiForgery, async () => "replayed")).toMatchObject({ result: "replayed" });
  });

  it("a run that throws rolls the spend back: the link can be redeemed again", async () => {
    const answerLinks = links();
    const { token } = await answerLinks.mint(target("per_retry"));
    const { antiForgery } = (await answerLinks.open(token)) as LinkGrant;
    await expect(
      answerLinks.redeem(token, antiForgery, async () => {
        throw new Error("the desktop did not answer");
      }),
    ).rejects.toThrow("the desktop did not answer");
    expect(await usedAt(token)).toBeNull();
    expect(await answerLinks.redeem(token, antiForgery, async () => "second try")).toMatchObject({ result: "second try" });
  });

  it("keeps no prompt text: a link row holds ids and times only", async () => {
    const columns = await db.current.sql<{ name: string }[]>`
      select column_name as name from information_schema.columns where table_name = 'notify_answer_link' order by ordinal_position`;
    expect(columns.map((c) => c.name)).toEqual([
      "id",
      "organization_id",
      "member_id",
      "session_id",
      "request_id",
      "expires_at",
      "used_at",
      "created_at",
      "answering_until",
    ]);
  });

  it("refuses a ttl over 15 minutes or not positive, and a short secret, at creation", () => {
    const { sql } = db.current;
    expect(() => createAnswerLinks({ sql, secret: SECRET, ttlMs: 15 * 60_000 + 1 })).toThrow(/at most 900000 \(15 minutes\)/);
    expect(() => createAnswerLinks({ sql, secret: SECRET, ttlMs: 0 })).toThrow(/more than 0/);
    expect(() => createAnswerLinks({ sql, secret: SECRET, ttlMs: Number.NaN })).toThrow(RangeError);
    expect(() => createAnswerLinks({ sql, secret: "short" })).toThrow(/at least 32 bytes/);
    expect(createAnswerLinks({ sql, secret: SECRET, ttlMs: 60_000 })).toBeDefined();
  });
});
