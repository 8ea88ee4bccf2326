import type { RemoteSessionSource } from "@openwork/mcp-capability";
import type { Logger } from "@openwork/remote-session-core";
import type { NotificationDrain } from "@openwork/session-notify";
import { answerPageRoutes } from "./answer-page.js";
import { ANSWER_PATH, describeForAnswer, recipientContext } from "./answer-requests.js";
import type { DrainWake } from "./drain-wake.js";
import type { HostNotifications, RemoteSessionHostOptions } from "./host-options.js";
import { memberNotifyRoutes } from "./member-notify-routes.js";
import { type HostNotifyOptions, notifyParts, startDrain } from "./notifications.js";
import { unexpectedErrorResponse } from "./unexpected-error.js";

/**
 * The host's notifications: the member's channel routes and the answer page (built at once, so
 * a host mounts them before it serves), and the outbox drain, started by `start()` after the
 * migrations it follows. Every replica drains.
 */
export function createHostNotifications(parts: {
  options: RemoteSessionHostOptions;
  notify: HostNotifyOptions;
  /** The capability without push (the page reads and answers as the member). */
  source: RemoteSessionSource;
  schema: string;
  logger: Logger;
  drainWake: DrainWake | null;
}): HostNotifications & { start(): Promise<void>; close(): Promise<void> } {
  const { options, notify, source, logger } = parts;
  const { sql, baseUrl } = options;
  const partsOfNotify = notifyParts(sql, notify, options.desktop.secret);
  let drain: NotificationDrain | null = null;
  return {
    memberRoutes: memberNotifyRoutes({
      notifications: partsOfNotify,
      authenticate: async (request) => {
        const scope = await options.desktop.authenticateMember(request);
        if (!scope || !(await options.isActiveMember(scope))) return null;
        const userId = await notify.userOf(scope);
        return userId === null ? null : { organizationId: scope.organizationId, userId };
      },
      unexpected: (request, error) => unexpectedErrorResponse(logger, "member notification routes", request, error),
    }),
    answerPage:
      notify.answerPage === false
        ? null
        : answerPageRoutes({
            source,
            links: partsOfNotify.links,
            contextOf: (grant) => recipientContext(notify.memberOf, grant),
            secureCookies: baseUrl.startsWith("https:"),
            nonceSecret: options.desktop.secret,
            logger,
          }),
    answerPath: ANSWER_PATH,
    channels: partsOfNotify.channels,
    kinds: partsOfNotify.kinds,
    links: partsOfNotify.links,
    drain: () => drain,
    stats: async () => (drain ? drain.stats() : { pending: 0, retrying: 0, sent: 0, dead: 0 }),
    start: async () => {
      drain = await startDrain(sql, notify, partsOfNotify, {
        logger,
        schema: parts.schema,
        describe: describeForAnswer({ source, links: partsOfNotify.links, memberOf: notify.memberOf, baseUrl }),
        ...(parts.drainWake ? { wake: parts.drainWake.wake } : {}),
        ...(options.limits?.inputTimeoutMs ? { overdueAfterMs: options.limits.inputTimeoutMs } : {}),
      });
    },
    close: async () => {
      await drain?.close();
    },
  };
}
