/**
 * The check `ref-locks`: lock files under the clone's `refs/` that a killed git left (git/ref-locks.ts
 * decides which are stale, by the same rules the helper uses before it removes one of its own). git
 * refuses to update a ref while its lock file is there, and nothing else says so: a push still lands,
 * with git's "cannot lock ref" among its lines. Reads only; the fix removes the files.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { cacheFolderName } from "../../cache/cache.js";
import { pushGitsFrom } from "../../cache/push-gits.js";
import { cacheRoot } from "../../cache/root.js";
import type { RemoteUrl } from "../../core/remote-url.js";
import { Database } from "../../core/sqlite.js";
import { type PushGits, staleRefLocks } from "../../git/ref-locks.js";
import { userGit } from "../../git/user-git.js";
import { type Place, words } from "./place.js";
import { type Finding, fail, ok, skipped } from "./report.js";

/**
 * `PushGits` read from the cache database of `remote`, opened read-only at each question (asked rarely).
 * A cache root svc cannot use (`SVC_CACHE_DIR` relative or a file) knows no pushes: the `cache` check says
 * why.
 */
function pushGitsOfCache(remote: RemoteUrl): PushGits {
  let path: string | undefined;
  try {
    path = join(resolve(cacheRoot(), cacheFolderName(remote)), "cache.db");
  } catch {
    path = undefined;
  }
  return (commit) => {
    if (path === undefined || !existsSync(path)) return [];
    let db: Database | undefined;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true });
      return pushGitsFrom(db)(commit);
    } catch {
      return [];
    } finally {
      db?.close();
    }
  };
}

export async function checkRefLocks(place: Place, remote: RemoteUrl, now?: number): Promise<Finding> {
  const cwd = place.dir ?? ".";
  const found = await userGit(["rev-parse", "--git-dir", "--git-common-dir"], { cwd });
  const dirs = found.stdout.split("\n").filter((line) => line !== "");
  if (found.code !== 0 || dirs.length !== 2) return skipped("ref-locks", "git rev-parse --git-dir failed");
  // As git prints them: relative to `cwd` (or absolute), so the fix runs from where svc doctor ran.
  const [gitDir, commonDir] = dirs.map((dir) => (isAbsolute(dir) ? dir : join(cwd, dir))) as [string, string];
  const pushGits = pushGitsOfCache(remote);
  const locks = [...new Set([commonDir, gitDir])].flatMap((dir) => staleRefLocks(dir, "refs", pushGits, now));
  if (locks.length === 0) return ok("ref-locks", "no lock file under refs/ left by a git that was killed");
  const paths = locks.map((lock) => lock.path);
  const refs = locks.map((lock) => lock.ref);
  const one = locks.length === 1;
  return fail(
    "ref-locks",
    `a git that was killed left ${paths.join(", ")}, and no git is updating ${refs.join(", ")}: ` +
      `git refuses to update ${one ? "that ref" : "those refs"} while ${one ? "the file is" : "the files are"} there ("cannot lock ref")`,
    words(["rm", "-f", ...paths]),
    { locks: paths, refs },
  );
}
