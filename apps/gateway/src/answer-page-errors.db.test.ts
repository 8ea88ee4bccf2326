import { createAnswerLinks } from "@openwork/session-notify";
import { useTestDatabase } from "@openwork/test-postgres";
import { expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
const member = fixedDevMember("answer_errors");

it("answers the page with a retry page, not a 500, when the database is gone, and logs no link", async () => {
  const logLines: string[] = [];
  const log = (m: string, f?: Record<string, unknown>) => void logLines.push(`${m} ${JSON.stringify(f ?? {})}`);
  const secret = "answer-errors-link-secret-0123456789abcdef";
  const test = await startTestGateway(db.current.url, member, { logger: { info: log, warn: log, error: log }, notify: { answerLinkSecret: secret } });
  // A link signed with the gateway's secret: looking it up needs the database.
  const links = createAnswerLinks({ sql: test.sql, secret });
  const { token } = await links.mint({ organizationId: member.organizationId, memberId: member.memberId, sessionId: "rs_gone", requestId: "per_gone" });
  await test.sql.end({ timeout: 1 });
  const response = await fetch(`${test.gateway.baseUrl}/notify/answer/${token}`);
  expect(response.status).toBe(503);
  expect(response.headers.get("content-type")).toContain("text/html");
  const page = await response.text();
  const referenceId = /reference ([^)]+)\)/.exec(page)?.[1];
  expect(logLines.some((line) => line.startsWith("answer page: request failed") && line.includes(String(referenceId)))).toBe(true);
  expect(logLines.join("\n")).not.toContain(token);
  await test.close().catch(() => {});
});
