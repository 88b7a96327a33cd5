/**
 * The tracker's comment client against the fake tracker (every exchange judged against Jira's v3 description
 * at the fake's close): comments read from the search's `comment` field, `GET …/comment` only for an issue with
 * more than that page, the delta through the issues' `updated`; create (Markdown → ADF valid by Atlassian's
 * schema), update and remove by compare-before-write (conflict, a lost answer pushed again, 404 → gone); a body
 * over 32,767 characters of text refused before any write, and the tracker's own 400 for one sent anyway;
 * whoAmI asked once.
 */
import test from "ava";
import { SvcError, UserFacingError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import { adfSchemaProblem } from "../../testing/adf-schema.js";
import {
  type FakeTracker,
  type FakeTrackerOptions,
  type FakeTrackerRequest,
  givenFakeTracker,
} from "../../testing/fake-tracker.js";
import { trackerVars } from "../../testing/tracker.js";
import { TrackerBackend } from "./backend.js";
import { commentBodyProblem, parseComment, type TrackerComments } from "./comments.js";
import { trackerConfig } from "./config.js";

function commentsFor(tracker: FakeTracker): TrackerComments {
  const config = trackerConfig(trackerVars(tracker));
  const http = new HttpClient({ agent: "tracker-comments-test", allowedOrigins: config.allowedOrigins });
  return new TrackerBackend(config, "TEST", http, { mutationGapMs: 0 }).comments();
}

/** The requests sent since `from`, as `METHOD path-without-query`. */
function sentSince(tracker: FakeTracker, from: number): string[] {
  return tracker.requests.slice(from).map((r: FakeTrackerRequest) => `${r.method} ${r.path.split("?")[0]}`);
}

async function given(options: FakeTrackerOptions = {}, t: Parameters<typeof givenFakeTracker>[0]) {
  const tracker = await givenFakeTracker(t, options);
  return { tracker, comments: commentsFor(tracker) };
}

test("listAll reads the comments from the search; GET …/comment only for the issue with more than its page", async (t) => {
  const { tracker, comments } = await given({ commentPageSize: 3 }, t);
  const [few, many, none] = tracker.seed("TEST", 3) as [string, string, string];
  tracker.seedComments(few, 3);
  tracker.seedComments(many, 8, { author: tracker.self.accountId });
  const from = tracker.requests.length;
  const listing = await comments.listAll();
  // One search page for the three issues; the issue with 8 comments costs the pages after the first 3.
  t.deepEqual(sentSince(tracker, from), [
    "POST /rest/api/3/search/jql",
    `GET /rest/api/3/issue/${many}/comment`,
    `GET /rest/api/3/issue/${many}/comment`,
  ]);
  const search = JSON.parse(tracker.requests[from]?.body ?? "{}") as { fields: string[]; jql: string };
  t.deepEqual(search.fields, ["comment"]);
  t.is(search.jql, 'project = "TEST" ORDER BY key ASC');
  t.deepEqual(
    tracker.requests.slice(from + 1).map((r) => new URL(r.path, tracker.url).searchParams.get("startAt")),
    ["3", "6"],
  );
  t.deepEqual(listing.threads, [few, many, none]);
  t.deepEqual(
    listing.comments.map((c) => [c.parentKey, c.id]),
    [...tracker.comments(few), ...tracker.comments(many)].map((c) => [c.issueKey, c.id]),
  );
  const server = tracker.comments(few)[0];
  const first = listing.comments[0];
  if (!server || !first) return t.fail();
  t.deepEqual(first, {
    id: server.id,
    parentKey: few,
    author: "Alice Example (557058:alice-0002)",
    authorId: "557058:alice-0002",
    body: `Comment 1 on ${few}: \\*\\*not bold\\*\\*, a \\\`tick\\\` and --- a rule?\n`,
    createdAt: new Date(server.created).toISOString(),
    updatedAt: new Date(server.updated).toISOString(),
    version: null,
  });
  t.is(listing.comments.at(-1)?.author, `svc bot (${tracker.self.accountId})`);
});

test("listChangedSince lists the comments of the issues updated since: a new or edited comment brings its issue", async (t) => {
  let now = Date.UTC(2026, 10, 23, 12, 0, 0);
  const { tracker, comments } = await given({ now: () => now }, t);
  const [quiet, commented, edited] = tracker.seed("TEST", 3) as [string, string, string];
  tracker.seedComments(quiet, 2);
  const [old] = tracker.seedComments(edited, 2) as [string];
  now += 3_600_000;
  const since = new Date(now).toISOString();
  now += 60_000;
  const fresh = tracker.addComment(commented, "new one");
  tracker.editComment(old, "edited one");
  const listing = await comments.listChangedSince(since);
  t.deepEqual(listing.threads, [commented, edited]);
  t.deepEqual(
    listing.comments.map((c) => c.id),
    [fresh.id, ...tracker.comments(edited).map((c) => c.id)],
  );
  t.is(listing.comments.find((c) => c.id === old)?.body, "edited one\n");
  const search = JSON.parse(
    tracker.requests.find((r) => r.path.startsWith("/rest/api/3/search/jql"))?.body ?? "{}",
  );
  t.regex(search.jql, /^project = "TEST" AND updated >= "2026\/11\/23 13:00" ORDER BY key ASC$/);
});

test("a deleted comment is missing from its issue's thread when the issue is listed", async (t) => {
  const { tracker, comments } = await given({}, t);
  const [key] = tracker.seed("TEST", 1) as [string];
  const [gone, kept] = tracker.seedComments(key, 2) as [string, string];
  tracker.deleteComment(gone);
  const listing = await comments.listAll();
  t.deepEqual(listing.threads, [key]);
  t.deepEqual(
    listing.comments.map((c) => c.id),
    [kept],
  );
});

test("create sends ADF valid by Atlassian's schema and returns the comment as the server keeps it", async (t) => {
  const { tracker, comments } = await given({}, t);
  const [key] = tracker.seed("TEST", 1) as [string];
  const body =
    "Deploy **now**:\n\n- step `one`\n- [docs](https://example.com/d)\n\n```sh\nmake deploy\n```\n";
  const from = tracker.requests.length;
  const created = await comments.create(key, body);
  t.deepEqual(sentSince(tracker, from), [`POST /rest/api/3/issue/${key}/comment`]);
  const sent = JSON.parse(tracker.requests[from]?.body ?? "{}") as { body: unknown };
  t.deepEqual(Object.keys(sent), ["body"]);
  t.is(adfSchemaProblem(sent.body), undefined);
  const server = tracker.comment(created.id);
  t.deepEqual(server?.body, sent.body);
  t.like(created, {
    parentKey: key,
    authorId: tracker.self.accountId,
    author: `svc bot (${tracker.self.accountId})`,
    body,
    version: null,
  });
  t.is(created.createdAt, created.updatedAt);
  t.deepEqual(await comments.get(key, created.id), created);
});

test("update compares before it writes: a comment changed since its base is a conflict and is not written", async (t) => {
  let now = Date.UTC(2026, 10, 23, 12, 0, 0);
  const { tracker, comments } = await given({ now: () => now }, t);
  const [key] = tracker.seed("TEST", 1) as [string];
  const created = await comments.create(key, "one");
  const base = { version: null, updatedAt: created.updatedAt };
  now += 1_000;
  tracker.editComment(created.id, "edited in the browser", { author: tracker.self.accountId });
  const from = tracker.requests.length;
  const outcome = await comments.update(key, created.id, "two", base);
  t.deepEqual(outcome, { kind: "conflict", current: `updated ${new Date(now).toISOString()}` });
  t.deepEqual(sentSince(tracker, from), [`GET /rest/api/3/issue/${key}/comment/${created.id}`]);
  t.is(tracker.comment(created.id)?.updated, now);
  // From the current base, the PUT goes through.
  now += 1_000;
  const current = await comments.get(key, created.id);
  if (!current) return t.fail();
  const updated = await comments.update(key, created.id, "two", {
    version: null,
    updatedAt: current.updatedAt,
  });
  if (updated.kind !== "ok") return t.fail(updated.kind);
  t.is(updated.comment.body, "two\n");
  t.is(updated.comment.updatedAt, new Date(now).toISOString());
  t.is(tracker.requests.at(-1)?.method, "PUT");
  // Pushed again from the old base (its answer lost): the comment already holds the body, nothing is sent.
  const again = tracker.requests.length;
  t.like(await comments.update(key, created.id, "two", { version: null, updatedAt: current.updatedAt }), {
    kind: "ok",
  });
  t.deepEqual(sentSince(tracker, again), [`GET /rest/api/3/issue/${key}/comment/${created.id}`]);
});

test("remove compares before it deletes; a comment or issue not found is gone", async (t) => {
  let now = Date.UTC(2026, 10, 23, 12, 0, 0);
  const { tracker, comments } = await given({ now: () => now }, t);
  const [key] = tracker.seed("TEST", 1) as [string];
  const created = await comments.create(key, "one");
  const base = { version: null, updatedAt: created.updatedAt };
  now += 1_000;
  tracker.editComment(created.id, "edited");
  t.is((await comments.remove(key, created.id, base)).kind, "conflict");
  t.truthy(tracker.comment(created.id));
  const current = { version: null, updatedAt: new Date(now).toISOString() };
  const from = tracker.requests.length;
  t.deepEqual(await comments.remove(key, created.id, current), { kind: "ok" });
  t.deepEqual(sentSince(tracker, from), [
    `GET /rest/api/3/issue/${key}/comment/${created.id}`,
    `DELETE /rest/api/3/issue/${key}/comment/${created.id}`,
  ]);
  t.is(tracker.comment(created.id), undefined);
  t.deepEqual(await comments.remove(key, created.id, current), { kind: "gone" });
  t.deepEqual(await comments.update(key, created.id, "x", current), { kind: "gone" });
  t.is(await comments.get(key, created.id), undefined);
  t.is(await comments.get("TEST-999", created.id), undefined);
  const error = await t.throwsAsync(comments.create("TEST-999", "on nothing"), { instanceOf: SvcError });
  t.is(error?.data?.status, 404);
  t.regex(error?.message ?? "", /Issue does not exist or you do not have permission to see it/);
  const listing = await t.throwsAsync(comments.listIssue("TEST-999"), { instanceOf: SvcError });
  t.is(listing?.data?.status, 404);
});

test("a body over 32,767 characters of text is refused before any write", async (t) => {
  const { tracker, comments } = await given({}, t);
  const [key] = tracker.seed("TEST", 1) as [string];
  t.is(commentBodyProblem("x".repeat(32_767)), undefined);
  t.regex(
    commentBodyProblem("x".repeat(32_768)) ?? "",
    /32,768 characters of text; the tracker accepts at most 32,767/,
  );
  t.regex(commentBodyProblem("  \n") ?? "", /the comment is empty/);
  const from = tracker.requests.length;
  const refused = await t.throwsAsync(comments.create(key, `**${"y".repeat(32_768)}**`), {
    instanceOf: UserFacingError,
  });
  t.regex(refused?.message ?? "", /a comment on issue TEST-1: the comment holds 32,768 characters of text/);
  t.deepEqual(sentSince(tracker, from), []);
  // Markdown syntax is not text: 32,767 characters in bold are taken.
  const longest = await comments.create(key, `**${"y".repeat(32_767)}**`);
  t.is(longest.body, `**${"y".repeat(32_767)}**\n`);
  t.is(tracker.comments(key).length, 1);
});

test("a 400 of the tracker reaches the message in its own words, and nothing is kept", async (t) => {
  const { tracker, comments } = await given({}, t);
  const [key] = tracker.seed("TEST", 1) as [string];
  // An ```adf fence holds any node's JSON; one Atlassian's schema refuses gets through svc to the server.
  const fenced = '```adf\n{"type":"paragraph","content":[{"type":"bogus","text":"x"}]}\n```\n';
  const error = await t.throwsAsync(comments.create(key, fenced), { instanceOf: SvcError });
  t.is(error?.data?.status, 400);
  t.regex(
    error?.message ?? "",
    /^commenting on issue TEST-1: the tracker refused it \(400\): comment: "?Operation value must be an Atlassian Document/,
  );
  t.deepEqual(tracker.comments(key), []);
});

test("whoAmI asks /myself once and keeps the account", async (t) => {
  const { tracker, comments } = await given({}, t);
  const from = tracker.requests.length;
  t.deepEqual(await comments.whoAmI(), { accountId: tracker.self.accountId, displayName: "svc bot" });
  t.deepEqual(await comments.whoAmI(), { accountId: tracker.self.accountId, displayName: "svc bot" });
  t.deepEqual(sentSince(tracker, from), ["GET /rest/api/3/myself"]);
});

test("parseComment names what is wrong with a malformed comment", (t) => {
  const good = {
    id: "10000",
    author: { accountId: "5b10ac8d82e05b22cc7d4ef5", displayName: "Jane Doe" },
    body: {
      type: "doc",
      version: 1,
      content: [{ type: "paragraph", content: [{ type: "text", text: "hi" }] }],
    },
    created: "2026-11-23T10:30:00.000+0000",
    updated: "2026-11-23T00:31:00.000-1000",
  };
  t.like(parseComment(good, "TEST-42"), {
    author: "Jane Doe (5b10ac8d82e05b22cc7d4ef5)",
    createdAt: "2026-11-23T10:30:00.000Z",
    updatedAt: "2026-11-23T10:31:00.000Z",
    body: "hi\n",
  });
  t.like(parseComment({ ...good, author: { accountId: "5b10ac8d82e05b22cc7d4ef5" } }, "TEST-42"), {
    author: "Unknown user (5b10ac8d82e05b22cc7d4ef5)",
  });
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ id: "../1" }, /bad comment id/],
    [{ id: 10000 }, /bad comment id/],
    [{ author: { accountId: "a/b" } }, /author.accountId is not an account id/],
    [{ author: null }, /author.accountId/],
    [{ created: "yesterday" }, /created is not a timestamp/],
    [{ updated: undefined }, /updated is not a timestamp/],
    [{ body: "plain" }, /body is not an ADF document/],
  ];
  for (const [change, reason] of cases)
    t.regex(String(parseComment({ ...good, ...change }, "TEST-42")), reason);
  t.is(parseComment([good], "TEST-42"), "a comment must be an object");
});

test("a search page of comments that does not start the thread costs the whole thread, merged by id", async (t) => {
  const { tracker, comments } = await given({}, t);
  const [key] = tracker.seed("TEST", 1) as [string];
  const ids = tracker.seedComments(key, 5);
  // The newest two, as a server that sends the latest comments in the field would (startAt 3 of 5).
  const newest = await fetch(`${tracker.url}/rest/api/3/issue/${key}/comment?orderBy=created&startAt=3`, {
    headers: {
      authorization: `Basic ${Buffer.from(`${tracker.email}:${tracker.apiToken}`).toString("base64")}`,
    },
  });
  const page = (await newest.json()) as { comments: unknown[]; total: number; startAt: number };
  t.is(page.comments.length, 2);
  const from = tracker.requests.length;
  const read = await comments.fromSearch([{ id: "10001", key, fields: { comment: page } }], 200);
  t.deepEqual(
    read.comments.map((c) => c.id),
    ids,
  );
  t.deepEqual(read.threads, [key]);
  const asked = tracker.requests
    .slice(from)
    .map((r) => new URL(r.path, tracker.url).searchParams.get("startAt"));
  t.deepEqual(asked, ["0"]);
  // An issue without the comment field is a malformed answer, not an empty thread.
  const error = await t.throwsAsync(comments.fromSearch([{ id: "10001", key, fields: {} }], 200), {
    instanceOf: SvcError,
  });
  t.regex(
    error?.message ?? "",
    /TEST-1: the comment field is missing \(was "comment" among the fields\?\)\); nothing was written$/,
  );
});

test("the comments of a project the account cannot see: the listing says so, as the issues' does", async (t) => {
  const tracker = await givenFakeTracker(t, { projects: [{ key: "TEST" }, { key: "HID", hidden: true }] });
  const config = trackerConfig(trackerVars(tracker));
  const http = new HttpClient({ agent: "tracker-comments-test", allowedOrigins: config.allowedOrigins });
  const comments = new TrackerBackend(config, "HID", http).comments();
  const error = await t.throwsAsync(comments.listAll(), { instanceOf: UserFacingError });
  t.regex(error?.message ?? "", /has no project HID or no permission/);
  t.is(error?.data?.status, 404);
});
