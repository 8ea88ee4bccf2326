// Notifications of remote sessions to their members: a durable outbox in PostgreSQL, drained by any replica, to webhooks, email and a host's own channel kinds.
export {
  NOTIFICATION_KINDS,
  type NotificationKind,
  type NotificationEvent,
  type NotificationText,
  NotificationEventSchema,
  NotificationTextSchema,
  InvalidNotification,
} from "./notification-event.js";
export {
  type AcceptedTarget,
  CHANNEL_KIND_PATTERN,
  type ChannelKind,
  type ChannelRules,
  type ChannelTargetInput,
  type DeliveryChannel,
  type NotificationDelivery,
  type Notifier,
  type NotifyErrorCode,
  NotifyError,
  type TargetIssue,
} from "./notifier.js";
export { migrateSessionNotify } from "./notify-migrations.js";
export { enqueueNotification } from "./enqueue-notification.js";
export {
  type ChannelKindSummary,
  type NotifyChannel,
  type NotifyChannelInput,
  type NotifyChannels,
  type NotifyChannelsOptions,
  NotifyChannelInputSchema,
  type NotifyChannelPatch,
  NotifyChannelPatchSchema,
  TooManyChannels,
  createNotifyChannels,
} from "./notify-channels.js";
export {
  type NotificationDrain,
  type NotificationDrainOptions,
  type NotificationDescription,
  type NotificationStats,
  defaultBackoff,
  startNotificationDrain,
} from "./notification-drain.js";
export { type DeliveryLaneLimits, DEFAULT_DELIVERY_LANES } from "./delivery-lanes.js";
export {
  type AnswerLinks,
  type AnswerLinksOptions,
  type AnswerLinkTarget,
  type AnswerLinkErrorCode,
  type LinkGrant,
  AnswerLinkError,
  AnswerLinkTargetSchema,
  ANSWER_LEASE_MS,
  MAX_ANSWER_LINK_TTL_MS,
  createAnswerLinks,
} from "./answer-links.js";
export { type WebhookNotifierOptions, webhookNotifier } from "./webhook-notifier.js";
export { type EmailMessage, type EmailTransport, type SmtpOptions, emailNotifier } from "./email-notifier.js";
