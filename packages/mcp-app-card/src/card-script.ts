/**
 * The card's script: the MCP Apps view protocol over postMessage, written out instead of
 * bundling the 300 KB App class. It answers only its parent window; handles `ping` and
 * `ui/resource-teardown`; follows the host's theme and style variables; reports its size; renders
 * sessions, errors, lists and targets with textContent only; and, when the host lets views call
 * tools, keeps a running session live (reads that wait), with Stop and a follow-up box.
 */
export const CARD_SCRIPT = `
(function () {
  var IN_PROGRESS = { queued: 1, waking: 1, running: 1, waiting_input: 1 };
  var nextId = 1, pending = {}, canCallTools = false, tornDown = false, session = null, live = 0;
  function send(message) { window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*"); }
  function request(method, params) {
    var id = nextId++;
    send({ id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function el(tag, text, cls) { var e = document.createElement(tag); if (text) e.textContent = text; if (cls) e.className = cls; return e; }
  function payloadOf(result) {
    if (result && result.structuredContent && typeof result.structuredContent === "object") return result.structuredContent;
    var blocks = (result && result.content) || [];
    for (var i = 0; i < blocks.length; i++) {
      if (blocks[i].type !== "text") continue;
      try { var parsed = JSON.parse(blocks[i].text); if (parsed && typeof parsed === "object") return parsed; } catch (e) {}
    }
    return null;
  }
  function applyContext(context) {
    if (!context) return;
    if (context.theme === "light" || context.theme === "dark") document.documentElement.setAttribute("data-theme", context.theme);
    var variables = context.styles && context.styles.variables;
    if (variables) for (var name in variables) {
      if (/^--[a-z0-9-]+$/.test(name) && typeof variables[name] === "string") document.documentElement.style.setProperty(name, variables[name]);
    }
  }
  function callTool(name, body) {
    return request("tools/call", { name: "execute_capability", arguments: { name: name, body: body } }).then(payloadOf);
  }
  var card = document.getElementById("card");
  function show(nodes) { card.replaceChildren.apply(card, nodes); }

  function renderError(p) {
    shown = "";
    var box = el("div", "", "error");
    box.append(el("p", p.message || "The request failed.", "title"));
    if (p.action) box.append(el("p", p.action, "small"));
    var codes = [p.error, p.referenceId].filter(Boolean).join(" \\u00b7 ");
    if (codes) box.append(el("p", codes, "small"));
    show([box]);
  }
  function renderTable(title, header, rows) {
    var table = el("table"), head = el("tr");
    header.forEach(function (h) { head.append(el("th", h)); });
    table.append(head);
    rows.forEach(function (cells) { var tr = el("tr"); cells.forEach(function (c) { tr.append(el("td", c)); }); table.append(tr); });
    show([el("p", title, "title"), rows.length ? table : el("p", "Nothing yet.", "small")]);
  }
  var shown = "";
  // What the session (its tree, for a spawner) spent beside its budget, dimension by dimension.
  function spendLine(p) {
    var spent = p.treeSpend || p.spend, parts = [];
    Object.keys(p.budget).forEach(function (d) {
      var used = d === "costUsd" ? spent.costUsd || 0 : spent[d] || 0;
      parts.push(amount(d, used) + " of " + amount(d, p.budget[d]));
    });
    var line = el("p", "Spent " + parts.join(", "), "small spend");
    line.id = "spend";
    return line;
  }
  function renderSession(p) {
    session = p;
    // A live read that brought nothing new leaves the card (and a button under the cursor) alone.
    var key = JSON.stringify([p.sessionId, p.title, p.state, p.finalAssistantText, p.partialText, p.lastError, p.webUrl, p.runner, p.pending, p.notified, p.spawnedBy, p.spend, p.budget]);
    if (key === shown) return;
    shown = key;
    var nodes = [el("h1", p.title || p.sessionId, "title")];
    var meta = el("div", "", "meta");
    meta.append(el("span", typeof p.targetLabel === "string" ? p.targetLabel : p.target || ""));
    if (p.runner && p.runner.name) meta.append(el("span", "on " + p.runner.name));
    meta.append(el("span", p.state || "", "state"));
    if (p.lastActivityAt) meta.append(el("span", "Last activity " + new Date(p.lastActivityAt).toLocaleString()));
    nodes.push(meta);
    if (p.spawnedBy && typeof p.spawnedBy.sessionId === "string") {
      var origin = el("p", "Spawned by " + (p.spawnedBy.title || p.spawnedBy.sessionId), "small origin");
      origin.id = "spawned-by";
      nodes.push(origin);
    }
    var reply = p.finalAssistantText || p.partialText;
    if (reply) nodes.push(el("pre", reply, "reply"));
    if (p.lastError && p.lastError.message) nodes.push(el("p", p.lastError.message + " (" + p.lastError.error + ")", "small error"));
    if (p.budget && p.spend) nodes.push(spendLine(p));
    if (p.pending) nodes.push(renderPending(p));
    var actions = el("div", "", "actions");
    if (typeof p.webUrl === "string" && /^https?:\\/\\//.test(p.webUrl)) {
      var link = el("a", "Open in OpenWork Web", "open");
      link.id = "open";
      link.href = p.webUrl;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      link.addEventListener("click", function (event) { event.preventDefault(); request("ui/open-link", { url: p.webUrl }); });
      actions.append(link);
    }
    if (canCallTools && IN_PROGRESS[p.state]) {
      var stop = el("button", "Stop", "secondary");
      stop.id = "stop";
      stop.addEventListener("click", function () { stop.disabled = true; callTool("remote-session:stop", { sessionId: p.sessionId }).then(refresh); });
      actions.append(stop);
    }
    nodes.push(actions);
    if (canCallTools && p.state === "idle") {
      var box = el("textarea"); box.id = "follow-up"; box.placeholder = "Send a follow-up\\u2026";
      var go = el("button", "Send"); go.id = "send";
      go.addEventListener("click", function () {
        if (!box.value.trim()) return;
        go.disabled = true;
        callTool("remote-session:send", { sessionId: p.sessionId, prompt: box.value }).then(function (sent) {
          if (sent && sent.error) return renderError(sent);
          watch(Object.assign({}, session, { state: "running", finalAssistantText: undefined, partialText: undefined }), sent && sent.next);
        });
      });
      var row = el("div", "", "actions");
      row.append(go);
      nodes.push(box, row);
    }
    show(nodes);
  }
  var DECISIONS = [["once", "Allow once"], ["always", "Always allow"], ["reject", "Reject"]];
  // What the session asks the human; answered from the card when the host lets it call tools.
  function renderPending(p) {
    var q = p.pending, box = el("div", "", "pending");
    box.id = "pending";
    box.append(el("p", (q.kind === "permission" ? "Permission requested: " : q.kind === "budget" ? "Budget reached: " : "Question: ") + (q.title || ""), "title"));
    if (q.detail) box.append(el("pre", q.detail, "detail"));
    if (q.overdue) box.append(el("p", "Nobody has answered this for a long time.", "small error"));
    if (Array.isArray(p.notified)) p.notified.forEach(function (n) {
      if (!n || typeof n.channel !== "string" || typeof n.at !== "string") return;
      box.append(el("p", "The member was notified by " + n.channel + " at " + new Date(n.at).toLocaleString(), "small notified"));
    });
    if (q.inAppOnly) { box.append(el("p", "Answer it in the OpenWork app on the desktop.", "small")); return box; }
    if (!canCallTools) return box;
    var row = el("div", "", "actions");
    var answer = function (value) {
      row.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      callTool("remote-session:respond", { sessionId: p.sessionId, requestId: q.id, answer: value }).then(function (sent) {
        if (sent && sent.error) return renderError(sent);
        watch(Object.assign({}, session, { state: "running", pending: undefined }), sent && sent.next);
      });
    };
    var button = function (label, value, style) {
      var b = el("button", label, style || "");
      b.addEventListener("click", function () { answer(value); });
      row.append(b);
    };
    if (q.kind === "permission") DECISIONS.forEach(function (d) { button(d[1], { permission: d[0] }, d[0] === "reject" ? "secondary" : ""); });
    else if (q.kind === "budget") budgetChoices(q, button, row);
    else {
      (q.options || []).forEach(function (o) { button(o.label, { text: o.label }); });
      var text = el("input"); text.id = "answer"; text.placeholder = "Or type an answer\u2026";
      var go = el("button", "Answer"); go.id = "answer-send";
      go.addEventListener("click", function () { if (text.value.trim()) answer({ text: text.value }); });
      box.append(text);
      row.append(go);
    }
    box.append(row);
    return box;
  }
  // A budget's choices: add half, all or three times the budget again in each dimension it sets, or stop.
  function budgetChoices(q, button, row) {
    Object.keys(q.budget || {}).forEach(function (d) {
      var set = q.budget[d];
      if (typeof set !== "number") return;
      // From what was spent when a step passed the budget: every choice then ends the pause.
      var used = q.spent && typeof q.spent[d] === "number" ? q.spent[d] : 0, from = Math.max(set, used);
      [0.5, 1, 3].forEach(function (share) {
        var to = d === "costUsd" ? Math.ceil((from + set * share) * 100) / 100 : Math.ceil(from + set * share);
        var raised = {}; raised[d] = to;
        button("Add " + amount(d, to - set) + " (to " + amount(d, to) + ")", { budget: raised });
      });
    });
    var stop = el("button", "Stop the session", "secondary");
    stop.addEventListener("click", function () {
      row.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      callTool("remote-session:stop", { sessionId: session.sessionId }).then(refresh);
    });
    row.append(stop);
  }
  function amount(d, v) {
    return d === "costUsd" ? "$" + v.toFixed(2) : d === "runningMs" ? Math.round(v / 1000) + " s" : v.toLocaleString("en") + " tokens";
  }
  function render(p) {
    if (!p) return show([el("p", "No session in this result.", "small")]);
    if (typeof p.error === "string") return renderError(p);
    if (Array.isArray(p.sessions)) return renderTable("Your remote sessions", ["Title", "Where", "State"], p.sessions.map(function (s) { return [s.title || s.sessionId, s.target || "", s.state || ""]; }));
    if (Array.isArray(p.targets)) {
      var rows = [];
      p.targets.forEach(function (t) {
        rows.push([t.label || t.name, t.available ? "available" : "not available", ""]);
        (t.machines || []).forEach(function (m) { rows.push(["", m.name || m.computerId || "", m.online ? "online" : "offline"]); });
      });
      return renderTable("Where sessions can run", ["Target", "Machine", "Presence"], rows);
    }
    if (p.sessionId) return watch(p, follow(p));
    show([el("p", "No session in this result.", "small")]);
  }
  // The read that waits for what comes after this result: its own next read, else — in progress,
  // e.g. waiting for an answer given here, in the app or elsewhere — a read from its cursor, which
  // returns on a change after it, never on what this result already shows.
  function follow(p) {
    if (p.next && p.next.name === "remote-session:read") return p.next;
    if (IN_PROGRESS[p.state] && p.cursor) return { name: "remote-session:read", body: { sessionId: p.sessionId, cursor: p.cursor, waitMs: 20000 } };
    return null;
  }
  // The shown session updated by a read. What the session asks, and who was told of it, are the
  // newest read's alone: an answered request leaves with it. A reply already shown stays until a
  // newer one, unless the session runs again.
  function withRead(read) {
    return Object.assign({}, session, read, {
      finalAssistantText: read.finalAssistantText || (IN_PROGRESS[read.state] ? undefined : session.finalAssistantText),
      pending: read.pending,
      notified: read.notified
    });
  }
  // Live: while the session is in progress, follow its next read (each waits for news).
  function watch(p, next) {
    renderSession(p);
    if (!canCallTools || tornDown || !IN_PROGRESS[p.state] || !next || next.name !== "remote-session:read") return;
    var mine = ++live;
    callTool(next.name, next.body).then(function (read) {
      if (mine !== live || tornDown || !read) return;
      if (read.error) return renderError(read);
      watch(withRead(read), follow(Object.assign({ sessionId: p.sessionId }, read)));
    }, function () {});
  }
  function refresh() {
    if (!session) return;
    callTool("remote-session:read", { sessionId: session.sessionId, from: "end", limit: 1 }).then(function (read) {
      if (read && !read.error) watch(withRead(read), follow(Object.assign({ sessionId: session.sessionId }, read)));
    });
  }

  window.addEventListener("message", function (event) {
    // Only the host that embeds the card may talk to it.
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && !m.method && pending[m.id]) {
      var waiting = pending[m.id]; delete pending[m.id];
      return m.error ? waiting.reject(m.error) : waiting.resolve(m.result);
    }
    if (m.method === "ping") return send({ id: m.id, result: {} });
    if (m.method === "ui/resource-teardown") { tornDown = true; live++; return send({ id: m.id, result: {} }); }
    if (m.method === "ui/notifications/host-context-changed") return applyContext(m.params);
    if (m.method === "ui/notifications/tool-result") return render(payloadOf(m.params));
  });
  var lastSize = "";
  new ResizeObserver(function () {
    var size = { width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight) };
    var key = size.width + "x" + size.height;
    if (key !== lastSize) { lastSize = key; send({ method: "ui/notifications/size-changed", params: size }); }
  }).observe(document.body);
  request("ui/initialize", {
    appInfo: { name: "openwork-remote-session-card", version: "1.1.0" },
    appCapabilities: {},
    protocolVersion: "2026-01-26"
  }).then(function (result) {
    applyContext(result && result.hostContext);
    canCallTools = !!(result && result.hostCapabilities && result.hostCapabilities.serverTools);
    send({ method: "ui/notifications/initialized", params: {} });
  });
})();
`;
