/**
 * The one schema-migration runner (`migrateSchema` in sqlite-store.ts), on in-memory databases: revisions run
 * in order from the file's own, a newer file is refused with the caller's message or error, an older one
 * is refused untouched when the caller says so, and a failing revision leaves the revision before it.
 * The opener: the pragmas of a store, of a store being built and of a read-only one, the mode of a new file,
 * the caller's error when SQLite cannot open the file; and what `PRAGMA integrity_check` finds.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { givenTempDir } from "../testing/sim.js";
import { SvcError } from "./errors.js";
import { Database } from "./sqlite.js";
import { integrityProblems, migrateSchema, openStore } from "./sqlite-store.js";

const MIGRATIONS = {
  1: "CREATE TABLE a (x INTEGER);",
  2: "ALTER TABLE a ADD COLUMN y INTEGER;",
  3: "CREATE TABLE b (z INTEGER);",
};

function given(t: { teardown(fn: () => void): void }, revision = 0): Database {
  const db = new Database(":memory:");
  t.teardown(() => db.close());
  for (let r = 1; r <= revision; r++) db.exec(MIGRATIONS[r as 1 | 2 | 3]);
  db.pragma(`user_version = ${revision}`);
  return db;
}

const version = (db: Database): number => db.pragma("user_version", { simple: true }) as number;
const tables = (db: Database): string[] =>
  db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all()
    .map((row) => (row as { name: string }).name);

for (const immediate of [false, true]) {
  test(`runs the missing revisions in order from the file's own (immediate: ${immediate})`, (t) => {
    const db = given(t, 1);
    migrateSchema(db, MIGRATIONS, 3, () => "too new", { immediate });
    t.is(version(db), 3);
    t.deepEqual(tables(db), ["a", "b"]);
    migrateSchema(db, MIGRATIONS, 3, () => "too new", { immediate });
    t.is(version(db), 3, "a current file is left alone");
  });
}

test("a newer file is refused: a message becomes an SVC_STORE error, an error is thrown as it is", (t) => {
  const db = given(t, 3);
  const stored = t.throws(
    () => migrateSchema(db, MIGRATIONS, 2, (current) => `revision ${current} is newer`),
    {
      instanceOf: SvcError,
    },
  );
  t.is((stored as SvcError).code, "SVC_STORE");
  t.is(stored?.message, "revision 3 is newer");
  const own = new RangeError("own");
  t.is(
    t.throws(() => migrateSchema(db, MIGRATIONS, 2, () => own)),
    own,
  );
});

test("refuseOlder stops an older file before anything changes; undefined lets it migrate", (t) => {
  const db = given(t, 1);
  const refusal = new Error("run migrate");
  t.is(
    t.throws(() => migrateSchema(db, MIGRATIONS, 3, () => "too new", { refuseOlder: () => refusal })),
    refusal,
  );
  t.is(version(db), 1);
  migrateSchema(db, MIGRATIONS, 3, () => "too new", { refuseOlder: () => undefined });
  t.is(version(db), 3);
});

test("a failing revision rolls back alone: the file keeps the revision before it", (t) => {
  const db = given(t, 0);
  t.throws(() => migrateSchema(db, { ...MIGRATIONS, 2: "NOT SQL" }, 3, () => "too new"), { any: true });
  t.is(version(db), 1);
  t.deepEqual(tables(db), ["a"]);
});

for (const immediate of [false, true]) {
  test(`a revision another connection ran after this one read the file's is skipped, not run twice (immediate: ${immediate})`, (t) => {
    const path = join(givenTempDir(t, "svc-migrate-"), "store.db");
    const setup = new Database(path);
    setup.exec(MIGRATIONS[1]);
    setup.pragma("user_version = 1");
    setup.close();
    const ours = new Database(path);
    const theirs = new Database(path);
    t.teardown(() => {
      ours.close();
      theirs.close();
    });
    // `refuseOlder` runs after this connection read revision 1: the other one migrates right then, as a
    // second process opening the same file at the same moment does.
    migrateSchema(ours, MIGRATIONS, 3, () => "too new", {
      immediate,
      refuseOlder: () => {
        migrateSchema(theirs, MIGRATIONS, 3, () => "too new");
        return undefined;
      },
    });
    t.is(version(ours), 3);
    t.deepEqual(tables(ours), ["a", "b"]);
    t.deepEqual(
      ours
        .prepare("SELECT name FROM pragma_table_info('a')")
        .all()
        .map((row) => (row as { name: string }).name),
      ["x", "y"],
    );
  });
}

const pragma = (db: Database, name: string): unknown => db.pragma(name, { simple: true });

test("a store opens in WAL with synchronous NORMAL, the busy timeout asked, foreign keys on, migrated", (t) => {
  const path = join(givenTempDir(t, "svc-store-"), "store.db");
  const db = openStore(path, {
    busyTimeoutMs: 30_000,
    fileMode: 0o600,
    schema: { migrations: MIGRATIONS, latest: 3, tooNew: () => "too new" },
    cannotOpen: (error) => error,
  });
  t.teardown(() => db.close());
  t.is(pragma(db, "journal_mode"), "wal");
  t.is(pragma(db, "synchronous"), 1);
  t.is(pragma(db, "busy_timeout"), 30_000);
  t.is(pragma(db, "foreign_keys"), 1);
  t.is(version(db), 3);
  t.is(statSync(path).mode & 0o777, 0o600);
});

test("a store being built has no log and no syncs, and a 64 MiB page cache", (t) => {
  const path = join(givenTempDir(t, "svc-store-"), "store.db");
  const db = openStore(path, { building: true, cannotOpen: (error) => error });
  t.teardown(() => db.close());
  t.is(pragma(db, "journal_mode"), "memory");
  t.is(pragma(db, "synchronous"), 0);
  t.is(pragma(db, "cache_size"), -65536);
  t.is(pragma(db, "busy_timeout"), 5000);
});

test("read-only: the journal mode is left as the file has it, and an older file is refused untouched", (t) => {
  const path = join(givenTempDir(t, "svc-store-"), "store.db");
  openStore(path, { cannotOpen: (error) => error }).close();
  const refusal = new Error("migrate it first");
  t.is(
    t.throws(() =>
      openStore(path, {
        readonly: true,
        schema: { migrations: MIGRATIONS, latest: 3, tooNew: () => "too new", refuseOlder: () => refusal },
        cannotOpen: (error) => error,
      }),
    ),
    refusal,
  );
  const db = openStore(path, { readonly: true, cannotOpen: (error) => error });
  t.teardown(() => db.close());
  t.is(pragma(db, "journal_mode"), "wal");
  t.is(version(db), 0);
});

test("a file SQLite cannot open is the caller's error, made from SQLite's", (t) => {
  const folder = givenTempDir(t, "svc-store-");
  const error = t.throws(() =>
    openStore(join(folder, "no", "such", "dir", "store.db"), {
      cannotOpen: (cause) => new SvcError("SVC_STORE", `cannot open it: ${cause.message}`),
    }),
  );
  t.regex(error?.message ?? "", /^cannot open it: /);
});

test("integrityProblems: none for a sound file; what SQLite says of a damaged one", (t) => {
  const path = join(givenTempDir(t, "svc-store-"), "store.db");
  const db = openStore(path, {
    schema: { migrations: MIGRATIONS, latest: 3, tooNew: () => "too new" },
    cannotOpen: (error) => error,
  });
  db.exec("CREATE INDEX a_x ON a (x); INSERT INTO a (x, y) VALUES (1, 10), (2, 20), (3, 30);");
  t.deepEqual(integrityProblems(db), []);
  // The index holds x but is said to hold y: each row is missing from it.
  const root = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'a_x'").pluck().get() as number;
  db.close();
  const raw = new Database(path);
  raw.unsafeMode(true);
  raw.pragma("writable_schema = ON");
  raw.exec(
    `UPDATE sqlite_master SET sql = 'CREATE INDEX a_x ON a (y)' WHERE name = 'a_x' AND rootpage = ${root}`,
  );
  raw.pragma("writable_schema = OFF");
  raw.close();
  const damaged = new Database(path);
  t.teardown(() => damaged.close());
  const problems = integrityProblems(damaged);
  t.true(problems.length > 0);
  t.true(
    problems.every((problem) => /a_x/.test(problem)),
    problems.join("; "),
  );
});
