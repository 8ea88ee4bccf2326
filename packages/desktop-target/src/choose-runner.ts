import { fail } from "./desktop-errors.js";
import type { TaskRequirements } from "@openwork/runner-protocol/internal";
import { runnerCanTake } from "./runner-abilities.js";
import type { RunnerRow } from "./store/runner-row.js";
import type { TaskKind } from "./store/task-row.js";
import type { Dialect } from "./dialects/dialect.js";

const openAction = (name: string) => `Open OpenWork Desktop on ${name} and sign in, then try again.`;
const updateAction = (name: string) => `Update OpenWork Desktop on ${name}, then try again.`;

/**
 * Picks the runner a new desktop task goes to: the one `pin` names (by id, else by name), or the
 * most recently seen online runner able to run it. With `storeAndForward` (a `deliverBy` was
 * given) a pinned runner may be offline, and without a pin the task is left to whichever of the
 * member's runners able to run it comes first (null). Throws den-api's codes: `unknown_computer`,
 * `ambiguous_computer`, `desktop_update_required` (a pinned desktop too old for the task),
 * `computer_offline` (a pinned desktop not seen lately) or `desktop_offline` (no capable desktop
 * online), each with the human step.
 */
export function chooseRunner(
  runners: (RunnerRow & { online: boolean; speaks: Dialect })[],
  task: { kind: TaskKind; requirements: TaskRequirements },
  options: { pin?: string; storeAndForward: boolean },
): RunnerRow | null {
  const able = (r: RunnerRow & { speaks: Dialect }) => runnerCanTake(r.speaks, r, task.kind, task.requirements);
  if (options.pin !== undefined) {
    const runner = pinned(runners, options.pin);
    if (!able(runner))
      fail("desktop_update_required", `${runner.name} cannot run this session yet`, { action: updateAction(runner.name), context: { target: "desktop" } });
    if (!runner.online && !options.storeAndForward) {
      fail("computer_offline", `${runner.name} has not been online in the last 10 minutes`, {
        action: openAction(runner.name),
        context: { target: "desktop" },
      });
    }
    return runner;
  }
  // Store-and-forward without a pin: whichever of the member's desktops comes first takes it.
  if (options.storeAndForward) return null;
  const online = runners.filter((r) => r.online);
  const choice = online.find(able);
  if (choice) return choice;
  // As in den-api: a desktop that is online but cannot run the task does not count as one.
  if (online[0]) {
    return fail("desktop_offline", `${online[0].name} is online but cannot run remote sessions yet`, {
      action: updateAction(online[0].name),
      context: { target: "desktop" },
    });
  }
  const name = runners[0]?.name ?? "your computer";
  return fail("desktop_offline", "no OpenWork Desktop of yours has been online in the last 10 minutes", {
    action: openAction(name),
    context: { target: "desktop" },
  });
}

/** The runner `pin` names: by id, else by its name (any case); `unknown_computer` or `ambiguous_computer` otherwise. */
export function pinned<R extends RunnerRow>(runners: R[], pin: string): R {
  const byId = runners.find((r) => r.runner_id === pin);
  if (byId) return byId;
  const byName = runners.filter((r) => r.name.toLowerCase() === pin.toLowerCase());
  if (byName.length === 1) return byName[0]!;
  const known = runners.map((r) => ({ computerId: r.runner_id, name: r.name }));
  if (byName.length > 1) {
    return fail("ambiguous_computer", `${byName.length} desktops are named "${pin}"; pin one by its computerId`, {
      context: { target: "desktop", computers: byName.map((r) => ({ computerId: r.runner_id, name: r.name })) },
    });
  }
  return fail("unknown_computer", `no desktop of yours is called "${pin}"`, { context: { target: "desktop", computers: known } });
}
