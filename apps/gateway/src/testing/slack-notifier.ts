import { type ChannelRules, type NotificationDelivery, type Notifier, NotifyError } from "@openwork/session-notify";
import { z } from "zod";

/** What a Slack incoming webhook takes: a fallback `text`, and Block Kit blocks. */
export interface SlackMessage {
  text: string;
  blocks: (
    | { type: "section"; text: { type: "mrkdwn"; text: string } }
    | { type: "actions"; elements: { type: "button"; text: { type: "plain_text"; text: string }; url: string }[] }
  )[];
}

/** One line for the member: the session and what happened to it (its text only where the channel allows it). */
export function slackMessageOf(delivery: NotificationDelivery): SlackMessage {
  const { event, answerUrl } = delivery;
  const question = event.text?.question ? `\n>${event.text.question}` : "";
  const text = `*${event.title || event.sessionId}*: ${event.kind.replaceAll("_", " ")} (${event.state})${question}`;
  const section = { type: "section" as const, text: { type: "mrkdwn" as const, text } };
  if (!answerUrl) return { text, blocks: [section] };
  const button = { type: "button" as const, text: { type: "plain_text" as const, text: "Answer" }, url: answerUrl };
  return { text, blocks: [section, { type: "actions", elements: [button] }] };
}

/**
 * A Slack-shaped channel kind, as a host would add one without editing any package: its channels
 * take an incoming-webhook URL under `origin` (Slack's own in production; the test receiver's in
 * tests) and no secret (the URL is the credential); it POSTs the Slack JSON, its answer link as a button.
 */
export function slackNotifier(options: { origin: string }): Notifier {
  const url = z
    .url({ protocol: /^https?$/ })
    .refine((target) => new URL(target).origin === options.origin, `a Slack webhook URL starts with ${options.origin}/`);
  const channels: ChannelRules = {
    target: `a Slack incoming-webhook URL (${options.origin}/…)`,
    secret: false,
    accept: async ({ target, secret }) => {
      if (secret !== undefined) return { issues: [{ path: "secret", message: "a Slack channel takes no secret: its URL is its credential" }] };
      const parsed = url.safeParse(target);
      return parsed.success ? { target, secret: null } : { issues: parsed.error.issues.map((issue) => ({ path: "target", message: issue.message })) };
    },
  };
  return { kind: "slack", channels, send: (delivery, signal) => postToSlack(delivery.channel.target, slackMessageOf(delivery), signal) };
}

/** A 2xx is sent; a 408, 429 or 5xx may pass later; any other answer will not. */
async function postToSlack(target: string, message: SlackMessage, signal: AbortSignal): Promise<void> {
  const response = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(message), signal }).catch(
    (error: unknown) => {
      throw new NotifyError("Slack could not be reached", { code: signal.aborted ? "timeout" : "unreachable", retryable: true, cause: error });
    },
  );
  await response.body?.cancel();
  if (response.ok) return;
  const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
  throw new NotifyError(`Slack answered ${response.status}`, { code: "rejected", retryable });
}
