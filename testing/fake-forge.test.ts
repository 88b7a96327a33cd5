/**
 * The fake forge itself, through plain `fetch`: Link pagination to the end (in the `/repositories/<id>` form),
 * the listing filters and sorts, the issue shape, conditional requests, authentication, 404/410, the write
 * endpoints and their 422s, the primary and secondary rate limits, and the redirect switch.
 */
import test from "ava";
import { callForge, linkRelations } from "./fake-forge/requests.js";
import { type FakeForge, type FakeForgeOptions, givenFakeForge } from "./fake-forge.js";
import type { FakeResponse } from "./fake-http.js";

type ForgeResponse = FakeResponse;
const call = callForge;

interface UserJson {
  readonly login: string;
  readonly id: number;
  readonly type: string;
}

interface LabelJson {
  readonly id: number;
  readonly name: string;
  readonly color: string;
  readonly default: boolean;
  readonly description: string | null;
}

interface IssueJson {
  readonly id: number;
  readonly node_id: string;
  readonly url: string;
  readonly number: number;
  readonly state: string;
  readonly state_reason: string | null;
  readonly title: string;
  readonly body: string | null;
  readonly user: UserJson;
  readonly labels: LabelJson[];
  readonly assignee: UserJson | null;
  readonly assignees: UserJson[];
  readonly created_at: string;
  readonly updated_at: string;
  readonly closed_at: string | null;
  readonly closed_by: UserJson | null;
  readonly pull_request?: Record<string, string | null>;
}

interface ErrorJson {
  readonly message: string;
  readonly documentation_url: string;
  readonly status?: string;
  readonly errors?: { resource: string; code: string; field: string; message?: string }[];
}

const ISSUES = "/repos/acme/widgets/issues";
const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const START = Date.UTC(2026, 0, 2, 3, 4, 5);

/** A fake whose clock only moves when the test moves it. */
async function givenClockedForge(
  t: Parameters<typeof givenFakeForge>[0],
  options: FakeForgeOptions = {},
): Promise<{ forge: FakeForge; advance(seconds: number): void }> {
  let now = START;
  const forge = await givenFakeForge(t, { ...options, now: () => now });
  return {
    forge,
    advance(seconds) {
      now += seconds * 1000;
    },
  };
}

const links = linkRelations;

/** Follows rel="next" to the end; every response must be a 200. */
async function walk(
  forge: FakeForge,
  first: string,
): Promise<{ issues: IssueJson[]; pages: ForgeResponse[] }> {
  const issues: IssueJson[] = [];
  const pages: ForgeResponse[] = [];
  let target: string | undefined = first;
  while (target !== undefined) {
    const response = await call(forge, "GET", target);
    if (response.status !== 200) throw new Error(`GET ${target}: ${response.status} ${response.text}`);
    pages.push(response);
    issues.push(...response.json<IssueJson[]>());
    target = links(response.headers.link).next;
  }
  return { issues, pages };
}

test("a walk along Link rel=next returns issues and pull requests once each, with absolute /repositories/<id> links", async (t) => {
  const forge = await givenFakeForge(t);
  const numbers = forge.seed("acme/widgets", 75, { pullRequests: 5 });
  const { issues, pages } = await walk(forge, `${ISSUES}?state=all`);

  t.is(pages.length, 3);
  t.deepEqual(
    pages.map((page) => page.json<IssueJson[]>().length),
    [30, 30, 20],
  );
  t.deepEqual(
    issues.map((issue) => issue.number),
    Array.from({ length: 80 }, (_, i) => 80 - i),
  );
  t.is(issues.filter((issue) => issue.pull_request !== undefined).length, 5);
  t.deepEqual(
    issues
      .filter((issue) => issue.pull_request === undefined)
      .map((issue) => issue.number)
      .reverse(),
    numbers,
  );
  const base = `${forge.url}/repositories/${forge.repositoryId("acme/widgets")}/issues?state=all`;
  t.deepEqual(links(pages[0]?.headers.link), { next: `${base}&page=2`, last: `${base}&page=3` });
  t.deepEqual(links(pages[1]?.headers.link), {
    prev: `${base}&page=1`,
    next: `${base}&page=3`,
    last: `${base}&page=3`,
    first: `${base}&page=1`,
  });
  t.deepEqual(links(pages[2]?.headers.link), { prev: `${base}&page=2`, first: `${base}&page=1` });
  t.is(forge.requests[1]?.path, `/repositories/1000/issues?state=all&page=2`);
});

test("one page has no Link; per_page is capped at 100; state defaults to open", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 150);
  const open = forge.issues("acme/widgets").filter((issue) => issue.state === "open");

  const capped = await call(forge, "GET", `${ISSUES}?per_page=500`);
  t.is(capped.json<IssueJson[]>().length, 100);
  t.true(capped.json<IssueJson[]>().every((issue) => issue.state === "open"));
  t.is(links(capped.headers.link).next, `${forge.url}/repositories/1000/issues?per_page=500&page=2`);

  const { issues } = await walk(forge, `${ISSUES}?per_page=100`);
  t.is(issues.length, open.length);
  const closed = await walk(forge, `${ISSUES}?state=closed&per_page=100`);
  t.is(closed.pages.length, 1);
  t.is(closed.pages[0]?.headers.link, undefined);
  t.true(closed.issues.every((issue) => issue.state === "closed" && issue.closed_at !== null));
  t.is(closed.issues.length + open.length, 150);
});

test("since keeps issues updated at or after it; sort=updated&direction=asc orders them", async (t) => {
  const { forge, advance } = await givenClockedForge(t);
  forge.seed("acme/widgets", 10);
  const fifth = forge.issue("acme/widgets", 5);
  advance(30);
  forge.editIssue("acme/widgets", 2, { title: "moved to the end" });

  const since = encodeURIComponent(fifth?.updatedAt ?? "");
  const listed = await call(forge, "GET", `${ISSUES}?state=all&since=${since}&sort=updated&direction=asc`);
  t.deepEqual(
    listed.json<IssueJson[]>().map((issue) => issue.number),
    [5, 6, 7, 8, 9, 10, 2],
  );
  const bad = await call(forge, "GET", `${ISSUES}?since=yesterday`, {
    deliberate: "since is not a date-time",
  });
  t.is(bad.status, 422);
});

test("sorting breaks ties by number, in the sort's direction; labels filters by every name given", async (t) => {
  const { forge } = await givenClockedForge(t);
  for (const title of ["a", "b", "c"]) forge.addIssue("acme/widgets", { title, labels: ["bug"] });
  forge.addIssue("acme/widgets", { title: "d", labels: ["bug", "Urgent"] });
  const order = async (query: string) =>
    (await call(forge, "GET", `${ISSUES}?${query}`)).json<IssueJson[]>().map((issue) => issue.number);

  t.deepEqual(await order("sort=created&direction=asc"), [1, 2, 3, 4]);
  t.deepEqual(await order("sort=created"), [4, 3, 2, 1]);
  t.deepEqual(await order("sort=comments&direction=asc"), [1, 2, 3, 4]);
  t.deepEqual(await order("labels=bug,urgent"), [4]);
  t.deepEqual(await order("labels=bug"), [4, 3, 2, 1]);
  t.is(
    (await call(forge, "GET", `${ISSUES}?sort=title`, { deliberate: "sort=title is no sort" })).status,
    422,
  );
});

test("an issue carries GitHub's members; a pull request also carries pull_request", async (t) => {
  const forge = await givenFakeForge(t);
  forge.addIssue("acme/widgets", {
    title: "Shape",
    body: "text",
    labels: ["bug", "status/in-review"],
    assignees: ["bob", "carol"],
  });
  forge.addIssue("acme/widgets", { title: "A PR", pullRequest: true, state: "closed" });
  const issue = (await call(forge, "GET", `${ISSUES}/1`)).json<IssueJson & Record<string, unknown>>();
  for (const key of ["repository_url", "labels_url", "comments_url", "events_url", "html_url", "node_id"]) {
    t.is(typeof issue[key], "string", key);
  }
  t.like(issue, {
    number: 1,
    state: "open",
    state_reason: null,
    title: "Shape",
    body: "text",
    milestone: null,
    locked: false,
    active_lock_reason: null,
    comments: 0,
    closed_at: null,
    closed_by: null,
    url: `${forge.url}${ISSUES}/1`,
  });
  t.true(issue.id > 1_000_000_000);
  t.regex(issue.created_at, ISO_SECONDS);
  t.regex(issue.updated_at, ISO_SECONDS);
  t.is(issue.user.login, "alice");
  t.is(issue.user.type, "User");
  t.deepEqual(
    issue.assignees.map((user) => user.login),
    ["bob", "carol"],
  );
  t.is(issue.assignee?.login, "bob");
  t.like(issue.labels[0], { name: "bug", color: "d73a4a", default: true });
  t.like(issue.labels[1], { name: "status/in-review", default: false, description: null });
  t.is(issue.pull_request, undefined);

  const pr = (await call(forge, "GET", `${ISSUES}/2`)).json<IssueJson>();
  t.deepEqual(Object.keys(pr.pull_request ?? {}).sort(), [
    "diff_url",
    "html_url",
    "merged_at",
    "patch_url",
    "url",
  ]);
  t.is(pr.pull_request?.url, `${forge.url}/repos/acme/widgets/pulls/2`);
  t.is(pr.state_reason, "completed");
});

test("a matching If-None-Match answers 304 without a body and is not counted; a change makes a new ETag", async (t) => {
  const { forge, advance } = await givenClockedForge(t);
  forge.seed("acme/widgets", 3);
  const first = await call(forge, "GET", `${ISSUES}/1`);
  const etag = first.headers.etag ?? "";
  t.regex(etag, /^W\/"[0-9a-f]+"$/);
  t.truthy(first.headers["last-modified"]);
  t.is((await call(forge, "GET", `${ISSUES}/1`)).headers.etag, etag);
  t.is(forge.quotaUsed, 2);

  const cached = await call(forge, "GET", `${ISSUES}/1`, { headers: { "if-none-match": etag } });
  t.is(cached.status, 304);
  t.is(cached.text, "");
  t.is(cached.headers["x-ratelimit-remaining"], "4998");
  t.is(forge.quotaUsed, 2);
  t.false(forge.requests.at(-1)?.counted);

  const list = await call(forge, "GET", ISSUES);
  const listCached = await call(forge, "GET", ISSUES, {
    headers: { "if-none-match": list.headers.etag ?? "" },
  });
  t.is(listCached.status, 304);

  advance(5);
  forge.editIssue("acme/widgets", 1, { body: "changed" });
  const changed = await call(forge, "GET", `${ISSUES}/1`, { headers: { "if-none-match": etag } });
  t.is(changed.status, 200);
  t.not(changed.headers.etag, etag);
  t.is(forge.quotaUsed, 4);
});

test("a missing or wrong token answers 401 Bad credentials and is not counted; both schemes work", async (t) => {
  const forge = await givenFakeForge(t);
  const expected = {
    message: "Bad credentials",
    documentation_url: "https://docs.github.com/rest",
    status: "401",
  };
  const none = await call(forge, "GET", ISSUES, { authorization: null });
  t.is(none.status, 401);
  t.deepEqual(none.json(), expected);
  t.truthy(none.headers["x-ratelimit-limit"]);
  t.is((await call(forge, "GET", ISSUES, { authorization: "Bearer wrong" })).status, 401);
  t.is((await call(forge, "GET", ISSUES, { authorization: `Basic ${forge.token}` })).status, 401);
  t.is(forge.quotaUsed, 0);
  t.false(forge.requests.some((request) => request.counted));
  t.is((await call(forge, "GET", ISSUES, { authorization: `token ${forge.token}` })).status, 200);
  t.is(forge.quotaUsed, 1);
});

test("unknown and hidden repositories answer 404, disabled issues 410, a deleted issue 410", async (t) => {
  const forge = await givenFakeForge(t, {
    repos: [
      { owner: "acme", name: "widgets" },
      { owner: "acme", name: "secret", hidden: true },
      { owner: "acme", name: "quiet", issuesDisabled: true },
    ],
  });
  forge.seed("acme/widgets", 3);
  const notFound = await call(forge, "GET", "/repos/acme/nope/issues");
  t.is(notFound.status, 404);
  t.deepEqual(notFound.json(), {
    message: "Not Found",
    documentation_url: "https://docs.github.com/rest/issues/issues#list-repository-issues",
    status: "404",
  });
  t.is((await call(forge, "GET", "/repos/acme/secret/issues")).status, 404);
  t.is((await call(forge, "GET", "/repositories/1001/issues")).status, 404);
  const disabled = await call(forge, "POST", "/repos/acme/quiet/issues", { json: { title: "x" } });
  t.is(disabled.status, 410);
  t.is(disabled.json<ErrorJson>().message, "Issues are disabled for this repo");
  t.is((await call(forge, "GET", `${ISSUES}/99`)).status, 404);

  forge.deleteIssue("acme/widgets", 2);
  const deleted = await call(forge, "GET", `${ISSUES}/2`);
  t.is(deleted.status, 410);
  t.is(deleted.json<ErrorJson>().message, "This issue was deleted");
  const listed = await call(forge, "GET", `${ISSUES}?state=all`);
  t.deepEqual(
    listed.json<IssueJson[]>().map((issue) => issue.number),
    [3, 1],
  );
  t.is(forge.issue("acme/widgets", 2), undefined);
});

test("POST creates an issue with a Location, as the token's user, creating labels it does not have", async (t) => {
  const forge = await givenFakeForge(t, { login: "robot" });
  forge.seed("acme/widgets", 2);
  const created = await call(forge, "POST", ISSUES, {
    json: {
      title: 42,
      body: "Body\r\nwith CRLF",
      labels: ["bug", { name: "status/in-progress" }],
      assignees: ["bob"],
    },
  });
  t.is(created.status, 201);
  const issue = created.json<IssueJson>();
  t.is(issue.number, 3);
  t.is(created.headers.location, `${forge.url}${ISSUES}/3`);
  t.is(issue.title, "42");
  t.is(issue.body, "Body\r\nwith CRLF");
  t.is(issue.user.login, "robot");
  t.deepEqual(
    issue.labels.map((label) => [label.name, label.default]),
    [
      ["bug", true],
      ["status/in-progress", false],
    ],
  );
  t.like(forge.issue("acme/widgets", 3), {
    title: "42",
    assignees: ["bob"],
    state: "open",
    stateReason: null,
  });
  const bare = await call(forge, "POST", ISSUES, { json: { title: "no body", assignee: "robot" } });
  t.is(bare.json<IssueJson>().body, null);
  t.is(bare.json<IssueJson>().assignee?.login, "robot");
});

test("PATCH closes as completed or not_planned, reopens as reopened, and moves updated_at strictly forward", async (t) => {
  const { forge, advance } = await givenClockedForge(t);
  const [number] = forge.seed("acme/widgets", 1);
  const path = `${ISSUES}/${number}`;
  const before = forge.issue("acme/widgets", number as number);

  const closed = (await call(forge, "PATCH", path, { json: { state: "closed" } })).json<IssueJson>();
  t.like(closed, { state: "closed", state_reason: "completed" });
  t.is(closed.closed_by?.login, "svc-bot");
  t.regex(closed.closed_at ?? "", ISO_SECONDS);
  t.true(closed.updated_at > (before?.updatedAt ?? ""));

  // The clock has not moved: each change still takes a later second.
  const reopened = (await call(forge, "PATCH", path, { json: { state: "open" } })).json<IssueJson>();
  t.like(reopened, { state: "open", state_reason: "reopened", closed_at: null, closed_by: null });
  t.true(reopened.updated_at > closed.updated_at);

  const ignored = (
    await call(forge, "PATCH", path, { json: { state_reason: "not_planned" } })
  ).json<IssueJson>();
  t.like(ignored, { state: "open", state_reason: "reopened", updated_at: reopened.updated_at });

  advance(60);
  const edited = await call(forge, "PATCH", path, {
    json: {
      state: "closed",
      state_reason: "not_planned",
      title: "New",
      body: null,
      labels: [],
      assignees: [],
    },
  });
  t.like(edited.json<IssueJson>(), {
    state: "closed",
    state_reason: "not_planned",
    title: "New",
    body: null,
  });
  t.like(forge.issue("acme/widgets", number as number), {
    labels: [],
    assignees: [],
    updatedAt: new Date(START + 60_000).toISOString().replace(".000", ""),
  });
});

test("the labels endpoints add, set and remove, answer the issue's labels, and move updated_at", async (t) => {
  const { forge } = await givenClockedForge(t);
  forge.addIssue("acme/widgets", { title: "labelled", labels: ["bug"] });
  const start = forge.issue("acme/widgets", 1)?.updatedAt ?? "";
  const names = (response: ForgeResponse) => response.json<LabelJson[]>().map((label) => label.name);

  const added = await call(forge, "POST", `${ISSUES}/1/labels`, {
    json: { labels: ["status/in-progress", "BUG"] },
  });
  t.is(added.status, 200);
  t.deepEqual(names(added), ["bug", "status/in-progress"]);
  t.true((forge.issue("acme/widgets", 1)?.updatedAt ?? "") > start);

  const removed = await call(
    forge,
    "DELETE",
    `${ISSUES}/1/labels/${encodeURIComponent("status/in-progress")}`,
  );
  t.deepEqual(names(removed), ["bug"]);
  const missing = await call(forge, "DELETE", `${ISSUES}/1/labels/wontfix`);
  t.is(missing.status, 404);
  t.is(missing.json<ErrorJson>().message, "Label does not exist");

  const set = await call(forge, "PUT", `${ISSUES}/1/labels`, {
    json: { labels: ["status/in-review", "enhancement"] },
  });
  t.deepEqual(names(set), ["status/in-review", "enhancement"]);
  t.deepEqual(names(await call(forge, "GET", `${ISSUES}/1/labels`)), ["status/in-review", "enhancement"]);
  t.deepEqual(forge.issue("acme/widgets", 1)?.labels, ["status/in-review", "enhancement"]);
});

test("invalid input answers 422 Validation Failed (or 400 for unparsable JSON)", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 1);
  const cases: [string, string, unknown, string, string][] = [
    ["POST", ISSUES, { body: "no title" }, "title", "missing_field"],
    ["POST", ISSUES, { title: "   " }, "title", "missing_field"],
    ["POST", ISSUES, { title: "x".repeat(257) }, "title", "custom"],
    ["POST", ISSUES, { title: "ok", body: "y".repeat(65_537) }, "body", "custom"],
    ["POST", ISSUES, { title: "ok", assignees: ["mallory"] }, "assignees", "invalid"],
    ["POST", ISSUES, { title: "ok", milestone: 3 }, "milestone", "invalid"],
    ["PATCH", `${ISSUES}/1`, { state: "done" }, "state", "invalid"],
    ["PATCH", `${ISSUES}/1`, { state: "closed", state_reason: "wontfix" }, "state_reason", "invalid"],
    ["PATCH", `${ISSUES}/1`, { labels: "bug" }, "labels", "invalid"],
  ];
  for (const [method, path, json, field, code] of cases) {
    const response = await call(forge, method, path, { json, deliberate: "invalid input, to see the 422" });
    t.is(response.status, 422, `${method} ${JSON.stringify(json).slice(0, 60)}`);
    const body = response.json<ErrorJson>();
    t.is(body.message, "Validation Failed");
    t.is(body.status, "422");
    t.like(body.errors?.[0], { resource: "Issue", field, code });
  }
  const long = await call(forge, "POST", ISSUES, { json: { title: "x".repeat(257) } });
  t.is(long.json<ErrorJson>().errors?.[0]?.message, "title is too long (maximum is 256 characters)");
  t.is((await call(forge, "POST", ISSUES, { json: { title: "🚀".repeat(256) } })).status, 201);
  const broken = await call(forge, "POST", ISSUES, {
    raw: "{title:",
    deliberate: "not JSON, to see the 400",
  });
  t.is(broken.status, 400);
  t.is(broken.json<ErrorJson>().message, "Problems parsing JSON");
  t.is(forge.issues("acme/widgets").length, 2);
});

test("over the primary limit counted requests answer 403 until the reset passes; then the quota refills", async (t) => {
  const { forge, advance } = await givenClockedForge(t, { quota: 3 });
  const first = await call(forge, "GET", ISSUES);
  t.like(first.headers, {
    "x-ratelimit-limit": "3",
    "x-ratelimit-remaining": "2",
    "x-ratelimit-used": "1",
    "x-ratelimit-resource": "core",
    "x-ratelimit-reset": String((START + 3_600_000) / 1000),
  });
  await call(forge, "GET", ISSUES);
  await call(forge, "GET", ISSUES);
  const limited = await call(forge, "GET", ISSUES);
  t.is(limited.status, 403);
  t.deepEqual(limited.json(), {
    message: "API rate limit exceeded for user ID 1.",
    documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
  });
  t.is(limited.headers["x-ratelimit-remaining"], "0");
  t.is(forge.quotaUsed, 3);
  t.false(forge.requests.at(-1)?.counted);

  forge.setRateLimit(0, 60);
  advance(59);
  t.is((await call(forge, "GET", ISSUES)).status, 403);
  advance(1);
  const refilled = await call(forge, "GET", ISSUES);
  t.is(refilled.status, 200);
  t.is(refilled.headers["x-ratelimit-remaining"], "2");
  t.is(refilled.headers["x-ratelimit-reset"], String((START + 60_000 + 3_600_000) / 1000));
});

test("a secondary limit answers its status with retry-after for the next requests, remaining not 0", async (t) => {
  const forge = await givenFakeForge(t);
  forge.secondaryLimit(2, { status: 429, retryAfterSeconds: 7 });
  for (let i = 0; i < 2; i++) {
    const limited = await call(forge, "GET", ISSUES);
    t.is(limited.status, 429);
    t.is(limited.headers["retry-after"], "7");
    t.not(limited.headers["x-ratelimit-remaining"], "0");
    const body = limited.json<ErrorJson>();
    t.true(body.message.startsWith("You have exceeded a secondary rate limit."));
    t.is(
      body.documentation_url,
      "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    );
  }
  t.is((await call(forge, "GET", ISSUES)).status, 200);
  forge.secondaryLimit(1);
  const plain = await call(forge, "GET", ISSUES);
  t.is(plain.status, 403);
  t.is(plain.headers["retry-after"], undefined);
  t.is(forge.quotaUsed, 1);
});

test("the redirect switch answers 301 with Location; setNextOrigin moves only rel=next", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 5);
  const location = `${forge.url}/repositories/1000/issues`;
  forge.redirect(1, location);
  const moved = await call(forge, "GET", "/repos/acme/old-name/issues");
  t.is(moved.status, 301);
  t.is(moved.headers.location, location);
  t.like(moved.json(), { message: "Moved Permanently", url: location });
  t.is((await call(forge, "GET", location)).status, 200);

  forge.setNextOrigin("http://evil.example");
  const listed = await call(forge, "GET", `${ISSUES}?state=all&per_page=2&page=2`);
  const rels = links(listed.headers.link);
  t.is(rels.next, "http://evil.example/repositories/1000/issues?state=all&per_page=2&page=3");
  t.is(rels.last, `${forge.url}/repositories/1000/issues?state=all&per_page=2&page=3`);
  t.is(rels.prev, `${forge.url}/repositories/1000/issues?state=all&per_page=2&page=1`);
});

test("seeded data is varied and deterministic, with pull requests spread evenly and updated_at increasing", async (t) => {
  const { forge } = await givenClockedForge(t);
  const numbers = forge.seed("acme/widgets", 40, { pullRequests: 10 });
  const all = forge.issues("acme/widgets");
  t.is(all.length, 50);
  t.is(numbers.length, 40);
  const prs = all.filter((issue) => issue.pullRequest).map((issue) => issue.number);
  t.deepEqual(prs, [5, 10, 15, 20, 25, 30, 35, 40, 45, 50]);
  const issues = all.filter((issue) => !issue.pullRequest);
  t.deepEqual(
    issues.map((issue) => issue.number),
    numbers,
  );
  const bodies = issues.map((issue) => issue.body);
  t.true(bodies.includes(null));
  t.true(bodies.includes(""));
  t.true(bodies.some((body) => body?.includes("\r\n")));
  t.true(bodies.some((body) => body?.startsWith("---\n")));
  t.true(bodies.some((body) => body?.includes("\n---\n")));
  t.true(bodies.some((body) => body?.includes("🎉")));
  t.true(issues.some((issue) => issue.title.includes('"') && issue.title.includes(":")));
  t.true(issues.some((issue) => issue.title.includes("日本語")));
  t.true(issues.some((issue) => issue.stateReason === "completed"));
  t.true(issues.some((issue) => issue.stateReason === "not_planned"));
  t.true(issues.some((issue) => issue.state === "open" && issue.labels.includes("status/in-progress")));
  t.true(issues.some((issue) => issue.state === "open" && issue.labels.includes("status/in-review")));
  t.false(
    issues.some((issue) => issue.state === "closed" && issue.labels.some((l) => l.startsWith("status/"))),
  );
  t.true(issues.some((issue) => issue.assignees.includes("alice")));
  const stamps = all.map((issue) => issue.updatedAt);
  t.deepEqual(stamps, [...new Set(stamps)].sort());
  t.true((stamps.at(-1) ?? "") <= new Date(START).toISOString());

  const again = await givenClockedForge(t);
  again.forge.seed("acme/widgets", 40, { pullRequests: 10 });
  t.deepEqual(again.forge.issues("acme/widgets"), all);
});

test("PATCH on a pull request's number edits its issue fields; unknown routes and methods answer 404", async (t) => {
  const forge = await givenFakeForge(t);
  forge.addIssue("acme/widgets", { title: "A PR", pullRequest: true, assignees: ["bob"] });
  const edited = await call(forge, "PATCH", `${ISSUES}/1`, { json: { title: "Renamed PR", assignee: null } });
  t.is(edited.status, 200);
  t.like(edited.json<IssueJson>(), { title: "Renamed PR", assignee: null, assignees: [] });
  t.truthy(edited.json<IssueJson>().pull_request);
  t.like(forge.issue("acme/widgets", 1), { title: "Renamed PR", pullRequest: true });
  // GitHub has no DELETE of an issue; the fake does not model pulls or other users' profiles.
  const unmodelled = { deliberate: "a route the fake does not serve" };
  t.is((await call(forge, "DELETE", `${ISSUES}/1`, unmodelled)).status, 404);
  t.is((await call(forge, "GET", "/repos/acme/widgets/pulls", unmodelled)).status, 404);
  t.is((await call(forge, "GET", "/users/alice", unmodelled)).status, 404);
});
