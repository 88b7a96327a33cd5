/**
 * The tracker's count of a project's issues (issue 31): the `approximate-count` answer's parser, and
 * `countLive` in-process against the fake tracker: the full listing's own JQL in a `JQLCountRequestBean`, one
 * request, and its errors as the listing's (401, an unknown project, 429 waited out, a malformed answer).
 */
import { createServer } from "node:http";
import test from "ava";
import { UserFacingError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import { type FakeTracker, givenFakeTracker } from "../../testing/fake-tracker.js";
import { closeServer, listenOnLoopback } from "../../testing/loopback.js";
import { trackerVars } from "../../testing/tracker.js";
import { approximateCount } from "./approximate-count.js";
import { TrackerBackend } from "./backend.js";
import { trackerConfig } from "./config.js";

function backendFor(
  tracker: Pick<FakeTracker, "url" | "origin" | "email" | "apiToken">,
  project = "TEST",
  overrides: Readonly<Record<string, string>> = {},
): TrackerBackend {
  const config = trackerConfig({ ...trackerVars(tracker as FakeTracker), ...overrides });
  return new TrackerBackend(
    config,
    project,
    new HttpClient({ agent: "tracker-count-test", allowedOrigins: config.allowedOrigins }),
  );
}

test("approximateCount reads a JQLCountResultsBean and names what is wrong with anything else", (t) => {
  const cases: [unknown, number | string][] = [
    [{ count: 153 }, 153],
    [{ count: 0 }, 0],
    [{ count: Number.MAX_SAFE_INTEGER }, Number.MAX_SAFE_INTEGER],
    [null, "with a body that is not a JSON object"],
    [[{ count: 1 }], "with a body that is not a JSON object"],
    [{}, "without a count"],
    [{ total: 3 }, "without a count"],
    [{ count: "12" }, 'with a count that is not a whole number of issues: "12"'],
    [{ count: 1.5 }, "with a count that is not a whole number of issues: 1.5"],
    [{ count: -1 }, "with a count that is not a whole number of issues: -1"],
    [{ count: 2 ** 60 }, "with a count that is not a whole number of issues: 1152921504606847000"],
    [{ count: null }, "with a count that is not a whole number of issues: null"],
  ];
  for (const [value, expected] of cases) t.is(approximateCount(value), expected, JSON.stringify(value));
});

test("countLive is one approximate-count request with the full listing's JQL, and says the count is approximate", async (t) => {
  const tracker = await givenFakeTracker(t);
  tracker.seed("TEST", 7);
  const backend = backendFor(tracker);
  await backend.listAll();
  const listing = tracker.requests.at(-1);
  const from = tracker.requests.length;
  t.deepEqual(await backend.countLive(), { count: 7, approximate: true });
  const sent = tracker.requests.slice(from);
  t.deepEqual(
    sent.map((request) => `${request.method} ${request.path}`),
    ["POST /rest/api/3/search/approximate-count"],
  );
  t.deepEqual(JSON.parse(sent[0]?.body ?? ""), {
    jql: (JSON.parse(listing?.body ?? "") as { jql: string }).jql,
  });
  t.is(sent[0]?.headers["content-type"], "application/json");
  tracker.deleteIssue("TEST-7");
  t.deepEqual(await backend.countLive(), { count: 6, approximate: true });
});

test("countLive's errors are the listing's: 401 names the variables, an unknown project says so, 429 is waited out", async (t) => {
  const tracker = await givenFakeTracker(t, { projects: [{ key: "TEST" }, { key: "SECRET", hidden: true }] });
  tracker.seed("TEST", 2);

  const refused = await t.throwsAsync(
    backendFor(tracker, "TEST", { TRACKER_API_TOKEN: "wrong" }).countLive(),
    {
      instanceOf: UserFacingError,
    },
  );
  t.regex(
    refused?.message ?? "",
    /refused the credentials \(401\); check TRACKER_EMAIL and TRACKER_API_TOKEN/,
  );

  for (const key of ["NOPE", "SECRET"]) {
    const missing = await t.throwsAsync(backendFor(tracker, key).countLive());
    t.regex(
      missing?.message ?? "",
      new RegExp(`^counting the issues of project ${key}: .* no project ${key} or no permission`),
    );
  }

  tracker.rateLimitNext(1, 1);
  const from = tracker.requests.length;
  t.deepEqual(await backendFor(tracker).countLive(), { count: 2, approximate: true });
  t.deepEqual(
    tracker.requests.slice(from).map((request) => request.status),
    [429, 200],
  );
});

test("a malformed count answer is an error that says what came, never a number made up", async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(req.url === "/rest/api/3/search/approximate-count" ? '{"count":"many"}' : "{}");
  });
  const origin = await listenOnLoopback(server);
  t.teardown(() => closeServer(server));
  const backend = backendFor({ url: origin, origin, email: "me@example.test", apiToken: "token" });
  await t.throwsAsync(backend.countLive(), {
    message: `tracker project TEST at ${origin}: counting the issues of project TEST answered with a count that is not a whole number of issues: "many"`,
  });
});
