import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { createWitnessWorker, type WitnessWorkerOptions } from "./create-witness-worker.js";

export interface StartWitnessOptions extends Omit<WitnessWorkerOptions, "baseUrl"> {
  /** The worker's port (default: a free one). */
  port?: number;
  /** The resolver's port (default: a free one). */
  resolverPort?: number;
  /** Start asleep: the worker's port refuses connections until a resolve wakes it. */
  asleep?: boolean;
  /** How long waking takes after the first resolve. Default 3 s. */
  wakeDelayMs?: number;
}

export interface RunningWitness extends Omit<ReturnType<typeof createWitnessWorker>, "resolver" | "worker" | "close"> {
  /** The worker's base URL. */
  url: string;
  /** den-api's resolver (the base URL `createHttpWorkerResolver` takes). */
  resolverUrl: string;
  /** Stops the worker: its port refuses connections (open streams are cut) until a resolve wakes it. */
  sleep(): Promise<void>;
  stats(): { wakes: number; asleep: boolean };
  close(): Promise<void>;
}

/** Serves a witness worker and its resolver on 127.0.0.1. */
export async function startWitnessWorker(options: StartWitnessOptions): Promise<RunningWitness> {
  const power = { awake: !options.asleep, waking: null as ReturnType<typeof setTimeout> | null, wakes: 0 };
  let handlers: ReturnType<typeof createWitnessWorker> | undefined;
  const workerServer = createAdaptorServer({ fetch: (request: Request) => handlers!.worker.fetch(request) }) as Server;
  const resolverServer = createAdaptorServer({ fetch: (request: Request) => handlers!.resolver.fetch(request) }) as Server;
  const port = await listen(workerServer, options.port ?? 0);
  if (!power.awake) await shut(workerServer);
  const resolverPort = await listen(resolverServer, options.resolverPort ?? 0);
  const url = `http://127.0.0.1:${port}`;

  handlers = createWitnessWorker({
    ...options,
    baseUrl: url,
    power: {
      awake: () => power.awake,
      wake: () => {
        if (power.awake || power.waking) return;
        power.wakes++;
        power.waking = setTimeout(() => {
          void listen(workerServer, port).then(() => {
            power.waking = null;
            power.awake = true;
          });
        }, options.wakeDelayMs ?? 3_000);
      },
    },
  });
  const { resolver: _resolver, worker: _worker, close: closeEngine, ...controls } = handlers;
  return {
    ...controls,
    url,
    resolverUrl: `http://127.0.0.1:${resolverPort}`,
    sleep: async () => {
      if (!power.awake) return;
      power.awake = false;
      await shut(workerServer);
    },
    stats: () => ({ wakes: power.wakes, asleep: !power.awake }),
    close: async () => {
      if (power.waking) clearTimeout(power.waking);
      closeEngine();
      await Promise.all([power.awake ? shut(workerServer) : undefined, shut(resolverServer)]);
    },
  };
}

async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
