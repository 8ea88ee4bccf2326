import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort } from "@openwork/embedded-postgres";
import { type FakeLlmRequest, startFakeLlm } from "./fake-llm.js";

/** A real opencode server on 127.0.0.1, offline, answering through the fake model. */
export interface RealOpencode {
  /** Base URL of opencode's own routes (`/session`, `/session/status`, …). */
  url: string;
  /** The directory opencode serves (its workspace). */
  directory: string;
  /** What the fake model was asked. */
  llmRequests: FakeLlmRequest[];
  /**
   * Kills the engine with `signal` (mid-reply, as a crash or a redeploy does) and starts it again
   * on the same port with the same data: what it stored survives, what it held in memory does not.
   */
  restart(signal?: "SIGKILL" | "SIGTERM"): Promise<void>;
  stop(): Promise<void>;
}

// Every network feature of opencode that has a switch, off.
const OFFLINE_ENV = {
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
  OPENCODE_DISABLE_EMBEDDED_WEB_UI: "1",
  OPENCODE_PURE: "1",
};

/**
 * Starts opencode 1.18.33 (npm `opencode-linux-x64`) offline: an isolated HOME, a seeded plugin
 * lock (so it does not try to npm-install its plugin), a workspace whose only provider is our
 * fake OpenAI-compatible model, and `bash` under an `ask` policy. Resolves once opencode printed "listening" and answers health:
 * requests sent earlier would hang forever.
 */
export async function startRealOpencode(): Promise<RealOpencode> {
  const root = await mkdtemp(join(tmpdir(), "openwork-opencode-"));
  const home = join(root, "home");
  const config = join(home, ".config");
  const directory = join(root, "workspace");
  await mkdir(join(config, "opencode", "node_modules"), { recursive: true });
  await mkdir(directory, { recursive: true });
  await writeFile(
    join(config, "opencode", "package-lock.json"),
    JSON.stringify({ lockfileVersion: 3, packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } } }),
  );
  const llm = await startFakeLlm();
  await writeFile(
    join(directory, "opencode.json"),
    JSON.stringify({
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      enabled_providers: ["fake"],
      model: "fake/fake-model",
      small_model: "fake/fake-model",
      // Shell commands wait for the human's approval: the permission flow tests need one.
      permission: { bash: "ask" },
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          name: "Fake local",
          options: { baseURL: llm.url, apiKey: "sk-fake" },
          models: { "fake-model": { name: "Fake Model", tool_call: true, limit: { context: 100000, output: 4096 } } },
        },
      },
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    ...OFFLINE_ENV,
  };
  let child: ChildProcess | undefined;
  const kill = () => child?.kill("SIGKILL");
  process.once("exit", kill);
  const stop = async () => {
    process.off("exit", kill);
    if (child) await stopChild(child);
    await llm.close();
    await rm(root, { recursive: true, force: true });
  };
  const launch = async () => {
    child = spawn(opencodeBinary(), ["serve", "--hostname", "127.0.0.1", "--port", String(port)], { cwd: directory, env, stdio: ["ignore", "pipe", "pipe"] });
    await waitForListening(child, 30_000);
    const health = await fetch(`${url}/global/health`, { signal: AbortSignal.timeout(5_000) });
    if (!health.ok) throw new Error(`opencode health answered ${health.status}`);
  };
  try {
    await launch();
    return {
      url,
      directory,
      llmRequests: llm.requests,
      restart: async (signal = "SIGKILL") => {
        if (child) await stopChild(child, signal);
        await launch();
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function opencodeBinary(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("opencode-linux-x64/package.json")), "bin", "opencode");
}

function waitForListening(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`opencode did not start within ${timeoutMs} ms: ${output.slice(-500)}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on http/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`opencode exited (${code}) before listening: ${output.slice(-500)}`));
    });
  });
}

async function stopChild(child: ChildProcess, signal: "SIGKILL" | "SIGTERM" = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), 8_000);
  await exited;
  clearTimeout(timer);
}
