import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { addWorktree } from "./git-worktree.js";
import type { EngineProgress } from "./local-engine.js";
import { createOpencodeEngine } from "./opencode-engine.js";

const run = promisify(execFile);

/** Collects the text a turn streams. */
const textInto = (into: string[]) => (progress: EngineProgress) => {
  if (progress.type === "text") into.push(progress.delta);
};

let opencode: RealOpencode;
beforeAll(async () => {
  opencode = await startRealOpencode();
}, 60_000);
afterAll(async () => {
  await opencode?.stop();
});

it("runs a prompt in a real opencode session", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const sessionId = await engine.createSession({ title: "From the runner", workspaceId: null, directory: null });
  expect(sessionId).toMatch(/^ses_/);
  const streamed: string[] = [];
  const reply = await engine.prompt({
    sessionId,
    messageId: "rst_1",
    text: "hello desktop",
    signal: new AbortController().signal,
    onProgress: textInto(streamed),
  });
  expect(reply.text).toContain("FAKE_REPLY: hello desktop");
  expect(streamed.join("")).toBe(reply.text);
}, 60_000);

it("streams a slow reply as it is written, and stops the engine's turn on abort", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const sessionId = await engine.createSession({ title: "Slow", workspaceId: null, directory: null });
  const streamed: string[] = [];
  const stop = new AbortController();
  const started = Date.now();
  const replying = engine.prompt({ sessionId, messageId: "msg_slow0000000001", text: "SLOW words", signal: stop.signal, onProgress: textInto(streamed) });
  // Text arrives piece by piece, long before the turn could have ended (300 ms a word).
  await expect.poll(() => streamed.length, { timeout: 20_000 }).toBeGreaterThan(2);
  expect(streamed.join("")).toMatch(/^FAKE_REPLY: SLOW/);
  stop.abort();
  const reply = await replying;
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(reply.text.length).toBeLessThan("FAKE_REPLY: SLOW words".length + 40 * 5);
}, 60_000);

it("ends a turn whose model provider keeps failing when the runner gives up on it", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const sessionId = await engine.createSession({ title: "Bad", workspaceId: null, directory: null });
  const failing = engine.prompt({
    sessionId,
    messageId: "msg_fail0000000001",
    text: "FAIL500 please",
    signal: AbortSignal.timeout(4_000),
    onProgress: () => {},
  });
  // A provider that answers 500 is retried: nothing ends the turn until the signal stops it.
  await expect(failing).resolves.toMatchObject({ text: "" });
}, 60_000);

it("reports tool calls, todos and usage as the turn runs", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const sessionId = await engine.createSession({ title: "Todos", workspaceId: null, directory: null });
  const progress: EngineProgress[] = [];
  const reply = await engine.prompt({
    sessionId,
    messageId: "msg_todo0000000001",
    text: "make a TODO list",
    signal: new AbortController().signal,
    onProgress: (p) => progress.push(p),
  });
  expect(reply.text).toContain("FAKE_REPLY: the tool said");
  const todo = progress.filter((p) => p.type === "tool" && p.name === "todowrite");
  expect(todo.at(-1)).toMatchObject({ status: "completed", summary: "✓ Write the plan; ☐ Ship it" });
  expect(progress.some((p) => p.type === "usage" && p.inputTokens === 10 && p.outputTokens === 5)).toBe(true);
}, 60_000);

it("waits on a permission until answered: once lets the command run, reject ends the turn with the engine's sentence", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  for (const decision of ["once", "reject"] as const) {
    const sessionId = await engine.createSession({ title: `Bash ${decision}`, workspaceId: null, directory: null });
    const progress: EngineProgress[] = [];
    const turn = engine.prompt({
      sessionId,
      messageId: `msg_bash${decision}00000001`,
      text: "RUNBASH please",
      signal: new AbortController().signal,
      onProgress: (p) => progress.push(p),
    });
    await expect.poll(() => progress.find((p) => p.type === "asked"), { timeout: 20_000 }).toBeDefined();
    const asked = progress.find((p) => p.type === "asked")!;
    expect(asked).toMatchObject({ request: { kind: "permission", title: "bash", detail: "echo bash-ran" } });
    const requestId = asked.type === "asked" ? asked.request.requestId : "";
    expect(await engine.respond({ sessionId, requestId, answer: { text: "not a decision" } })).toBe(false);
    expect(await engine.respond({ sessionId, requestId, answer: { permission: decision } })).toBe(true);
    const reply = await turn;
    expect(progress).toContainEqual({ type: "resolved", requestId });
    const bash = progress.filter((p) => p.type === "tool" && p.name === "bash").at(-1);
    if (decision === "once") {
      expect(bash).toMatchObject({ status: "completed" });
      expect(reply.text).toContain("bash-ran");
    } else {
      expect(bash).toMatchObject({ status: "error", summary: "The user rejected permission to use this specific tool call." });
    }
    // Answered: it waits on nothing any more.
    expect(await engine.respond({ sessionId, requestId, answer: { permission: "once" } })).toBe(false);
  }
}, 90_000);

it("asks a question and goes on with the answer", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const sessionId = await engine.createSession({ title: "Question", workspaceId: null, directory: null });
  const progress: EngineProgress[] = [];
  const turn = engine.prompt({
    sessionId,
    messageId: "msg_askq0000000001",
    text: "ASKQ please",
    signal: new AbortController().signal,
    onProgress: (p) => progress.push(p),
  });
  await expect.poll(() => progress.find((p) => p.type === "asked"), { timeout: 20_000 }).toBeDefined();
  const asked = progress.find((p) => p.type === "asked")!;
  expect(asked).toMatchObject({
    request: { kind: "question", title: "Colour", detail: "Which colour should the button be?", options: [{ label: "Red" }, { label: "Blue" }] },
  });
  const requestId = asked.type === "asked" ? asked.request.requestId : "";
  expect(await engine.respond({ sessionId, requestId, answer: { text: "Blue" } })).toBe(true);
  expect((await turn).text).toContain('"Which colour should the button be?"="Blue"');
}, 60_000);

it("lists the models it runs, and runs a session made in another folder (a worktree of the workspace) there", async () => {
  const engine = createOpencodeEngine({ url: opencode.url, directory: opencode.directory });
  const known = await engine.models();
  expect(known.models).toContainEqual({ providerId: "fake", modelId: "fake-model", name: "Fake Model" });
  // The workspace as a repository with one commit, and a worktree of it: opencode's config comes along.
  const git = (...args: string[]) => run("git", ["-C", opencode.directory, "-c", "user.name=T", "-c", "user.email=t@example.test", ...args]);
  await git("init", "-q");
  await git("add", "opencode.json");
  await git("commit", "-q", "-m", "config");
  const { directory } = await addWorktree(opencode.directory, "engine-folder-test");
  const sessionId = await engine.createSession({ title: "In a worktree", workspaceId: null, directory });
  const reply = await engine.prompt({
    sessionId,
    messageId: "msg_worktree0000001",
    text: "hello worktree",
    signal: new AbortController().signal,
    onProgress: () => {},
  });
  expect(reply.text).toContain("FAKE_REPLY: hello worktree");
  const session = await fetch(`${opencode.url}/session/${sessionId}`, { headers: { "x-opencode-directory": directory } });
  expect(((await session.json()) as { directory: string }).directory).toBe(directory);
}, 60_000);
