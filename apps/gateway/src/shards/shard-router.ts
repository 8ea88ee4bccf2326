import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { errorFacts, type Logger, newReferenceId, silentLogger } from "@openwork/remote-session-core";
import { verifyRunnerToken } from "@openwork/runner-protocol/server";
import type { DevMember } from "../dev-members.js";
import { sameSecret } from "../same-secret.js";
import { unexpectedErrorResponse } from "@openwork/remote-session-host";

/**
 * The shard of an organization among `count`: a stable hash, so every router agrees without
 * talking to each other (Citus hashes the distribution column the same way, on its coordinator).
 */
export function shardOf(organizationId: string, count: number): number {
  return createHash("sha256").update(organizationId).digest().readUInt32BE(0) % count;
}

/**
 * Whose organization a request acts for: a member's MCP or session token (the dev members), or a
 * runner token this deployment signed (verified, so a forged claim routes nowhere it could not
 * already reach). Null for anything else; such requests go to the first shard, which refuses them
 * or answers what needs no organization (health, metadata).
 */
export function organizationOfRequest(options: { members: () => readonly DevMember[]; runnerTokenSecret: string; audience: string }) {
  return (request: Request): string | null => {
    const token = /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1]?.trim();
    if (!token) return null;
    const member = options.members().find((m) => sameSecret(token, m.mcpToken) || sameSecret(token, m.sessionToken));
    if (member) return member.organizationId;
    const verified = verifyRunnerToken(token, { secret: options.runnerTokenSecret, audiences: [options.audience] });
    return verified.ok ? verified.claims.o : null;
  };
}

/**
 * A stand-in for a distributed PostgreSQL's router, for running two shards on one machine: each
 * shard is a gateway on its own PostgreSQL, and this proxies every request to the gateway of the
 * organization it acts for. It is not a product — a deployment on Citus runs plain gateway
 * replicas against the coordinator, which routes each statement by its `organization_id`. Every
 * shard gateway is served with this router's URL as its public URL (the runner-token audience).
 */
export async function startShardRouter(options: {
  /** The shard gateways' own URLs, in shard order. */
  shards: () => readonly string[];
  organizationOf: (request: Request) => string | null;
  port?: number;
  logger?: Logger;
}): Promise<{ url: string; routed: number[]; close(): Promise<void> }> {
  const routed: number[] = [];
  const logger = options.logger ?? silentLogger;
  const route = async (request: Request): Promise<Response> => {
    const shards = options.shards();
    const organization = options.organizationOf(request);
    const shard = organization === null ? 0 : shardOf(organization, shards.length);
    routed[shard] = (routed[shard] ?? 0) + 1;
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    headers.delete("host");
    try {
      const upstream = await fetch(`${shards[shard]}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        ...(request.body ? { body: request.body, duplex: "half" } : {}),
        redirect: "manual",
        signal: request.signal,
      } as RequestInit);
      // fetch has already decoded the body: its length and encoding are the proxy's to set.
      const answer = new Headers(upstream.headers);
      answer.delete("content-encoding");
      answer.delete("content-length");
      return new Response(upstream.body && endQuietly(upstream.body), { status: upstream.status, headers: answer });
    } catch (error) {
      const referenceId = newReferenceId();
      logger.warn("shard router: shard did not answer", { shard, referenceId, error: errorFacts(error) });
      return Response.json({ error: "shard_unavailable", message: `shard ${shard} did not answer`, retryable: true, referenceId }, { status: 502 });
    }
  };
  const server = serve({
    port: options.port ?? 0,
    hostname: "127.0.0.1",
    fetch: async (request: Request) => {
      try {
        return await route(request);
      } catch (error) {
        return unexpectedErrorResponse(logger, "shard router", request, error);
      }
    },
  });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    routed,
    close: async () => {
      (server as import("node:http").Server).closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The stream, ended rather than errored when the upstream goes away (a shard's SSE stream closing). */
function endQuietly(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream({
    pull: async (controller) => {
      const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
