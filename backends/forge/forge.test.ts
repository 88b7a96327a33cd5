/**
 * The forge backend's pure parts: configuration, the `Link` header, issue validation and the status
 * mapping both ways, and the PATCH a change makes (only what differs; labels as a delta).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import fc from "fast-check";
import { UserFacingError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import { fuzzParams } from "../../testing/fuzz.js";
import { ForgeBackend } from "./backend.js";
import { checkForgeProject, forgeConfig, forgeRemoteUrl } from "./config.js";
import { type ForgeIssue, PULL_REQUEST, toForgeIssue } from "./issue.js";
import { linkTarget } from "./link.js";
import { patchFor } from "./patch.js";
import { describeReset, limitOf } from "./quota.js";
import { FORGE_STATUSES, forgeStateOf, statusOf } from "./schema.js";

test("configuration: every missing variable is named in one message, and the token is never in it", (t) => {
  const error = t.throws(() => forgeConfig({}), { instanceOf: UserFacingError });
  t.regex(error.message, /not set: FORGE_TOKEN, SVC_ALLOWED_ORIGINS/);
  t.regex(error.message, /https:\/\/api\.github\.com/);
  const one = t.throws(() => forgeConfig({ FORGE_TOKEN: "secret-token-1" }));
  t.regex(one.message, /this environment variable, which is not set: SVC_ALLOWED_ORIGINS/);
  t.false(one.message.includes("secret-token-1"));
  t.deepEqual(forgeConfig({ FORGE_TOKEN: "x", SVC_ALLOWED_ORIGINS: "https://api.github.com" }), {
    token: "x",
    baseUrl: "https://api.github.com",
    allowedOrigins: "https://api.github.com",
  });
  t.is(
    forgeConfig({
      FORGE_TOKEN: "x",
      SVC_ALLOWED_ORIGINS: "a",
      SVC_FORGE_BASE_URL: "https://ghe.example/api/v3/",
    }).baseUrl,
    "https://ghe.example/api/v3",
  );
  t.throws(() => forgeConfig({ FORGE_TOKEN: "x", SVC_ALLOWED_ORIGINS: "a", SVC_FORGE_BASE_URL: "ftp://x" }), {
    message: /SVC_FORGE_BASE_URL must be an http\(s\) API root/,
  });
});

test("repository names: <owner>/<repo> as the forge spells them, anything else refused with an example", (t) => {
  t.deepEqual(checkForgeProject("acme/widgets"), { owner: "acme", repo: "widgets" });
  t.deepEqual(checkForgeProject("a-b/c.d_e"), { owner: "a-b", repo: "c.d_e" });
  for (const bad of [
    "acme",
    "acme/",
    "/widgets",
    "acme/widgets/x",
    "acme/..",
    "-acme/x",
    "ac me/x",
    "a/b?c",
  ]) {
    t.throws(
      () => checkForgeProject(bad),
      { message: /is not a forge repository <owner>\/<repo>; for example: svc init forge::acme\/widgets/ },
      bad,
    );
  }
  t.is(
    forgeRemoteUrl("https://ghe.example/api/v3", "acme/widgets"),
    "svc::https://ghe.example/api/v3/forge/projects/acme/widgets",
  );
});

test("Link: the next target among several relations, quoted or not, in any order", (t) => {
  const header =
    '<https://api.github.com/repositories/1/issues?page=1>; rel="prev", <https://api.github.com/repositories/1/issues?page=3>; rel="next", <https://api.github.com/repositories/1/issues?page=9>; rel="last"';
  t.is(linkTarget(header, "next"), "https://api.github.com/repositories/1/issues?page=3");
  t.is(linkTarget(header, "last"), "https://api.github.com/repositories/1/issues?page=9");
  t.is(linkTarget("<https://x/a?b=1,2>; rel=next", "next"), "https://x/a?b=1,2");
  t.is(linkTarget('<https://x/a>; rel="prev next"', "next"), "https://x/a");
  t.is(linkTarget('<https://x/a>; rel="last"', "next"), undefined);
  t.is(linkTarget(undefined, "next"), undefined);
  t.is(linkTarget("garbage", "next"), undefined);
});

test("Link: any header text gives a string or nothing, never a throw", (t) => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (header) => {
      const target = linkTarget(header, "next");
      return target === undefined || typeof target === "string";
    }),
    fuzzParams(100),
  );
  t.pass();
});

/** An issue object of acme/widgets. */
const parseIssue = (value: unknown) => toForgeIssue(value, "acme/widgets");

function issue(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 3_000_000_042,
    number: 42,
    title: "Login fails",
    body: "It fails.\r\n",
    state: "open",
    state_reason: null,
    labels: [{ name: "bug" }, { name: "status/in-progress" }],
    assignees: [{ login: "alice" }],
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-02T00:00:00Z",
    ...overrides,
  };
}

test("an issue becomes a record: status from state, reason and label; status labels never in labels", (t) => {
  const parsed = parseIssue(issue()) as ForgeIssue;
  t.is(parsed.record.path, "issues/0042.md");
  t.deepEqual(parsed.record.content, {
    fields: {
      id: 42,
      title: "Login fails",
      status: "in_progress",
      labels: ["bug"],
      assignees: ["alice"],
      created_at: "2026-01-01T00:00:00Z",
      updated_at: "2026-01-02T00:00:00Z",
    },
    body: "It fails.\r\n",
  });
  t.is((parseIssue(issue({ body: null })) as ForgeIssue).record.content.body, "");
  // A status/ label that is no status is a label like any other.
  const blocked = parseIssue(
    issue({ labels: [{ name: "status/blocked" }, { name: "status/in-review" }, { name: "bug" }] }),
  ) as ForgeIssue;
  t.is(blocked.record.content.fields.status, "in_review");
  t.deepEqual(blocked.record.content.fields.labels, ["status/blocked", "bug"]);
  t.is(parseIssue(issue({ pull_request: { url: "x" } })), PULL_REQUEST);
  t.regex(String(parseIssue(issue({ state: "merged" }))), /state is neither open nor closed/);
  t.regex(String(parseIssue(issue({ updated_at: "yesterday" }))), /updated_at is not a timestamp/);
  t.regex(String(parseIssue(issue({ labels: [{}] }))), /labels holds an entry without a name/);
  t.regex(String(parseIssue(issue({ number: -1 }))), /bad issue number/);
});

test("milestone, type and parent come from the issue object: title, name, number (another repository's as owner/repo#N)", (t) => {
  const planned = parseIssue(
    issue({
      milestone: { number: 3, title: "v1.0" },
      type: { id: 7, node_id: "IT_1", name: "Bug", description: null },
      parent_issue_url: "https://api.github.com/repos/Acme/Widgets/issues/7",
    }),
  ) as ForgeIssue;
  t.like(planned.record.content.fields, { milestone: "v1.0", type: "Bug", parent: 7 });
  t.deepEqual(Object.keys(planned.record.content.fields), [
    "id",
    "title",
    "status",
    "labels",
    "assignees",
    "milestone",
    "type",
    "parent",
    "created_at",
    "updated_at",
  ]);
  t.is(planned.milestone, 3);
  t.is(planned.id, 3_000_000_042);
  const elsewhere = parseIssue(
    issue({ parent_issue_url: "https://ghe.example/api/v3/repos/acme/gadgets/issues/12" }),
  ) as ForgeIssue;
  t.is(elsewhere.record.content.fields.parent, "acme/gadgets#12", "another repository's parent is shown");
  // None of them: no line at all (absent, not null), as before issue 35.
  const plain = parseIssue(issue({ milestone: null, type: null, parent_issue_url: null })) as ForgeIssue;
  for (const name of ["milestone", "type", "parent"]) t.false(name in plain.record.content.fields, name);
  t.regex(String(parseIssue(issue({ milestone: { title: "x" } }))), /milestone has no number and title/);
  t.regex(String(parseIssue(issue({ type: { id: 1 } }))), /type has no name/);
  t.regex(String(parseIssue(issue({ parent_issue_url: "https://x/y" }))), /parent_issue_url is no issue/);
  t.regex(String(parseIssue(issue({ id: "x" }))), /id is not a whole number/);
});

test("a PATCH sends a milestone as its number and a type as its name; removing the line sends null", (t) => {
  const current = parseIssue(
    issue({
      milestone: { number: 3, title: "v1.0" },
      type: { id: 1, node_id: "n", name: "Bug", description: null },
    }),
  ) as ForgeIssue;
  const numbers = new Map([
    ["v1.0", 3],
    ["v2.0", 4],
  ]);
  const lookup = (title: string) => numbers.get(title) ?? Number.NaN;
  t.deepEqual(patchFor(current, { fields: { milestone: "v2.0" } }, lookup), { milestone: 4 });
  t.deepEqual(patchFor(current, { fields: { milestone: null, type: null } }, lookup), {
    milestone: null,
    type: null,
  });
  t.deepEqual(patchFor(current, { fields: { milestone: "v1.0", type: "Task" } }, lookup), { type: "Task" });
  // The parent is no member of the PATCH: the sub-issue calls set it.
  t.deepEqual(patchFor(current, { fields: { parent: 9 } }, lookup), {});
  t.throws(() => patchFor(current, { fields: { milestone: "v2.0" } }), {
    message: /no milestone list was read/,
  });
});

test("status mapping: each of the five statuses round-trips through state, reason and label", (t) => {
  for (const status of FORGE_STATUSES) {
    const target = forgeStateOf(status);
    t.is(statusOf(target.state, target.stateReason, target.label ? ["x", target.label] : ["x"]), status);
  }
  t.is(statusOf("closed", null, []), "done", "a close without a reason is completed");
  t.is(statusOf("open", "reopened", ["status/in-progress", "status/in-review"]), "in_review");
});

test("a PATCH carries only what changed; labels are a delta that keeps labels added by others", (t) => {
  const current = parseIssue(
    issue({ labels: [{ name: "bug" }, { name: "added-by-someone" }, { name: "status/in-progress" }] }),
  ) as ForgeIssue;
  // The user saw labels [bug] (the base); `added-by-someone` came later.
  const base = {
    ...current,
    record: {
      ...current.record,
      content: { ...current.record.content, fields: { ...current.record.content.fields, labels: ["bug"] } },
    },
  };
  t.deepEqual(patchFor(base, { fields: { title: "New title" } }), { title: "New title" });
  t.deepEqual(patchFor(base, { fields: {}, body: "It fails.\r\n" }), {});
  t.deepEqual(patchFor(base, { fields: { labels: ["ui"] } }), {
    labels: ["added-by-someone", "status/in-progress", "ui"],
  });
  t.deepEqual(patchFor(base, { fields: { status: "in_review" } }), {
    labels: ["bug", "added-by-someone", "status/in-review"],
  });
  t.deepEqual(patchFor(base, { fields: { status: "done" } }), {
    labels: ["bug", "added-by-someone"],
    state: "closed",
    state_reason: "completed",
  });
  // Another status/ label follows the file like any label: kept once, added, removed.
  const blocked = parseIssue(
    issue({ labels: [{ name: "bug" }, { name: "status/blocked" }, { name: "status/in-progress" }] }),
  ) as ForgeIssue;
  t.deepEqual(patchFor(blocked, { fields: { labels: ["bug", "status/blocked", "ui"] } }), {
    labels: ["bug", "status/blocked", "status/in-progress", "ui"],
  });
  t.deepEqual(patchFor(blocked, { fields: { labels: ["bug"] } }), { labels: ["bug", "status/in-progress"] });
  t.deepEqual(patchFor(base, { fields: { labels: ["bug", "status/blocked"] } }), {
    labels: ["bug", "added-by-someone", "status/in-progress", "status/blocked"],
  });
  t.deepEqual(patchFor(base, { fields: { status: "wont_fix" } }), {
    labels: ["bug", "added-by-someone"],
    state: "closed",
    state_reason: "not_planned",
  });
  t.deepEqual(patchFor(base, { fields: { assignees: ["bob", "alice"] } }), { assignees: ["bob", "alice"] });
  const closed = parseIssue(issue({ state: "closed", state_reason: "completed", labels: [] })) as ForgeIssue;
  t.deepEqual(patchFor(closed, { fields: { status: "open" } }), { state: "open" });
  t.deepEqual(patchFor(closed, { fields: { status: "wont_fix" } }), {
    state: "closed",
    state_reason: "not_planned",
  });
});

test("rate limits: primary (quota at zero) and secondary (Retry-After, or the message) are told apart", (t) => {
  const answer = (status: number, headers: Record<string, string>, body = "{}") => ({
    status,
    headers,
    body: Buffer.from(body),
  });
  t.deepEqual(limitOf(answer(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "2000000000" })), {
    kind: "primary",
    resetMs: 2_000_000_000_000,
  });
  t.deepEqual(limitOf(answer(403, { "x-ratelimit-remaining": "12", "retry-after": "2" })), {
    kind: "secondary",
    waitMs: 2000,
  });
  t.deepEqual(
    limitOf(
      answer(
        403,
        { "x-ratelimit-remaining": "12" },
        '{"message":"You have exceeded a secondary rate limit."}',
      ),
    ),
    { kind: "secondary", waitMs: 60_000 },
  );
  t.deepEqual(
    limitOf(answer(403, { "x-ratelimit-remaining": "12" }, '{"message":"Resource not accessible"}')),
    {
      kind: "none",
    },
  );
  t.deepEqual(limitOf(answer(200, { "x-ratelimit-remaining": "0" })), { kind: "none" });
  t.is(
    describeReset(Date.parse("2026-11-23T18:40:05Z"), Date.parse("2026-11-23T17:48:00Z")),
    "2026-11-23T18:40:05Z (in 52 min)",
  );
  const now = Date.parse("2026-11-23T17:00:00Z");
  const waits = [20_000, 89_000, 119 * 60_000, 120 * 60_000, 185 * 60_000 + 40_000, -5_000];
  t.deepEqual(
    waits.map((wait) => describeReset(now + wait, now).replace(/^\S+ /, "")),
    ["(in 1 min)", "(in 1 min)", "(in 119 min)", "(in 2 h 0 min)", "(in 3 h 6 min)", "(in 1 min)"],
  );
});

test("a forge that keeps saying its quota is used up after each reset it named has passed is asked 4 times, not forever", async (t) => {
  let asked = 0;
  const server = createServer((_req, res) => {
    asked++;
    // A reset in the past: svc has nothing to wait for, and without a cap asked again at once.
    res.writeHead(403, {
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "1000000000",
      "content-type": "application/json",
    });
    res.end('{"message":"API rate limit exceeded"}');
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  t.teardown(() => server.close());
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const backend = new ForgeBackend(
    { token: "t", baseUrl: origin, allowedOrigins: `${origin}` },
    "acme/widgets",
    new HttpClient({ allowedOrigins: origin, agent: "test" }),
  );
  const error = await t.throwsAsync(backend.listAll(), { instanceOf: UserFacingError });
  t.is(asked, 4);
  t.is(
    error?.message,
    `the forge at ${origin} kept answering that this FORGE_TOKEN has no requests left (x-ratelimit-remaining: 0) after the reset time it named had passed, 4 times; svc stopped here and wrote nothing more. Wait a few minutes, then run the same command again`,
  );
});
