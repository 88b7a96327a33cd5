/** The refs a push keeps in the cache repository while it runs, and what a killed push leaves of them. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isRunning } from "../core/process.js";

/**
 * `refs/svc/base/<pid>` and `refs/svc/incoming/<pid>` in the cache repository `repo` of pushes whose process
 * is gone (killed mid-push), and the lock files such a push left beside them (git refuses to touch a ref
 * while its lock is there). Reads only: `svc doctor` reports them, a push deletes them. A running push's
 * refs, and `self`'s, are not in it.
 */
export function staleTemporaryRefs(
  repo: string,
  self: number = process.pid,
): { refs: string[]; locks: string[] } {
  const refs: string[] = [];
  const locks: string[] = [];
  for (const kind of ["base", "incoming"]) {
    let names: string[] = [];
    try {
      names = readdirSync(join(repo, "refs", "svc", kind));
    } catch {
      continue;
    }
    for (const name of names) {
      const match = /^(\d+)(\.lock)?$/.exec(name);
      const pid = Number(match?.[1]);
      if (!match || !Number.isSafeInteger(pid) || pid === self || isRunning(pid)) continue;
      if (match[2]) locks.push(join(repo, "refs", "svc", kind, name));
      else refs.push(`refs/svc/${kind}/${name}`);
    }
  }
  return { refs, locks };
}
