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
 *
 * `svc init` says where its user stands (`SVC_USER_CWD`), and then the `cd` is relative to that folder.
 * The user's own git command (for "run it again with …") is read from the process table where there is one
 * (`/proc`): the helper's ancestors are git's own `git remote-svc` and, for a lazy fetch, `git fetch`; the
 * first other git process is the command the user ran.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { shellWord } from "../core/errors.js";

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

/**
 * The user's common git directory (where refs live; a linked worktree's `commondir` names it), absolute;
 * undefined without `GIT_DIR`.
 */
export function userCommonDir(place: HelperPlace): string | undefined {
  const gitDir = userGitDir(place);
  if (gitDir === undefined) return undefined;
  if (place.env.GIT_COMMON_DIR) return resolve(place.cwd, place.env.GIT_COMMON_DIR);
  try {
    return resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim());
  } catch {
    return gitDir; // not a linked worktree
  }
}

/** The working tree of the user's repository, absolute; undefined for a bare or unusual layout. */
export function userWorkTree(place: HelperPlace): string | undefined {
  if (place.env.GIT_WORK_TREE) return resolve(place.cwd, place.env.GIT_WORK_TREE);
  const gitDir = userGitDir(place);
  return gitDir && basename(gitDir) === ".git" ? dirname(gitDir) : undefined;
}

/**
 * Set by `svc init` for the git it runs: the folder the user ran svc from, so that the helper's printed
 * commands `cd` from there.
 */
export const USER_CWD_VARIABLE = "SVC_USER_CWD";

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
  const userCwd = place.env[USER_CWD_VARIABLE];
  if (userCwd) {
    const from = resolve(userCwd);
    return within(from, workTree) ? "" : `cd ${shellWord(relative(from, workTree))} && `;
  }
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

/** The index of the subcommand in a git command line (`clone` in `git -c a=b -C dir clone …`), or -1. */
export function subcommandIndex(argv: readonly string[]): number {
  if (basename(argv[0] ?? "") !== "git") return -1;
  for (let index = 1; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (["-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env"].includes(arg)) index++;
    else if (!arg.startsWith("-")) return index;
  }
  return -1;
}

/** The subcommand of a git command line, skipping git's own options; undefined when there is none. */
export function gitSubcommand(argv: readonly string[]): string | undefined {
  const index = subcommandIndex(argv);
  return index < 0 ? undefined : argv[index];
}

/**
 * The command line of the git command the user ran, from the helper's ancestors (nearest first): the first
 * git process that is not git's own `remote-<helper>` or a `fetch` another git command started; undefined
 * when a process that is not git comes first.
 */
export function userGitCommand(ancestors: readonly (readonly string[])[]): string[] | undefined {
  // A fetch started by another git command (a pull, a lazy fetch of a checkout) is git's; one started by
  // anything else is the user's own `git fetch`.
  let fetch: readonly string[] | undefined;
  for (const argv of ancestors) {
    const subcommand = gitSubcommand(argv);
    if (subcommand === undefined) break;
    if (subcommand.startsWith("remote-")) continue;
    if (subcommand === "fetch") {
      fetch = argv;
      continue;
    }
    return ["git", ...argv.slice(1)];
  }
  return fetch && ["git", ...fetch.slice(1)];
}

/** The command lines of this process's ancestors, nearest first, from `/proc`; [] where there is none. */
export function ancestorCommandLines(depth = 6): string[][] {
  const lines: string[][] = [];
  let pid = process.ppid;
  for (let step = 0; step < depth && pid > 1; step++) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv.at(-1) === "") argv.pop();
      lines.push(argv);
      // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after the last one.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      break;
    }
  }
  return lines;
}

/** The git command the user ran (read from the helper's ancestors), to run again; prose where unknown. */
export function rerunCommand(): string {
  const argv = userGitCommand(ancestorCommandLines());
  return argv ? argv.map(shellWord).join(" ") : "your git command again";
}
