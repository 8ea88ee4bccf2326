import type { DevMember } from "../dev-members.js";

/** A request an MCP client posted, as a test's recording fetch saw it. */
export interface Posted {
  headers: Headers;
  body: any;
}

/** Posts `body` to `mcpUrl` as `who`, with the headers the client sent `round` with: a replay, or another member's. */
export const repost = (mcpUrl: string, round: Posted, who: DevMember, body: unknown) =>
  fetch(mcpUrl, {
    method: "POST",
    headers: { ...Object.fromEntries(round.headers), authorization: `Bearer ${who.mcpToken}` },
    body: JSON.stringify(body),
  });
