import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CARD_HTML } from "./card-html.js";

const CHROMIUM = "/usr/bin/chromium";
let server: Server;
let browser: Browser;
let hostUrl: string;

// A page playing the MCP Apps host: it puts the card in a sandboxed iframe, answers
// ui/initialize, waits for ui/notifications/initialized, then sends the tool result.
const HOST_PAGE = `<!doctype html><html><body style="margin:0;background:#fff">
<iframe id="card" sandbox="allow-scripts" style="width:420px;height:160px;border:1px solid #ccc"></iframe>
<script>
  const result = JSON.parse(decodeURIComponent(location.hash.slice(1)));
  window.hostLog = [];
  const frame = document.getElementById("card");
  window.addEventListener("message", (event) => {
    const m = event.data;
    window.hostLog.push(m.method || "response");
    if (m.method === "ui/initialize") {
      frame.contentWindow.postMessage({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2026-01-26", hostInfo: { name: "test-host", version: "1" }, hostCapabilities: {}, hostContext: { theme: "light" } } }, "*");
    } else if (m.method === "ui/notifications/initialized") {
      frame.contentWindow.postMessage({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: {} } }, "*");
      frame.contentWindow.postMessage({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result }, "*");
    } else if (m.method === "ui/open-link") {
      window.openedLink = m.params.url;
      frame.contentWindow.postMessage({ jsonrpc: "2.0", id: m.id, result: {} }, "*");
    }
  });
  frame.srcdoc = ${JSON.stringify(CARD_HTML).replace(/<\//g, "<\\/")};
</script></body></html>`;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium); npm test does so as root`);
  }
  server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(HOST_PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  hostUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/host.html`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});
afterAll(async () => {
  await browser?.close();
  server?.close();
});

async function renderCard(result: unknown) {
  const page = await browser.newPage();
  await page.goto(`${hostUrl}#${encodeURIComponent(JSON.stringify(result))}`);
  const card = page.frameLocator("#card");
  return { page, card };
}

it("renders title, target, state and the Open in OpenWork Web link from a tool result", async () => {
  const { page, card } = await renderCard({
    content: [{ type: "text", text: "Remote session created" }],
    structuredContent: {
      sessionId: "rs_01j0000000000000000000000",
      title: "Fix the <b>build</b>",
      target: "echo",
      targetLabel: "Echo",
      state: "running",
      lastActivityAt: "2026-11-29T12:00:00.000Z",
      webUrl: "https://web.openwork.test/w/ws_1/s/ses_1",
    },
  });
  await expect.poll(() => card.locator("#title").textContent()).toBe("Fix the <b>build</b>");
  // The target's own label, whatever the target: the card knows none by name.
  expect(await card.locator("#target").textContent()).toBe("Echo");
  expect(await card.locator("#state").textContent()).toBe("running");
  const link = card.locator("#open");
  expect(await link.textContent()).toBe("Open in OpenWork Web");
  expect(await link.getAttribute("href")).toBe("https://web.openwork.test/w/ws_1/s/ses_1");
  // The handshake came first, in order.
  expect(await page.evaluate(() => (window as unknown as { hostLog: string[] }).hostLog.slice(0, 2))).toEqual(["ui/initialize", "ui/notifications/initialized"]);
  await link.click();
  await expect.poll(() => page.evaluate(() => (window as unknown as { openedLink?: string }).openedLink)).toBe("https://web.openwork.test/w/ws_1/s/ses_1");
  const output = fileURLToPath(new URL("../test-output/", import.meta.url));
  await mkdir(output, { recursive: true });
  await page.screenshot({ path: `${output}card.png` });
  await page.close();
});

it("falls back to the JSON text of content, and hides a link that is not http(s)", async () => {
  const { page, card } = await renderCard({
    content: [{ type: "text", text: JSON.stringify({ sessionId: "rs_2", title: "From text", target: "cloud", state: "idle", webUrl: "javascript:alert(1)" }) }],
  });
  await expect.poll(() => card.locator("#title").textContent()).toBe("From text");
  expect(await card.locator("#target").textContent()).toBe("cloud");
  expect(await card.locator("#open").isHidden()).toBe(true);
  await page.close();
});
