// For this repository's sibling packages (remote-session-host): the pieces its member routes,
// answer page and metrics read. No stability promise: these names may change in any release.
export type { DeliveryChannel } from "./notifier.js";
export { type NotifyChannelInput, NotifyChannelPatchSchema } from "./notify-channels.js";
export type { NotificationDescription, NotificationStats } from "./notification-drain.js";
export type { LinkGrant } from "./answer-links.js";
