/**
 * The tracker backend's pure parts: its configuration (Document 3's variables, one message naming every
 * missing one, the instance check, the key precedence), the issue parser (canonical timestamps, hostile keys)
 * and the JQL dates written in the account's zone.
 */
import test from "ava";
import fc from "fast-check";
import { UserFacingError } from "../../core/errors.js";
import { fuzzParams } from "../../testing/fuzz.js";
import {
  checkInstance,
  checkProjectKey,
  defaultTrackerProject,
  trackerConfig,
  trackerRemoteUrl,
} from "./config.js";
import { FieldCatalog } from "./field-catalog.js";
import { canonicalTime, toTrackerIssue } from "./issue.js";

const NO_FIELDS = new FieldCatalog([]);

import { jqlDateTime, jqlString } from "./jql.js";
import { TRACKER_SCHEMA } from "./schema.js";

const COMPLETE = {
  TRACKER_EMAIL: "me@example.test",
  TRACKER_API_TOKEN: "secret-token-123",
  SVC_TRACKER_INSTANCE: "acme",
  SVC_ALLOWED_ORIGINS: "https://acme.atlassian.net",
} as const;

test("the four variables give the instance's site; SVC_TRACKER_BASE_URL replaces it", (t) => {
  t.deepEqual(trackerConfig({ ...COMPLETE }), {
    email: "me@example.test",
    apiToken: "secret-token-123",
    baseUrl: "https://acme.atlassian.net",
    allowedOrigins: "https://acme.atlassian.net",
  });
  t.is(
    trackerConfig({ ...COMPLETE, SVC_TRACKER_BASE_URL: "http://127.0.0.1:9/" }).baseUrl,
    "http://127.0.0.1:9",
  );
  t.throws(() => trackerConfig({ ...COMPLETE, SVC_TRACKER_BASE_URL: "ftp://x" }), {
    message: /SVC_TRACKER_BASE_URL/,
  });
  t.throws(() => trackerConfig({ ...COMPLETE, SVC_TRACKER_BASE_URL: "https://u:p@x" }), {
    message: /without user name, password/,
  });
});

test("every missing variable is named in one message, and no secret is printed", (t) => {
  const error = t.throws(() => trackerConfig({ TRACKER_API_TOKEN: "secret-token-123" }), {
    instanceOf: UserFacingError,
  });
  t.regex(error?.message ?? "", /not set: TRACKER_EMAIL, SVC_TRACKER_INSTANCE, SVC_ALLOWED_ORIGINS\n/);
  t.false(error?.message.includes("secret-token-123"));
  t.deepEqual(error?.data.missing, ["TRACKER_EMAIL", "SVC_TRACKER_INSTANCE", "SVC_ALLOWED_ORIGINS"]);
  const one = t.throws(() => trackerConfig({ ...COMPLETE, TRACKER_EMAIL: "" }));
  t.regex(one?.message ?? "", /needs this environment variable, which is not set: TRACKER_EMAIL\n/);
});

test("the instance is a bare subdomain; an empty one is invalid, not missing", (t) => {
  for (const bad of ["", "Acme", "acme.atlassian.net", "https://acme", "a".repeat(64), "ac me"]) {
    t.throws(
      () => checkInstance(bad),
      { message: /^invalid tracker instance subdomain: .*SVC_TRACKER_INSTANCE/ },
      bad,
    );
  }
  t.throws(() => trackerConfig({ ...COMPLETE, SVC_TRACKER_INSTANCE: "" }), { message: /it is empty/ });
  t.notThrows(() => checkInstance("acme-2"));
});

test("project keys: Document 3's precedence, and the key's form", (t) => {
  t.is(defaultTrackerProject({ TRACKER_TEST_PROJECT: "OPS", SVC_TRACKER_PROJECT: "NOPE" }), "OPS");
  t.is(defaultTrackerProject({ SVC_TRACKER_PROJECT: "OPS" }), "OPS");
  t.is(defaultTrackerProject({}), "TEST");
  for (const bad of ["test", "T", "TE ST", "../X", "TEST-1", "1TEST"]) {
    t.throws(() => checkProjectKey(bad), { message: /is not a tracker project key/ }, bad);
  }
  t.is(
    trackerRemoteUrl("https://acme.atlassian.net", "TEST"),
    "svc::https://acme.atlassian.net/tracker/projects/TEST",
  );
});

test("timestamps in any offset become RFC 3339 UTC with milliseconds; impossible ones are refused", (t) => {
  t.is(canonicalTime("2026-11-23T10:30:00.000+0000"), "2026-11-23T10:30:00.000Z");
  t.is(canonicalTime("2026-11-23T00:30:00.000-1000"), "2026-11-23T10:30:00.000Z");
  t.is(canonicalTime("2026-11-23T16:00:05.5+05:30"), "2026-11-23T10:30:05.500Z");
  t.is(canonicalTime("2026-11-23T10:30:00Z"), "2026-11-23T10:30:00.000Z");
  for (const bad of [
    "2026-02-30T10:00:00.000+0000",
    "2026-11-23T24:00:00.000+0000",
    "2026-11-23",
    42,
    null,
  ]) {
    t.is(canonicalTime(bad), undefined, String(bad));
  }
});

const ISSUE = {
  id: "10042",
  key: "TEST-42",
  self: "https://acme.atlassian.net/rest/api/3/issue/10042",
  fields: {
    summary: "A: title",
    description: {
      type: "doc",
      version: 1,
      content: [{ type: "paragraph", content: [{ type: "text", text: "Hi" }] }],
    },
    status: { name: "In Progress", statusCategory: { key: "indeterminate" } },
    priority: { name: "Medium", id: "3" },
    labels: ["kind=test", "b"],
    assignee: { accountId: "557058:abc", displayName: "Alice" },
    parent: { key: "TEST-1", id: "10001" },
    issuetype: { name: "Task", subtask: false },
    created: "2026-11-20T09:00:00.000+0100",
    updated: "2026-11-23T10:30:00.123+0000",
    subtasks: [{ key: "TEST-43" }],
  },
};

test("an issue becomes a record in the schema's fields, its description Markdown", (t) => {
  const issue = toTrackerIssue(ISSUE, NO_FIELDS);
  if (typeof issue === "string") return t.fail(issue);
  t.is(issue.record.path, "issues/TEST-42.md");
  t.deepEqual(issue.subtasks, ["TEST-43"]);
  t.deepEqual(issue.record.content, {
    fields: {
      id: "10042",
      key: "TEST-42",
      type: "Task",
      title: "A: title",
      status: "In Progress",
      priority: "Medium",
      labels: ["kind=test", "b"],
      assignee: "557058:abc",
      parent: "TEST-1",
      created_at: "2026-11-20T08:00:00.000Z",
      updated_at: "2026-11-23T10:30:00.123Z",
    },
    body: "Hi\n",
  });
  t.deepEqual(
    TRACKER_SCHEMA.fields.map((spec) => spec.name),
    [
      "id",
      "key",
      "type",
      "title",
      "status",
      "priority",
      "labels",
      "assignee",
      "parent",
      "created_at",
      "updated_at",
      "components",
      "fix_versions",
      "due",
      "reporter",
      "resolution",
    ],
  );
});

test("a hostile or malformed issue is refused with the reason, never turned into a path", (t) => {
  const bad = (change: Record<string, unknown>, fields: Record<string, unknown> = {}) =>
    toTrackerIssue({ ...ISSUE, ...change, fields: { ...ISSUE.fields, ...fields } }, NO_FIELDS);
  t.regex(String(bad({ key: "../../etc/passwd" })), /bad issue key/);
  t.regex(String(bad({ key: "TEST-1/../../x" })), /bad issue key/);
  t.regex(String(bad({ id: "12a" })), /bad id/);
  t.regex(String(bad({}, { updated: "yesterday" })), /updated is not a timestamp/);
  t.regex(String(bad({}, { description: "plain text" })), /description is not an ADF document/);
  t.regex(String(bad({}, { labels: [1] })), /labels/);
  t.regex(String(bad({}, { parent: { key: "../x" } })), /parent has no key/);
  const bare = toTrackerIssue(
    {
      ...ISSUE,
      fields: { ...ISSUE.fields, description: null, priority: null, assignee: null, parent: undefined },
    },
    NO_FIELDS,
  );
  if (typeof bare === "string") return t.fail(bare);
  t.is(bare.record.content.body, "");
  t.is(bare.record.content.fields.priority, null);
  t.is(bare.record.content.fields.parent, null);
});

/** The instant the tracker takes `jql` (a wall-clock time) for, read in `zone`; both readings near a change. */
function instantsOf(jql: string, zone: string): number[] {
  const [date, time] = jql.split(" ");
  const [y, mo, d] = (date ?? "").split("/").map(Number);
  const [h, mi] = (time ?? "").split(":").map(Number);
  const wall = Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0);
  const out: number[] = [];
  for (let offset = -14 * 60; offset <= 14 * 60; offset += 15) {
    const instant = wall - offset * 60_000;
    if (sameWall(instant, zone, jql)) out.push(instant);
  }
  return out;
}

function sameWall(instant: number, zone: string, jql: string): boolean {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  }).formatToParts(new Date(instant));
  const get = (type: string) => parts.find((part) => part.type === type)?.value;
  return `${get("year")}/${get("month")}/${get("day")} ${get("hour")}:${get("minute")}` === jql;
}

test("JQL dates are wall-clock minutes in the account's zone: UTC−10 is ten hours behind", (t) => {
  const at = Date.parse("2026-11-23T17:15:42.500Z");
  t.is(jqlDateTime(at, "Pacific/Honolulu"), "2026/11/23 07:15");
  t.is(jqlDateTime(at, "UTC"), "2026/11/23 17:15");
  t.is(jqlDateTime(at, "Asia/Kolkata"), "2026/11/23 22:45");
  // Unknown or absent zone: early enough in every zone there is.
  t.is(jqlDateTime(at, "Mars/Olympus"), "2026/11/23 03:15");
  t.is(jqlDateTime(at, undefined), "2026/11/23 03:15");
  t.is(jqlString('a "b" \\ c'), '"a \\"b\\" \\\\ c"');
});

test("property: every reading of the JQL date, in its zone, is at or before the instant (DST changes too)", (t) => {
  const zones = [
    "Pacific/Honolulu",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "UTC",
    "Asia/Kathmandu",
  ];
  fc.assert(
    fc.property(
      fc.integer({ min: Date.parse("2024-01-01T00:00:00Z"), max: Date.parse("2028-12-31T00:00:00Z") }),
      fc.constantFrom(...zones),
      (ms, zone) => {
        const jql = jqlDateTime(ms, zone);
        const readings = instantsOf(jql, zone);
        return (
          readings.length > 0 && readings.every((instant) => instant <= ms && ms - instant < 4 * 3600_000)
        );
      },
    ),
    fuzzParams(400),
  );
  // Around the autumn change in Berlin, where 02:30 happens twice.
  for (const iso of ["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-03-29T01:30:00Z"]) {
    const ms = Date.parse(iso);
    t.true(
      instantsOf(jqlDateTime(ms, "Europe/Berlin"), "Europe/Berlin").every((instant) => instant <= ms),
      iso,
    );
  }
});
