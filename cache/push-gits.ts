/**
 * The gits that heard `ok` for a pushed commit, from the cache's `push-accept` audit rows: git/ref-locks.ts
 * judges by them whether a ref's lock file was left by a git that is gone.
 */
import type { Database } from "../core/sqlite.js";
import type { PushGits } from "../git/ref-locks.js";

/** `PushGits` read from a cache database (`cache.db`, read-only will do). */
export function pushGitsFrom(db: Database): PushGits {
  const rows = db
    .prepare(
      "SELECT json_extract(detail, '$.gitPid') FROM audit_events_cache WHERE op = 'push-accept' AND oid = ?",
    )
    .pluck();
  return (commit) =>
    (rows.all(commit) as unknown[]).filter(
      (pid): pid is number => typeof pid === "number" && Number.isSafeInteger(pid) && pid > 0,
    );
}
