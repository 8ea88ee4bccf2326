#!/usr/bin/env node
import { z } from "zod";
import { startWitnessWorker } from "./start-witness-worker.js";

// The only place that reads the environment.
const env = z
  .object({
    WITNESS_PORT: z.coerce.number().int().min(0).max(65535).default(8788),
    WITNESS_RESOLVER_PORT: z.coerce.number().int().min(0).max(65535).default(8789),
    WITNESS_CLIENT_TOKEN: z.string().min(8).default("witness-client-token"),
    WITNESS_HOST_TOKEN: z.string().min(8).default("witness-host-token"),
    WITNESS_GATEWAY_KEY: z.string().min(8).default("witness-gateway-key"),
    WITNESS_OPENCODE_URL: z.url().optional(),
    WITNESS_OPENCODE_DIRECTORY: z.string().optional(),
    WITNESS_ASLEEP: z.enum(["0", "1"]).default("0"),
  })
  .parse(process.env);

const witness = await startWitnessWorker({
  port: env.WITNESS_PORT,
  resolverPort: env.WITNESS_RESOLVER_PORT,
  clientToken: env.WITNESS_CLIENT_TOKEN,
  hostToken: env.WITNESS_HOST_TOKEN,
  gatewayKey: env.WITNESS_GATEWAY_KEY,
  asleep: env.WITNESS_ASLEEP === "1",
  ...(env.WITNESS_OPENCODE_URL ? { opencode: { url: env.WITNESS_OPENCODE_URL, directory: env.WITNESS_OPENCODE_DIRECTORY ?? process.cwd() } } : {}),
});
process.stdout.write(`witness worker on ${witness.url} (${env.WITNESS_OPENCODE_URL ? "opencode" : "echo engine"}), its resolver on ${witness.resolverUrl}\n`);
const stop = () => void witness.close().then(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
