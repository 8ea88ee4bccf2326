import type { Target } from "@openwork/remote-session-core";
import type { Action } from "../parse-name.js";
import type { Capability } from "./capability.js";
import { createCapability } from "./create.js";
import { list } from "./list.js";
import { read } from "./read.js";
import { respond } from "./respond.js";
import { send } from "./send.js";
import { stop } from "./stop.js";
import { targets as targetsCapability } from "./targets.js";

/** Every capability; create's arguments are built from the targets handed in. */
export function buildCapabilities(targets: readonly Target[]): Record<Action, Capability> {
  return { create: createCapability(targets), send, read, respond, list, stop, targets: targetsCapability } as unknown as Record<Action, Capability>;
}
