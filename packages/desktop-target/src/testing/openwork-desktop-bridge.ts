import { abortableSleep } from "./abortable-sleep.js";

// The OpenWork desktop double's bridge: how the app mints runner tokens for its runner and which
// of them the runner uses. It mints with the member's session, stepping the capability set down
// only on 400; again every `refreshMs`; and, when the runner retires a rejected credential, at
// once and then with backoff for repeated rejections. The runner takes a token only when its
// audience is the desktop's own base URL, and never a token it saw rejected.

type Send = (method: string, path: string, body: unknown, auth: string) => Promise<{ status: number; body: any }>;

/** The token request a released OpenWork desktop sends (`POST /v1/automation-runners/token`). */
export function openworkMintRequest(runnerId: string, capabilities: readonly string[] = ["remote_session_v1", "remote_session_control_v1"]) {
  return { runnerId, protocolVersion: 1, supportedExecutionTargets: ["desktop"], capabilities, appVersion: "0.19.0", platform: "darwin", concurrency: 1 };
}

export interface BridgeOptions {
  baseUrl: string;
  memberToken: string;
  runnerId: string;
  capabilitySets?: string[][] | undefined;
  refreshMs: number;
  send: Send;
  notes: string[];
  signal: AbortSignal;
  /** A new credential is in use (a new generation starts). */
  onConfigured(): void;
}

export interface Bridge {
  /** The runner's credential, or null while it has none it may use. */
  readonly token: string | null;
  readonly capabilities: string[];
  /** Grows with each credential taken or retired: what was started under an older one stops. */
  readonly generation: number;
  readonly retirements: number;
  /** The inventory route answered 404 for this credential: no more inventory on it. */
  readonly inventoryRefused: boolean;
  retire(token: string): void;
  refuseInventory(): void;
  mintNow(): Promise<void>;
  refreshLoop(): Promise<void>;
}

const DEFAULT_SETS = [
  ["model_attention_v1", "remote_session_v1", "remote_session_control_v1"],
  ["model_attention_v1", "remote_session_v1"],
  ["model_attention_v1"],
];
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** The desktop's normalization of a base URL or an audience: https (http on loopback), origin + path without a trailing slash. */
export function normalizeBase(value: string): string | null {
  try {
    const url = new URL(value);
    const loopback = LOOPBACK.has(url.hostname) || url.hostname.endsWith(".localhost");
    if (url.username || url.password || !(url.protocol === "https:" || (url.protocol === "http:" && loopback))) return null;
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  } catch {
    return null;
  }
}

function audienceOf(token: string): string | null {
  try {
    const claims = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString("utf8")) as { a?: unknown };
    return typeof claims.a === "string" ? normalizeBase(claims.a) : null;
  } catch {
    return null;
  }
}

export function openworkBridge(options: BridgeOptions): Bridge {
  const base = normalizeBase(options.baseUrl);
  const rejected = new Set<string>();
  const state = { token: null as string | null, capabilities: [] as string[], generation: 0, retirements: 0, inventoryRefused: false, rejectionsInARow: 0 };

  const configure = (token: string, capabilities: string[]) => {
    if (token === state.token) return;
    if (rejected.has(token)) return void options.notes.push("a token rejected before is not used again");
    if (base === null || audienceOf(token) !== base) return void options.notes.push(`token dropped: its audience is not ${options.baseUrl}`);
    Object.assign(state, { token, capabilities, generation: state.generation + 1, inventoryRefused: false });
    options.onConfigured();
  };
  const mintNow = async () => {
    for (const capabilities of options.capabilitySets ?? DEFAULT_SETS) {
      const minted = await options.send(
        "POST",
        "/v1/automation-runners/token",
        openworkMintRequest(options.runnerId, capabilities),
        `Bearer ${options.memberToken}`,
      );
      if (minted.status === 200 && typeof minted.body?.token === "string") return configure(minted.body.token, capabilities);
      if (minted.status !== 400) break;
    }
    // Any other failure (404, 5xx, no answer, 400 on the last set) waits for the next refresh.
    options.notes.push("mint failed: waiting for the next refresh");
  };

  return {
    get token() {
      return state.token;
    },
    get capabilities() {
      return state.capabilities;
    },
    get generation() {
      return state.generation;
    },
    get retirements() {
      return state.retirements;
    },
    get inventoryRefused() {
      return state.inventoryRefused;
    },
    retire: (token) => {
      if (token !== state.token) return;
      rejected.add(token);
      Object.assign(state, { token: null, generation: state.generation + 1, retirements: state.retirements + 1 });
      // At once, then 500 ms·2ⁿ⁻¹ (at most 30 s) for rejections in a row.
      const n = state.rejectionsInARow++;
      const delay = n === 0 ? 0 : Math.min(30_000, 500 * 2 ** (n - 1));
      void abortableSleep(delay, options.signal).then(() => (options.signal.aborted ? undefined : mintNow()));
    },
    refuseInventory: () => void (state.inventoryRefused = true),
    mintNow,
    refreshLoop: async () => {
      while (!options.signal.aborted) {
        await abortableSleep(options.refreshMs, options.signal);
        if (options.signal.aborted) return;
        state.rejectionsInARow = 0;
        await mintNow();
      }
    },
  };
}
