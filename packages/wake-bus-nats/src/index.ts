export { type NatsWakeBusOptions, connectNatsWakeBus, natsWakeBus, subjectToken } from "./nats-wake-bus.js";
