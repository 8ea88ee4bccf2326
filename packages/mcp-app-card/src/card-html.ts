/**
 * The card, as one self-contained HTML document (inline style and script, no network), so hosts
 * need no CSP exceptions. It speaks the MCP Apps view protocol over postMessage itself —
 * `ui/initialize`, then `ui/notifications/initialized`, then it renders each
 * `ui/notifications/tool-result` — instead of bundling the 300 KB App class. Every value is
 * written with textContent, never as HTML. `structuredContent` is read first; a host that sends
 * only `content` gets its JSON text parsed instead.
 */
export const CARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Remote session</title>
<style>
  :root { color-scheme: light dark; font-family: var(--font-sans, system-ui, sans-serif); }
  body { margin: 0; padding: 12px 14px; background: var(--color-background-primary, transparent); color: var(--color-text-primary, CanvasText); }
  .card { display: grid; gap: 6px; }
  .title { font-size: 15px; font-weight: 600; margin: 0; overflow-wrap: anywhere; }
  .meta { font-size: 12px; opacity: .75; display: flex; gap: 10px; flex-wrap: wrap; }
  .state { font-weight: 600; }
  a.open { justify-self: start; margin-top: 4px; font-size: 13px; padding: 6px 10px; border-radius: 6px; text-decoration: none;
           background: var(--color-background-inverse, #1f6feb); color: var(--color-text-inverse, #fff); }
  a.open[hidden] { display: none; }
  .empty { font-size: 13px; opacity: .7; }
</style>
</head>
<body>
<div class="card" id="card">
  <p class="empty" id="empty">Waiting for the session…</p>
  <h1 class="title" id="title" hidden></h1>
  <div class="meta" id="meta" hidden>
    <span id="target"></span><span class="state" id="state"></span><span id="activity"></span>
  </div>
  <a class="open" id="open" target="_blank" rel="noopener noreferrer" hidden>Open in OpenWork Web</a>
</div>
<script>
(function () {
  var nextId = 1;
  var pending = {};
  function send(message) { window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*"); }
  function request(method, params) {
    var id = nextId++;
    send({ id: id, method: method, params: params });
    return new Promise(function (resolve) { pending[id] = resolve; });
  }
  function text(id, value) { var el = document.getElementById(id); el.textContent = value || ""; el.hidden = !value; }
  function payloadOf(result) {
    if (result && result.structuredContent && typeof result.structuredContent === "object") return result.structuredContent;
    var blocks = (result && result.content) || [];
    for (var i = 0; i < blocks.length; i++) {
      if (blocks[i].type !== "text") continue;
      try { var parsed = JSON.parse(blocks[i].text); if (parsed && typeof parsed === "object") return parsed; } catch (e) {}
    }
    return null;
  }
  function render(result) {
    var p = payloadOf(result);
    if (!p || !p.sessionId) { text("empty", result && result.isError ? "The request failed." : "No session in this result."); return; }
    document.getElementById("empty").hidden = true;
    text("title", p.title || p.sessionId);
    document.getElementById("meta").hidden = false;
    text("target", typeof p.targetLabel === "string" ? p.targetLabel : p.target || "");
    text("state", p.state || "");
    text("activity", p.lastActivityAt ? "Last activity " + new Date(p.lastActivityAt).toLocaleString() : "");
    var link = document.getElementById("open");
    var safe = typeof p.webUrl === "string" && /^https?:\\/\\//.test(p.webUrl);
    link.hidden = !safe;
    if (safe) link.href = p.webUrl;
  }
  document.getElementById("open").addEventListener("click", function (event) {
    event.preventDefault();
    request("ui/open-link", { url: this.href });
  });
  window.addEventListener("message", function (event) {
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && pending[m.id]) { pending[m.id](m.result); delete pending[m.id]; return; }
    if (m.method === "ui/notifications/tool-result") render(m.params);
  });
  request("ui/initialize", {
    appInfo: { name: "openwork-remote-session-card", version: "1.0.0" },
    appCapabilities: {},
    protocolVersion: "2026-01-26"
  }).then(function () { send({ method: "ui/notifications/initialized", params: {} }); });
})();
</script>
</body>
</html>
`;
