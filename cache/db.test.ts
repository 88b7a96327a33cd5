import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { Database } from "../core/sqlite.js";
import { givenTempDir } from "../testing/sim.js";
import { CacheDb } from "./db.js";
import { NOTED_BEFORE } from "./db-bookkeeping.js";
import { CACHE_MIGRATIONS } from "./db-schema.js";

const IDENTITY = { backend: "sim", project: "demo", agent: "test" };
const A = "a".repeat(40);
const B = "b".repeat(40);
const USER = "c".repeat(40);

/** A cache database at schema `revision`, as an older svc left it, at a new path; the caller closes it. */
function givenRevision(t: ExecutionContext, revision: number): { path: string; old: Database } {
  const path = join(givenTempDir(t), "cache.db");
  const old = new Database(path);
  for (let step = 1; step <= revision; step++) old.exec(CACHE_MIGRATIONS[step] ?? "");
  old.pragma(`user_version = ${revision}`);
  return { path, old };
}

test("revision 6 gives a cache made before it the tips its audit rows name: syncs that wrote a commit and pushes", (t) => {
  const { path, old } = givenRevision(t, 5);
  const audit = old.prepare(
    "INSERT INTO audit_events_cache (ts, op, backend, project, oid, agent, detail) VALUES (?, ?, 'sim', 'demo', ?, 'x', ?)",
  );
  audit.run("2026-11-20T10:00:00.000Z", "sync", null, JSON.stringify({ full: true, commit: A }));
  audit.run("2026-11-20T10:05:00.000Z", "sync", null, JSON.stringify({ full: false, commit: null }));
  audit.run("2026-11-20T10:06:00.250Z", "push-accept", USER, JSON.stringify({ update: 1, result: B }));
  audit.run("2026-11-20T10:07:00.000Z", "rpc", null, null);
  old.close();

  const db = new CacheDb(path, IDENTITY);
  t.teardown(() => db.close());
  t.deepEqual(
    db.tips().map(({ commit_oid, at_ms, op, pushed_commit }) => [commit_oid, at_ms, op, pushed_commit]),
    [
      [A, Date.parse("2026-11-20T10:00:00.000Z"), "sync", null],
      [B, Date.parse("2026-11-20T10:06:00.250Z"), "push", USER],
    ],
  );
});

test("revision 10 drops records.raw_json and keeps every record, its triggers and its indexes working", (t) => {
  const { path, old } = givenRevision(t, 9);
  const insert = old.prepare(
    "INSERT INTO records (key, path, version, updated_at, rendered_oid, raw_json) VALUES (?, ?, 1, ?, ?, '{\"id\":1}')",
  );
  insert.run("1", "issues/0001.md", "2026-11-20T10:00:00.000Z", A);
  insert.run("2", "issues/0002.md", "2026-11-20T10:05:00.000Z", B);
  old.close();

  const db = new CacheDb(path, IDENTITY);
  t.teardown(() => db.close());
  t.deepEqual(db.record("2"), {
    key: "2",
    path: "issues/0002.md",
    version: 1,
    updated_at: "2026-11-20T10:05:00.000Z",
    rendered_oid: B,
  });
  const raw = new Database(path, { readonly: true });
  t.teardown(() => raw.close());
  const columns = raw.prepare("SELECT name FROM pragma_table_info('records')").pluck().all();
  t.deepEqual(columns, ["key", "path", "version", "updated_at", "rendered_oid", "deleted"]);
  // The upsert and the triggers that note changed paths still work on the table as it is now.
  db.saveStateTrees(new Map([["", Buffer.alloc(0)]]), [], true);
  db.upsertRecord({
    key: "1",
    path: "issues/0001.md",
    version: 2,
    updated_at: "2026-11-21T00:00:00.000Z",
    rendered_oid: B,
  });
  t.is(db.record("1")?.version, 2);
  t.deepEqual(db.dirtyPaths(), ["issues/0001.md"]);
});

test("tip_history is append-only, as the audit table is", (t) => {
  const db = new CacheDb(join(givenTempDir(t), "cache.db"), IDENTITY);
  t.teardown(() => db.close());
  db.noteTip(A, "import");
  t.throws(() => db.db.exec("UPDATE tip_history SET op = 'sync'"), { any: true, message: /append-only/ });
  t.throws(() => db.db.exec("DELETE FROM tip_history"), { any: true, message: /append-only/ });
  t.is(db.tips().length, 1);
});

test("who made a version is kept with its blob, for the versions whose backend said", (t) => {
  const db = new CacheDb(join(givenTempDir(t), "cache.db"), IDENTITY);
  t.teardown(() => db.close());
  db.rememberBlob(A, "1", Buffer.from("one"), "account-1");
  db.rememberBlob(B, "2", Buffer.from("two"));
  t.deepEqual([...db.changedBy([A, B, USER])], [[A, "account-1"]]);
});

test("notedAncestor: the tips main moved to and the user commits pushes built on, up to the tip's last move", (t) => {
  const db = new CacheDb(join(givenTempDir(t), "cache.db"), IDENTITY);
  t.teardown(() => db.close());
  const [C, D, E] = ["1", "2", "3"].map((digit) => digit.repeat(40)) as [string, string, string];
  db.noteTip(A, "import");
  db.noteTip(B, "push", USER);
  db.noteTip(C, "sync");
  // Main later moved on to D, a push of E: neither is an ancestor of C.
  db.noteTip(D, "push", E);
  t.true(db.notedAncestor(C, C), "the tip itself");
  t.true(db.notedAncestor(A, C), "an older tip");
  t.true(db.notedAncestor(B, C), "an older push result");
  t.true(db.notedAncestor(USER, C), "the user commit an older push built on");
  t.false(db.notedAncestor(D, C), "a tip after it");
  t.false(db.notedAncestor(E, C), "the user commit of a push after it");
  t.true(db.notedAncestor(E, D));
  // A tip this history never noted (a ref moved in a transaction that was rolled back): nothing is known.
  t.false(db.notedAncestor(A, "f".repeat(40)));
});

test("notedAncestor looks commits up by index, not by reading main's whole history", (t) => {
  const db = new CacheDb(join(givenTempDir(t), "cache.db"), IDENTITY);
  t.teardown(() => db.close());
  const plan = db.db
    .prepare(`EXPLAIN QUERY PLAN ${NOTED_BEFORE}`)
    .all({ oid: A, tip: B })
    .map((row) => (row as { detail: string }).detail)
    .join("\n");
  t.notRegex(plan, /SCAN tip_history/, plan);
  t.regex(plan, /tip_history_commit/);
  t.regex(plan, /tip_history_pushed/);
});

test("a database being built loads without the indexes inserts do not need and gets each back as the schema wrote it", (t) => {
  const dir = givenTempDir(t);
  const indexes = (db: CacheDb) =>
    db.db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('records', 'oid_map') ORDER BY name",
      )
      .all() as { name: string; sql: string | null }[];
  const kept = new CacheDb(join(dir, "kept.db"), IDENTITY);
  t.teardown(() => kept.close());
  const schema = indexes(kept);
  t.true(schema.some((index) => index.name === "records_live_path"));
  kept.deferIndexes()();
  t.deepEqual(indexes(kept), schema, "a database not being built keeps its indexes");

  const built = new CacheDb(join(dir, "built.db"), IDENTITY, { building: true });
  t.teardown(() => built.close());
  const restore = built.deferIndexes();
  t.deepEqual(
    indexes(built).map((index) => index.name),
    ["sqlite_autoindex_oid_map_1", "sqlite_autoindex_records_1"],
    "only the keys are kept while the listing goes in",
  );
  built.rememberBlob(A, "1", Buffer.from("one\n"));
  built.upsertRecord({
    key: "1",
    path: "issues/1.md",
    version: 1,
    updated_at: "2026-11-20T10:00:00Z",
    rendered_oid: A,
  });
  restore();
  restore();
  t.deepEqual(indexes(built), schema);
  t.deepEqual([...built.treeEntriesByPath()], [{ path: "issues/1.md", rendered_oid: A }]);
});
