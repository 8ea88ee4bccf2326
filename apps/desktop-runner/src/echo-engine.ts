import { randomBytes } from "node:crypto";
import type { LocalEngine } from "./local-engine.js";

/**
 * A stand-in engine for `npm start`: it answers `echo: <prompt>`, word by word, 40 ms apart
 * (prompts containing SLOW: 1 s apart, to try stop), and reports one token per four characters in
 * and out, priced at a dollar per million tokens (as the witness worker's echo). Not a model.
 */
export function createEchoEngine(): LocalEngine {
  return {
    engineId: "echo",
    // It runs no model.
    models: async () => ({ models: [], defaultModel: null }),
    createSession: async () => `ses_local_${randomBytes(8).toString("hex")}`,
    prompt: async ({ text, signal, onProgress }) => {
      const messageId = `msg_reply_${randomBytes(6).toString("hex")}`;
      const words = `echo: ${text}`.split(/(?<= )/);
      const pause = text.includes("SLOW") ? 1_000 : 40;
      let reply = "";
      for (const word of words) {
        if (signal.aborted) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pause);
          signal.addEventListener(
            "abort",
            () => {
              clearTimeout(timer);
              resolve();
            },
            { once: true },
          );
        });
        if (signal.aborted) break;
        reply += word;
        onProgress({ type: "text", messageId, delta: word });
      }
      // What it "used", deterministically, so budgets can be tried without a model.
      const [inputTokens, outputTokens] = [echoTokens(text), echoTokens(reply)];
      onProgress({ type: "usage", inputTokens, outputTokens, costMicros: inputTokens + outputTokens });
      return { messageId, text: reply };
    },
    // It never asks the human anything.
    respond: async () => false,
  };
}

/** The tokens the echo engine reports for `text`: one per four characters, as a rough model counts. */
export const echoTokens = (text: string) => Math.ceil(text.length / 4);
