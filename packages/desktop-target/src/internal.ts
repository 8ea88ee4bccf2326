// For this repository's sibling packages (wake-bus-nats, session-push, remote-session-host) and
// its benchmarks: the wake bus's payload helpers and the publisher's pieces. No stability
// promise: these names may change in any release.
export { type HintBatch, type PushHint, type WakeBusHandlers, readPush, readRevokes, readSessions, readWakes, renderPush } from "./wake/wake-bus.js";
export type { WakeNotice } from "./wake/channels.js";
export { createHintPublisher } from "./wake/hints.js";
export type { TransactionScope } from "./store/transaction.js";
