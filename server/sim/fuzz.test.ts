/**
 * Bad input never crashes the simulator and never corrupts its store (Document 1 "What the service does" 9,
 * "Errors"). Two randomized tests against a real server on a `--db` file:
 *
 * - a few thousand generated requests (any method, hostile paths and ids, malformed and mistyped bodies,
 *   invalid UTF-8, bad `If-Match` and `since`; issues and their comments), after which every answer was well-formed and never a 500,
 *   every request has its audit row, `/healthz` answers, the data reads back consistently and
 *   `PRAGMA integrity_check` is `ok`, before and after the stop;
 * - a model-based run (fast-check commands) of create, patch, delete and reads with current, stale and
 *   absent `If-Match`, checked against a plain in-memory model of what the store must hold.
 *
 * The seed is logged; rerun a failure with SVC_FUZZ_SEED=<seed>. `npm run fuzz` runs both longer (testing/fuzz.ts).
 */

import { existsSync, statSync } from "node:fs";
import { Agent } from "node:http";
import { join } from "node:path";
import test from "ava";
import fc from "fast-check";
import type { SimIssue } from "../../backends/sim/schema.js";
import { isObject } from "../../core/checks.js";
import { Database } from "../../core/sqlite.js";
import { fuzzRuns, fuzzSeed } from "../../testing/fuzz.js";
import { repoRoot } from "../../testing/paths.js";
import { givenSim, givenTempDir } from "../../testing/sim.js";
import { callSim, type RawRequest, rawRequest, type SimResponse, TIMESTAMP } from "../../testing/sim-http.js";

const DEMO_SEED = join(repoRoot, "fixtures", "demo-seed.json");
const STATUSES = ["open", "in_progress", "in_review", "done", "wont_fix"];
const FUZZ_REQUESTS = fuzzRuns(3000);
const CONCURRENCY = 24;

/** `SVC_FUZZ_SEED` (testing/fuzz.ts), else a fresh one, logged: both tests draw their inputs from it. */
const seed = fuzzSeed() ?? Date.now() % 2 ** 31;

// ---------------------------------------------------------------------------------------------------------
// Generators

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  maxLength: 30,
});
const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("\ud800", "a\udfffb", "\u0000", "---\nversion: 9\n---", "🎉", " ", ""),
);

const slug = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("demo", "fuzz", "other") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "..%2F..",
      "%2e%2e",
      "..",
      ".",
      "a".repeat(65),
      "%00",
      "%ZZ",
      "demo%2F1",
      "",
      "x%20y",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map(encodeURIComponent) },
);
const issueId = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 12 }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "-1",
      "0",
      "01",
      "1e309",
      "99999999999999999999",
      "9007199254740993",
      "abc",
      "1.0",
    ),
  },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map(encodeURIComponent) },
);
const since = fc.oneof(
  fc
    .date({
      min: new Date("2025-12-31T00:00:00Z"),
      max: new Date("2030-01-01T00:00:00Z"),
      noInvalidDate: true,
    })
    .map((d) => encodeURIComponent(d.toISOString())),
  fc.constantFrom(
    "2026-02-30T00:00:00Z",
    "yesterday",
    "",
    "2026-01-01T00:00:03+01:00",
    "9999-12-31T23:59:59-01:00",
  ),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
);
/** Comment ids: mostly those of the demo seed and the next few created, some that are no id. */
const commentId = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1000000001, max: 1000000030 }).map(String) },
  { weight: 1, arbitrary: issueId },
);
const path = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom("/healthz", "/projects", "/", "//projects", "/projects/") },
  { weight: 2, arbitrary: slug.map((s) => `/projects/${s}`) },
  { weight: 4, arbitrary: slug.map((s) => `/projects/${s}/issues`) },
  { weight: 2, arbitrary: fc.tuple(slug, since).map(([s, q]) => `/projects/${s}/issues?since=${q}`) },
  { weight: 8, arbitrary: fc.tuple(slug, issueId).map(([s, i]) => `/projects/${s}/issues/${i}`) },
  { weight: 2, arbitrary: fc.tuple(slug, issueId).map(([s, i]) => `/projects/${s}/issues/${i}/transitions`) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(slug, issueId, fc.string({ maxLength: 10 }))
      .map(([s, i, rest]) => `/projects/${s}/issues/${i}/${encodeURIComponent(rest)}`),
  },
  { weight: 2, arbitrary: fc.tuple(slug, since).map(([s, q]) => `/projects/${s}/comments?since=${q}`) },
  { weight: 2, arbitrary: fc.tuple(slug, issueId).map(([s, i]) => `/projects/${s}/issues/${i}/comments`) },
  { weight: 3, arbitrary: fc.tuple(slug, commentId).map(([s, c]) => `/projects/${s}/comments/${c}`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => `/${encodeURIComponent(s)}`) },
);
const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("GET", "POST", "PATCH", "DELETE") },
  { weight: 1, arbitrary: fc.constantFrom("PUT", "HEAD", "OPTIONS", "TRACE") },
);

const fieldValue = (key: string) => {
  switch (key) {
    case "title":
    case "body":
    case "assignee":
    case "author":
      return fc.oneof(anyText, fc.jsonValue({ maxDepth: 2 }));
    case "status":
      return fc.oneof(fc.constantFrom(...STATUSES), anyText, fc.jsonValue({ maxDepth: 1 }));
    case "labels":
      return fc.oneof(
        fc.array(anyText, { maxLength: 5 }),
        fc.constant(Array.from({ length: 10_000 }, (_, i) => `l${i}`)),
        fc.jsonValue({ maxDepth: 2 }),
      );
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
};
const fieldName = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("title", "status", "labels", "body", "assignee", "author") },
  {
    weight: 2,
    arbitrary: fc.constantFrom("id", "version", "created_at", "updated_at", "__proto__", "frontmatter"),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);
const issueObject = fc
  .uniqueArray(fieldName, { maxLength: 5 })
  .chain((keys) => fc.tuple(...keys.map((key) => fieldValue(key).map((value) => [key, value] as const))))
  .map((entries) => {
    // Built as text so a `__proto__` key stays an own key of the JSON object.
    return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value) ?? "null"}`).join(",")}}`;
  });
const goodIssue = fc
  .record(
    {
      title: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== ""),
      status: fc.constantFrom(...STATUSES),
      labels: fc.array(
        fc.string({ minLength: 1, maxLength: 10 }).filter((s) => s.trim() !== ""),
        { maxLength: 4 },
      ),
      body: fc.string({ maxLength: 200 }),
    },
    { requiredKeys: ["title"] },
  )
  .map((value) => JSON.stringify(value));
const goodComment = fc
  .record({
    author: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== "" && !/\p{Cc}/u.test(s)),
    body: fc.string({ minLength: 1, maxLength: 200 }),
  })
  .map((value) => JSON.stringify(value));
const body: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: issueObject.map((text) => Buffer.from(text)) },
  { weight: 6, arbitrary: goodIssue.map((text) => Buffer.from(text)) },
  { weight: 3, arbitrary: goodComment.map((text) => Buffer.from(text)) },
  {
    weight: 3,
    arbitrary: fc
      .string({ minLength: 1, maxLength: 100 })
      .map((text) => Buffer.from(JSON.stringify({ body: text }))),
  },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
  {
    weight: 1,
    arbitrary: goodIssue.map((text) =>
      Buffer.concat([Buffer.from(text.slice(0, -2)), Buffer.from([0xc3, 0x28, 0x22, 0x7d])]),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      Buffer.from("[".repeat(50_000) + "]".repeat(50_000)),
      Buffer.from('{"title":"t","title":"u"}'),
      Buffer.from("\ufeff{}"),
      Buffer.alloc(1024 * 1024 + 1, 0x20),
    ),
  },
);
const headers = fc.record(
  {
    "content-type": fc.oneof(
      { weight: 8, arbitrary: fc.constant("application/json") },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          "application/json; charset=utf-8",
          "text/plain",
          "APPLICATION/JSON",
          "application/jsonp",
          "",
        ),
      },
    ),
    "if-match": fc.oneof(
      fc.integer({ min: 0, max: 12 }).map((v) => `"${v}"`),
      fc.integer({ min: 0, max: 12 }).map(String),
      fc.constantFrom("*", 'W/"1"', '"1", "2"', "-1", '"'),
      printable,
    ),
    "x-svc-agent": fc.oneof(fc.constantFrom("fuzz-1", "fuzz-2", ""), printable),
  },
  { requiredKeys: [] },
);
const onIssue = fc.tuple(slug, issueId).map(([s, i]) => `/projects/${s}/issues/${i}`);
const onComment = fc.tuple(slug, commentId).map(([s, c]) => `/projects/${s}/comments/${c}`);
// Mostly requests that reach the handlers (the method a route serves), some pure chaos.
const fuzzRequest = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      method: fc.constant("POST"),
      path: slug.map((s) => `/projects/${s}/issues`),
      headers,
      body,
    }),
  },
  { weight: 3, arbitrary: fc.record({ method: fc.constant("PATCH"), path: onIssue, headers, body }) },
  {
    weight: 2,
    arbitrary: fc.record({
      method: fc.constant("POST"),
      path: onIssue.map((p) => `${p}/comments`),
      headers,
      body,
    }),
  },
  { weight: 2, arbitrary: fc.record({ method: fc.constant("PATCH"), path: onComment, headers, body }) },
  { weight: 1, arbitrary: fc.record({ method: fc.constant("DELETE"), path: onComment, headers, body }) },
  { weight: 1, arbitrary: fc.record({ method: fc.constant("DELETE"), path: onIssue, headers, body }) },
  { weight: 2, arbitrary: fc.record({ method: fc.constant("GET"), path, headers }) },
  { weight: 2, arbitrary: fc.record({ method, path, headers, body }) },
);

// ---------------------------------------------------------------------------------------------------------
// What every answer must look like

const ALLOWED_STATUSES = new Set([200, 201, 204, 400, 404, 405, 409, 413, 415]);

function issueProblem(value: unknown): string | undefined {
  if (!isObject(value) || !isObject(value.frontmatter) || typeof value.body !== "string")
    return "not {frontmatter, body}";
  const f = value.frontmatter;
  if (!Number.isSafeInteger(f.id) || (f.id as number) < 1) return "bad id";
  if (typeof f.title !== "string" || f.title.trim() === "") return "bad title";
  if (!STATUSES.includes(f.status as string)) return "bad status";
  if (!Array.isArray(f.labels) || !f.labels.every((l) => typeof l === "string")) return "bad labels";
  if (!Number.isSafeInteger(f.version) || (f.version as number) < 1) return "bad version";
  if (typeof f.created_at !== "string" || !TIMESTAMP.test(f.created_at)) return "bad created_at";
  if (typeof f.updated_at !== "string" || !TIMESTAMP.test(f.updated_at)) return "bad updated_at";
  if (f.updated_at < f.created_at) return "updated before created";
  if ("assignee" in f && typeof f.assignee !== "string") return "bad assignee";
  return undefined;
}

/** What is wrong with a comment as the simulator sends it (comment-store.ts), undefined when nothing. */
function commentProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "not an object";
  const keys = "id,issue_id,author,body,created_at,updated_at,version";
  if (Object.keys(value).join() !== keys) return `comment members ${Object.keys(value).join()}`;
  if (!Number.isSafeInteger(value.id) || (value.id as number) <= 1000000000) return "bad comment id";
  if (!Number.isSafeInteger(value.issue_id) || (value.issue_id as number) < 1) return "bad issue_id";
  if (typeof value.author !== "string" || value.author.trim() === "" || /\p{Cc}/u.test(value.author))
    return "bad author";
  if (typeof value.body !== "string" || value.body === "") return "bad comment body";
  if (!Number.isSafeInteger(value.version) || (value.version as number) < 1) return "bad comment version";
  if (typeof value.created_at !== "string" || !TIMESTAMP.test(value.created_at)) return "bad created_at";
  if (typeof value.updated_at !== "string" || !TIMESTAMP.test(value.updated_at)) return "bad updated_at";
  if (value.updated_at < value.created_at) return "comment updated before created";
  return undefined;
}

/** Whether `path` names a comment route (`/projects/<s>/comments…` or `/projects/<s>/issues/<i>/comments`). */
function isCommentPath(path: string): boolean {
  const parts = (path.split("?")[0] ?? "").split("/");
  return parts[3] === "comments" || (parts[3] === "issues" && parts[5] === "comments");
}

function answerProblem(request: RawRequest, response: SimResponse): string | undefined {
  if (!ALLOWED_STATUSES.has(response.status)) return `status ${response.status}`;
  if (request.method === "HEAD") return undefined;
  if (response.status === 204) return response.bytes.length === 0 ? undefined : "204 with a body";
  let parsed: unknown;
  try {
    parsed =
      response.status === 200 && response.headers["content-type"]?.startsWith("text/plain")
        ? response.text
        : JSON.parse(response.text);
  } catch {
    return "not JSON";
  }
  if (response.status === 409) {
    if (!isObject(parsed) || Object.keys(parsed).sort().join() !== "current,error,sent") return "409 shape";
    if (
      parsed.error !== "version_mismatch" ||
      !Number.isInteger(parsed.current) ||
      !Number.isInteger(parsed.sent)
    ) {
      return "409 values";
    }
    return undefined;
  }
  if (response.status >= 400) {
    if (!isObject(parsed) || Object.keys(parsed).sort().join() !== "details,error,message")
      return "envelope shape";
    if (typeof parsed.error !== "string" || typeof parsed.message !== "string" || !isObject(parsed.details)) {
      return "envelope types";
    }
    if (/\n\s+at |\.js:\d+/.test(response.text)) return "stack trace";
    return undefined;
  }
  if (isCommentPath(request.path)) {
    const problem = Array.isArray(parsed)
      ? parsed.map(commentProblem).find((p) => p !== undefined)
      : commentProblem(parsed);
    if (problem) return `${response.status}: ${problem}`;
    return response.status === 201 && (parsed as { version: number }).version !== 1
      ? "201 with version != 1"
      : undefined;
  }
  if (response.status === 201) {
    const problem = issueProblem(parsed);
    if (problem) return `201: ${problem}`;
    return (parsed as SimIssue).frontmatter.version === 1 ? undefined : "201 with version != 1";
  }
  if (Array.isArray(parsed) && /\/issues(\?|$)/.test(request.path)) {
    return parsed.map(issueProblem).find((p) => p !== undefined);
  }
  if (isObject(parsed) && "frontmatter" in parsed) return issueProblem(parsed);
  return undefined;
}

function describe(request: RawRequest): string {
  const bodyText = Buffer.isBuffer(request.body) ? request.body.subarray(0, 120).toString("utf8") : "";
  return `${request.method} ${request.path} ${JSON.stringify(request.headers)} ${JSON.stringify(bodyText)}`;
}

// ---------------------------------------------------------------------------------------------------------

test("a few thousand hostile requests: no 500, well-formed answers, one audit row each, a sound store", async (t) => {
  t.log(`seed ${seed} (rerun with SVC_FUZZ_SEED=${seed})`);
  const dir = givenTempDir(t);
  const db = join(dir, "sim.db");
  const sim = await givenSim(t, { ephemeral: false, db, seedFile: DEMO_SEED, rateLimit: 0 });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  t.teardown(() => agent.destroy());

  const requests = fc.sample(fuzzRequest, { numRuns: FUZZ_REQUESTS, seed });
  const auditBefore = sim.store.auditRows().length;
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  for (let start = 0; start < requests.length; start += CONCURRENCY) {
    const batch = requests.slice(start, start + CONCURRENCY).map((r) => ({ ...r, agent }) as RawRequest);
    const outcomes = await Promise.all(batch.map((request) => rawRequest(sim.url, request)));
    outcomes.forEach((outcome, i) => {
      const request = batch[i] as RawRequest;
      if (outcome.kind === "error") {
        problems.push(`${outcome.code} ${outcome.message} for ${describe(request)}`);
        return;
      }
      statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
      const problem = answerProblem(request, outcome);
      if (problem)
        problems.push(`${problem}: ${outcome.status} ${outcome.text.slice(0, 200)} for ${describe(request)}`);
    });
  }
  t.log(`statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  t.deepEqual(problems.slice(0, 10), [], `seed ${seed}: ${problems.length} bad answers`);
  // The generators must reach the interesting answers, or the test proves little.
  for (const status of [200, 201, 204, 400, 404, 409, 413, 415]) {
    t.true((statuses.get(status) ?? 0) > 0, `no ${status} among ${FUZZ_REQUESTS} requests (seed ${seed})`);
  }

  const audit = sim.store.auditRows();
  t.is(audit.length - auditBefore, FUZZ_REQUESTS);
  t.false(audit.some((row) => row.status === 500));
  // The comment routes were reached too: comments created, and existing ones edited, deleted or refused.
  const commentWrites = audit.filter((row) => isCommentPath(row.path) && row.method !== "GET");
  t.true(
    commentWrites.some((row) => row.status === 201),
    `no comment created (seed ${seed})`,
  );
  t.true(
    commentWrites.some((row) => row.status === 200 || row.status === 204 || row.status === 409),
    `no comment write reached an existing comment (seed ${seed})`,
  );

  t.is((await callSim(sim.url, "GET", "/healthz")).text, "ok");
  const projects = (await callSim(sim.url, "GET", "/projects")).json<
    { slug: string; issue_count: number }[]
  >();
  t.true(projects.some((p) => p.slug === "demo"));
  for (const project of projects) {
    const issues = (await callSim(sim.url, "GET", `/projects/${project.slug}/issues`)).json<SimIssue[]>();
    t.is(issues.length, project.issue_count, project.slug);
    t.deepEqual(
      issues.map(issueProblem).filter((p) => p !== undefined),
      [],
      project.slug,
    );
    const ids = issues.map((issue) => issue.frontmatter.id);
    t.deepEqual(
      ids,
      [...new Set(ids)].sort((a, b) => a - b),
      `${project.slug}: ids unique and ascending`,
    );
    for (const issue of issues.slice(0, 20)) {
      const one = await callSim(sim.url, "GET", `/projects/${project.slug}/issues/${issue.frontmatter.id}`);
      t.deepEqual(one.json(), issue);
    }
    // Comments: well-formed, ids unique and ascending, the count said, none outliving its issue.
    const listing = await callSim(sim.url, "GET", `/projects/${project.slug}/comments`);
    const comments = listing.json<{ id: number; issue_id: number }[]>();
    t.is(listing.headers["x-svc-live-count"], String(comments.length), project.slug);
    t.deepEqual(
      comments.map(commentProblem).filter((p) => p !== undefined),
      [],
      project.slug,
    );
    const commentIds = comments.map((comment) => comment.id);
    t.deepEqual(
      commentIds,
      [...new Set(commentIds)].sort((a, b) => a - b),
      `${project.slug}: comment ids`,
    );
    t.deepEqual(
      comments.filter((comment) => !ids.includes(comment.issue_id)),
      [],
      `${project.slug}: comments of deleted issues`,
    );
  }

  const live = new Database(db, { readonly: true });
  t.is(live.pragma("integrity_check", { simple: true }), "ok");
  live.close();

  const rowsAtStop = sim.store.auditRows().length;
  await sim.close();
  t.true(!existsSync(`${db}-wal`) || statSync(`${db}-wal`).size === 0, "WAL checkpointed on stop");
  const stopped = new Database(db, { readonly: true });
  t.teardown(() => stopped.close());
  t.is(stopped.pragma("integrity_check", { simple: true }), "ok");
  t.deepEqual(stopped.pragma("foreign_key_check"), []);
  t.is(stopped.prepare("SELECT count(*) FROM audit_events").pluck().get(), rowsAtStop);
});

// ---------------------------------------------------------------------------------------------------------
// Model-based: the store against a plain model of what it must hold.

interface ModelIssue {
  title: string;
  status: string;
  labels: string[];
  body: string;
  version: number;
}

interface Model {
  readonly issues: Map<number, ModelIssue>;
  nextId: number;
}

interface Real {
  readonly url: string;
  readonly slug: string;
}

type IfMatchKind = "absent" | "current" | "stale" | "star";

function ifMatchFor(kind: IfMatchKind, issue: ModelIssue | undefined): string | undefined {
  if (kind === "absent") return undefined;
  if (kind === "star") return "*";
  const version = issue?.version ?? 1;
  return kind === "current" ? `"${version}"` : `"${version + 1}"`;
}

function expectIssue(id: number, expected: ModelIssue, response: SimResponse, status: number): void {
  if (response.status !== status)
    throw new Error(`expected ${status}, got ${response.status} ${response.text}`);
  const actual = response.json<SimIssue>();
  const { frontmatter: f } = actual;
  const shape = {
    id: f.id,
    title: f.title,
    status: f.status,
    labels: f.labels,
    body: actual.body,
    version: f.version,
  };
  const want = { id, ...expected };
  if (JSON.stringify(shape) !== JSON.stringify(want)) {
    throw new Error(`issue ${id}: expected ${JSON.stringify(want)}, got ${JSON.stringify(shape)}`);
  }
}

class CreateCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    private readonly fields: { title: string; status?: string; labels?: string[]; body?: string },
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const response = await callSim(real.url, "POST", `/projects/${real.slug}/issues`, { json: this.fields });
    const id = model.nextId++;
    const issue = {
      title: this.fields.title,
      status: this.fields.status ?? "open",
      labels: this.fields.labels ?? [],
      body: this.fields.body ?? "",
      version: 1,
    };
    model.issues.set(id, issue);
    expectIssue(id, issue, response, 201);
  }
  toString = () => `create ${JSON.stringify(this.fields)}`;
}

class PatchCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    private readonly id: number,
    private readonly changes: { title?: string; status?: string; labels?: string[]; body?: string },
    private readonly ifMatch: IfMatchKind,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const current = model.issues.get(this.id);
    const ifMatch = ifMatchFor(this.ifMatch, current);
    const response = await callSim(real.url, "PATCH", `/projects/${real.slug}/issues/${this.id}`, {
      json: this.changes,
      ifMatch,
    });
    if (Object.keys(this.changes).length === 0) {
      // A project comes into being with its first POSTed issue: before that, the project itself is 404
      // (checked before the body); after, an empty change set is 400 whether or not the issue exists.
      const want = model.nextId === 1 ? 404 : 400;
      if (response.status !== want) throw new Error(`empty PATCH: ${response.status}, expected ${want}`);
      return;
    }
    if (!current) {
      if (response.status !== 404)
        throw new Error(`PATCH of absent ${this.id}: ${response.status} ${response.text}`);
      return;
    }
    if (this.ifMatch === "stale") {
      const body = JSON.stringify(response.json());
      const want = JSON.stringify({
        error: "version_mismatch",
        current: current.version,
        sent: current.version + 1,
      });
      if (response.status !== 409 || body !== want)
        throw new Error(`stale PATCH: ${response.status} ${body}`);
      return;
    }
    Object.assign(current, this.changes, { version: current.version + 1 });
    expectIssue(this.id, current, response, 200);
  }
  toString = () => `patch ${this.id} ${JSON.stringify(this.changes)} if-match ${this.ifMatch}`;
}

class DeleteCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    private readonly id: number,
    private readonly ifMatch: IfMatchKind,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const current = model.issues.get(this.id);
    const response = await callSim(real.url, "DELETE", `/projects/${real.slug}/issues/${this.id}`, {
      ifMatch: ifMatchFor(this.ifMatch, current),
    });
    const expected = !current ? 404 : this.ifMatch === "stale" ? 409 : 204;
    if (response.status !== expected)
      throw new Error(`DELETE ${this.id}: ${response.status} ${response.text}`);
    if (expected === 204) model.issues.delete(this.id);
  }
  toString = () => `delete ${this.id} if-match ${this.ifMatch}`;
}

class ReadCommand implements fc.AsyncCommand<Model, Real> {
  constructor(private readonly id: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const one = await callSim(real.url, "GET", `/projects/${real.slug}/issues/${this.id}`);
    const expected = model.issues.get(this.id);
    if (expected) expectIssue(this.id, expected, one, 200);
    else if (one.status !== 404) throw new Error(`GET absent ${this.id}: ${one.status}`);
    const list = await callSim(real.url, "GET", `/projects/${real.slug}/issues`);
    const ids = list.status === 200 ? list.json<SimIssue[]>().map((issue) => issue.frontmatter.id) : [];
    const want = [...model.issues.keys()].sort((a, b) => a - b);
    if (JSON.stringify(ids) !== JSON.stringify(want)) throw new Error(`list ${ids} instead of ${want}`);
  }
  toString = () => `read ${this.id}`;
}

test("model-based: creates, patches, deletes and reads agree with a plain model", async (t) => {
  t.log(`seed ${seed} (rerun with SVC_FUZZ_SEED=${seed})`);
  const sim = await givenSim(t, { ephemeral: false, db: join(givenTempDir(t), "sim.db") });
  const text = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== "");
  const changes = fc.record(
    {
      title: text,
      status: fc.constantFrom(...STATUSES),
      labels: fc.array(text, { maxLength: 3 }),
      body: fc.string({ maxLength: 40 }),
    },
    { requiredKeys: [] },
  );
  const id = fc.integer({ min: 1, max: 8 });
  const ifMatch = fc.constantFrom<IfMatchKind>("absent", "current", "stale", "star");
  const commands = fc.commands(
    [
      changes.chain((c) => text.map((title) => new CreateCommand({ ...c, title }))),
      fc.tuple(id, changes, ifMatch).map(([i, c, m]) => new PatchCommand(i, c, m)),
      fc.tuple(id, ifMatch).map(([i, m]) => new DeleteCommand(i, m)),
      id.map((i) => new ReadCommand(i)),
    ],
    { maxCommands: 40 },
  );
  let run = 0;
  await fc.assert(
    fc.asyncProperty(commands, async (cmds) => {
      const slug = `run-${run++}`;
      await fc.asyncModelRun(
        () => ({ model: { issues: new Map(), nextId: 1 }, real: { url: sim.url, slug } }),
        cmds,
      );
    }),
    { seed, numRuns: fuzzRuns(40) },
  );
  t.pass();
});
