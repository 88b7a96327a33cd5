/**
 * Small shared pieces of configuration handling: whole-number environment variables and SQLite schema
 * migration by `PRAGMA user_version` (the simulator's store and the cache database both use it).
 */
import type Database from "better-sqlite3";
import { SvcError, UserFacingError } from "./errors.js";

/**
 * Set by `svc init` in its `git clone`'s environment: the helper may answer the clone's fetch with every
 * record file (helper/stateless-connect.ts, `TunnelOptions.cloneWithBlobs`).
 */
export const CLONE_WITH_BLOBS_VARIABLE = "SVC_CLONE_WITH_BLOBS";

/** A non-negative whole number from the environment variable `name`, or `fallback` when unset. */
export function envCount(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${name}=${JSON.stringify(raw)} is not a whole number; use e.g. ${fallback}, or 0 for no limit`,
    );
  }
  return value;
}

/**
 * Brings `db` to revision `latest` by running each missing migration in its own transaction. A file of a
 * newer revision is refused with `tooNew(current)` as the message: this svc cannot know its shape.
 */
export function migrateSchema(
  db: Database.Database,
  migrations: Readonly<Record<number, string>>,
  latest: number,
  tooNew: (current: number) => string,
): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > latest) throw new SvcError("SVC_STORE", tooNew(current));
  for (let revision = current + 1; revision <= latest; revision++) {
    db.transaction(() => {
      db.exec(migrations[revision] ?? "");
      db.pragma(`user_version = ${revision}`);
    })();
  }
}
