/**
 * The one schema-migration runner (`migrateSchema` in settings.ts), on in-memory databases: revisions run
 * in order from the file's own, a newer file is refused with the caller's message or error, an older one
 * is refused untouched when the caller says so, and a failing revision leaves the revision before it.
 */
import { join } from "node:path";
import test from "ava";
import { givenTempDir } from "../testing/sim.js";
import { SvcError } from "./errors.js";
import { migrateSchema } from "./settings.js";
import { Database } from "./sqlite.js";

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
