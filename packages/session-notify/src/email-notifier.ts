import nodemailer from "nodemailer";
import { rejectOnAbort } from "./abort-rejection.js";
import { emailChannels } from "./channel-rules.js";
import { bodyOf, subjectOf } from "./notification-message.js";
import { type NotificationDelivery, type Notifier, NotifyError } from "./notifier.js";

/** Where mail is handed over: an SMTP server. */
export interface SmtpOptions {
  host: string;
  port: number;
  /** TLS from the start (port 465); otherwise STARTTLS when the server offers it. */
  secure?: boolean;
  auth?: { user: string; pass: string };
  /** Refuse to send without STARTTLS. */
  requireTLS?: boolean;
  tls?: { rejectUnauthorized?: boolean; servername?: string };
}

/** One message as the email notifier hands it to a transport. */
export interface EmailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  messageId: string;
  headers: Record<string, string>;
}

/** Anything that sends a message (a nodemailer transporter is one). */
export interface EmailTransport {
  sendMail(message: EmailMessage): Promise<unknown>;
}

/**
 * Email over SMTP through nodemailer: the subject names the session and what happened; the body
 * adds the state and, only where the channel allows text, the prompt, question or answer. The
 * Message-ID and `X-Notification-Id` carry the event id, so a resent mail can be recognised.
 * Its `channels` take an email address and no secret.
 */
export function emailNotifier(options: { transport: SmtpOptions | EmailTransport; from: string }): Notifier {
  const transport: EmailTransport = "sendMail" in options.transport ? options.transport : nodemailer.createTransport(options.transport);
  const domain = options.from.split("@").pop()?.replace(/[>\s]/g, "") || "localhost";
  return {
    kind: "email",
    channels: emailChannels,
    send: async (delivery: NotificationDelivery, signal: AbortSignal): Promise<void> => {
      const { event, channel } = delivery;
      const message: EmailMessage = {
        from: options.from,
        to: channel.target,
        subject: subjectOf(event),
        text: bodyOf(event, delivery.answerUrl),
        messageId: `<${encodeURIComponent(event.id)}.${channel.id}@${domain}>`,
        headers: { "X-Notification-Id": event.id },
      };
      await Promise.race([transport.sendMail(message), rejectOnAbort(signal)]).catch((error: unknown) => {
        throw smtpFailure(error, signal);
      });
    },
  };
}

/** An SMTP 5xx is permanent (a bad address, a refusal); a 4xx, a timeout or a lost connection may pass later. */
function smtpFailure(error: unknown, signal: AbortSignal): NotifyError {
  if (signal.aborted) return new NotifyError("the SMTP server did not answer in time", { code: "timeout", retryable: true, cause: error });
  const code = (error as { responseCode?: unknown }).responseCode;
  if (typeof code === "number") {
    return new NotifyError(`the SMTP server answered ${code}`, { code: "rejected", retryable: code < 500, cause: error });
  }
  return new NotifyError("the SMTP server could not be reached", { code: "unreachable", retryable: true, cause: error });
}
