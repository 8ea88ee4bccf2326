// A type-level test, checked by `tsc` (npm test type-checks every package): the source and the
// skill source are assignable to den-api's `CapabilitySource` exactly as den-api declares it (the
// transcription the den-api-shaped consumer also compiles against the published tarballs).
import type { CapabilitySource } from "../../../tools/consumers/fixtures/den-api/src/den-api-registry.js";
import type { BuiltinSkillSource } from "./builtin-skill-source.js";
import type { RemoteSessionSource } from "./create-remote-session-source.js";

/** Fails to compile when the source stops being registrable in den-api as it is. */
export const registerInDenApi = (source: RemoteSessionSource | BuiltinSkillSource): CapabilitySource => source;
