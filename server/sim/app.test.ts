/**
 * The simulator's REST surface (Document 1 "Endpoints", "Errors", "Optimistic concurrency"; DESIGN.md §5),
 * one real server per test on an ephemeral loopback port: every endpoint, every error kind with its status
 * and envelope, `If-Match`, `since`, ids, and the inputs that must be refused without touching the store.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { SimIssue, SimStatus } from "../../backends/sim/schema.js";
import { repoRoot } from "../../testing/paths.js";
import { givenProject, givenSim, givenTempDir } from "../../testing/sim.js";
import {
  assertEnvelope,
  callSim,
  expectResponse,
  rawRequest,
  type SimResponse,
  TIMESTAMP,
} from "../../testing/sim-http.js";
import type { RunningSim } from "./server.js";

const DEMO_SEED = join(repoRoot, "fixtures", "demo-seed.json");
const STATUSES: readonly SimStatus[] = ["open", "in_progress", "in_review", "done", "wont_fix"];

interface SeedFile {
  projects: { slug: string; name: string; description: string; issues: Record<string, unknown>[] }[];
}

const demo = (JSON.parse(readFileSync(DEMO_SEED, "utf8")) as SeedFile).projects[0];

async function givenDemo(t: ExecutionContext): Promise<RunningSim> {
  return givenSim(t, { seedFile: DEMO_SEED });
}

const get = (sim: RunningSim, path: string) => callSim(sim.url, "GET", path);
const post = (sim: RunningSim, slug: string, json: unknown) =>
  callSim(sim.url, "POST", `/projects/${slug}/issues`, { json });
const patch = (sim: RunningSim, path: string, json: unknown, ifMatch?: string) =>
  callSim(sim.url, "PATCH", path, { json, ifMatch });

function issueOf(response: SimResponse, status = 200): SimIssue {
  if (response.status !== status)
    throw new Error(`expected ${status}, got ${response.status} ${response.text}`);
  return response.json<SimIssue>();
}

async function issueCount(sim: RunningSim, slug: string): Promise<number> {
  return (await get(sim, `/projects/${slug}/issues`)).json<unknown[]>().length;
}

// ---------------------------------------------------------------------------------------------------------
// Endpoints

test("GET /healthz answers ok as plain text", async (t) => {
  const sim = await givenSim(t);
  const response = await get(sim, "/healthz");
  t.is(response.status, 200);
  t.is(response.text, "ok");
  t.regex(response.headers["content-type"] ?? "", /^text\/plain/);
});

test("GET /projects lists {slug, name, description, created_at, issue_count}", async (t) => {
  const sim = await givenDemo(t);
  await post(sim, "other", { title: "x" });
  const projects = (await get(sim, "/projects")).json<Record<string, unknown>[]>();
  t.true(Array.isArray(projects));
  t.deepEqual(projects[0], {
    slug: "demo",
    name: "Demo",
    description: demo?.description,
    created_at: "2026-01-01T00:00:00.000Z",
    issue_count: 6,
  });
  t.deepEqual(Object.keys(projects[1] ?? {}).sort(), [
    "created_at",
    "description",
    "issue_count",
    "name",
    "slug",
  ]);
  t.like(projects[1], { slug: "other", name: "other", description: "", issue_count: 1 });
});

test("GET /projects is an empty array on a fresh store", async (t) => {
  const sim = await givenSim(t);
  const response = await get(sim, "/projects");
  t.is(response.status, 200);
  t.deepEqual(response.json(), []);
});

test("GET /projects/<slug> returns the project; an unknown slug is 404 not_found", async (t) => {
  const sim = await givenDemo(t);
  const projects = (await get(sim, "/projects")).json<unknown[]>();
  t.deepEqual((await get(sim, "/projects/demo")).json(), projects[0]);
  const missing = assertEnvelope(t, await get(sim, "/projects/nope"), 404, "not_found");
  t.is(missing.details.project, "nope");
});

test("a project comes into being with its first POSTed issue", async (t) => {
  const sim = await givenSim(t);
  assertEnvelope(t, await get(sim, "/projects/fresh"), 404, "not_found");
  const created = issueOf(await post(sim, "fresh", { title: "first" }), 201);
  t.deepEqual((await get(sim, "/projects/fresh")).json(), {
    slug: "fresh",
    name: "fresh",
    description: "",
    created_at: created.frontmatter.created_at,
    issue_count: 1,
  });
});

test("GET /projects/<slug>/issues returns every issue of the seed in id order", async (t) => {
  const sim = await givenDemo(t);
  const issues = (await get(sim, "/projects/demo/issues")).json<SimIssue[]>();
  const expected = (demo?.issues ?? []).map((issue, index) => {
    const at = new Date(Date.parse("2026-01-01T00:00:00.000Z") + (index + 1) * 1000).toISOString();
    const { body, comments: _comments, ...fields } = issue;
    return {
      frontmatter: { id: index + 1, ...fields, created_at: at, updated_at: at, version: 1 },
      body,
    };
  });
  t.deepEqual(issues, expected as unknown as SimIssue[]);
});

test("a large listing is streamed: JSON.stringify's bytes, one snapshot while the issues change, its audit row's digest of all of it", async (t) => {
  const sim = await givenSim(t, { ephemeral: false, db: join(givenTempDir(t), "sim.db") });
  // ~16 MB: more than the sockets' buffers hold, so the server is still reading when the PATCH comes.
  const body = "x".repeat(2000);
  sim.store.transaction(() => {
    for (let i = 0; i < 8000; i++) sim.store.createIssue("big", { title: `Issue ${i + 1}`, body });
  });
  const before = JSON.stringify(sim.store.listIssues("big"));
  const received = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const req = httpGet(`${sim.url}/projects/big/issues`, (res) => {
      res.once("data", async (first: Buffer) => {
        chunks.push(first);
        res.pause();
        const patched = await patch(sim, "/projects/big/issues/8000", { status: "done" });
        if (patched.status !== 200) reject(new Error(`PATCH answered ${patched.status}`));
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve(Buffer.concat(chunks)));
        res.resume();
      });
      t.is(res.headers["transfer-encoding"], "chunked");
    });
    req.on("error", reject);
  });
  t.true(received.length > 16_000_000);
  t.true(received.toString("utf8") === before, "the listing is the state when it began");
  t.is(sim.store.getIssue("big", 8000)?.frontmatter.version, 2);
  const row = sim.store
    .auditRows()
    .find((audit) => audit.method === "GET" && audit.path === "/projects/big/issues");
  t.is(row?.response_summary, `200:${createHash("sha256").update(received).digest("hex").slice(0, 16)}`);
  t.deepEqual((await get(sim, "/projects/big/issues?since=2100-01-01T00:00:00Z")).json(), []);
});

test("GET /projects/<slug>/issues of an unknown project is 404", async (t) => {
  const sim = await givenSim(t);
  assertEnvelope(t, await get(sim, "/projects/nope/issues"), 404, "not_found");
});

test("GET /projects/<slug>/issues/<id> returns the issue; an absent id is 404", async (t) => {
  const sim = await givenDemo(t);
  const list = (await get(sim, "/projects/demo/issues")).json<SimIssue[]>();
  t.deepEqual((await get(sim, "/projects/demo/issues/2")).json(), list[1]);
  const missing = assertEnvelope(t, await get(sim, "/projects/demo/issues/7"), 404, "not_found");
  t.like(missing.details, { project: "demo", id: 7 });
  assertEnvelope(t, await get(sim, "/projects/nope/issues/1"), 404, "not_found");
});

test("POST answers 201 with the server-assigned fields and version 1", async (t) => {
  const sim = await givenSim(t);
  const before = new Date().toISOString();
  const minimal = issueOf(await post(sim, "p", { title: "Minimal" }), 201);
  const after = new Date().toISOString();
  t.deepEqual(Object.keys(minimal).sort(), ["body", "frontmatter"]);
  t.like(minimal.frontmatter, { id: 1, title: "Minimal", status: "open", labels: [], version: 1 });
  t.is(minimal.body, "");
  t.regex(minimal.frontmatter.created_at, TIMESTAMP);
  t.is(minimal.frontmatter.updated_at, minimal.frontmatter.created_at);
  t.true(before <= minimal.frontmatter.created_at && minimal.frontmatter.created_at <= after);
  t.false("assignee" in minimal.frontmatter);

  const full = issueOf(
    await post(sim, "p", {
      title: "Full",
      status: "in_review",
      labels: ["a", "b c"],
      body: "text\n",
      assignee: "dana",
    }),
    201,
  );
  t.like(full.frontmatter, {
    id: 2,
    title: "Full",
    status: "in_review",
    labels: ["a", "b c"],
    assignee: "dana",
    version: 1,
  });
  t.is(full.body, "text\n");
  t.deepEqual((await get(sim, "/projects/p/issues/2")).json(), full);
});

test("PATCH answers 200 with version + 1, a later updated_at and only the sent fields changed", async (t) => {
  const sim = await givenDemo(t);
  const before = issueOf(await get(sim, "/projects/demo/issues/2"));
  const after = issueOf(await patch(sim, "/projects/demo/issues/2", { status: "done", labels: ["x"] }));
  t.is(after.frontmatter.version, before.frontmatter.version + 1);
  t.true(after.frontmatter.updated_at > before.frontmatter.updated_at);
  t.regex(after.frontmatter.updated_at, TIMESTAMP);
  t.deepEqual(after, {
    frontmatter: {
      ...before.frontmatter,
      status: "done",
      labels: ["x"],
      version: before.frontmatter.version + 1,
      updated_at: after.frontmatter.updated_at,
    },
    body: before.body,
  });
  t.deepEqual((await get(sim, "/projects/demo/issues/2")).json(), after);
});

test("PATCH moves updated_at and version on every update, even back to back", async (t) => {
  const sim = await givenSim(t);
  const created = issueOf(await post(sim, "p", { title: "t" }), 201);
  let previous = created;
  for (let round = 0; round < 20; round++) {
    const next = issueOf(await patch(sim, "/projects/p/issues/1", { title: `t${round}` }));
    t.true(next.frontmatter.updated_at > previous.frontmatter.updated_at, `round ${round}`);
    t.is(next.frontmatter.version, previous.frontmatter.version + 1);
    t.is(next.frontmatter.created_at, created.frontmatter.created_at);
    previous = next;
  }
});

test("PATCH can clear the assignee, empty the labels and the body", async (t) => {
  const sim = await givenDemo(t);
  const after = issueOf(
    await patch(sim, "/projects/demo/issues/2", { assignee: null, labels: [], body: "" }),
  );
  t.false("assignee" in after.frontmatter);
  t.deepEqual(after.frontmatter.labels, []);
  t.is(after.body, "");
});

test("any status moves to any status; transitions always offers all five", async (t) => {
  const sim = await givenSim(t);
  await post(sim, "p", { title: "t" });
  const path = "/projects/p/issues/1";
  t.deepEqual((await get(sim, `${path}/transitions`)).json(), { current: "open", available: STATUSES });
  for (const from of STATUSES) {
    for (const to of STATUSES) {
      issueOf(await patch(sim, path, { status: from }));
      t.is(issueOf(await patch(sim, path, { status: to })).frontmatter.status, to);
      const transitions = await get(sim, `${path}/transitions`);
      t.is(transitions.status, 200);
      t.deepEqual(transitions.json(), { current: to, available: STATUSES });
    }
  }
  t.is(issueOf(await get(sim, path)).frontmatter.version, 1 + 2 * STATUSES.length ** 2);
});

test("transitions of an absent issue or project is 404", async (t) => {
  const sim = await givenDemo(t);
  assertEnvelope(t, await get(sim, "/projects/demo/issues/99/transitions"), 404, "not_found");
  assertEnvelope(t, await get(sim, "/projects/nope/issues/1/transitions"), 404, "not_found");
  assertEnvelope(t, await get(sim, "/projects/demo/issues/-1/transitions"), 404, "not_found");
});

test("DELETE answers 204 without a body, then the issue is 404 everywhere", async (t) => {
  const sim = await givenDemo(t);
  const deleted = await callSim(sim.url, "DELETE", "/projects/demo/issues/3");
  t.is(deleted.status, 204);
  t.is(deleted.bytes.length, 0);
  assertEnvelope(t, await get(sim, "/projects/demo/issues/3"), 404, "not_found");
  assertEnvelope(t, await get(sim, "/projects/demo/issues/3/transitions"), 404, "not_found");
  assertEnvelope(t, await patch(sim, "/projects/demo/issues/3", { title: "back" }), 404, "not_found");
  assertEnvelope(t, await callSim(sim.url, "DELETE", "/projects/demo/issues/3"), 404, "not_found");
  const ids = (await get(sim, "/projects/demo/issues")).json<SimIssue[]>().map((i) => i.frontmatter.id);
  t.deepEqual(ids, [1, 2, 4, 5, 6]);
  t.like((await get(sim, "/projects/demo")).json(), { issue_count: 5 });
});

test("ids are never reused after a delete, not even of the newest or of every issue", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "p", [{ title: "1" }, { title: "2" }, { title: "3" }]);
  t.is((await callSim(sim.url, "DELETE", "/projects/p/issues/3")).status, 204);
  t.is(issueOf(await post(sim, "p", { title: "4" }), 201).frontmatter.id, 4);
  for (const id of [1, 2, 4])
    t.is((await callSim(sim.url, "DELETE", `/projects/p/issues/${id}`)).status, 204);
  t.deepEqual((await get(sim, "/projects/p/issues")).json(), []);
  t.is(issueOf(await post(sim, "p", { title: "5" }), 201).frontmatter.id, 5);
  // Ids are per project.
  t.is(issueOf(await post(sim, "q", { title: "q1" }), 201).frontmatter.id, 1);
});

test("concurrent POSTs get distinct consecutive ids", async (t) => {
  const sim = await givenSim(t);
  const created = await Promise.all(
    Array.from({ length: 25 }, (_, i) => post(sim, "p", { title: `t${i}` }).then((r) => issueOf(r, 201))),
  );
  const ids = created.map((issue) => issue.frontmatter.id).sort((a, b) => a - b);
  t.deepEqual(
    ids,
    Array.from({ length: 25 }, (_, i) => i + 1),
  );
});

// ---------------------------------------------------------------------------------------------------------
// If-Match

test("If-Match absent, equal quoted, equal bare and * are all accepted", async (t) => {
  const sim = await givenSim(t);
  await post(sim, "p", { title: "t" });
  const path = "/projects/p/issues/1";
  t.is(issueOf(await patch(sim, path, { title: "a" })).frontmatter.version, 2);
  t.is(issueOf(await patch(sim, path, { title: "b" }, '"2"')).frontmatter.version, 3);
  t.is(issueOf(await patch(sim, path, { title: "c" }, "3")).frontmatter.version, 4);
  t.is(issueOf(await patch(sim, path, { title: "d" }, ' "4" ')).frontmatter.version, 5);
  t.is(issueOf(await patch(sim, path, { title: "e" }, "*")).frontmatter.version, 6);
  t.is(issueOf(await get(sim, path)).frontmatter.title, "e");
});

test("a stale If-Match is 409 with exactly {error, current, sent} and changes nothing", async (t) => {
  const sim = await givenSim(t);
  await post(sim, "p", { title: "t" });
  const path = "/projects/p/issues/1";
  issueOf(await patch(sim, path, { title: "v2" }));
  issueOf(await patch(sim, path, { title: "v3" }));
  const before = (await get(sim, path)).text;
  for (const [sent, value] of [
    ['"1"', 1],
    ["2", 2],
    ['"4"', 4],
    ['"0"', 0],
  ] as const) {
    const conflict = await patch(sim, path, { title: "lost" }, sent);
    t.is(conflict.status, 409);
    t.regex(conflict.headers["content-type"] ?? "", /^application\/json/);
    t.deepEqual(conflict.json(), { error: "version_mismatch", current: 3, sent: value });
    t.true(Number.isInteger(conflict.json<{ current: unknown }>().current));
  }
  t.is((await get(sim, path)).text, before);
});

test("a malformed If-Match is 400 invalid_body and changes nothing", async (t) => {
  const sim = await givenSim(t);
  await post(sim, "p", { title: "t" });
  const path = "/projects/p/issues/1";
  const before = (await get(sim, path)).text;
  for (const value of ['W/"1"', '"1', '1"', "abc", '"1", "2"', "-1", "1.0", '""', "0x1", "1e0", '"*"']) {
    const response = await patch(sim, path, { title: "changed" }, value);
    const envelope = assertEnvelope(t, response, 400, "invalid_body");
    t.is(envelope.details.header, "If-Match", value);
  }
  t.is((await get(sim, path)).text, before);
});

test("DELETE honours If-Match: stale is 409 and keeps the issue, current deletes", async (t) => {
  const sim = await givenSim(t);
  await post(sim, "p", { title: "t" });
  issueOf(await patch(sim, "/projects/p/issues/1", { title: "v2" }));
  const stale = await callSim(sim.url, "DELETE", "/projects/p/issues/1", { ifMatch: '"1"' });
  t.is(stale.status, 409);
  t.deepEqual(stale.json(), { error: "version_mismatch", current: 2, sent: 1 });
  t.is((await get(sim, "/projects/p/issues/1")).status, 200);
  assertEnvelope(
    t,
    await callSim(sim.url, "DELETE", "/projects/p/issues/1", { ifMatch: "W/1" }),
    400,
    "invalid_body",
  );
  t.is((await callSim(sim.url, "DELETE", "/projects/p/issues/1", { ifMatch: '"2"' })).status, 204);
});

test("two concurrent PATCHes with the same If-Match: exactly one 200 and one 409", async (t) => {
  const sim = await givenSim(t);
  await post(sim, "p", { title: "t" });
  const path = "/projects/p/issues/1";
  const [first, second] = await Promise.all([
    patch(sim, path, { title: "first" }, '"1"'),
    patch(sim, path, { title: "second" }, '"1"'),
  ]);
  t.deepEqual([first?.status, second?.status].sort(), [200, 409]);
  const winner = first?.status === 200 ? first : second;
  const loser = first?.status === 200 ? second : first;
  t.deepEqual(loser?.json(), { error: "version_mismatch", current: 2, sent: 1 });
  t.deepEqual((await get(sim, path)).json(), winner?.json());
});

test("of twenty concurrent PATCHes with the same If-Match exactly one wins", async (t) => {
  const sim = await givenSim(t);
  await post(sim, "p", { title: "t" });
  const path = "/projects/p/issues/1";
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => patch(sim, path, { title: `w${i}` }, '"1"')),
  );
  t.is(answers.filter((a) => a.status === 200).length, 1);
  t.is(answers.filter((a) => a.status === 409).length, 19);
  t.is(issueOf(await get(sim, path)).frontmatter.version, 2);
});

// ---------------------------------------------------------------------------------------------------------
// since

test("since is inclusive: updated_at >= since", async (t) => {
  const sim = await givenDemo(t);
  const ids = async (since: string) =>
    (await get(sim, `/projects/demo/issues?since=${encodeURIComponent(since)}`))
      .json<SimIssue[]>()
      .map((issue) => issue.frontmatter.id);
  t.deepEqual(await ids("2026-01-01T00:00:03.000Z"), [3, 4, 5, 6]);
  t.deepEqual(await ids("2026-01-01T00:00:03Z"), [3, 4, 5, 6]);
  t.deepEqual(await ids("2026-01-01T00:00:02.000Z"), [2, 3, 4, 5, 6]);
  t.deepEqual(await ids("2026-01-01T00:00:02.001Z"), [3, 4, 5, 6]);
  t.deepEqual(await ids("2026-01-01T00:00:03.001Z"), [4, 5, 6]);
  t.deepEqual(await ids("2026-01-01T01:00:03+01:00"), [3, 4, 5, 6]);
  t.deepEqual(await ids("2025-12-31T19:00:03.000-05:00"), [3, 4, 5, 6]);
  t.deepEqual(await ids("2026-01-01t00:00:03z"), [3, 4, 5, 6]);
  // Fractions beyond milliseconds are cut, which only widens the window.
  t.deepEqual(await ids("2026-01-01T00:00:03.000999Z"), [3, 4, 5, 6]);
  t.deepEqual(await ids("2026-01-01T00:00:06.001Z"), []);
  t.deepEqual(await ids("1970-01-01T00:00:00Z"), [1, 2, 3, 4, 5, 6]);

  const patched = issueOf(await patch(sim, "/projects/demo/issues/1", { status: "done" }));
  t.deepEqual(await ids(patched.frontmatter.updated_at), [1]);
});

test("since with an unencoded + offset is read as the + the client meant", async (t) => {
  const sim = await givenDemo(t);
  const response = expectResponse(
    await rawRequest(sim.url, {
      method: "GET",
      path: "/projects/demo/issues?since=2026-01-01T01:00:05+01:00",
    }),
  );
  t.is(response.status, 200);
  t.deepEqual(
    response.json<SimIssue[]>().map((issue) => issue.frontmatter.id),
    [5, 6],
  );
});

test("an invalid since is 400 invalid_body", async (t) => {
  const sim = await givenDemo(t);
  for (const since of [
    "",
    "yesterday",
    "2026-01-01",
    "2026-01-01T00:00:00",
    "2026-13-01T00:00:00Z",
    "2026-01-32T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2025-02-29T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T00:60:00Z",
    "2026-01-01 00:00:00Z",
    "1e309",
    "1767225600000",
    "2026-01-01T00:00:00+0100",
    "2026-01-01T00:00:00Z trailing",
  ]) {
    const response = await get(sim, `/projects/demo/issues?since=${encodeURIComponent(since)}`);
    const envelope = assertEnvelope(t, response, 400, "invalid_body");
    t.is(envelope.details.parameter, "since", since);
  }
});

// ---------------------------------------------------------------------------------------------------------
// Bodies that are refused

test("POST and PATCH without Content-Type: application/json are 415 invalid_body", async (t) => {
  const sim = await givenDemo(t);
  const body = JSON.stringify({ title: "x" });
  for (const contentType of [null, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"]) {
    const options = { body, ...(contentType === null ? {} : { contentType }) };
    assertEnvelope(t, await callSim(sim.url, "POST", "/projects/demo/issues", options), 415, "invalid_body");
    assertEnvelope(
      t,
      await callSim(sim.url, "PATCH", "/projects/demo/issues/1", options),
      415,
      "invalid_body",
    );
  }
  t.is(await issueCount(sim, "demo"), 6);
  t.like((await get(sim, "/projects/demo/issues/1")).json<SimIssue>().frontmatter, { version: 1 });
  for (const contentType of ["application/json; charset=utf-8", "Application/JSON"]) {
    t.is((await callSim(sim.url, "POST", "/projects/demo/issues", { body, contentType })).status, 201);
  }
});

test("POST with server-controlled fields is 400 and creates nothing", async (t) => {
  const sim = await givenDemo(t);
  for (const field of ["id", "version", "created_at", "updated_at"]) {
    const value = field.endsWith("_at") ? "2026-01-01T00:00:00.000Z" : 7;
    const envelope = assertEnvelope(
      t,
      await post(sim, "demo", { title: "x", [field]: value }),
      400,
      "invalid_body",
    );
    t.is(envelope.details.field, field);
  }
  t.is(await issueCount(sim, "demo"), 6);
});

test("PATCH with server-controlled or unknown fields is 400 and changes nothing", async (t) => {
  const sim = await givenDemo(t);
  const before = (await get(sim, "/projects/demo/issues/1")).text;
  for (const body of [
    { version: 9 },
    { id: 2 },
    { created_at: "2026-01-01T00:00:00.000Z" },
    { updated_at: "2027-01-01T00:00:00.000Z" },
    { title: "ok", version: 2 },
    { frontmatter: { title: "nested" } },
    { priority: "high" },
    {},
  ]) {
    assertEnvelope(t, await patch(sim, "/projects/demo/issues/1", body), 400, "invalid_body");
  }
  t.is((await get(sim, "/projects/demo/issues/1")).text, before);
});

test("POST with a missing, empty or wrongly typed field is 400 invalid_body naming the field", async (t) => {
  const sim = await givenDemo(t);
  const cases: [unknown, string][] = [
    [{}, "title"],
    [{ body: "no title" }, "title"],
    [{ title: "" }, "title"],
    [{ title: "   " }, "title"],
    [{ title: 42 }, "title"],
    [{ title: null }, "title"],
    [{ title: ["a"] }, "title"],
    [{ title: "x".repeat(1001) }, "title"],
    [{ title: "x", status: "closed" }, "status"],
    [{ title: "x", status: "OPEN" }, "status"],
    [{ title: "x", status: 1 }, "status"],
    [{ title: "x", labels: "bug" }, "labels"],
    [{ title: "x", labels: [1] }, "labels"],
    [{ title: "x", labels: [""] }, "labels"],
    [{ title: "x", labels: [null] }, "labels"],
    [{ title: "x", labels: Array.from({ length: 10_000 }, (_, i) => `l${i}`) }, "labels"],
    [{ title: "x", body: 1 }, "body"],
    [{ title: "x", body: null }, "body"],
    [{ title: "x", assignee: 7 }, "assignee"],
    [{ title: "x", assignee: "" }, "assignee"],
    [{ title: "x", extra: true }, "extra"],
  ];
  const bodies: [string, string][] = cases.map(([json, field]) => [JSON.stringify(json), field]);
  // A literal __proto__ key arrives as an own property of the parsed object.
  bodies.push(['{"title":"x","__proto__":{"status":"done"}}', "__proto__"]);
  bodies.push(['{"title":"x","constructor":{}}', "constructor"]);
  for (const [body, field] of bodies) {
    const response = await callSim(sim.url, "POST", "/projects/demo/issues", {
      body,
      contentType: "application/json",
    });
    const envelope = assertEnvelope(t, response, 400, "invalid_body");
    t.is(envelope.details.field, field, body.slice(0, 80));
  }
  t.is(await issueCount(sim, "demo"), 6);
});

test("a body that is not one JSON object is 400 invalid_body", async (t) => {
  const sim = await givenDemo(t);
  for (const body of [
    "",
    "   ",
    "{",
    '{"title": "x",}',
    "{'title': 'x'}",
    '{"title": "x"} trailing',
    "[]",
    '["title"]',
    '"title"',
    "42",
    "null",
    "true",
    "NaN",
    "[".repeat(100_000) + "]".repeat(100_000),
    '{"title": "\\ud800 lone surrogate"}',
  ]) {
    const response = await callSim(sim.url, "POST", "/projects/demo/issues", {
      body,
      contentType: "application/json",
    });
    assertEnvelope(t, response, 400, "invalid_body");
  }
  t.is(await issueCount(sim, "demo"), 6);
});

test("invalid UTF-8 in the body is 400 invalid_body", async (t) => {
  const sim = await givenDemo(t);
  for (const bytes of [
    Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xf0, 0x9f, 0x8e]), Buffer.from('"}')]),
  ]) {
    for (const [method, path] of [
      ["POST", "/projects/demo/issues"],
      ["PATCH", "/projects/demo/issues/1"],
    ] as const) {
      const response = expectResponse(
        await rawRequest(sim.url, {
          method,
          path,
          headers: { "content-type": "application/json" },
          body: bytes,
        }),
      );
      assertEnvelope(t, response, 400, "invalid_body");
    }
  }
  t.is(await issueCount(sim, "demo"), 6);
  t.like((await get(sim, "/projects/demo/issues/1")).json<SimIssue>().frontmatter, { version: 1 });
});

test("text survives a round trip byte for byte: NUL, CRLF, emoji, markup", async (t) => {
  const sim = await givenSim(t);
  const title = 'a\u0000b "quoted" 🎉 naïve';
  const body = "line\r\n---\nversion: 9\n---\n<script>x</script>\u2028\u{10ffff}";
  const created = issueOf(await post(sim, "p", { title, body, labels: ["🎉", "a b"] }), 201);
  t.is(created.frontmatter.title, title);
  t.is(created.body, body);
  const fetched = issueOf(await get(sim, "/projects/p/issues/1"));
  t.deepEqual(fetched, created);
});

// ---------------------------------------------------------------------------------------------------------
// Paths, ids and methods that lead nowhere

test("ids that are not positive decimal integers are 404, for every method", async (t) => {
  const sim = await givenDemo(t);
  const before = (await get(sim, "/projects/demo/issues")).text;
  for (const id of [
    "-1",
    "0",
    "01",
    "1e309",
    "1e3",
    "99999999999999999999",
    "9007199254740993",
    "1.0",
    "0x1",
    "abc",
  ]) {
    const path = `/projects/demo/issues/${id}`;
    assertEnvelope(t, await get(sim, path), 404, "not_found");
    assertEnvelope(t, await patch(sim, path, { title: "x" }), 404, "not_found");
    assertEnvelope(t, await callSim(sim.url, "DELETE", path), 404, "not_found");
    assertEnvelope(t, await get(sim, `${path}/transitions`), 404, "not_found");
  }
  t.is((await get(sim, "/projects/demo/issues")).text, before);
});

test("slugs that try to escape, and undecodable paths, are 404 and create nothing", async (t) => {
  const sim = await givenDemo(t);
  for (const path of [
    "/projects/..%2F../issues",
    "/projects/..%2f..%2f..%2fetc%2fpasswd/issues",
    "/projects/%2e%2e/issues",
    "/projects/../projects/demo/issues",
    "/projects/demo%2F..%2Fother/issues",
    "/projects/%00/issues",
    "/projects/%ZZ/issues",
    "/projects/.hidden/issues",
    `/projects/${"a".repeat(65)}/issues`,
    "/projects/a%20b/issues",
  ]) {
    for (const method of ["GET", "POST"]) {
      const response = expectResponse(
        await rawRequest(sim.url, {
          method,
          path,
          headers: { "content-type": "application/json" },
          body: Buffer.from(JSON.stringify({ title: "escape" })),
        }),
      );
      assertEnvelope(t, response, 404, "not_found");
    }
  }
  const projects = (await get(sim, "/projects")).json<{ slug: string }[]>();
  t.deepEqual(
    projects.map((p) => p.slug),
    ["demo"],
  );
});

test("unknown routes are 404 not_found", async (t) => {
  const sim = await givenDemo(t);
  for (const path of [
    "/",
    "/nope",
    "/healthz/x",
    "/projects/demo/comment",
    "/projects/demo/comments/1000000001/x",
    "/projects/demo/issues/1/comments/1000000001",
    "/projects/demo/issues/1/transitions/open",
    "//projects",
  ]) {
    const response = expectResponse(await rawRequest(sim.url, { method: "GET", path }));
    assertEnvelope(t, response, 404, "not_found");
  }
});

test("a method a route does not serve is 405 with Allow", async (t) => {
  const sim = await givenDemo(t);
  const cases: [string, string, string][] = [
    ["POST", "/healthz", "GET"],
    ["DELETE", "/projects", "GET"],
    ["PATCH", "/projects/demo", "GET"],
    ["PUT", "/projects/demo/issues", "GET, POST"],
    ["PUT", "/projects/demo/issues/1", "GET, PATCH, DELETE"],
    ["POST", "/projects/demo/issues/1/transitions", "GET"],
  ];
  for (const [method, path, allow] of cases) {
    const response = await callSim(sim.url, method, path, { json: { title: "x" } });
    assertEnvelope(t, response, 405, "method_not_allowed");
    t.is(response.headers.allow, allow);
  }
  t.is(await issueCount(sim, "demo"), 6);
});

// ---------------------------------------------------------------------------------------------------------
// 413 and 500

const MIB = 1024 * 1024;

function paddedCreate(totalBytes: number): Buffer {
  const prefix = '{"title":"big","body":"';
  const suffix = '"}';
  return Buffer.from(prefix + "a".repeat(totalBytes - prefix.length - suffix.length) + suffix);
}

test("a body of exactly 1 MiB is accepted; one byte more is 413 payload_too_large", async (t) => {
  const sim = await givenSim(t);
  const exact = await callSim(sim.url, "POST", "/projects/p/issues", {
    body: paddedCreate(MIB),
    contentType: "application/json",
  });
  t.is(exact.status, 201);
  const over = await callSim(sim.url, "POST", "/projects/p/issues", {
    body: paddedCreate(MIB + 1),
    contentType: "application/json",
  });
  const envelope = assertEnvelope(t, over, 413, "payload_too_large");
  t.deepEqual(envelope.details, { limit_bytes: MIB });
  t.is(await issueCount(sim, "p"), 1);
});

test("a 2 MB body is 413 on every route, the answer arrives and the server keeps serving", async (t) => {
  const sim = await givenDemo(t);
  const big = paddedCreate(2 * 1000 * 1000);
  for (const [method, path] of [
    ["POST", "/projects/demo/issues"],
    ["PATCH", "/projects/demo/issues/1"],
    ["POST", "/nope"],
  ]) {
    const response = await callSim(sim.url, method, path, { body: big, contentType: "application/json" });
    assertEnvelope(t, response, 413, "payload_too_large");
  }
  const withGet = await rawRequest(sim.url, { method: "GET", path: "/projects", body: big });
  assertEnvelope(t, expectResponse(withGet), 413, "payload_too_large");
  const chunked = expectResponse(
    await rawRequest(sim.url, {
      method: "POST",
      path: "/projects/demo/issues",
      headers: { "content-type": "application/json" },
      body: Array.from({ length: 32 }, () => Buffer.alloc(64 * 1024, 0x20)),
    }),
  );
  assertEnvelope(t, chunked, 413, "payload_too_large");
  t.is((await get(sim, "/healthz")).text, "ok");
  t.is(await issueCount(sim, "demo"), 6);
  t.like((await get(sim, "/projects/demo/issues/1")).json<SimIssue>().frontmatter, { version: 1 });
});

test("a body far over the limit is refused without taking the server down", async (t) => {
  const sim = await givenDemo(t);
  const chunk = Buffer.alloc(256 * 1024, 0x20);
  const endless = function* () {
    for (let i = 0; i < 400; i++) yield chunk;
  };
  const outcomes = [
    // Chunked, 100 MiB: the server stops reading past its drain limit.
    await rawRequest(sim.url, {
      method: "POST",
      path: "/projects/demo/issues",
      headers: { "content-type": "application/json" },
      body: endless,
    }),
    // A declared length far over the limit: refused before reading.
    await rawRequest(sim.url, {
      method: "POST",
      path: "/projects/demo/issues",
      headers: { "content-type": "application/json", "content-length": String(400 * chunk.length) },
      body: endless,
    }),
  ];
  for (const outcome of outcomes) {
    // The connection is cut after the answer; a client still writing may see the reset first.
    if (outcome.kind === "response") assertEnvelope(t, outcome, 413, "payload_too_large");
    else t.regex(outcome.code, /^(ECONNRESET|EPIPE)$/);
  }
  t.is((await get(sim, "/healthz")).text, "ok");
  t.is(await issueCount(sim, "demo"), 6);
  const rows = sim.store.auditRows().filter((row) => row.status === 413);
  t.is(rows.length, 2);
});

test("a server failure is 500 internal with the envelope and no stack trace", async (t) => {
  const sim = await givenDemo(t);
  sim.store.close();
  const response = await get(sim, "/projects/demo/issues");
  const envelope = assertEnvelope(t, response, 500, "internal");
  t.deepEqual(envelope.details, {});
});
