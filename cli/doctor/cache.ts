/**
 * The project's cache (DESIGN.md §3), looked at and never changed: `cache.db` is opened read-only (no
 * migration runs; SQLite creates the empty `-wal` and `-shm` files a reader of a WAL database needs when
 * they are missing), `repo.git` is read through the file system. `cache/open.ts` rebuilds a cache that is
 * absent, or whose repository, database file, `main` or tip commit is gone, at the next `svc sync`; what
 * it cannot see (a database that fails `PRAGMA integrity_check`, or whose audit triggers are gone) is
 * rebuilt once the folder is moved aside.
 *
 * A cache svc cannot write (its file system full or read-only, or permission bits in the way) is told apart
 * from a broken one: on such a file system the database is read as immutable (no `-shm` file is needed),
 * and an intact one is never advised to be moved aside, which would lose its create journal (a push cut off
 * before would then create its records twice).
 */
import { existsSync, lstatSync, readdirSync, statfsSync } from "node:fs";
import { join, resolve } from "node:path";
import { CacheUnsafeError, cacheFolderName, cacheTip, checkCacheOwner } from "../../cache/cache.js";
import { probeStorage } from "../../cache/local-fault.js";
import { REBUILT_MARKER } from "../../cache/open.js";
import {
  cacheRoot,
  checkCacheRootFolder,
  type LocalFault,
  LocalFaultError,
  otherCacheRoot,
  permissionFix,
} from "../../cache/root.js";
import { formatAge } from "../../core/duration.js";
import type { RemoteUrl } from "../../core/remote-url.js";
import { Database } from "../../core/sqlite.js";
import { integrityProblems } from "../../core/sqlite-store.js";
import { hasObject } from "../../git/object-store.js";
import { staleTemporaryRefs } from "../../git/refs.js";
import { type Place, svcSync, words } from "./place.js";
import { type Finding, fail, info, ok, skipped } from "./report.js";

/** The triggers that keep `audit_events_cache` append-only (cache/db.ts, migration 1). */
export const AUDIT_TRIGGERS = ["audit_events_cache_no_update", "audit_events_cache_no_delete"] as const;

/** The triggers that keep `tip_history` (svc log's history) append-only, from schema revision 6 on. */
export const TIP_TRIGGERS = ["tip_history_no_update", "tip_history_no_delete"] as const;

/** The user's last server commit and the ref that holds it (cache/open.ts `lastServerCommit`). */
export interface UserCommit {
  readonly commit: string;
  readonly ref: string;
}

/** What `cache.db` says, read in one read-only connection; `unreadable` when SQLite refused it. */
interface DatabaseFacts {
  readonly unreadable?: string;
  /** Read as immutable (its file system takes no `-shm` file) beside a `-wal` file, whose content was not seen. */
  readonly immutable?: boolean;
  readonly integrity?: readonly string[];
  readonly missingTriggers?: readonly string[];
  readonly records?: number;
  readonly lastSyncMs?: number;
  /** When a complete full listing last looked for deletions (0: never). */
  readonly lastFullMs?: number;
  readonly lastSync?: { readonly ts: string; readonly op: string; readonly detail: string | null };
}

/**
 * `readDatabaseAs`, and when SQLite refuses the file on a file system svc cannot write (`cannotWrite`), once
 * more as immutable: a reader of a WAL database makes a `-shm` file, which a full or read-only file system
 * refuses ("disk I/O error", "unable to open database file") although the database is intact.
 */
function readDatabase(path: string, cannotWrite: boolean): DatabaseFacts {
  const facts = readDatabaseAs(path, false);
  if (facts.unreadable === undefined || !cannotWrite) return facts;
  const immutable = readDatabaseAs(path, true);
  if (immutable.unreadable !== undefined) return facts;
  return { ...immutable, immutable: lstatSizeOf(`${path}-wal`) > 0 };
}

function readDatabaseAs(path: string, immutable: boolean): DatabaseFacts {
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, immutable });
    db.pragma("busy_timeout = 5000");
    const problems = integrityProblems(db);
    const integrity = problems.length === 0 ? ["ok"] : problems;
    const present = new Set(
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all() as string[],
    );
    // A cache of an older svc (revision 5 or less) has no tip_history yet; its next open adds it.
    const revision = db.pragma("user_version", { simple: true }) as number;
    const required = [...AUDIT_TRIGGERS, ...(revision >= 6 ? TIP_TRIGGERS : [])];
    const facts: DatabaseFacts = {
      integrity,
      missingTriggers: required.filter((name) => !present.has(name)),
    };
    try {
      return {
        ...facts,
        records: db.prepare("SELECT count(*) FROM records WHERE deleted = 0").pluck().get() as number,
        lastSyncMs: db.prepare("SELECT last_sync_ms FROM sync_state WHERE id = 1").pluck().get() as number,
        lastFullMs: db.prepare("SELECT last_full_ms FROM sync_state WHERE id = 1").pluck().get() as number,
        lastSync: db
          .prepare(
            "SELECT ts, op, detail FROM audit_events_cache WHERE op IN ('sync', 'sync-failed') ORDER BY id DESC LIMIT 1",
          )
          .get() as DatabaseFacts["lastSync"],
      };
    } catch (error) {
      return { ...facts, unreadable: `its tables cannot be read (${(error as Error).message})` };
    }
  } catch (error) {
    return { unreadable: `it is not a usable SQLite database (${(error as Error).message})` };
  } finally {
    db?.close();
  }
}

/** The size of the file `path`, 0 when there is none. */
function lstatSizeOf(path: string): number {
  try {
    return lstatSync(path).size;
  } catch {
    return 0;
  }
}

/** `origin/main` for `refs/remotes/origin/main`; other refs in full. */
function shortRef(ref: string): string {
  return ref.replace(/^refs\/remotes\//, "");
}

/** `20260131T120000Z`: a time for a folder name. */
function stamp(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** Moves the cache folder aside (`svc sync` deletes it when it builds the new one), then syncs. */
function moveAsideAndSync(dir: string, place: Place, now: Date): string {
  return `${words(["mv", dir, `${dir}.broken-${stamp(now)}`])} && ${svcSync(place)}`;
}

/** `12.3 MiB`. */
function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** The bytes of every file under `path` (links not followed; a folder this user may not read counts 0). */
function sizeOnDisk(path: string): number {
  try {
    const stat = lstatSync(path);
    if (!stat.isDirectory()) return stat.size;
    let total = 0;
    for (const name of readdirSync(path)) total += sizeOnDisk(join(path, name));
    return total;
  } catch {
    return 0;
  }
}

const CACHE_LOSES =
  "moving it aside loses what only it holds (the create journal of an interrupted push, old versions of files your clone never fetched); " +
  "svc sync then builds a new one from a full listing that continues your history, and deletes the moved folder";

/**
 * The checks `cache`, `temp-refs`, `history`, `records`, `cache-size` and `last-sync` for the cache of
 * `remote`. `user` is the working tree's last server commit, if it has one.
 */
export function checkCache(
  remote: RemoteUrl,
  place: Place,
  user: UserCommit | undefined,
  now: Date = new Date(),
): Finding[] {
  let root: string;
  try {
    root = resolve(cacheRoot());
    checkCacheRootFolder(root);
  } catch (error) {
    if (!(error instanceof LocalFaultError)) throw error;
    return [
      rootFinding(error.fault, place),
      ...(["temp-refs", "history", "records", "cache-size", "last-sync"] as const).map((id) =>
        skipped(id, "the cache's fix comes first"),
      ),
    ];
  }
  const dir = join(root, cacheFolderName(remote));
  const repo = join(dir, "repo.git");
  if (!existsSync(dir)) {
    const why = user
      ? `its folder is missing (your ${shortRef(user.ref)} came from one)`
      : "there is none yet";
    return [
      fail("cache", `no cache at ${dir}: ${why}; svc sync builds it from a full listing`, svcSync(place), {
        path: dir,
      }),
      ...(["temp-refs", "history", "records", "cache-size", "last-sync"] as const).map((id) =>
        skipped(id, "no cache"),
      ),
    ];
  }

  try {
    checkCacheOwner(dir);
  } catch (error) {
    if (!(error instanceof CacheUnsafeError)) throw error;
    return [
      fail(
        "cache",
        `the cache ${dir} ${error.problem}; svc uses no cache folder someone else may change`,
        error.kind === "owner" ? `${error.fix} && ${svcSync(place)}` : error.fix,
        { path: dir },
      ),
      ...(["temp-refs", "history", "records", "cache-size", "last-sync"] as const).map((id) =>
        skipped(id, "the cache's fix comes first"),
      ),
    ];
  }

  const repoFound = existsSync(join(repo, "HEAD"));
  const dbPath = join(dir, "cache.db");
  const storage = storageFault(dir);
  const facts: DatabaseFacts = existsSync(dbPath) ? readDatabase(dbPath, storage !== undefined) : {};
  const tip = repoFound ? cacheTip(repo) : undefined;
  const problems = cacheProblems({ repo, repoFound, dbFound: existsSync(dbPath), facts, tip });
  const healthy = problems.length === 0 && storage === undefined;
  const findings: Finding[] = [];
  if (storage) {
    findings.push(storageFinding({ dir, root, place, storage, problems, facts, tip }));
  } else if (healthy) {
    const summary = `integrity_check ok, audit triggers present, tip ${tip?.slice(0, 12) ?? "none yet"}`;
    findings.push(ok("cache", `${dir}: ${summary}`, { path: dir, tip: tip ?? null }));
  } else {
    const whys = problems.map((problem) => problem.why).join("; ");
    findings.push(
      problems.some((problem) => problem.moveAside)
        ? fail(
            "cache",
            `the cache ${dir} is broken: ${whys}; ${CACHE_LOSES}`,
            moveAsideAndSync(dir, place, now),
            {
              path: dir,
            },
          )
        : fail(
            "cache",
            `the cache ${dir} is broken: ${whys}; svc sync rebuilds it from a full listing, continuing your history`,
            svcSync(place),
            { path: dir },
          ),
    );
  }
  findings.push(repoFound ? checkTemporaryRefs(repo) : skipped("temp-refs", "no repo.git"));
  findings.push(checkHistory({ dir, repo, place, user, cacheUsable: healthy, now }));
  findings.push(
    facts.records === undefined
      ? skipped("records", "cache.db cannot be read")
      : info("records", `${facts.records} records in the cache`, { records: facts.records }),
  );
  const bytes = sizeOnDisk(dir);
  findings.push(info("cache-size", `${formatBytes(bytes)} on disk`, { bytes }));
  findings.push(lastSync(facts, now));
  return findings;
}

/** The `cache` check's failure for a cache root svc refuses: `SVC_CACHE_DIR` relative, or a file. */
function rootFinding(fault: LocalFault, place: Place): Finding {
  const named = process.env.SVC_CACHE_DIR
    ? `SVC_CACHE_DIR=${words([process.env.SVC_CACHE_DIR])}`
    : "svc's cache folder";
  const message =
    fault.kind === "relative"
      ? `${named} is a relative path, which names another folder for each folder svc runs in, one of them ` +
        "inside your working tree, where git add -A would stage the cache's files; svc refuses it"
      : `${named} cannot be used: ${fault.path} is a file, not a folder`;
  const other = otherCacheRoot(process.env, fault.kind === "not-a-folder" ? fault.path : undefined);
  return fail(
    "cache",
    message,
    other
      ? `${other.command} && ${svcSync(place)}`
      : { advice: "set SVC_CACHE_DIR to the absolute path of a folder you can write, then run svc sync" },
    { path: fault.path },
  );
}

/** What stops svc from writing the cache in `dir`, looked at on its files, its repository and its folder. */
function storageFault(dir: string): ReturnType<typeof probeStorage> {
  const paths = [
    join(dir, "cache.db"),
    join(dir, "repo.git", "objects"),
    join(dir, "repo.git", "refs", "heads"),
  ];
  for (const path of [...paths, dir]) {
    if (!existsSync(path)) continue;
    const found = probeStorage(path);
    if (found) return found;
  }
  return undefined;
}

/** The bytes this process may still write on the file system of `dir`. */
function spaceLeft(dir: string): number {
  try {
    const stat = statfsSync(dir);
    return (process.getuid?.() === 0 ? stat.bfree : stat.bavail) * stat.bsize;
  } catch {
    return 0;
  }
}

/**
 * The `cache` check's failure for a cache svc cannot write: a full or read-only file system, or permission
 * bits. The database is judged as well as it can be read; an intact one is kept (the fix never moves it).
 */
function storageFinding(found: {
  dir: string;
  root: string;
  place: Place;
  storage: NonNullable<ReturnType<typeof probeStorage>>;
  problems: readonly { why: string; moveAside: boolean }[];
  facts: DatabaseFacts;
  tip: string | undefined;
}): Finding {
  const { dir, storage, facts } = found;
  // A database SQLite cannot open here is unreadable because of the file system, not broken.
  const problems = found.problems.filter((problem) => !problem.why.startsWith("its database cache.db: "));
  const database =
    problems.length > 0
      ? `and the cache has problems of its own, which come after: ${problems.map((problem) => problem.why).join("; ")}`
      : facts.unreadable !== undefined
        ? `its database cannot be read until then (${facts.unreadable})`
        : `the cache is intact (integrity_check ok${facts.immutable ? ", read without its -wal file" : ""}, tip ` +
          `${found.tip?.slice(0, 12) ?? "none yet"}): keep it, as moving it aside would lose its create journal`;
  const details = { path: storage.path, fault: storage.kind };
  if (storage.kind === "full") {
    return fail(
      "cache",
      `the file system of ${dir} is full (${formatBytes(spaceLeft(dir))} left): git fetch, git push and svc sync cannot write the cache; ${database}`,
      {
        advice: `free space on it (${words(["df", "-h", dir])} shows how much is left); the cache needs no change`,
      },
      details,
    );
  }
  if (storage.kind === "read-only") {
    const other = otherCacheRoot(process.env, dir);
    return fail(
      "cache",
      `the file system of ${dir} is read-only: svc can read the cache, but git fetch, git push and svc sync cannot write it; ${database}`,
      {
        advice:
          `make that file system writable again (${words(["findmnt", "-T", dir])} shows how it is mounted)` +
          (other
            ? `; if it must stay read-only, keep svc's caches elsewhere (a new cache there starts from a full listing, without this one's create journal): ${other.command} && ${svcSync(found.place)}`
            : ""),
      },
      details,
    );
  }
  const fix = permissionFix(storage.path, found.root);
  return fail(
    "cache",
    `svc may not write ${storage.path} (permission denied): git fetch, git push and svc sync fail on the cache; ${database}`,
    "command" in fix
      ? fix.command
      : {
          advice: `${fix.folder} belongs to ${fix.owner === undefined ? "another user" : `uid ${fix.owner}`}; ask its owner to give it to you (chown -R), then run svc doctor again`,
        },
    details,
  );
}

/**
 * What is wrong with a cache folder that is there, each problem with whether `svc sync` sees it by itself
 * (ProjectCache.check: a missing repository, database file, `main` or tip commit; a database SQLite refuses
 * to open) or only once the folder is moved aside.
 */
function cacheProblems(found: {
  repo: string;
  repoFound: boolean;
  dbFound: boolean;
  facts: DatabaseFacts;
  tip: string | undefined;
}): { why: string; moveAside: boolean }[] {
  const { repo, facts, tip } = found;
  const problems: { why: string; moveAside: boolean }[] = [];
  if (!found.repoFound) problems.push({ why: "its repository repo.git is missing", moveAside: false });
  if (!found.dbFound) problems.push({ why: "its database cache.db is missing", moveAside: false });
  if (facts.unreadable) problems.push({ why: `its database cache.db: ${facts.unreadable}`, moveAside: true });
  if (facts.integrity && facts.integrity.join() !== "ok") {
    const said = facts.integrity.slice(0, 3).join("; ").slice(0, 300);
    problems.push({ why: `PRAGMA integrity_check of cache.db says: ${said}`, moveAside: true });
  }
  const lacking = facts.missingTriggers ?? [];
  if (lacking.length > 0) {
    problems.push({
      why: `the audit table is not append-only: cache.db lacks the trigger${lacking.length > 1 ? "s" : ""} ${lacking.join(", ")}`,
      moveAside: true,
    });
  }
  // Every sync leaves main set: a cache that synced and has no main lost it.
  if (found.repoFound && tip === undefined && (facts.lastSyncMs ?? 0) > 0)
    problems.push({ why: "its branch main is missing", moveAside: false });
  if (tip !== undefined && !hasObject(repo, tip))
    problems.push({ why: `its tip commit ${tip.slice(0, 12)} is missing from repo.git`, moveAside: false });
  return problems;
}

/** `refs/svc/{base,incoming}/<pid>` of pushes that died, and their lock files: one command deletes them all. */
function checkTemporaryRefs(repo: string): Finding {
  const { refs, locks } = staleTemporaryRefs(repo);
  if (refs.length === 0 && locks.length === 0) return ok("temp-refs", "none left by a push that died");
  // The locks go first: git refuses to delete a ref while its lock file is there.
  const commands = [
    ...locks.map((lock) => words(["rm", "-f", lock])),
    ...refs.map((ref) => words(["git", `--git-dir=${repo}`, "update-ref", "-d", ref])),
  ];
  return fail(
    "temp-refs",
    `pushes whose process is gone left ${[...refs, ...locks].join(", ")} in ${repo}; a push deletes them too, this does it now`,
    commands.join(" && "),
    { refs, locks },
  );
}

function checkHistory(context: {
  dir: string;
  repo: string;
  place: Place;
  user: UserCommit | undefined;
  cacheUsable: boolean;
  now: Date;
}): Finding {
  const { dir, repo, place, user } = context;
  if (!context.cacheUsable) return skipped("history", "the cache's fix comes first");
  if (!user) return skipped("history", "the working tree has no server commit yet (never fetched)");
  const named = `your ${shortRef(user.ref)} (${user.commit.slice(0, 12)})`;
  if (hasObject(repo, user.commit)) return ok("history", `${named} is in the cache`, { commit: user.commit });
  if (existsSync(join(dir, REBUILT_MARKER))) {
    return fail(
      "history",
      `${named} is not in the cache, which was rebuilt since your last fetch; svc sync (its git fetch) copies your history in and continues it, so git pull fast-forwards`,
      svcSync(place),
      { commit: user.commit },
    );
  }
  return fail(
    "history",
    `${named} is not in the cache ${dir}, which was built without it (after the cache your clone used was lost), so your next git pull finds unrelated histories; ` +
      `a cache built by svc sync from this working tree continues your history (other clones continue theirs at their next fetch); ${CACHE_LOSES}`,
    moveAsideAndSync(dir, place, context.now),
    { commit: user.commit },
  );
}

function lastSync(facts: DatabaseFacts, now: Date): Finding {
  if (facts.lastSyncMs === undefined) return skipped("last-sync", "cache.db cannot be read");
  if (facts.lastSyncMs === 0 && !facts.lastSync) return info("last-sync", "never synced", { lastSyncMs: 0 });
  const when =
    facts.lastSyncMs > 0
      ? `last sync ${new Date(facts.lastSyncMs).toISOString()} (${formatAge(now.getTime() - facts.lastSyncMs)} ago)`
      : "never synced";
  const row = facts.lastSync;
  let answer: Record<string, unknown> = {};
  try {
    answer = row?.detail ? (JSON.parse(row.detail) as Record<string, unknown>) : {};
  } catch {
    // an unreadable detail is shown as it is
  }
  const said = !row
    ? ""
    : row.op === "sync"
      ? `; the server's answer at ${row.ts}: ${answer.full ? "full listing" : "delta"}, ${answer.listed ?? "?"} listed, ${answer.changed ?? "?"} changed, ${answer.deleted ?? "?"} deleted`
      : `; the last attempt, at ${row.ts}, failed: ${String(answer.reason ?? row.detail ?? "").slice(0, 300)}`;
  // A delta sync sees a deletion only where the server gives a count of its records (the sim, the tracker)
  // or names the records it removed (the wiki's trash); a full listing always does (issue 31).
  const full = facts.lastFullMs ?? 0;
  const deletions = `; deletions last looked for by a full listing ${full > 0 ? `${formatAge(now.getTime() - full)} ago` : "never"} (svc sync --reconcile looks now)`;
  return info("last-sync", `${when}${said}${deletions}`, {
    lastSyncMs: facts.lastSyncMs,
    lastFullMs: full,
    ...(row ? { lastAnswer: { ts: row.ts, op: row.op, detail: answer } } : {}),
  });
}
