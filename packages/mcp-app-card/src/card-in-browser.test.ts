import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARD_HTML } from "./card-html.js";

// The card in headless Chromium, hosted by the real MCP Apps host bridge (ext-apps' AppBridge
// over its PostMessageTransport), bundled for the page by esbuild. Screenshots go to
// test-output/ (not committed) for a reviewer to look at.
const CHROMIUM = "/usr/bin/chromium";
const OUTPUT = fileURLToPath(new URL("../test-output/", import.meta.url));
let server: Server;
let browser: Browser;
let hostUrl: string;

const HOST_PAGE = `<!doctype html><html><body style="margin:0">
<iframe id="card" sandbox="allow-scripts" style="border:0;display:block"></iframe>
<script src="/bridge.js"></script>
<script>
  window.hostLog = { sizes: [], links: [], calls: [] };
  window.startHost = async ({ result, theme, variables, tools, width }) => {
    const frame = document.getElementById("card");
    frame.style.width = width + "px";
    frame.style.height = "120px";
    document.body.style.background = theme === "dark" ? "#111" : "#fff";
    const bridge = new Bridge.AppBridge(null, { name: "test-host", version: "1" }, { openLinks: {}, ...(tools ? { serverTools: {} } : {}) }, { hostContext: { theme, styles: { variables } } });
    bridge.onsizechange = ({ height }) => { window.hostLog.sizes.push(height); if (height) frame.style.height = height + "px"; };
    bridge.onopenlink = async ({ url }) => { window.hostLog.links.push(url); return {}; };
    bridge.oncalltool = async (params) => { window.hostLog.calls.push(params.arguments.name); return window.hostCallTool(params); };
    bridge.oninitialized = () => { bridge.sendToolInput({ arguments: {} }); bridge.sendToolResult(result); };
    window.bridge = bridge;
    // Listening first: the card says ui/initialize as soon as it loads.
    await bridge.connect(new Bridge.PostMessageTransport(frame.contentWindow, frame.contentWindow));
    frame.srcdoc = ${JSON.stringify(CARD_HTML).replace(/<\//g, "<\\/")};
  };
</script></body></html>`;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium); npm test does so as root`);
  }
  const bundle = await build({
    stdin: {
      contents: 'export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";',
      resolveDir: fileURLToPath(new URL(".", import.meta.url)),
      loader: "js",
    },
    bundle: true,
    format: "iife",
    globalName: "Bridge",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  const bridgeJs = bundle.outputFiles[0]!.text;
  server = createServer((request, response) => {
    const js = request.url === "/bridge.js";
    response.writeHead(200, { "content-type": js ? "text/javascript; charset=utf-8" : "text/html; charset=utf-8" });
    response.end(js ? bridgeJs : HOST_PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  hostUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/host.html`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  await mkdir(OUTPUT, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  server?.close();
});

type ToolResult = { content: { type: "text"; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
const asResult = (payload: Record<string, unknown>, isError = false): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(payload) }],
  structuredContent: payload,
  ...(isError ? { isError } : {}),
});

async function host(options: {
  payload: Record<string, unknown>;
  isError?: boolean;
  theme?: "light" | "dark";
  variables?: Record<string, string>;
  tools?: (name: string, body: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>;
  width?: number;
}) {
  const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  if (options.tools) {
    const tools = options.tools;
    // A read with waitMs waits on the gateway; the stand-in waits a little too, so a running turn is no busy loop.
    await page.exposeFunction("hostCallTool", async (params: { arguments: { name: string; body: Record<string, unknown> } }) => {
      if (params.arguments.name === "remote-session:read") await new Promise((resolve) => setTimeout(resolve, 100));
      return asResult(await tools(params.arguments.name, params.arguments.body));
    });
  }
  await page.goto(hostUrl);
  await page.evaluate((o) => (window as unknown as { startHost(o: unknown): Promise<void> }).startHost(o), {
    result: asResult(options.payload, options.isError),
    theme: options.theme ?? "light",
    variables: options.variables ?? {},
    tools: Boolean(options.tools),
    width: options.width ?? 420,
  });
  return {
    page,
    card: page.frameLocator("#card"),
    log: () => page.evaluate(() => (window as unknown as { hostLog: { sizes: number[]; links: string[]; calls: string[] } }).hostLog),
  };
}
const shot = (page: Page, name: string) => page.screenshot({ path: `${OUTPUT}${name}.png` });

const session = {
  sessionId: "rs_01j0000000000000000000000",
  title: "Fix the <b>build</b>",
  target: "cloud",
  targetLabel: "Cloud",
  state: "idle",
  lastActivityAt: "2026-11-29T12:00:00.000Z",
  finalAssistantText: "All green.",
  webUrl: "https://web.openwork.test/w/ws_1/s/ses_1",
};

describe("the card in a real MCP Apps host bridge", () => {
  it("renders a session as text only, and opens exactly its webUrl through the host", async () => {
    const { page, card, log } = await host({ payload: session });
    await expect.poll(() => card.locator(".title").textContent()).toBe("Fix the <b>build</b>");
    expect(await card.locator(".state").textContent()).toBe("idle");
    expect(await card.locator(".reply").textContent()).toBe("All green.");
    await card.locator("#open").click();
    await expect.poll(async () => (await log()).links).toEqual(["https://web.openwork.test/w/ws_1/s/ses_1"]);
    await shot(page, "card-light");
    await page.close();
  });

  it("follows the host's theme and style variables, not only the OS", async () => {
    const dark = await host({ payload: session, theme: "dark" });
    await expect.poll(() => dark.card.locator("html").getAttribute("data-theme")).toBe("dark");
    const background = await dark.card.locator("body").evaluate((b) => getComputedStyle(b).backgroundColor);
    const [r, g, b] = background.match(/\d+/g)!.map(Number);
    expect(r! + g! + b!).toBeLessThan(200);
    await shot(dark.page, "card-dark");
    await dark.page.close();
    const styled = await host({ payload: session, variables: { "--color-background-primary": "rgb(1, 2, 3)" } });
    await expect.poll(() => styled.card.locator("body").evaluate((b) => getComputedStyle(b).backgroundColor)).toBe("rgb(1, 2, 3)");
    await styled.page.close();
  });

  it("reports its size, so a long title in a 360 px host keeps the link in view", async () => {
    const { page, card, log } = await host({ payload: { ...session, title: "A very long title ".repeat(12) }, width: 360 });
    await expect.poll(() => card.locator("#open").count()).toBe(1);
    // The host sizes the frame from what the card reports: the link ends up inside it.
    await expect
      .poll(async () => {
        const frame = (await page.locator("#card").boundingBox())!;
        const link = (await card.locator("#open").boundingBox())!;
        return frame.y + frame.height - (link.y + link.height);
      })
      .toBeGreaterThanOrEqual(0);
    expect((await log()).sizes.at(-1)).toBeGreaterThan(120);
    await shot(page, "card-360");
    await page.close();
  });

  it("answers ping and teardown, and ignores messages from any window but its host", async () => {
    const { page, card } = await host({ payload: session });
    await expect.poll(() => card.locator(".title").textContent()).toBe("Fix the <b>build</b>");
    const pong = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const frame = document.getElementById("card") as HTMLIFrameElement;
          window.addEventListener("message", (event) => {
            if (event.data?.id === "ping-1") resolve(event.data.result);
          });
          frame.contentWindow!.postMessage({ jsonrpc: "2.0", id: "ping-1", method: "ping" }, "*");
        }),
    );
    expect(pong).toEqual({});
    // Another frame on the page tries to inject a fake session with its own link.
    await page.evaluate(() => {
      const intruder = document.createElement("iframe");
      intruder.setAttribute("sandbox", "allow-scripts");
      intruder.srcdoc = `<script>parent.frames[0].postMessage({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { structuredContent: { sessionId: "rs_evil", title: "Evil", state: "idle", webUrl: "https://evil.test" } } }, "*");</script>`;
      document.body.append(intruder);
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await card.locator(".title").textContent()).toBe("Fix the <b>build</b>");
    expect(await card.locator("#open").getAttribute("href")).toBe("https://web.openwork.test/w/ws_1/s/ses_1");
    await page.evaluate(() => (window as unknown as { bridge: { teardownResource(p: object): Promise<unknown> } }).bridge.teardownResource({}));
    await page.close();
  });

  it("renders errors (message, human step, codes), lists, targets and desktop sessions", async () => {
    const error = await host({
      payload: {
        error: "desktop_offline",
        message: "no OpenWork Desktop of yours is online",
        action: "Open OpenWork Desktop on Mac",
        retryable: true,
        referenceId: "ref_1",
      },
      isError: true,
    });
    await expect.poll(() => error.card.locator(".error .title").textContent()).toBe("no OpenWork Desktop of yours is online");
    expect(await error.card.locator(".error").textContent()).toContain("Open OpenWork Desktop on Mac");
    expect(await error.card.locator(".error").textContent()).toContain("ref_1");
    await shot(error.page, "card-error");
    await error.page.close();
    const list = await host({
      payload: {
        sessions: [
          { sessionId: "rs_a", title: "First", target: "cloud", state: "idle" },
          { sessionId: "rs_b", title: "Second", target: "desktop", state: "running" },
        ],
        machines: [],
      },
    });
    await expect.poll(() => list.card.locator("td").allTextContents()).toEqual(["First", "cloud", "idle", "Second", "desktop", "running"]);
    await list.page.close();
    const targets = await host({
      payload: { targets: [{ name: "desktop", label: "Desktop", available: true, machines: [{ name: "Studio Mac", online: true }] }] },
    });
    await expect.poll(() => targets.card.locator("td").allTextContents()).toEqual(["Desktop", "available", "", "", "Studio Mac", "online"]);
    await targets.page.close();
    const desktop = await host({
      payload: {
        sessionId: "rs_d",
        title: "On the desk",
        target: "desktop",
        targetLabel: "Desktop",
        state: "queued",
        runner: { runnerId: "r1", name: "Studio Mac" },
      },
    });
    await expect.poll(() => desktop.card.locator(".meta").textContent()).toContain("on Studio Mac");
    expect(await desktop.card.locator("#open").count()).toBe(0);
    await desktop.page.close();
  });

  it("stays live while the session runs when the host lets it call tools: refreshes the reply, then offers a follow-up; Stop stops", async () => {
    let reads = 0;
    const { page, card, log } = await host({
      payload: {
        ...session,
        state: "running",
        finalAssistantText: undefined,
        next: { name: "remote-session:read", body: { sessionId: session.sessionId, from: "start", waitMs: 20_000 } },
      },
      tools: (name) => {
        if (name === "remote-session:read") {
          reads++;
          return reads === 1
            ? { sessionId: session.sessionId, state: "running", partialText: "Half way", messages: [], cursor: "c1" }
            : { sessionId: session.sessionId, state: "idle", finalAssistantText: "All done.", messages: [], cursor: "c2" };
        }
        if (name === "remote-session:send")
          return {
            sessionId: session.sessionId,
            messageId: "m2",
            state: "accepted",
            next: { name: "remote-session:read", body: { sessionId: session.sessionId, cursor: "c2", waitMs: 20_000 } },
          };
        return { sessionId: session.sessionId, stopped: true };
      },
    });
    await expect.poll(() => card.locator(".reply").textContent()).toBe("All done.");
    expect(await card.locator(".state").textContent()).toBe("idle");
    expect(await card.locator("#follow-up").count()).toBe(1);
    await shot(page, "card-live-idle");
    // A follow-up from the card goes through the host; the card follows the new turn.
    reads = 0;
    await card.locator("#follow-up").fill("one more thing");
    await card.locator("#send").click();
    await expect.poll(async () => (await log()).calls).toContain("remote-session:send");
    await expect.poll(() => card.locator(".reply").textContent()).toBe("All done.");
    await page.close();

    // Stop, on a turn that keeps running until the stop arrives.
    let stopped = false;
    const running = await host({
      payload: {
        ...session,
        state: "running",
        finalAssistantText: undefined,
        next: { name: "remote-session:read", body: { sessionId: session.sessionId, from: "start", waitMs: 20_000 } },
      },
      tools: (name) => {
        if (name === "remote-session:stop") {
          stopped = true;
          return { sessionId: session.sessionId, stopped: true };
        }
        return stopped
          ? { sessionId: session.sessionId, state: "stopped", messages: [], cursor: "c9" }
          : { sessionId: session.sessionId, state: "running", partialText: "working", messages: [], cursor: "c3" };
      },
    });
    await expect.poll(() => running.card.locator("#stop").count()).toBe(1);
    await running.card.locator("#stop").click();
    await expect.poll(async () => (await running.log()).calls).toContain("remote-session:stop");
    await expect.poll(() => running.card.locator(".state").textContent()).toBe("stopped");
    expect(await running.card.locator("#stop").count()).toBe(0);
    await running.page.close();
  });

  it("shows what a waiting session asks, with the answers as buttons, and follows the turn once answered", async () => {
    const answers: Record<string, unknown>[] = [];
    let answered = false;
    const permission = { kind: "permission", id: "per_1", title: "bash", detail: "rm -rf build", askedAt: "2026-11-29T12:00:00.000Z" };
    const notified = [
      { channel: "email", at: "2026-11-29T12:00:03.000Z" },
      { channel: "webhook", at: "2026-11-29T12:00:04.000Z" },
    ];
    const { page, card } = await host({
      payload: {
        ...session,
        state: "waiting_input",
        finalAssistantText: undefined,
        pending: permission,
        notified,
        next: { name: "remote-session:respond", body: {} },
      },
      tools: (name, body) => {
        if (name === "remote-session:respond") {
          answers.push(body);
          answered = true;
          return {
            sessionId: session.sessionId,
            requestId: "per_1",
            state: "running",
            alreadyAnswered: false,
            delivered: true,
            next: { name: "remote-session:read", body: { sessionId: session.sessionId, from: "end", waitMs: 20_000 } },
          };
        }
        return answered ? { sessionId: session.sessionId, state: "idle", finalAssistantText: "Removed.", messages: [], cursor: "c1" } : {};
      },
    });
    await expect.poll(() => card.locator("#pending .title").textContent()).toBe("Permission requested: bash");
    expect(await card.locator("#pending .detail").textContent()).toBe("rm -rf build");
    expect(await card.locator("#pending button").allTextContents()).toEqual(["Allow once", "Always allow", "Reject"]);
    // Who was told, in the card's own locale and time zone.
    const times = await card.locator("body").evaluate(
      (_, ats) => ats.map((at) => new Date(at).toLocaleString()),
      notified.map((n) => n.at),
    );
    expect(await card.locator("#pending .notified").allTextContents()).toEqual([
      `The member was notified by email at ${times[0]}`,
      `The member was notified by webhook at ${times[1]}`,
    ]);
    await shot(page, "card-waiting-permission");
    await card.locator("#pending button", { hasText: "Allow once" }).click();
    await expect.poll(() => card.locator(".reply").textContent()).toBe("Removed.");
    expect(answers).toEqual([{ sessionId: session.sessionId, requestId: "per_1", answer: { permission: "once" } }]);
    expect(await card.locator("#pending").count()).toBe(0);
    expect(await card.locator(".notified").count()).toBe(0);
    await page.close();

    // A question: its options are buttons, and a typed answer works too.
    const question = { kind: "question", id: "que_1", title: "Colour", detail: "Which colour?", options: [{ label: "Red" }, { label: "Blue" }], overdue: true };
    const asked = await host({
      payload: { ...session, state: "waiting_input", pending: question },
      tools: (name, body) => (answers.push(body), name === "remote-session:respond" ? { sessionId: session.sessionId, state: "running" } : {}),
    });
    await expect.poll(() => asked.card.locator("#pending button").allTextContents()).toEqual(["Red", "Blue", "Answer"]);
    expect(await asked.card.locator("#pending .error").textContent()).toMatch(/long time/);
    await asked.card.locator("#answer").fill("Teal");
    await asked.card.locator("#answer-send").click();
    await expect.poll(() => answers.at(-1)).toEqual({ sessionId: session.sessionId, requestId: "que_1", answer: { text: "Teal" } });
    await asked.page.close();

    // Asked on an OpenWork desktop: answered in its app only, so no buttons.
    const inApp = await host({
      payload: { ...session, state: "waiting_input", pending: { ...question, id: "openwork_question", inAppOnly: true } },
      tools: () => ({}),
    });
    await expect.poll(() => inApp.card.locator("#pending .small").last().textContent()).toMatch(/OpenWork app/);
    expect(await inApp.card.locator("#pending button").count()).toBe(0);
    await inApp.page.close();
  });

  it("shows a session paused at its budget: what it spent against the budget, add-more choices and a stop", async () => {
    const calls: [string, Record<string, unknown>][] = [];
    const spend = { tokens: 1_200, tokensIn: 700, tokensOut: 500, costUsd: 0.0012, runningMs: 4_000, usage: "reported" };
    const pending = {
      kind: "budget",
      id: "budget_abc",
      title: "Budget reached",
      detail: "this session's budget is reached",
      budget: { tokens: 1_000 },
      spent: spend,
      scope: "session",
    };
    const paused = await host({
      payload: { ...session, state: "waiting_input", finalAssistantText: undefined, spend, budget: { tokens: 1_000 }, pending },
      tools: (name, body) => (calls.push([name, body]), name === "remote-session:respond" ? { sessionId: session.sessionId, state: "running" } : {}),
    });
    await expect.poll(() => paused.card.locator("#pending .title").textContent()).toBe("Budget reached: Budget reached");
    expect(await paused.card.locator("#spend").textContent()).toBe("Spent 1,200 tokens of 1,000 tokens");
    expect(await paused.card.locator("#pending button").allTextContents()).toEqual([
      // From the 1 200 spent: half, all and three times the budget again.
      "Add 700 tokens (to 1,700 tokens)",
      "Add 1,200 tokens (to 2,200 tokens)",
      "Add 3,200 tokens (to 4,200 tokens)",
      "Stop the session",
    ]);
    await paused.card.locator("#pending button", { hasText: "to 2,200" }).click();
    await expect
      .poll(() => calls.find(([name]) => name === "remote-session:respond")?.[1])
      .toEqual({
        sessionId: session.sessionId,
        requestId: "budget_abc",
        answer: { budget: { tokens: 2_200 } },
      });
    await paused.page.close();
  });

  it("waits on a session that waits for input like any reader: one read from the cursor it was shown, until that changes", async () => {
    const reads: Record<string, unknown>[] = [];
    let answerInApp!: () => void;
    const answered = new Promise<void>((resolve) => (answerInApp = resolve));
    const permission = { kind: "permission", id: "per_1", title: "bash", detail: "rm -rf build" };
    const { page, card } = await host({
      // A read's result: the session asks; its next step is the answer, and its cursor says what it showed.
      payload: {
        ...session,
        state: "waiting_input",
        finalAssistantText: undefined,
        pending: permission,
        notified: [{ channel: "email", at: "2026-11-29T12:00:03.000Z" }],
        cursor: "seen-waiting",
        next: { name: "remote-session:respond", body: {} },
      },
      tools: async (name, body) => {
        if (name !== "remote-session:read") return {};
        reads.push(body);
        // As the gateway answers it: nothing comes back until the session moves on after that cursor.
        await answered;
        return { sessionId: session.sessionId, state: "idle", finalAssistantText: "Answered at the desk.", messages: [], cursor: "after-answer" };
      },
    });
    await expect.poll(() => card.locator("#pending .title").textContent()).toBe("Permission requested: bash");
    await expect.poll(() => reads.length).toBe(1);
    expect(reads[0]).toEqual({ sessionId: session.sessionId, cursor: "seen-waiting", waitMs: 20_000 });
    // The buttons stay usable while the card waits.
    expect(await card.locator("#pending button").count()).toBe(3);
    expect(await card.locator("#pending .notified").count()).toBe(1);
    answerInApp();
    await expect.poll(() => card.locator(".reply").textContent()).toBe("Answered at the desk.");
    expect(await card.locator(".state").textContent()).toBe("idle");
    // The request was answered elsewhere: what it asked, and who was told of it, leave with it.
    expect(await card.locator("#pending").count()).toBe(0);
    expect(await card.locator(".notified").count()).toBe(0);
    expect(reads).toHaveLength(1);
    await page.close();

    // Reached by following a running turn: the read after the one that showed the question starts from that read's cursor.
    const chain: Record<string, unknown>[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const live = await host({
      payload: {
        ...session,
        state: "running",
        finalAssistantText: undefined,
        next: { name: "remote-session:read", body: { sessionId: session.sessionId, from: "start", waitMs: 20_000 } },
      },
      tools: async (name, body) => {
        if (name !== "remote-session:read") return {};
        chain.push(body);
        if (chain.length === 1)
          return {
            sessionId: session.sessionId,
            state: "waiting_input",
            pending: permission,
            messages: [],
            cursor: "shown-question",
            next: { name: "remote-session:respond", body: {} },
          };
        await released;
        return { sessionId: session.sessionId, state: "stopped", messages: [], cursor: "end" };
      },
    });
    await expect.poll(() => chain.length).toBe(2);
    expect(chain[1]).toEqual({ sessionId: session.sessionId, cursor: "shown-question", waitMs: 20_000 });
    release();
    await expect.poll(() => live.card.locator(".state").textContent()).toBe("stopped");
    expect(chain).toHaveLength(2);
    await live.page.close();
  });

  it("names the session that spawned this one, by title or else by id, and nothing when none did", async () => {
    const spawned = await host({ payload: { ...session, spawnedBy: { sessionId: "rs_parent", title: "Release <i>1.2</i>" } } });
    await expect.poll(() => spawned.card.locator("#spawned-by").textContent()).toBe("Spawned by Release <i>1.2</i>");
    await shot(spawned.page, "card-spawned-by");
    await spawned.page.close();
    const untitled = await host({ payload: { ...session, spawnedBy: { sessionId: "rs_parent" } } });
    await expect.poll(() => untitled.card.locator("#spawned-by").textContent()).toBe("Spawned by rs_parent");
    await untitled.page.close();
    const plain = await host({ payload: session });
    await expect.poll(() => plain.card.locator(".title").textContent()).toBe("Fix the <b>build</b>");
    expect(await plain.card.locator("#spawned-by").count()).toBe(0);
    await plain.page.close();
  });

  it("degrades to a static card when the host does not let views call tools", async () => {
    const { page, card, log } = await host({
      payload: { ...session, state: "running", next: { name: "remote-session:read", body: { sessionId: session.sessionId } } },
    });
    await expect.poll(() => card.locator(".state").textContent()).toBe("running");
    expect(await card.locator("#stop").count()).toBe(0);
    expect((await log()).calls).toEqual([]);
    await page.close();
  });
});
