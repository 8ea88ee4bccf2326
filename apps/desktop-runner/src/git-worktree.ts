import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A worktree could not be made (not a git repository, no commit yet, git missing): the create fails with `worktree_failed`. */
export class WorktreeError extends Error {
  override readonly name = "WorktreeError";
}

/** What a session's worktree is called: its title made path-safe, then its gateway id, so each session gets its own. */
export function worktreeName(session: { sessionId: string; title: string }): string {
  const slug = session.title
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return slug ? `${slug}-${session.sessionId}` : session.sessionId;
}

const git = async (cwd: string, args: string[]): Promise<string> => {
  try {
    return (await run("git", ["-C", cwd, ...args], { timeout: 60_000 })).stdout.trim();
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim().split("\n")[0];
    throw new WorktreeError(`git ${args[0]} failed: ${stderr || (error as Error).message}`.slice(0, 500));
  }
};

/**
 * Adds a git worktree of the repository holding `directory`, on a new branch, beside the
 * repository in `<repo>.worktrees/<name>` (`openwork/<name>`), and returns the folder the session
 * works in: `directory`'s counterpart inside the worktree. Nothing removes it: it is the human's.
 */
export async function addWorktree(directory: string, name: string): Promise<{ worktree: string; directory: string }> {
  const top = await git(directory, ["rev-parse", "--show-toplevel"]);
  // Where `directory` sits in the repository, as git sees it (symlinks resolved alike).
  const inside = await git(directory, ["rev-parse", "--show-prefix"]);
  const worktree = join(dirname(top), `${basename(top)}.worktrees`, name);
  await mkdir(dirname(worktree), { recursive: true });
  await git(top, ["worktree", "add", "-b", `openwork/${name}`, worktree, "HEAD"]);
  return { worktree, directory: join(worktree, inside) };
}
