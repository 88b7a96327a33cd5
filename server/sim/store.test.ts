/**
 * The SQLite store and the seed loader (Document 1 "What the service does" 4-5; DESIGN.md §5), below the
 * HTTP layer: ids that only grow, versions and timestamps that move on every write, schema revisions, the
 * WAL checkpoint on close, and seeding that is deterministic, all-or-nothing and leaves existing projects.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { SvcError } from "../../core/errors.js";
import { Database } from "../../core/sqlite.js";
import { repoRoot } from "../../testing/paths.js";
import { givenTempDir } from "../../testing/sim.js";
import { loadSeed } from "./seed.js";
import { SimStore } from "./store.js";

const DEMO_SEED = join(repoRoot, "fixtures", "demo-seed.json");

function givenStore(t: ExecutionContext, path = ":memory:", clock?: () => number): SimStore {
  const store = new SimStore(path, clock ? { clock } : {});
  t.teardown(() => store.close());
  return store;
}

test("ids grow per project and are never handed out again, not even after reopening the file", (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const first = new SimStore(db);
  for (const title of ["1", "2", "3"]) first.createIssue("p", { title });
  t.is(first.deleteIssue("p", 3, undefined).kind, "ok");
  t.is(first.createIssue("q", { title: "q1" }).frontmatter.id, 1);
  first.close();
  const second = givenStore(t, db);
  t.is(second.createIssue("p", { title: "4" }).frontmatter.id, 4);
  t.deepEqual(
    second.listIssues("p").map((issue) => issue.frontmatter.id),
    [1, 2, 4],
  );
});

test("every PATCH moves version by one and updated_at forward, even on a clock that stands still", (t) => {
  const frozen = Date.parse("2026-03-01T10:00:00.000Z");
  const store = givenStore(t, ":memory:", () => frozen);
  const created = store.createIssue("p", { title: "t" });
  t.is(created.frontmatter.created_at, "2026-03-01T10:00:00.000Z");
  let previous = created;
  for (let round = 1; round <= 5; round++) {
    const outcome = store.patchIssue("p", 1, { status: "done" }, undefined);
    if (outcome.kind !== "ok") return t.fail(outcome.kind);
    t.is(outcome.issue.frontmatter.version, previous.frontmatter.version + 1);
    t.true(outcome.issue.frontmatter.updated_at > previous.frontmatter.updated_at, `round ${round}`);
    t.is(outcome.issue.frontmatter.created_at, created.frontmatter.created_at);
    previous = outcome.issue;
  }
  // Later writes never go back before what was handed out.
  t.true(store.createIssue("p", { title: "u" }).frontmatter.created_at >= previous.frontmatter.updated_at);
});

test("timestamps never go backwards when the clock does", (t) => {
  let now = Date.parse("2026-03-01T10:00:00.000Z");
  const store = givenStore(t, ":memory:", () => now);
  const first = store.timestamp();
  now -= 60_000;
  t.is(store.timestamp(), first);
  now += 120_000;
  t.is(store.timestamp(), "2026-03-01T10:01:00.000Z");
});

test("patchIssue and deleteIssue report not_found and version_mismatch without writing", (t) => {
  const store = givenStore(t);
  store.createIssue("p", { title: "t" });
  t.deepEqual(store.patchIssue("p", 2, { title: "x" }, undefined), { kind: "not_found" });
  t.deepEqual(store.patchIssue("q", 1, { title: "x" }, undefined), { kind: "not_found" });
  t.deepEqual(store.patchIssue("p", 1, { title: "x" }, 2), { kind: "version_mismatch", current: 1 });
  t.deepEqual(store.deleteIssue("p", 1, 0), { kind: "version_mismatch", current: 1 });
  t.deepEqual(store.deleteIssue("p", 2, undefined), { kind: "not_found" });
  t.like(store.getIssue("p", 1)?.frontmatter, { title: "t", version: 1 });
  t.deepEqual(store.deleteIssue("p", 1, 1), { kind: "ok" });
  t.is(store.getIssue("p", 1), undefined);
  t.like(store.getProject("p"), { issue_count: 0 });
});

test("a store file of a newer schema revision is refused with SVC_STORE", (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const raw = new Database(db);
  raw.pragma("user_version = 99");
  raw.close();
  const error = t.throws(() => new SimStore(db), { instanceOf: SvcError });
  t.is(error?.code, "SVC_STORE");
  t.regex(error?.message ?? "", /revision 99/);
});

test("a file that is not a database is refused with SVC_STORE", (t) => {
  const db = join(givenTempDir(t), "notes.txt");
  writeFileSync(db, "these are my notes, not a database\n".repeat(100));
  const error = t.throws(() => new SimStore(db), { instanceOf: SvcError });
  t.is(error?.code, "SVC_STORE");
  t.regex(error?.message ?? "", /notes\.txt/);
  t.true(readFileSync(db, "utf8").startsWith("these are my notes"));
});

test("a revision-1 store file is upgraded in place and keeps its data", (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const old = new SimStore(db);
  old.createIssue("p", { title: "kept" });
  old.close();
  // What a file written before the REPLACE guard looks like.
  const raw = new Database(db);
  raw.exec("DROP TRIGGER audit_events_no_replace");
  raw.exec("DROP TRIGGER issues_delete_comments; DROP TABLE comments; DROP TABLE comment_ids");
  raw.pragma("user_version = 1");
  raw.close();

  const store = givenStore(t, db);
  t.like(store.getIssue("p", 1)?.frontmatter, { title: "kept" });
  const check = new Database(db, { readonly: true });
  t.teardown(() => check.close());
  t.true((check.pragma("user_version", { simple: true }) as number) >= 2);
  const triggers = check
    .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
    .pluck()
    .all();
  t.deepEqual(triggers, [
    "audit_events_no_delete",
    "audit_events_no_replace",
    "audit_events_no_update",
    "issues_delete_comments",
  ]);
  t.is(store.createComment("p", 1, { author: "a", body: "b" })?.id, 1000000001);
});

test("close checkpoints the WAL into the main file", (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const store = new SimStore(db);
  for (let i = 0; i < 50; i++) store.createIssue("p", { title: `t${i}`, body: "x".repeat(1000) });
  store.close();
  t.true(!existsSync(`${db}-wal`) || statSync(`${db}-wal`).size === 0);
  const check = new Database(db, { readonly: true });
  t.teardown(() => check.close());
  t.is(check.prepare("SELECT count(*) FROM issues").pluck().get(), 50);
  t.is(check.pragma("integrity_check", { simple: true }), "ok");
});

// ---------------------------------------------------------------------------------------------------------
// Seeding

test("seeding is deterministic: two stores from one file hold identical data", (t) => {
  const a = givenStore(t);
  const b = givenStore(t);
  t.deepEqual(loadSeed(a, DEMO_SEED), { seeded: ["demo"], skipped: [] });
  loadSeed(b, DEMO_SEED);
  t.deepEqual(a.listProjects(), b.listProjects());
  t.is(JSON.stringify(a.listIssues("demo")), JSON.stringify(b.listIssues("demo")));
  const issues = a.listIssues("demo");
  t.deepEqual(
    issues.map((issue) => [issue.frontmatter.id, issue.frontmatter.created_at]),
    issues.map((_, i) => [i + 1, `2026-01-01T00:00:0${i + 1}.000Z`]),
  );
});

test("seeding leaves a project that already exists as it is", (t) => {
  const store = givenStore(t);
  loadSeed(store, DEMO_SEED);
  store.patchIssue("demo", 1, { title: "edited" }, undefined);
  store.deleteIssue("demo", 6, undefined);
  const before = JSON.stringify(store.listIssues("demo"));
  t.deepEqual(loadSeed(store, DEMO_SEED), { seeded: [], skipped: ["demo"] });
  t.is(JSON.stringify(store.listIssues("demo")), before);
});

test("an invalid seed file is refused with SVC_SEED_INVALID naming the place, and nothing is written", (t) => {
  const dir = givenTempDir(t);
  const demo = JSON.parse(readFileSync(DEMO_SEED, "utf8")) as { projects: unknown[] };
  const cases: [unknown, RegExp][] = [
    [{ projects: [...demo.projects, { slug: "../x" }] }, /projects\[1\]\.slug/],
    [
      { projects: [...demo.projects, { slug: "b", issues: [{ title: "ok" }, { title: "t", id: 9 }] }] },
      /projects\[1\]\.issues\[1\].*id is assigned by the server/,
    ],
    [{ projects: [{ slug: "c", issues: [{ title: "t", status: "closed" }] }] }, /issues\[0\].*status/],
    [{ projects: {} }, /top level/],
    [[], /top level/],
  ];
  for (const [content, where] of cases) {
    const file = join(dir, "seed.json");
    writeFileSync(file, JSON.stringify(content));
    const store = givenStore(t);
    const error = t.throws(() => loadSeed(store, file), { instanceOf: SvcError });
    t.is(error?.code, "SVC_SEED_INVALID");
    t.regex(error?.message ?? "", where);
    t.deepEqual(store.listProjects(), []);
  }
  writeFileSync(join(dir, "broken.json"), "{not json");
  const error = t.throws(() => loadSeed(givenStore(t), join(dir, "broken.json")), { instanceOf: SvcError });
  t.is(error?.code, "SVC_SEED_INVALID");
  const missing = t.throws(() => loadSeed(givenStore(t), join(dir, "absent.json")), { instanceOf: SvcError });
  t.is(missing?.code, "SVC_SEED_INVALID");
});
