import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";

/**
 * The reference gateway's built main (`dist/main.js`) in a process of its own, on `port`, with no
 * runner and no cloud of its own: a process a test can SIGKILL. `ready()` resolves once it
 * answers /health.
 */
export function spawnGatewayProcess(options: { port: number; databaseUrl: string; devConfig: string; env?: Record<string, string> }) {
  const child: ChildProcess = spawn(process.execPath, [new URL("../../dist/main.js", import.meta.url).pathname], {
    env: {
      PATH: process.env.PATH,
      PORT: String(options.port),
      DATABASE_URL: options.databaseUrl,
      DEV_CONFIG: options.devConfig,
      START_RUNNER: "0",
      CLOUD_RESOLVER_URL: "http://127.0.0.1:9",
      CLOUD_GATEWAY_KEY: "none",
      ...options.env,
    },
    stdio: "ignore",
  });
  const url = `http://127.0.0.1:${options.port}`;
  return {
    url,
    child,
    ready: async (timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`the gateway process exited with ${child.exitCode} before it served`);
        const healthy = await fetch(`${url}/health`).then(
          (response) => response.ok,
          () => false,
        );
        if (healthy) return;
        if (Date.now() > deadline) throw new Error("the gateway process did not serve in time");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    /** SIGKILL: no shutdown, no drain close, nothing flushed. Resolves once it is gone. */
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
  };
}
