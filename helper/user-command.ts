/**
 * Commands the helper prints for the user to run (a refusal's next step, the way to ask the server), made
 * runnable as printed from where the user stands. The helper does not know that place for sure: git runs
 * it with `GIT_DIR` set and, during a lazy fetch, from the top of the working tree (any subfolder the user
 * is in works as well for git commands). Measured with git 2.39:
 *
 * - `git clone <url> big` runs the helper for its fetch from the user's folder with `GIT_DIR=<abs>/big/.git`:
 *   the working tree is outside the helper's folder, and a relative `cd big &&` is right.
 * - The clone's checkout (its lazy fetch) runs it from inside `big`, with no index written yet: the user
 *   is elsewhere, at a place the helper cannot know, so `cd <absolute path> &&`.
 * - Any other fetch runs inside the working tree, which has an index: no `cd`.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";

/** `text` as one shell word: as is when it holds only safe characters, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

export interface HelperPlace {
  /** The helper's environment (`GIT_DIR`, `GIT_WORK_TREE`). */
  readonly env: NodeJS.ProcessEnv;
  /** The helper's working directory. */
  readonly cwd: string;
  /** Whether a file exists; for tests. */
  readonly exists?: (path: string) => boolean;
}

/** The user's git directory, absolute, from `GIT_DIR` (git always sets it for a remote helper). */
export function userGitDir(place: HelperPlace): string | undefined {
  const gitDir = place.env.GIT_DIR;
  return gitDir ? resolve(place.cwd, gitDir) : undefined;
}

/** The working tree of the user's repository, absolute; undefined for a bare or unusual layout. */
export function userWorkTree(place: HelperPlace): string | undefined {
  if (place.env.GIT_WORK_TREE) return resolve(place.cwd, place.env.GIT_WORK_TREE);
  const gitDir = userGitDir(place);
  return gitDir && basename(gitDir) === ".git" ? dirname(gitDir) : undefined;
}

/** Whether `inner` is `outer` or inside it. */
function within(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path === "" || (!path.startsWith("..") && !isAbsolute(path));
}

/**
 * `cd <working tree> && ` when the user is (probably) not in the working tree, else "": see the module
 * comment for the three cases.
 */
export function cdPrefix(place: HelperPlace): string {
  const workTree = userWorkTree(place);
  const gitDir = userGitDir(place);
  if (workTree === undefined || gitDir === undefined) return "";
  const cwd = resolve(place.cwd);
  if (!within(cwd, workTree)) return `cd ${shellWord(relative(cwd, workTree))} && `;
  const exists = place.exists ?? existsSync;
  return exists(join(gitDir, "index")) ? "" : `cd ${shellWord(workTree)} && `;
}

/**
 * Whether the helper serves `git pull` (its fetch runs with `GIT_REFLOG_ACTION=pull <args>`), and then
 * the pull as the user typed it when every argument is a plain word (`pull --rebase -q`), else `pull`.
 */
export function pullCommand(env: NodeJS.ProcessEnv): string | undefined {
  const action = env.GIT_REFLOG_ACTION;
  if (action === undefined || !/^pull( |$)/.test(action)) return undefined;
  return /^[\w ./:@%+=,-]+$/.test(action) ? action.trim() : "pull";
}

/** The objects folder of the user's repository (a linked worktree's is in its common dir). */
export function userObjectsDir(place: HelperPlace): string | undefined {
  if (place.env.GIT_OBJECT_DIRECTORY) return resolve(place.cwd, place.env.GIT_OBJECT_DIRECTORY);
  const gitDir = userGitDir(place);
  if (gitDir === undefined) return undefined;
  if (place.env.GIT_COMMON_DIR) return join(resolve(place.cwd, place.env.GIT_COMMON_DIR), "objects");
  let common = gitDir;
  try {
    common = resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim());
  } catch {
    // not a linked worktree
  }
  return join(common, "objects");
}
