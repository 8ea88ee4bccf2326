import type { SmtpOptions } from "@openwork/session-notify";

/**
 * SMTP settings from a URL: `smtp://user:pass@host:587` (STARTTLS when offered; `?requireTLS=1`
 * refuses without it) or `smtps://…:465` (TLS from the start). User and password are URL-decoded.
 */
export function smtpFromUrl(url: string): SmtpOptions {
  // The messages never quote the URL: it may hold a password.
  if (!URL.canParse(url)) throw new TypeError("not a URL");
  const parsed = new URL(url);
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") throw new TypeError("must start with smtp:// or smtps://");
  const secure = parsed.protocol === "smtps:";
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : secure ? 465 : 587,
    secure,
    ...(parsed.username ? { auth: { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } } : {}),
    ...(parsed.searchParams.get("requireTLS") === "1" ? { requireTLS: true } : {}),
  };
}
