import type { LedgerSession, TargetCall } from "@openwork/remote-session-core";
import type { TaskRequirements } from "@openwork/runner-protocol/internal";
import { chooseRunner } from "./choose-runner.js";
import type { DesktopContext } from "./desktop-context.js";
import { runnersOf } from "./runners-of.js";

/** The desktop holding the session, refused as den-api does when it is too old for `kind` or away. */
export async function holderFor(
  ctx: DesktopContext,
  call: TargetCall,
  session: LedgerSession,
  kind: "remote_session.read" | "remote_session.stop" | "remote_session.respond",
  requirements: TaskRequirements = { protocolVersion: 1, capabilities: [] },
): Promise<void> {
  const holder = String(session.targetRef.runnerId);
  chooseRunner(await runnersOf(ctx, call, holder), { kind, requirements }, { pin: holder, storeAndForward: false });
}
