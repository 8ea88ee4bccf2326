import type { WakeBus } from "@openwork/desktop-target";
import type { Sql } from "postgres";
import type { DevMember } from "../dev-members.js";
import { serveGateway } from "../serve-gateway.js";
import { organizationOfRequest, startShardRouter } from "./shard-router.js";

/**
 * Shards on one machine: a gateway per database (each a shard), all served behind one shard
 * router, whose URL is every gateway's public URL. For tests and benchmarks (not a product).
 */
export async function startShards(options: {
  /** One client per shard, in shard order. */
  databases: readonly Sql[];
  members: () => readonly DevMember[];
  runnerTokenSecret: string;
  /** A bus per gateway (e.g. NATS); default each shard's own NOTIFY. */
  wakeBus?: () => Promise<WakeBus>;
  gateway?: Partial<Parameters<typeof serveGateway>[0]>;
}) {
  const urls: string[] = [];
  let organizationOf: (request: Request) => string | null = () => null;
  const router = await startShardRouter({
    shards: () => urls,
    organizationOf: (request) => organizationOf(request),
    ...(options.gateway?.logger ? { logger: options.gateway.logger } : {}),
  });
  organizationOf = organizationOfRequest({ members: options.members, runnerTokenSecret: options.runnerTokenSecret, audience: router.url });
  const gateways: Awaited<ReturnType<typeof serveGateway>>[] = [];
  for (const sql of options.databases) {
    const gateway = await serveGateway({
      sql,
      port: 0,
      publicUrl: router.url,
      members: options.members,
      cloudEnabled: () => false,
      runnerTokenSecret: options.runnerTokenSecret,
      ...(options.wakeBus ? { wakeBus: await options.wakeBus() } : {}),
      ...options.gateway,
    });
    gateways.push(gateway);
    urls.push(gateway.serverUrl);
  }
  return {
    router,
    gateways,
    close: async () => {
      await router.close();
      await Promise.all(gateways.map((gateway) => gateway.close()));
    },
  };
}
