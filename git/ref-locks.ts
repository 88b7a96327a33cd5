/**
 * Lock files a killed git left under a repository's `refs/` (issue 31). git moves a loose ref by creating
 * `<ref>.lock` exclusively, writing the new value into it and renaming it over `<ref>` (refs/files-backend.c);
 * a `kill -9` in between leaves the lock, and from then on git refuses to move that ref: `cannot lock ref
 * '<ref>': Unable to create '<ref>.lock': File exists`. The helper's refspec maps the server's `main` to
 * `refs/svc/<remote>/main`, which git moves after every push the helper answers `ok`, so a push killed at
 * that instant leaves `refs/svc/<remote>/main.lock`, and every later push prints git's error (the push
 * itself lands). The helper removes such a lock in its own namespace before it answers `ok`; `svc doctor`
 * names any under `refs/`.
 *
 * A lock file names no process, so whether its writer is gone is decided thus (`isStale`):
 * - A lock that holds a commit svc answered `ok` for was written by a git that heard that `ok`: nothing else
 *   writes a pushed commit into a ref. Each push notes its git's pid (`push-accept` audit rows, `gitPid`);
 *   when none of those gits still runs (core/process.ts `isRunning`), the lock is stale at once.
 * - Any other lock (empty, another value, a git of that push still running, a cache that never saw the
 *   push) is stale once it is `STALE_AFTER_MS` old. git holds a ref's lock only while it writes that ref
 *   (microseconds; only a reference-transaction hook of the user's runs in between), and gives up by itself
 *   when another's lock is there longer than core.filesRefLockTimeout (100 ms by default). A git stopped
 *   between the two steps for longer than STALE_AFTER_MS (Ctrl-Z, a hook that hangs) then loses that one
 *   update of the ref, and says so; a lock left for good would break every later update of it.
 */
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { isRunning } from "../core/process.js";
import { userCommonDir } from "./user-command.js";

export const STALE_AFTER_MS = 10_000;

export interface RefLock {
  /** The lock file. */
  readonly path: string;
  /** The ref it locks, e.g. `refs/svc/origin/main`. */
  readonly ref: string;
}

/** The pids of the gits svc answered `ok` for a push of `commit` (none when no push of it finished). */
export type PushGits = (commit: string) => readonly number[];

/**
 * The `*.lock` files under `<gitDir>/<under>` (`refs`, or a folder in it such as `refs/svc/origin`), each
 * with the ref it locks. A folder that is not there has none.
 */
export function refLockFiles(gitDir: string, under = "refs"): RefLock[] {
  let names: string[];
  try {
    names = readdirSync(join(gitDir, under), { recursive: true, encoding: "utf8" });
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith(".lock"))
    .map((name) => join(gitDir, under, name))
    .filter((path) => {
      try {
        return statSync(path).isFile();
      } catch {
        return false;
      }
    })
    .map((path) => ({ path, ref: relative(gitDir, path).split(sep).join("/").slice(0, -".lock".length) }));
}

/** Whether `lock`'s writer is gone, by the rules of the module's header; false for a lock gone meanwhile. */
export function isStale(lock: RefLock, pushGits: PushGits, now: number = Date.now()): boolean {
  let content: string;
  let mtimeMs: number;
  try {
    mtimeMs = statSync(lock.path).mtimeMs;
    content = readFileSync(lock.path, "utf8").trim();
  } catch {
    return false;
  }
  if (now - mtimeMs >= STALE_AFTER_MS) return true;
  if (!/^[0-9a-f]{40}$/.test(content)) return false;
  const gits = pushGits(content);
  return gits.length > 0 && !gits.some(isRunning);
}

/** The stale locks under `<gitDir>/<under>` (see `refLockFiles`). */
export function staleRefLocks(gitDir: string, under: string, pushGits: PushGits, now?: number): RefLock[] {
  return refLockFiles(gitDir, under).filter((lock) => isStale(lock, pushGits, now));
}

/**
 * Removes the stale locks under `under` (the helper's `refs/svc/<remote>`) of the repository git runs the
 * helper for, saying so on `log`; `pushGits` names the gits of each pushed commit (cache/push-gits.ts).
 */
export function removeStaleRefLocks(pushGits: PushGits, under: string, log: (message: string) => void): void {
  const common = userCommonDir({ env: process.env, cwd: process.cwd() });
  if (common === undefined) return;
  for (const lock of staleRefLocks(common, under, pushGits)) {
    rmSync(lock.path, { force: true });
    log(
      `svc: removed ${lock.path}: a git killed while it updated ${lock.ref} left it, and git refuses to update that ref while it is there`,
    );
  }
}
