import type { Action } from "../parse-name.js";
import type { Capability } from "./capability.js";
import { create } from "./create.js";
import { list } from "./list.js";
import { read } from "./read.js";
import { send } from "./send.js";
import { stop } from "./stop.js";
import { targets } from "./targets.js";

export const CAPABILITIES = { create, send, read, list, stop, targets } as unknown as Record<Action, Capability>;
