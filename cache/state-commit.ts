/**
 * The state commits of the cache's main (DESIGN.md §3): a commit whose tree is the server state the cache
 * holds, deterministic (fixed identity, time = newest `updated_at` in the tree, the given parents), so caches
 * that saw the same server states have the same commit ids; and the one a sync writes when it changed
 * something, or when main lags behind what a push that was cut off wrote to the records.
 */
import type { Backend } from "../backends/backend.js";
import { encodeCommit } from "../git/objects.js";
import type { ProjectCache } from "./cache.js";
import { writeStateTree } from "./state-tree.js";

export const SVC_IDENTITY = "svc <svc@localhost>";

/** An RFC 3339 time as whole seconds since the epoch (a commit's time); 0 when it cannot be read. */
function epochSeconds(timestamp: string): number {
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** The commit this sync writes, if any (made main's tip), and main's tip after it. */
export function commitSync(
  cache: ProjectCache,
  backend: Backend,
  changed: number,
  deleted: number,
): { commit: string | undefined; tip: string } {
  const tipBefore = cache.tip();
  let commit: string | undefined;
  if (changed > 0 || deleted > 0 || tipBefore === undefined) {
    commit = writeSyncCommit(cache, backend, tipBefore, undefined, changed, deleted);
  } else if (cache.db.dirtyPaths().length > 0) {
    // What a push wrote before it was cut off (an error, kill -9) is in `records` but not in main's tree
    // (the triggers noted the paths): this commit carries it, so that main is the server's state again.
    commit = writeStateCommit(
      cache,
      [tipBefore],
      syncCommitMessage(backend, "the writes of a push that was cut off"),
    );
  }
  if (commit !== undefined) cache.setTip(commit, tipBefore === undefined ? "import" : "sync");
  // A cache without a tip got its first commit above.
  return { commit, tip: commit ?? (tipBefore as string) };
}

/**
 * A commit whose tree is the server state the cache holds (every live record's file), with fixed identity
 * and time = newest `updated_at`: deterministic for a given state and parents.
 */
export function writeStateCommit(cache: ProjectCache, parents: readonly string[], message: string): string {
  const tree = writeStateTree(cache);
  cache.db.countStateCommit();
  let newest = 0;
  for (const updatedAt of cache.db.newestUpdateCandidates())
    newest = Math.max(newest, epochSeconds(updatedAt));
  return cache.writeObject(
    "commit",
    encodeCommit({ tree, parents, identity: SVC_IDENTITY, time: newest, message }),
  );
}

/** The message of a state commit that brings the server's changes: `svc: sync <kind> project <p>`, then `body`. */
export function syncCommitMessage(backend: Pick<Backend, "kind" | "project">, body: string): string {
  return `svc: sync ${backend.kind} project ${backend.project}\n\n${body}\n`;
}

export function writeSyncCommit(
  cache: ProjectCache,
  backend: Backend,
  parent: string | undefined,
  continues: string | undefined,
  changed: number,
  deleted: number,
): string {
  if (parent !== undefined) {
    return writeStateCommit(
      cache,
      [parent],
      syncCommitMessage(backend, `${changed} changed, ${deleted} removed`),
    );
  }
  const records = `${cache.db.liveCount()} records\n`;
  return continues === undefined
    ? writeStateCommit(cache, [], `svc: import ${backend.kind} project ${backend.project}\n\n${records}`)
    : writeStateCommit(
        cache,
        [continues],
        `svc: import ${backend.kind} project ${backend.project} into a rebuilt cache\n\n${records}`,
      );
}
