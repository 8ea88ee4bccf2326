// Notifications of remote sessions to their members: a durable outbox in PostgreSQL, drained by any replica, to webhooks, email and a host's own channel kinds.
export { type NotificationEvent, InvalidNotification } from "./notification-event.js";
// A host's own channel kind: its notifier and the rules members' channels of that kind follow.
export { CHANNEL_KIND_PATTERN, type ChannelRules, type NotificationDelivery, type Notifier, NotifyError } from "./notifier.js";
export { migrateSessionNotify } from "./notify-migrations.js";
export { enqueueNotification } from "./enqueue-notification.js";
export { type NotifyChannels, type NotifyChannelsOptions, TooManyChannels, createNotifyChannels } from "./notify-channels.js";
export { type NotificationDrain, type NotificationDrainOptions, startNotificationDrain } from "./notification-drain.js";
export { type DeliveryLaneLimits, DEFAULT_DELIVERY_LANES } from "./delivery-lanes.js";
export { type AnswerLinks, type AnswerLinksOptions, AnswerLinkError, ANSWER_LEASE_MS, createAnswerLinks } from "./answer-links.js";
export { type WebhookNotifierOptions, webhookNotifier } from "./webhook-notifier.js";
export { type EmailTransport, type SmtpOptions, emailNotifier } from "./email-notifier.js";
