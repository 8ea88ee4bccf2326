import { randomBytes } from "node:crypto";
import { createEchoEngine, type LocalEngine } from "@openwork/desktop-runner";

type Answer = Parameters<LocalEngine["respond"]>[0]["answer"];

/** The command a `ASK_BASH` turn asks permission for, and the question an `ASK_COLOUR` turn asks. */
export const ASKED = {
  command: "rm -rf ./build && make release",
  question: "Which colour should the button be?",
  options: ["Red", "Blue"],
} as const;

/**
 * A desktop engine for tests whose turns wait on the human, as a real engine's do: a prompt with
 * `ASK_BASH` asks permission to run a command, one with `ASK_COLOUR` asks a question with two
 * options; the turn goes on when the runner delivers the answer (`respond`) and replies
 * `answered: <answer>`. Anything else is the echo engine's. `answers` records what arrived.
 */
export function createAskingEngine() {
  const echo = createEchoEngine();
  const waiting = new Map<string, (answer: Answer) => void>();
  const answers: { requestId: string; answer: Answer }[] = [];
  const engine: LocalEngine = {
    ...echo,
    prompt: async (input) => {
      const kind = input.text.includes("ASK_BASH") ? "permission" : input.text.includes("ASK_COLOUR") ? "question" : null;
      if (!kind) return echo.prompt(input);
      const requestId = `${kind === "permission" ? "per" : "que"}_${randomBytes(6).toString("hex")}`;
      const answered = new Promise<Answer | null>((resolve) => {
        waiting.set(requestId, resolve);
        input.signal.addEventListener("abort", () => resolve(null), { once: true });
      });
      input.onProgress({
        type: "asked",
        request:
          kind === "permission"
            ? { requestId, kind, title: "bash", detail: ASKED.command }
            : { requestId, kind, title: "Colour", detail: ASKED.question, options: ASKED.options.map((label) => ({ label })) },
      });
      const answer = await answered;
      waiting.delete(requestId);
      if (answer) input.onProgress({ type: "resolved", requestId });
      const messageId = `msg_reply_${randomBytes(6).toString("hex")}`;
      return { messageId, text: answer ? `answered: ${JSON.stringify(answer)}` : "" };
    },
    respond: async ({ requestId, answer }) => {
      const resolve = waiting.get(requestId);
      if (!resolve) return false;
      answers.push({ requestId, answer });
      resolve(answer);
      return true;
    },
  };
  return { engine, answers };
}
