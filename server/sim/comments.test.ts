/**
 * The simulator's comments, an extension of Document 1 (issue 34; docs/sim.md "Comments"): the store (ids
 * from one sequence that never reuses one, versions and timestamps that move on every write, the cascade
 * from a deleted issue, an issue left as it is when its comments change), the seed loader, and the REST
 * routes with the issues' rules (envelopes, `If-Match`, 409, `since`, `X-Svc-Live-Count`, audit rows, the
 * rate limit). Two properties: a `since` listing never misses a comment written in the same millisecond
 * (at the store, on a clock the test moves), and a model-based run over HTTP.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import type { SimIssue } from "../../backends/sim/schema.js";
import { SvcError } from "../../core/errors.js";
import { fuzzRuns, fuzzSeed } from "../../testing/fuzz.js";
import { repoRoot } from "../../testing/paths.js";
import { givenSim, givenTempDir } from "../../testing/sim.js";
import { assertEnvelope, callSim, type SimResponse, TIMESTAMP } from "../../testing/sim-http.js";
import type { SimComment } from "./comment-store.js";
import { loadSeed } from "./seed.js";
import type { RunningSim } from "./server.js";
import { SimStore } from "./store.js";

const DEMO_SEED = join(repoRoot, "fixtures", "demo-seed.json");
const FIRST_ID = 1000000001;
const seed = fuzzSeed() ?? Date.now() % 2 ** 31;

function givenStore(t: ExecutionContext, path = ":memory:", clock?: () => number): SimStore {
  const store = new SimStore(path, clock ? { clock } : {});
  t.teardown(() => store.close());
  return store;
}

const list = (store: SimStore, slug: string, options: { issueId?: number; since?: string } = {}) => [
  ...store.comments.snapshot(slug, options),
];

// ---------------------------------------------------------------------------------------------------------
// The store

test("comment ids come from one sequence from 1000000001 for every project, never reused, not even after reopening", (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const first = new SimStore(db);
  first.createIssue("p", { title: "p1" });
  first.createIssue("q", { title: "q1" });
  const ids = [
    first.createComment("p", 1, { author: "a", body: "1" })?.id,
    first.createComment("q", 1, { author: "a", body: "2" })?.id,
    first.createComment("p", 1, { author: "a", body: "3" })?.id,
  ];
  t.deepEqual(ids, [FIRST_ID, FIRST_ID + 1, FIRST_ID + 2]);
  t.is(first.comments.delete("p", FIRST_ID + 2, undefined).kind, "ok");
  first.close();
  const second = givenStore(t, db);
  t.is(second.createComment("p", 1, { author: "a", body: "4" })?.id, FIRST_ID + 3);
  t.deepEqual(
    list(second, "p").map((comment) => comment.id),
    [FIRST_ID, FIRST_ID + 3],
  );
});

test("every PATCH moves version by one and updated_at forward on a clock that stands still; the issue stays as it was", (t) => {
  const frozen = Date.parse("2026-03-01T10:00:00.000Z");
  const store = givenStore(t, ":memory:", () => frozen);
  const issue = store.createIssue("p", { title: "t" });
  const created = store.createComment("p", 1, { author: "alice", body: "first" });
  if (!created) return t.fail("no comment");
  t.deepEqual(created, {
    id: FIRST_ID,
    issue_id: 1,
    author: "alice",
    body: "first",
    created_at: "2026-03-01T10:00:00.000Z",
    updated_at: "2026-03-01T10:00:00.000Z",
    version: 1,
  });
  let previous = created;
  for (let round = 1; round <= 3; round++) {
    const outcome = store.comments.patch("p", FIRST_ID, `edit ${round}`, previous.version);
    if (outcome.kind !== "ok") return t.fail(outcome.kind);
    t.is(outcome.comment.version, previous.version + 1);
    t.true(outcome.comment.updated_at > previous.updated_at, `round ${round}`);
    t.is(outcome.comment.created_at, created.created_at);
    t.is(outcome.comment.author, "alice");
    previous = outcome.comment;
  }
  t.deepEqual(store.getIssue("p", 1), issue);
});

test("patch and delete report not_found and version_mismatch without writing; a comment is only found in its project", (t) => {
  const store = givenStore(t);
  store.createIssue("p", { title: "t" });
  store.createIssue("q", { title: "t" });
  store.createComment("p", 1, { author: "a", body: "b" });
  t.deepEqual(store.comments.patch("p", FIRST_ID, "x", 2), { kind: "version_mismatch", current: 1 });
  t.deepEqual(store.comments.delete("p", FIRST_ID, 7), { kind: "version_mismatch", current: 1 });
  t.deepEqual(store.comments.patch("q", FIRST_ID, "x", undefined), { kind: "not_found" });
  t.deepEqual(store.comments.delete("q", FIRST_ID, undefined), { kind: "not_found" });
  t.deepEqual(store.comments.patch("p", FIRST_ID + 1, "x", undefined), { kind: "not_found" });
  t.like(store.comments.get("p", FIRST_ID), { body: "b", version: 1 });
  t.is(store.comments.get("q", FIRST_ID), undefined);
});

test("a comment on an absent issue or project is refused and takes no id", (t) => {
  const store = givenStore(t);
  store.createIssue("p", { title: "t" });
  t.is(store.createComment("p", 2, { author: "a", body: "b" }), undefined);
  t.is(store.createComment("nope", 1, { author: "a", body: "b" }), undefined);
  t.is(store.createComment("p", 1, { author: "a", body: "b" })?.id, FIRST_ID);
  t.is(store.comments.count("p"), 1);
});

test("deleting an issue deletes its comments and only its", (t) => {
  const store = givenStore(t);
  for (const title of ["1", "2"]) store.createIssue("p", { title });
  store.createIssue("q", { title: "q1" });
  store.createComment("p", 1, { author: "a", body: "on p#1" });
  store.createComment("p", 2, { author: "a", body: "on p#2" });
  store.createComment("q", 1, { author: "a", body: "on q#1" });
  store.createComment("p", 1, { author: "a", body: "on p#1 again" });
  t.is(store.deleteIssue("p", 1, undefined).kind, "ok");
  t.deepEqual(
    list(store, "p").map((comment) => comment.body),
    ["on p#2"],
  );
  t.deepEqual(
    list(store, "q").map((comment) => comment.body),
    ["on q#1"],
  );
  t.is(store.comments.count("p"), 1);
  t.is(store.comments.count("p", 1), 0);
  t.is(store.comments.get("p", FIRST_ID), undefined);
});

test("property: the comments' state the issue listing sends changes with every change of a comment, and only then", (t) => {
  // Random runs of creates, edits, deletes and issue deletes on a clock that stands still (same-millisecond
  // writes are where a state made of times alone would miss one); after each step the state differs from
  // every earlier state exactly when the set of (id, version) pairs differs from theirs.
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom("create", "edit", "delete", "issue"), fc.nat(9), fc.nat(9)), {
        maxLength: 25,
      }),
      (steps) => {
        const store = new SimStore(":memory:", { clock: () => Date.parse("2026-01-01T00:00:00Z") });
        try {
          for (let n = 0; n < 4; n++) store.createIssue("p", { title: `i${n}` });
          const seen = new Map<string, string>();
          const record = () => {
            const pairs = list(store, "p")
              .map((comment) => `${comment.id}@${comment.version}`)
              .join(",");
            const state = store.comments.state("p");
            const before = seen.get(state);
            if (before !== undefined && before !== pairs)
              throw new Error(`state ${state} for ${before} and ${pairs}`);
            seen.set(state, pairs);
          };
          record();
          for (const [kind, a, b] of steps) {
            const comments = list(store, "p");
            const target = comments[a % Math.max(1, comments.length)];
            if (kind === "create") store.createComment("p", 1 + (b % 4), { author: "a", body: `c${b}` });
            else if (kind === "edit" && target) store.comments.patch("p", target.id, `e${b}`, undefined);
            else if (kind === "delete" && target) store.comments.delete("p", target.id, undefined);
            else if (kind === "issue") store.deleteIssue("p", 1 + (b % 4), undefined);
            record();
          }
        } finally {
          store.close();
        }
      },
    ),
    { seed, numRuns: fuzzRuns(200) },
  );
  t.pass();
});

test("the issue listing says where the project's comments stand (X-Svc-Comments-State), the comment listings do not", async (t) => {
  const sim = await givenSim(t);
  await callSim(sim.url, "POST", "/projects/p/issues", { json: { title: "t" }, agent: "a" });
  const state = async () =>
    (await callSim(sim.url, "GET", "/projects/p/issues")).headers["x-svc-comments-state"];
  t.is(await state(), "0.0.0");
  await callSim(sim.url, "POST", "/projects/p/issues/1/comments", {
    json: { author: "a", body: "b" },
    agent: "a",
  });
  t.is(await state(), `1.${FIRST_ID}.1`);
  await callSim(sim.url, "PATCH", `/projects/p/comments/${FIRST_ID}`, { json: { body: "c" }, agent: "a" });
  t.is(await state(), `1.${FIRST_ID}.2`);
  t.false("x-svc-comments-state" in (await callSim(sim.url, "GET", "/projects/p/comments")).headers);
});

test("property: a since listing holds exactly the comments with updated_at >= since, also those written in the same millisecond", (t) => {
  type Step =
    | { op: "create"; issue: number; tick: boolean }
    | { op: "patch"; pick: number; tick: boolean }
    | { op: "delete"; pick: number; tick: boolean };
  const tick = fc.boolean();
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ op: fc.constant("create" as const), issue: fc.integer({ min: 1, max: 3 }), tick }),
    fc.record({ op: fc.constant("patch" as const), pick: fc.nat(), tick }),
    fc.record({ op: fc.constant("delete" as const), pick: fc.nat(), tick }),
  );
  const dir = givenTempDir(t);
  let run = 0;
  fc.assert(
    fc.property(fc.array(step, { maxLength: 30 }), fc.nat(), (steps, sincePick) => {
      let now = Date.parse("2026-03-01T10:00:00.000Z");
      // A file store: its listings are read on their own connection (store.ts `snapshot`).
      const store = new SimStore(join(dir, `run-${run++}.db`), { clock: () => now });
      try {
        for (const title of ["1", "2", "3"]) store.createIssue("p", { title });
        const live = new Map<number, SimComment>();
        const instants: string[] = [];
        for (const s of steps) {
          // Most writes land in the millisecond of the one before.
          if (s.tick) now += 1;
          const ids = [...live.keys()];
          if (s.op === "create") {
            const comment = store.createComment("p", s.issue, { author: "a", body: "b" });
            if (comment) live.set(comment.id, comment);
          } else if (ids.length > 0) {
            const id = ids[s.pick % ids.length] as number;
            if (s.op === "delete") {
              store.comments.delete("p", id, undefined);
              live.delete(id);
            } else {
              const outcome = store.comments.patch("p", id, `v${s.pick}`, undefined);
              if (outcome.kind === "ok") live.set(id, outcome.comment);
            }
          }
          for (const comment of live.values()) instants.push(comment.updated_at);
        }
        const all = [...live.values()].sort((a, b) => a.id - b.id);
        if (JSON.stringify(list(store, "p")) !== JSON.stringify(all)) return false;
        if (store.comments.count("p") !== all.length) return false;
        const since = instants.length === 0 ? now : Date.parse(instants[sincePick % instants.length] ?? "");
        for (const instant of [since - 1, since, since + 1]) {
          const iso = new Date(instant).toISOString();
          const want = all.filter((comment) => comment.updated_at >= iso);
          if (JSON.stringify(list(store, "p", { since: iso })) !== JSON.stringify(want)) return false;
          for (const issue of [1, 2, 3]) {
            const ofIssue = want.filter((comment) => comment.issue_id === issue);
            if (JSON.stringify(list(store, "p", { issueId: issue, since: iso })) !== JSON.stringify(ofIssue))
              return false;
          }
        }
        return true;
      } finally {
        store.close();
      }
    }),
    { seed, numRuns: fuzzRuns(60) },
  );
  t.pass();
});

// ---------------------------------------------------------------------------------------------------------
// Seeding

test("seeded comments are deterministic: ids in file order, one millisecond apart after their issue", (t) => {
  const a = givenStore(t);
  const b = givenStore(t);
  loadSeed(a, DEMO_SEED);
  loadSeed(b, DEMO_SEED);
  t.is(JSON.stringify(list(a, "demo")), JSON.stringify(list(b, "demo")));
  t.deepEqual(
    list(a, "demo").map((c) => [c.id, c.issue_id, c.created_at, c.updated_at, c.version]),
    [
      [FIRST_ID, 1, "2026-01-01T00:00:01.001Z", "2026-01-01T00:00:01.001Z", 1],
      [FIRST_ID + 1, 1, "2026-01-01T00:00:01.002Z", "2026-01-01T00:00:01.002Z", 1],
      [FIRST_ID + 2, 3, "2026-01-01T00:00:03.001Z", "2026-01-01T00:00:03.001Z", 1],
    ],
  );
  // The issues keep their own timestamps.
  t.is(a.getIssue("demo", 1)?.frontmatter.updated_at, "2026-01-01T00:00:01.000Z");
});

test("an invalid comment in a seed file is refused with SVC_SEED_INVALID naming it, and nothing is written", (t) => {
  const dir = givenTempDir(t);
  const cases: [unknown, RegExp][] = [
    [{ title: "t", comments: "no" }, /projects\[0\]\.issues\[0\]\.comments: expected an array/],
    [{ title: "t", comments: [{ body: "b" }] }, /issues\[0\]\.comments\[0\]: author is required/],
    [{ title: "t", comments: [{ author: "a", body: "" }] }, /comments\[0\]: body must not be empty/],
    [{ title: "t", comments: [{ author: "a", body: "b", id: 3 }] }, /comments\[0\]: id is assigned/],
  ];
  for (const [index, [issue, pattern]] of cases.entries()) {
    const file = join(dir, `seed-${index}.json`);
    writeFileSync(file, JSON.stringify({ projects: [{ slug: "s", issues: [issue] }] }));
    const store = givenStore(t);
    const error = t.throws(() => loadSeed(store, file), { instanceOf: SvcError });
    t.is(error?.code, "SVC_SEED_INVALID");
    t.regex(error?.message ?? "", pattern);
    t.deepEqual(store.listProjects(), []);
  }
});

// ---------------------------------------------------------------------------------------------------------
// The REST routes

const post = (sim: RunningSim, path: string, json: unknown) => callSim(sim.url, "POST", path, { json });

function commentOf(response: SimResponse, status: number): SimComment {
  if (response.status !== status)
    throw new Error(`expected ${status}, got ${response.status} ${response.text}`);
  return response.json<SimComment>();
}

async function givenThread(t: ExecutionContext): Promise<RunningSim> {
  const sim = await givenSim(t, { seedFile: DEMO_SEED });
  return sim;
}

test("POST answers 201 with exactly the comment's members; GET reads it back", async (t) => {
  const sim = await givenThread(t);
  const body = "Deployed to staging.\r\nNUL \u0000 and 🎉 survive; so does <script>x</script>.\n";
  const comment = commentOf(
    await post(sim, "/projects/demo/issues/2/comments", { author: "alice@example.com", body }),
    201,
  );
  t.deepEqual(Object.keys(comment), [
    "id",
    "issue_id",
    "author",
    "body",
    "created_at",
    "updated_at",
    "version",
  ]);
  t.like(comment, { id: FIRST_ID + 3, issue_id: 2, author: "alice@example.com", body, version: 1 });
  t.regex(comment.created_at, TIMESTAMP);
  t.is(comment.updated_at, comment.created_at);
  const read = await callSim(sim.url, "GET", `/projects/demo/comments/${comment.id}`);
  t.deepEqual(commentOf(read, 200), comment);
});

test("listings: one issue's thread and the project's, in id order, with the live count", async (t) => {
  const sim = await givenThread(t);
  await post(sim, "/projects/demo/issues/1/comments", { author: "a", body: "third on #1" });
  const thread = await callSim(sim.url, "GET", "/projects/demo/issues/1/comments");
  t.is(thread.status, 200);
  t.is(thread.headers["x-svc-live-count"], "3");
  t.deepEqual(
    thread.json<SimComment[]>().map((c) => [c.id, c.issue_id]),
    [
      [FIRST_ID, 1],
      [FIRST_ID + 1, 1],
      [FIRST_ID + 3, 1],
    ],
  );
  const all = await callSim(sim.url, "GET", "/projects/demo/comments");
  t.is(all.headers["x-svc-live-count"], "4");
  t.deepEqual(
    all.json<SimComment[]>().map((c) => c.id),
    [FIRST_ID, FIRST_ID + 1, FIRST_ID + 2, FIRST_ID + 3],
  );
  const none = await callSim(sim.url, "GET", "/projects/demo/issues/6/comments");
  t.deepEqual([none.status, none.json(), none.headers["x-svc-live-count"]], [200, [], "0"]);
});

test("since is inclusive on both listings, and an invalid since is 400 invalid_body", async (t) => {
  const sim = await givenThread(t);
  const ids = async (path: string, since: string) =>
    (await callSim(sim.url, "GET", `${path}?since=${encodeURIComponent(since)}`))
      .json<SimComment[]>()
      .map((c) => c.id);
  t.deepEqual(await ids("/projects/demo/comments", "2026-01-01T00:00:01.002Z"), [FIRST_ID + 1, FIRST_ID + 2]);
  t.deepEqual(await ids("/projects/demo/comments", "2026-01-01T01:00:01.003+01:00"), [FIRST_ID + 2]);
  t.deepEqual(await ids("/projects/demo/issues/1/comments", "2026-01-01T00:00:01.002Z"), [FIRST_ID + 1]);
  t.deepEqual(await ids("/projects/demo/comments", "2026-01-01T00:00:03.002Z"), []);
  const edited = commentOf(
    await callSim(sim.url, "PATCH", `/projects/demo/comments/${FIRST_ID}`, { json: { body: "edited" } }),
    200,
  );
  t.deepEqual(await ids("/projects/demo/comments", edited.updated_at), [FIRST_ID]);
  for (const path of ["/projects/demo/comments", "/projects/demo/issues/1/comments"]) {
    const response = await callSim(sim.url, "GET", `${path}?since=yesterday`);
    t.is(assertEnvelope(t, response, 400, "invalid_body").details.parameter, "since");
  }
});

test("absent issues, projects and comments are 404 not_found on every comment route", async (t) => {
  const sim = await givenThread(t);
  const cases: [string, string, unknown?][] = [
    ["GET", "/projects/nope/comments"],
    ["GET", "/projects/demo/issues/99/comments"],
    ["GET", "/projects/nope/issues/1/comments"],
    ["GET", "/projects/demo/issues/x1/comments"],
    ["POST", "/projects/demo/issues/99/comments", { author: "a", body: "b" }],
    ["POST", "/projects/nope/issues/1/comments", { author: "a", body: "b" }],
    ["GET", `/projects/demo/comments/${FIRST_ID + 99}`],
    ["GET", "/projects/demo/comments/01"],
    ["PATCH", `/projects/demo/comments/${FIRST_ID + 99}`, { body: "b" }],
    ["DELETE", `/projects/demo/comments/${FIRST_ID + 99}`],
  ];
  for (const [method, path, json] of cases) {
    const response = await callSim(sim.url, method, path, json === undefined ? {} : { json });
    assertEnvelope(t, response, 404, "not_found");
  }
  t.is((await callSim(sim.url, "GET", "/projects/demo/comments")).headers["x-svc-live-count"], "3");
});

test("a comment body or author that breaks the rules is 400 invalid_body naming the field, and nothing is written", async (t) => {
  const sim = await givenThread(t);
  const path = "/projects/demo/issues/2/comments";
  const cases: [unknown, string | undefined][] = [
    [{ body: "b" }, "author"],
    [{ author: "a" }, "body"],
    [{ author: "a", body: "" }, "body"],
    [{ author: "a", body: 3 }, "body"],
    [{ author: "", body: "b" }, "author"],
    [{ author: "a\nb", body: "b" }, "author"],
    [{ author: "a\u0085b", body: "b" }, "author"],
    [{ author: "x".repeat(201), body: "b" }, "author"],
    [{ author: "a", body: "\ud800" }, "body"],
    [{ author: "a", body: "b", id: 1 }, "id"],
    [{ author: "a", body: "b", issue_id: 1 }, "issue_id"],
    [{ author: "a", body: "b", version: 1 }, "version"],
    [{ author: "a", body: "b", title: "t" }, "title"],
    [["a", "b"], undefined],
  ];
  for (const [json, field] of cases) {
    const envelope = assertEnvelope(t, await post(sim, path, json), 400, "invalid_body");
    t.is(envelope.details.field, field, JSON.stringify(json));
  }
  t.is(commentOf(await post(sim, path, { author: "x".repeat(200), body: "b" }), 201).author.length, 200);
  const noType = await callSim(sim.url, "POST", path, {
    json: { author: "a", body: "b" },
    contentType: null,
  });
  assertEnvelope(t, noType, 415, "invalid_body");
  t.is((await callSim(sim.url, "GET", path)).json<unknown[]>().length, 1);
});

test("PATCH takes only the body, with If-Match as for issues: current 200 version + 1, stale 409 {error, current, sent}", async (t) => {
  const sim = await givenThread(t);
  const path = `/projects/demo/comments/${FIRST_ID}`;
  const issueBefore = (await callSim(sim.url, "GET", "/projects/demo/issues/1")).json<SimIssue>();
  const edited = commentOf(
    await callSim(sim.url, "PATCH", path, { json: { body: "v2" }, ifMatch: '"1"' }),
    200,
  );
  t.like(edited, { id: FIRST_ID, body: "v2", version: 2, author: "dana@example.com" });
  t.true(edited.updated_at > edited.created_at);
  const stale = await callSim(sim.url, "PATCH", path, { json: { body: "v3" }, ifMatch: '"1"' });
  t.is(stale.status, 409);
  t.deepEqual(stale.json(), { error: "version_mismatch", current: 2, sent: 1 });
  for (const json of [{ author: "mallory" }, { body: "b", author: "mallory" }, {}, { body: "" }]) {
    assertEnvelope(t, await callSim(sim.url, "PATCH", path, { json }), 400, "invalid_body");
  }
  const badIfMatch = await callSim(sim.url, "PATCH", path, { json: { body: "b" }, ifMatch: 'W/"2"' });
  assertEnvelope(t, badIfMatch, 400, "invalid_body");
  t.deepEqual(commentOf(await callSim(sim.url, "GET", path), 200), edited);
  // A comment's writes leave its issue as it was.
  t.deepEqual((await callSim(sim.url, "GET", "/projects/demo/issues/1")).json(), issueBefore);
});

test("DELETE honours If-Match: stale is 409 and keeps the comment, current is 204, then 404", async (t) => {
  const sim = await givenThread(t);
  const path = `/projects/demo/comments/${FIRST_ID + 2}`;
  const stale = await callSim(sim.url, "DELETE", path, { ifMatch: '"2"' });
  t.deepEqual([stale.status, stale.json()], [409, { error: "version_mismatch", current: 1, sent: 2 }]);
  const deleted = await callSim(sim.url, "DELETE", path, { ifMatch: '"1"' });
  t.deepEqual([deleted.status, deleted.text], [204, ""]);
  assertEnvelope(t, await callSim(sim.url, "GET", path), 404, "not_found");
  assertEnvelope(t, await callSim(sim.url, "DELETE", path), 404, "not_found");
  t.is((await callSim(sim.url, "GET", "/projects/demo/comments")).headers["x-svc-live-count"], "2");
});

test("DELETE of an issue takes its thread with it", async (t) => {
  const sim = await givenThread(t);
  t.is((await callSim(sim.url, "DELETE", "/projects/demo/issues/1")).status, 204);
  const all = await callSim(sim.url, "GET", "/projects/demo/comments");
  t.is(all.headers["x-svc-live-count"], "1");
  t.deepEqual(
    all.json<SimComment[]>().map((c) => c.id),
    [FIRST_ID + 2],
  );
  assertEnvelope(t, await callSim(sim.url, "GET", `/projects/demo/comments/${FIRST_ID}`), 404, "not_found");
  assertEnvelope(t, await callSim(sim.url, "GET", "/projects/demo/issues/1/comments"), 404, "not_found");
});

test("methods a comment route does not serve are 405 with Allow", async (t) => {
  const sim = await givenThread(t);
  const cases: [string, string, string][] = [
    ["POST", "/projects/demo/comments", "GET"],
    ["DELETE", "/projects/demo/issues/1/comments", "GET, POST"],
    ["PUT", `/projects/demo/comments/${FIRST_ID}`, "GET, PATCH, DELETE"],
  ];
  for (const [method, path, allow] of cases) {
    const response = await callSim(sim.url, method, path, { json: { body: "b" } });
    assertEnvelope(t, response, 405, "method_not_allowed");
    t.is(response.headers.allow, allow);
  }
});

test("comment requests are audited like any other, and count against the agent's rate limit", async (t) => {
  const sim = await givenSim(t, { seedFile: DEMO_SEED, rateLimit: 1 });
  const json = { author: "a", body: "b" };
  const answers = await Promise.all(
    Array.from({ length: 10 }, () =>
      callSim(sim.url, "POST", "/projects/demo/issues/1/comments", { json, agent: "loop-c" }),
    ),
  );
  const created = answers.filter((a) => a.status === 201).length;
  const refused = answers.filter((a) => a.status === 429);
  t.true(created >= 1 && refused.length >= 1, `${created} created, ${refused.length} refused`);
  for (const response of refused) assertEnvelope(t, response, 429, "rate_limited");
  const rows = sim.store.auditRows().filter((row) => row.agent_id === "loop-c");
  t.is(rows.length, 10);
  t.true(rows.every((row) => row.method === "POST" && row.path === "/projects/demo/issues/1/comments"));
  t.is(rows.filter((row) => row.status === 201).length, created);
  t.true(rows.every((row) => row.request_body === JSON.stringify(json)));
  t.is(sim.store.comments.count("demo", 1), 2 + created);
});

// ---------------------------------------------------------------------------------------------------------
// Model-based over HTTP

interface ModelComment {
  issue: number;
  body: string;
  version: number;
  updated_at: string;
}

test("model-based: creates, edits, deletes and since listings agree with a plain model", async (t) => {
  t.log(`seed ${seed} (rerun with SVC_FUZZ_SEED=${seed})`);
  const sim = await givenSim(t, { ephemeral: false, db: join(givenTempDir(t), "sim.db") });
  type Op =
    | { op: "create"; issue: number; body: string }
    | { op: "patch" | "delete"; pick: number; stale: boolean; body: string }
    | { op: "list"; pick: number };
  const body = fc.string({ minLength: 1, maxLength: 20 });
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ op: fc.constant("create" as const), issue: fc.integer({ min: 1, max: 3 }), body }),
    fc.record({
      op: fc.constantFrom("patch" as const, "delete" as const),
      pick: fc.nat(),
      stale: fc.boolean(),
      body,
    }),
    fc.record({ op: fc.constant("list" as const), pick: fc.nat() }),
  );
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
      const slug = `run-${run++}`;
      for (const title of ["1", "2", "3"]) await post(sim, `/projects/${slug}/issues`, { title });
      const model = new Map<number, ModelComment>();
      const check = (ok: boolean, what: string) => {
        if (!ok) throw new Error(what);
      };
      for (const o of ops) {
        const ids = [...model.keys()];
        if (o.op === "create") {
          const made = commentOf(
            await post(sim, `/projects/${slug}/issues/${o.issue}/comments`, { author: "a", body: o.body }),
            201,
          );
          model.set(made.id, { issue: o.issue, body: o.body, version: 1, updated_at: made.updated_at });
          continue;
        }
        if (o.op === "list") {
          const instants = [...model.values()].map((c) => c.updated_at);
          const since = instants[o.pick % Math.max(1, instants.length)] ?? "1970-01-01T00:00:00.000Z";
          const response = await callSim(sim.url, "GET", `/projects/${slug}/comments?since=${since}`);
          const got = response.json<SimComment[]>().map((c) => [c.id, c.body, c.version]);
          const want = [...model.entries()]
            .filter(([, c]) => c.updated_at >= since)
            .sort(([a], [b]) => a - b)
            .map(([id, c]) => [id, c.body, c.version]);
          check(JSON.stringify(got) === JSON.stringify(want), `since ${since}: ${JSON.stringify(got)}`);
          check(response.headers["x-svc-live-count"] === String(model.size), "live count");
          continue;
        }
        if (ids.length === 0) continue;
        const id = ids[o.pick % ids.length] as number;
        const current = model.get(id) as ModelComment;
        const ifMatch = `"${o.stale ? current.version + 1 : current.version}"`;
        const path = `/projects/${slug}/comments/${id}`;
        const response = await callSim(sim.url, o.op === "patch" ? "PATCH" : "DELETE", path, {
          ifMatch,
          ...(o.op === "patch" ? { json: { body: o.body } } : {}),
        });
        if (o.stale) {
          check(response.status === 409, `stale ${o.op}: ${response.status}`);
        } else if (o.op === "delete") {
          check(response.status === 204, `delete: ${response.status}`);
          model.delete(id);
        } else {
          const edited = commentOf(response, 200);
          check(edited.version === current.version + 1 && edited.body === o.body, `patch: ${response.text}`);
          model.set(id, { ...current, body: o.body, version: edited.version, updated_at: edited.updated_at });
        }
      }
    }),
    { seed, numRuns: fuzzRuns(25) },
  );
  t.pass();
});
