import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createWitnessWorker, type WitnessWorkerOptions } from "./create-witness-worker.js";

export interface RunningWitness extends ReturnType<typeof createWitnessWorker> {
  url: string;
  options: Omit<WitnessWorkerOptions, "baseUrl"> & { baseUrl: string };
  close(): Promise<void>;
}

/** Serves a witness worker on 127.0.0.1 (a free port unless `port` is given). */
export async function startWitnessWorker(options: Omit<WitnessWorkerOptions, "baseUrl"> & { port?: number }): Promise<RunningWitness> {
  let handler: ((request: Request) => Response | Promise<Response>) | undefined;
  const server = serve({ fetch: (request: Request) => handler!(request), port: options.port ?? 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const full = { ...options, baseUrl: url };
  const witness = createWitnessWorker(full);
  handler = witness.fetch;
  return {
    ...witness,
    url,
    options: full,
    close: async () => {
      (server as import("node:http").Server).closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
