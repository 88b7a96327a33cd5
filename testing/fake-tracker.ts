/**
 * A fake of Jira Cloud's platform REST API v3 (the "tracker") on an ephemeral loopback port, for the tracker
 * backend's end-to-end tests (DESIGN.md §6: "a fake server … that speaks the vendor's real request/response
 * shapes").
 *
 * Shapes follow the vendor's OpenAPI description (https://developer.atlassian.com/cloud/jira/platform/swagger-v3.v3.json,
 * version 1001.0.0-SNAPSHOT of late 2025) and the reference pages it generates:
 * - `POST|GET /rest/api/3/search/jql` ("Search for issues using JQL enhanced search"): `jql` (must be bounded: a
 *   query with no restriction answers 400 "Unbounded JQL queries are not allowed here. …"), `nextPageToken`,
 *   `maxResults` (default 50; "may return fewer items per page"), `fields` (default `id`: "By default, this
 *   resource returns IDs only", unlike GET issue whose default is `*all`; `*all`, `*navigable`, names, `-name`),
 *   `expand`, `properties`, `fieldsByKeys`, `failFast`, `reconcileIssues` → `{issues, nextPageToken?, isLast}`.
 *   "The `nextPageToken` field is not included in the response for the last page" (JRACLOUD-92184).
 * - `POST /rest/api/3/search/approximate-count` ("Count issues using JQL", countIssues): `JQLCountRequestBean`
 *   `{jql}` (bounded, as for search/jql; `additionalProperties: false`) → `JQLCountResultsBean` `{count}`. "Recent
 *   updates might not be immediately visible": `lagApproximateCount` makes the count lag behind on purpose.
 * - `GET|PUT|DELETE /rest/api/3/issue/{issueIdOrKey}`: PUT answers 204 (200 with `returnIssue=true`) and ignores
 *   `transition`; DELETE needs `deleteSubtasks=true` for an issue with subtasks ("An issue cannot be deleted if
 *   it has one or more subtasks").
 * - `POST /rest/api/3/issue` → 201 `CreatedIssue` `{id, key, self}`; a subtask needs `parent`.
 * - `GET|POST /rest/api/3/issue/{issueIdOrKey}/transitions`: `Transitions` `{expand, transitions: IssueTransition[]}`
 *   (`expand=transitions.fields` adds each transition screen's `fields`); POST answers 204.
 * - `GET /rest/api/3/myself` (`expand=groups,applicationRoles`), `GET /rest/api/3/project/{projectIdOrKey}` (the key
 *   is case sensitive; issue types included by default), `GET /rest/api/3/priority`.
 * - `GET /rest/api/3/issue/createmeta/{projectIdOrKey}/issuetypes` → `PageOfCreateMetaIssueTypes`; a project the
 *   account cannot see answers 400 (the description has no 404 here).
 * - Errors are an `ErrorCollection` `{errorMessages: string[], errors: {field: message}}`; the wording of each one
 *   is Jira's as recorded in public client code and issue threads where it could be found (see the constants).
 * - Authentication is Basic `base64(email:apiToken)`. Jira Cloud answers a missing or wrong credential with 401 and
 *   the plain-text body "Client must be authenticated to access this resource." (atlassian/gajira-login#59,
 *   jira-node/node-jira-client#255), not with JSON.
 * - Rate limiting ("Rate limiting" guide): 429 with `Retry-After` (seconds), `X-RateLimit-Reset` (ISO 8601,
 *   `yyyy-MM-ddTHH:mmZ`), `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `RateLimit-Reason`.
 * - Timestamps are `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (`2026-11-23T10:30:00.000+0000`). JQL dates are wall-clock times
 *   at minute precision in the account's time zone (the one /myself reports).
 * Where the vendor documents nothing, the choice is marked ASSUMPTION in a comment.
 *
 * JQL is a strict subset, parsed as Jira's parser would refuse anything else: clauses joined by AND over `project`
 * (`=`, `in`; by key, id or name), `key`/`issuekey` and `parent` (`=`, `in`), `labels` (`=`, `in`), `summary ~`,
 * `created`/`updated` (`>=`, `>`, `<=`, `<` with `yyyy/MM/dd HH:mm`, `yyyy-MM-dd HH:mm`, `yyyy/MM/dd`,
 * `yyyy-MM-dd`), then `ORDER BY key|id|created|updated [ASC|DESC], …`. What the fake does not know answers 400
 * "Error in the JQL Query: …" naming the fake's limit.
 *
 * Tests change data as "someone else" would (`addIssue`, `editIssue`, `deleteIssue`), steer the fake through
 * switches (`setTimeZone`, `rateLimitNext`, `repeatNextPageToken`, `lagApproximateCount`) and read `requests`.
 *
 * Every exchange is judged as it happens against the operations recorded in
 * fixtures/vendor/jira-platform-v3.json (testing/vendor-contract.ts); `close()`, which each test's teardown
 * calls, fails naming every departure. An answer or request wrong on purpose says so where it is made
 * (`deliberate`; DELIBERATE_HEADER).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ExecutionContext } from "ava";
import { readRequestBody } from "../core/request-body.js";
import { adfSchemaProblem } from "./adf-schema.js";
import { closeServer, listenOnLoopback } from "./loopback.js";
import { ContractWatch } from "./vendor-contract.js";

/** An ADF document or node as JSON (kept byte-for-byte as received: store the parsed JSON value). */
export type AdfJson = { readonly type: string; readonly [member: string]: unknown };

export interface FakeTrackerIssueType {
  readonly id: string; // "10001"
  readonly name: string; // "Task"
  readonly subtask: boolean;
  /** 0 standard, 1 epic, -1 subtask (as Jira's issue type `hierarchyLevel`). */
  readonly hierarchyLevel: number;
}

export interface FakeTrackerStatus {
  readonly id: string; // "10000"
  readonly name: string; // "To Do"
  /** statusCategory.key: "new" | "indeterminate" | "done" (names "To Do" | "In Progress" | "Done"). */
  readonly category: "new" | "indeterminate" | "done";
}

export interface FakeTrackerTransition {
  readonly id: string; // "11"
  readonly name: string; // "Start progress"
  /** Status names the transition is offered from ("*" = every status: a global transition). */
  readonly from: readonly string[];
  /** Target status name. */
  readonly to: string;
  /**
   * Fields the transition screen requires: a POST of this transition without `fields[<name>]` answers
   * 400 {"errorMessages":[],"errors":{"<name>":"<message>"}}.
   */
  readonly requires?: Readonly<Record<string, string>>;
}

export interface FakeTrackerProjectSpec {
  readonly key: string; // "TEST"
  readonly id?: string; // default "10000" + index
  readonly name?: string;
  /** Default: Task 10001 (0), Bug 10002 (0), Story 10003 (0), Epic 10004 (1), Subtask 10005 (subtask, -1). First non-subtask level-0 type is the project's default. */
  readonly issueTypes?: readonly FakeTrackerIssueType[];
  /** Default: To Do (new, the initial status), In Progress (indeterminate), Done (done). */
  readonly statuses?: readonly FakeTrackerStatus[];
  /**
   * Default: "Start progress" To Do → In Progress (id 21), "Stop progress" In Progress → To Do (id 11),
   * "Done" In Progress → Done (id 31), "Reopen" Done → To Do (id 41). So To Do → Done takes two steps.
   */
  readonly transitions?: readonly FakeTrackerTransition[];
  /** The token cannot see it: project GET 404, issue GETs 404, JQL naming it 400 (as Jira answers). */
  readonly hidden?: boolean;
}

export interface FakeTrackerUser {
  readonly accountId: string;
  readonly displayName: string;
  readonly emailAddress?: string;
}

export interface FakeTrackerOptions {
  /** Basic auth user; default "svc-bot@example.com". */
  readonly email?: string;
  /** Basic auth password (the API token); default "fake-tracker-token-0123456789". */
  readonly apiToken?: string;
  /** Default [{ key: "TEST" }]. */
  readonly projects?: readonly FakeTrackerProjectSpec[];
  /** The account's IANA time zone as /rest/api/3/myself reports it; default "UTC". JQL dates are read in it. */
  readonly timeZone?: string;
  /**
   * How timestamps (`created`, `updated`) are written: "utc" → "2026-11-23T10:30:00.000+0000";
   * "account" → in the account's zone with its offset, "2026-11-23T00:30:00.000-1000" (what Jira Cloud does).
   * Default "utc".
   */
  readonly timestampZone?: "utc" | "account";
  /** Clock in ms for created/updated; default Date.now. */
  readonly now?: () => number;
  /** The most issues one search page holds, whatever maxResults asks; default 100. */
  readonly pageSize?: number;
  /** Known accounts (assignee values); default the bot (accountId "557058:bot-0001") and alice ("557058:alice-0002"). */
  readonly users?: readonly FakeTrackerUser[];
  /**
   * `false`: exchanges are not judged against the vendor's description (the benchmarks, which time svc);
   * every test leaves it on.
   */
  readonly vendorChecks?: false;
}

/** The server's state of one issue (a copy). */
export interface FakeTrackerIssue {
  readonly id: string; // "10042": numeric string, increasing across the whole site
  readonly key: string; // "TEST-42": per-project number, increasing, never reused
  readonly project: string; // "TEST"
  readonly type: string; // issue type name
  readonly summary: string;
  /** As stored: the ADF document received or seeded, or null. */
  readonly description: AdfJson | null;
  readonly status: string; // status name
  readonly priority: string | null; // "Medium"; priorities Highest, High, Medium, Low, Lowest (ids "1".."5")
  readonly labels: readonly string[];
  readonly assignee: string | null; // accountId
  readonly parent: string | null; // parent issue key
  /** Keys of its subtasks. */
  readonly subtasks: readonly string[];
  /** Epoch ms. */
  readonly created: number;
  readonly updated: number;
}

export interface FakeTrackerRequest {
  readonly method: string;
  /** Path and query exactly as sent. */
  readonly path: string;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The raw request body (utf8). */
  readonly body: string;
  /** 0 while in flight. */
  readonly status: number;
  /** The body answered (utf8); empty while in flight or when there was none. */
  readonly answer: string;
  /** Date.now() when it arrived. */
  readonly receivedAt: number;
}

export interface TrackerIssueSeed {
  readonly summary: string;
  readonly type?: string; // default the project's default type
  readonly description?: AdfJson | null;
  readonly status?: string; // default the initial status; set directly (no transition)
  readonly priority?: string | null; // default "Medium"
  readonly labels?: readonly string[];
  readonly assignee?: string | null;
  readonly parent?: string | null;
}

export interface TrackerIssueEdit {
  readonly summary?: string;
  readonly description?: AdfJson | null;
  readonly status?: string; // set directly, no workflow check
  readonly priority?: string | null;
  readonly labels?: readonly string[];
  readonly assignee?: string | null;
}

export interface FakeTracker {
  /** Base URL for SVC_TRACKER_BASE_URL: "http://127.0.0.1:<port>" (no path, like https://acme.atlassian.net). */
  readonly url: string;
  /** Same as url; goes on SVC_ALLOWED_ORIGINS. */
  readonly origin: string;
  readonly email: string;
  readonly apiToken: string;
  /** Every request received, oldest first. */
  readonly requests: readonly FakeTrackerRequest[];
  /**
   * Creates `count` issues in `project` with varied tricky summaries, ADF descriptions (paragraphs, lists,
   * code, marks; every 10th also a table, a panel and a mention), labels, priorities, statuses; returns their keys in
   * order. Each gets a distinct `updated` in the past, increasing with the number.
   */
  seed(project: string, count: number): string[];
  /** One issue created server-side by "someone else" (alice); `at` (epoch ms) overrides created/updated. */
  addIssue(project: string, seed: TrackerIssueSeed, at?: number): FakeTrackerIssue;
  /** Someone else edits it: `updated` moves to `at`, default now (strictly later than before, at least +1 ms). */
  editIssue(key: string, edit: TrackerIssueEdit, at?: number): FakeTrackerIssue;
  /** An admin deletes the issue (its subtasks too); it disappears from every listing; GET answers 404. */
  deleteIssue(key: string): void;
  issue(key: string): FakeTrackerIssue | undefined;
  /** The project's issues in key order. */
  issues(project: string): FakeTrackerIssue[];
  setTimeZone(zone: string): void;
  /** The next `count` requests (any route) answer 429 with `Retry-After: <seconds>`. */
  rateLimitNext(count: number, retryAfterSeconds: number): void;
  /** Search pages from now on hand out the nextPageToken they were asked with (the first page: a fixed one). */
  repeatNextPageToken(on?: boolean): void;
  /**
   * While on, approximate-count counts the issues as they were when it was turned on: an issue deleted since is
   * still counted, one created since is not ("Recent updates might not be immediately visible").
   */
  lagApproximateCount(on?: boolean): void;
  /**
   * Every exchange judged against the vendor's description as it happened (testing/vendor-contract.ts);
   * `close()` fails naming each departure.
   */
  readonly contract: ContractWatch;
  /** Closes the server; rejects, naming them, when any exchange departed from the vendor's description. */
  close(): Promise<void>;
}

interface Priority {
  readonly id: string;
  readonly name: string;
  readonly statusColor: string;
  readonly description: string;
}

interface Project {
  readonly id: string;
  readonly key: string;
  readonly name: string;
  readonly hidden: boolean;
  readonly issueTypes: readonly FakeTrackerIssueType[];
  readonly statuses: readonly FakeTrackerStatus[];
  readonly transitions: readonly FakeTrackerTransition[];
  /** By number; numbers only grow, so insertion order is key order. */
  readonly issues: Map<number, Issue>;
  nextNumber: number;
}

interface Issue {
  readonly id: string;
  readonly number: number;
  readonly key: string;
  readonly project: Project;
  type: FakeTrackerIssueType;
  summary: string;
  description: AdfJson | null;
  status: FakeTrackerStatus;
  priority: Priority | null;
  labels: string[];
  assignee: string | null;
  parent: Issue | null;
  /** Issues whose `parent` is this one (subtasks, or the children of an epic). */
  readonly children: Set<Issue>;
  readonly created: number;
  updated: number;
}

/** What a write sets; a member that is present (even `null`) is written. */
interface Change {
  summary?: string;
  description?: AdfJson | null;
  labels?: string[];
  priority?: Priority | null;
  assignee?: string | null;
  parent?: Issue | null;
  type?: FakeTrackerIssueType;
}

interface Answer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** Sent as text/plain instead of `body`. */
  readonly text?: string;
  /** Why this answer departs from the vendor's description on purpose (a fault a test injects). */
  readonly deliberate?: string;
}

/** One request as a handler sees it; `params` are the route's captures, URI-decoded. */
interface Call {
  readonly url: URL;
  readonly params: readonly string[];
  readonly text: string;
  readonly tracker: Tracker;
  readonly shapes: Shapes;
  readonly search: Search;
}

interface Route {
  readonly method: string;
  readonly path: RegExp;
  readonly handle: (call: Call) => Answer;
}

const API = "/rest/api/3";
const DEFAULT_EMAIL = "svc-bot@example.com";
const DEFAULT_TOKEN = "fake-tracker-token-0123456789";
const BOT_ACCOUNT = "557058:bot-0001";
const ALICE_ACCOUNT = "557058:alice-0002";
const DEFAULT_MAX_RESULTS = 50;
/** "It returns max 5000 issues" (the `maxResults` parameter of search/jql). */
const MAX_RESULTS_CEILING = 5000;
const DEFAULT_PAGE_SIZE = 100;
/** "orderBy clause can contain a maximum of 7 fields" (the `jql` parameter of search/jql). */
const MAX_ORDER_FIELDS = 7;
/** Java's String.length(): UTF-16 code units, as JavaScript counts them. */
const MAX_SUMMARY = 255;
const MINUTE = 60_000;
/** ASSUMPTION: the opaque first-page token `repeatNextPageToken` hands out. */
const REPEATED_TOKEN = "RkFLRS1SRVBFQVRFRC1UT0tFTg";

const UNAUTHENTICATED = "Client must be authenticated to access this resource.";
const ISSUE_NOT_FOUND = "Issue does not exist or you do not have permission to see it.";
const UNBOUNDED =
  "Unbounded JQL queries are not allowed here. Please add a search restriction to your query.";
const SUMMARY_REQUIRED = "You must specify a summary of the issue.";
const SUMMARY_TOO_LONG = "Summary must be less than 255 characters.";
const SUMMARY_NEWLINE = "The summary is invalid because it contains newline characters.";
const NOT_ADF = "Operation value must be an Atlassian Document (see the Atlassian Document Format)";
const SUBTASK_WITHOUT_PARENT = "Issue type is a sub-task but parent issue key or id not specified.";
const WRONG_HIERARCHY = "Given parent work item does not belong to appropriate hierarchy.";
const TRANSITION_NOT_INTEGER = "'transition' identifier must be an integer";

const cannotBeSet = (field: string) =>
  `Field '${field}' cannot be set. It is not on the appropriate screen, or unknown.`;
/** The wording of Jira's DeleteIssue resource ("rest.issue.delete.subtasks"), as recorded by client fakes. */
const hasSubtasks = (key: string) =>
  `The issue '${key}' has subtasks. You must specify the 'deleteSubtasks' parameter to delete this issue with subtasks.`;

const PRIORITIES: readonly Priority[] = [
  { id: "1", name: "Highest", statusColor: "#d04437", description: "This problem will block progress." },
  {
    id: "2",
    name: "High",
    statusColor: "#f15C75",
    description: "Serious problem that could block progress.",
  },
  { id: "3", name: "Medium", statusColor: "#f79232", description: "Has the potential to affect progress." },
  { id: "4", name: "Low", statusColor: "#707070", description: "Minor problem or easily worked around." },
  {
    id: "5",
    name: "Lowest",
    statusColor: "#999999",
    description: "Trivial problem with little or no impact.",
  },
];
const DEFAULT_PRIORITY = "Medium";

const DEFAULT_ISSUE_TYPES: readonly FakeTrackerIssueType[] = [
  { id: "10001", name: "Task", subtask: false, hierarchyLevel: 0 },
  { id: "10002", name: "Bug", subtask: false, hierarchyLevel: 0 },
  { id: "10003", name: "Story", subtask: false, hierarchyLevel: 0 },
  { id: "10004", name: "Epic", subtask: false, hierarchyLevel: 1 },
  { id: "10005", name: "Subtask", subtask: true, hierarchyLevel: -1 },
];

/** Jira Cloud's ids for its default statuses. */
const DEFAULT_STATUSES: readonly FakeTrackerStatus[] = [
  { id: "10000", name: "To Do", category: "new" },
  { id: "3", name: "In Progress", category: "indeterminate" },
  { id: "10001", name: "Done", category: "done" },
];

const DEFAULT_TRANSITIONS: readonly FakeTrackerTransition[] = [
  { id: "21", name: "Start progress", from: ["To Do"], to: "In Progress" },
  { id: "11", name: "Stop progress", from: ["In Progress"], to: "To Do" },
  { id: "31", name: "Done", from: ["In Progress"], to: "Done" },
  { id: "41", name: "Reopen", from: ["Done"], to: "To Do" },
];

/** Jira's status categories (`/rest/api/3/statuscategory`). */
const STATUS_CATEGORIES = {
  new: { id: 2, key: "new", colorName: "blue-gray", name: "To Do" },
  indeterminate: { id: 4, key: "indeterminate", colorName: "yellow", name: "In Progress" },
  done: { id: 3, key: "done", colorName: "green", name: "Done" },
} as const;

/** Descriptions and avatar ids of Jira Cloud's default issue types; others get a generic one. */
const ISSUE_TYPE_LOOKS: ReadonlyMap<string, { readonly description: string; readonly avatarId: number }> =
  new Map([
    ["Task", { description: "A small, distinct piece of work.", avatarId: 10318 }],
    ["Bug", { description: "A problem or error.", avatarId: 10303 }],
    ["Story", { description: "Functionality or a feature expressed as a user goal.", avatarId: 10315 }],
    ["Epic", { description: "A collection of related bugs, stories, and tasks.", avatarId: 10307 }],
    ["Subtask", { description: "A small piece of work that's part of a larger task.", avatarId: 10316 }],
  ]);

// ---------------------------------------------------------------------------------------------------------------
// Errors

class HttpFailure extends Error {
  constructor(readonly answer: Answer) {
    super(`HTTP ${answer.status}`);
  }
}

function errorCollection(
  status: number,
  errorMessages: readonly string[],
  errors: Readonly<Record<string, string>> = {},
): Answer {
  return { status, body: { errorMessages, errors } };
}

function fail(status: number, message: string): never {
  throw new HttpFailure(errorCollection(status, [message]));
}

function failFields(errors: Readonly<Record<string, string>>, errorMessages: readonly string[] = []): never {
  throw new HttpFailure(errorCollection(400, errorMessages, errors));
}

/** A JQL refusal; the message is the whole `errorMessages` entry. */
class JqlError extends Error {}

/** A field value a write refuses; the message goes under `errors[<field>]`. */
class FieldError extends Error {}

// ---------------------------------------------------------------------------------------------------------------
// Time zones: JQL dates are wall-clock times in the account's zone; timestamps may be written in it.

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zoneFormat(zone: string): Intl.DateTimeFormat {
  let format = zoneFormats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    zoneFormats.set(zone, format);
  }
  return format;
}

/** Throws unless `zone` is an IANA zone this Node knows. */
function checkZone(zone: string): string {
  try {
    zoneFormat(zone);
  } catch (error) {
    throw new Error(`fake tracker: unknown time zone ${JSON.stringify(zone)}`, { cause: error });
  }
  return zone;
}

/** The zone's offset from UTC at the instant `ms`, in minutes (Pacific/Honolulu: -600). */
function zoneOffsetMinutes(ms: number, zone: string): number {
  if (zone === "UTC") return 0;
  const parts = new Map<string, number>();
  for (const part of zoneFormat(zone).formatToParts(ms)) parts.set(part.type, Number(part.value));
  const get = (type: string) => parts.get(type) ?? 0;
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / MINUTE);
}

/**
 * The instant a wall-clock time in `zone` names; `wall` is that wall-clock time read as if it were UTC.
 * ASSUMPTION: inside a DST gap or overlap the result is whatever the two passes give (Jira's Java may pick the
 * other side); no test should depend on it.
 */
function wallClockToInstant(wall: number, zone: string): number {
  const firstGuess = wall - zoneOffsetMinutes(wall, zone) * MINUTE;
  return wall - zoneOffsetMinutes(firstGuess, zone) * MINUTE;
}

const pad2 = (value: number) => String(value).padStart(2, "0");

/** Jira's `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, in UTC or (with `zone`) in that zone with its offset. */
function formatTimestamp(ms: number, zone: string | undefined): string {
  const offset = zone === undefined ? 0 : zoneOffsetMinutes(ms, zone);
  const local = new Date(ms + offset * MINUTE).toISOString().slice(0, 23);
  const magnitude = Math.abs(offset);
  return `${local}${offset < 0 ? "-" : "+"}${pad2(Math.floor(magnitude / 60))}${pad2(magnitude % 60)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// JQL: tokens, a strict parser for the subset, and date values.

type ListField = "project" | "key" | "parent" | "labels";
type DateField = "created" | "updated";
type JqlField = ListField | "summary" | DateField;
type DateOperator = ">=" | ">" | "<=" | "<";
type SortField = "key" | "id" | "created" | "updated";

type JqlClause =
  | { readonly kind: "list"; readonly field: ListField; readonly values: readonly string[] }
  | { readonly kind: "contains"; readonly text: string }
  | {
      readonly kind: "date";
      readonly field: DateField;
      readonly operator: DateOperator;
      readonly wall: number;
    };

interface JqlSort {
  readonly field: SortField;
  readonly descending: boolean;
}

interface JqlQuery {
  readonly clauses: readonly JqlClause[];
  /** Empty: Jira's default order. */
  readonly orderBy: readonly JqlSort[];
}

interface Token {
  readonly kind: "word" | "string" | "operator" | "punctuation" | "end";
  readonly text: string;
  /** 1-based character position, as Jira's "(line 1, character N)". */
  readonly at: number;
}

const JQL_FIELDS: ReadonlyMap<string, JqlField> = new Map([
  ["project", "project"],
  ["key", "key"],
  ["issuekey", "key"],
  ["parent", "parent"],
  ["labels", "labels"],
  ["summary", "summary"],
  ["created", "created"],
  ["createddate", "created"],
  ["updated", "updated"],
  ["updateddate", "updated"],
] as const);

const FIELD_OPERATORS: Readonly<Record<JqlField, readonly string[]>> = {
  project: ["=", "in"],
  key: ["=", "in"],
  parent: ["=", "in"],
  labels: ["=", "in"],
  summary: ["~"],
  created: [">=", ">", "<=", "<"],
  updated: [">=", ">", "<=", "<"],
};

const SORT_FIELDS: ReadonlyMap<string, SortField> = new Map([
  ["key", "key"],
  ["issuekey", "key"],
  ["id", "id"],
  ["created", "created"],
  ["createddate", "created"],
  ["updated", "updated"],
  ["updateddate", "updated"],
] as const);

const JQL_KEYWORDS = new Set(["and", "or", "not", "order", "by", "asc", "desc", "in", "is", "empty", "null"]);
const JQL_OPERATORS = [">=", "<=", "!=", "!~", ">", "<", "=", "~"] as const;
const JQL_WORD_CHARACTER = /[\p{L}\p{N}_-]/u;
const JQL_ESCAPES: ReadonlyMap<string, string> = new Map([
  ["'", "'"],
  ['"', '"'],
  ["\\", "\\"],
  ["n", "\n"],
  ["t", "\t"],
  ["r", "\r"],
  [" ", " "],
]);
const JQL_DATE = /^(\d{4})([/-])(\d{2})\2(\d{2})(?: (\d{2}):(\d{2}))?$/;
const JQL_PERIOD = /^[-+]?\d+\s*[wdhm]/i;

function jqlSyntax(message: string, at: number): JqlError {
  return new JqlError(`Error in the JQL Query: ${message} (line 1, character ${at})`);
}

const describeToken = (token: Token) => (token.kind === "end" ? "the end of the query" : `'${token.text}'`);

/** A quoted JQL string starting at `start`; returns its value and the index after the closing quote. */
function readJqlString(jql: string, start: number): [string, number] {
  const quote = jql[start];
  let value = "";
  let index = start + 1;
  while (index < jql.length && jql[index] !== quote) {
    const char = jql[index] as string;
    if (char !== "\\") {
      value += char;
      index++;
      continue;
    }
    const escaped = jql[index + 1] ?? "";
    const hex = /^u([0-9a-fA-F]{4})/.exec(jql.slice(index + 1));
    const simple = JQL_ESCAPES.get(escaped);
    if (hex) value += String.fromCharCode(Number.parseInt(hex[1] as string, 16));
    else if (simple !== undefined) value += simple;
    else throw jqlSyntax(`'\\${escaped}' is an illegal JQL escape sequence.`, index + 1);
    index += hex ? 6 : 2;
  }
  if (index >= jql.length) throw jqlSyntax(`The quoted string '${value}' has not been completed.`, start + 1);
  return [value, index + 1];
}

function tokenizeJql(jql: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < jql.length) {
    const char = jql[index] as string;
    const at = index + 1;
    const operator = JQL_OPERATORS.find((candidate) => jql.startsWith(candidate, index));
    if (/\s/.test(char)) {
      index++;
    } else if ("(),".includes(char)) {
      tokens.push({ kind: "punctuation", text: char, at });
      index++;
    } else if (operator !== undefined) {
      tokens.push({ kind: "operator", text: operator, at });
      index += operator.length;
    } else if (char === '"' || char === "'") {
      const [text, end] = readJqlString(jql, index);
      tokens.push({ kind: "string", text, at });
      index = end;
    } else if (JQL_WORD_CHARACTER.test(char)) {
      let end = index;
      while (end < jql.length && JQL_WORD_CHARACTER.test(jql[end] as string)) end++;
      tokens.push({ kind: "word", text: jql.slice(index, end), at });
      index = end;
    } else {
      throw jqlSyntax(
        `The character '${char}' is a reserved JQL character. You must enclose it in a string or use the escape '\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}' instead.`,
        at,
      );
    }
  }
  tokens.push({ kind: "end", text: "", at: jql.length + 1 });
  return tokens;
}

/** The wall-clock time a JQL date value names, as if it were UTC (minute precision). */
function parseJqlDate(text: string, field: string): number {
  if (JQL_PERIOD.test(text)) {
    throw new JqlError(
      `Error in the JQL Query: the fake tracker does not support relative dates such as '${text}'; write 'yyyy/MM/dd HH:mm'.`,
    );
  }
  const match = JQL_DATE.exec(text);
  if (match) {
    const [year, month, day, hour, minute] = [1, 3, 4, 5, 6].map((group) => Number(match[group] ?? "0")) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const wall = Date.UTC(year, month - 1, day, hour, minute);
    const check = new Date(wall);
    if (check.getUTCMonth() === month - 1 && check.getUTCDate() === day && hour < 24 && minute < 60)
      return wall;
  }
  throw new JqlError(
    `Date value '${text}' for field '${field}' is invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd', or a period format e.g. '-5d', '4w 2d'.`,
  );
}

const isWord = (token: Token, word: string) => token.kind === "word" && token.text.toLowerCase() === word;

/** Parses the subset strictly: whatever it does not know is an error, never silently dropped. */
class JqlParser {
  private index = 0;

  private constructor(private readonly tokens: readonly Token[]) {}

  static parse(jql: string): JqlQuery {
    return new JqlParser(tokenizeJql(jql)).query();
  }

  private peek(): Token {
    return this.tokens[this.index] ?? { kind: "end", text: "", at: 0 };
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.index++;
    return token;
  }

  private take(punctuation: string): boolean {
    const token = this.peek();
    if (token.kind !== "punctuation" || token.text !== punctuation) return false;
    this.index++;
    return true;
  }

  private query(): JqlQuery {
    const clauses: JqlClause[] = [];
    if (!isWord(this.peek(), "order") && this.peek().kind !== "end") {
      clauses.push(this.clause());
      while (isWord(this.peek(), "and")) {
        this.index++;
        clauses.push(this.clause());
      }
    }
    const orderBy = isWord(this.peek(), "order") ? this.orderBy() : [];
    const rest = this.peek();
    if (isWord(rest, "or"))
      throw jqlSyntax("the fake tracker does not support 'OR'; join clauses with AND.", rest.at);
    if (rest.kind !== "end")
      throw jqlSyntax(`Expecting either 'OR' or 'AND' but got ${describeToken(rest)}.`, rest.at);
    if (clauses.length === 0) throw new JqlError(UNBOUNDED);
    return { clauses, orderBy };
  }

  private clause(): JqlClause {
    const name = this.next();
    if (isWord(name, "not")) throw jqlSyntax("the fake tracker does not support 'NOT'.", name.at);
    if (name.kind !== "word" && name.kind !== "string") {
      throw jqlSyntax(`Expecting a field name but got ${describeToken(name)}.`, name.at);
    }
    const field = JQL_FIELDS.get(name.text.toLowerCase());
    if (field === undefined) {
      throw jqlSyntax(
        `the fake tracker does not support the field '${name.text}' (it knows project, key, parent, labels, summary, created and updated).`,
        name.at,
      );
    }
    const operator = this.operator();
    if (!FIELD_OPERATORS[field].includes(operator)) {
      throw new JqlError(`The operator '${operator}' is not supported by the '${name.text}' field.`);
    }
    if (operator === "in") return { kind: "list", field: field as ListField, values: this.list() };
    const value = this.value();
    if (field === "summary") return { kind: "contains", text: value };
    if (field === "created" || field === "updated") {
      return {
        kind: "date",
        field,
        operator: operator as DateOperator,
        wall: parseJqlDate(value, name.text),
      };
    }
    return { kind: "list", field, values: [value] };
  }

  private operator(): string {
    const token = this.next();
    if (token.kind === "operator") return token.text;
    if (isWord(token, "in")) return "in";
    throw jqlSyntax(
      `Expecting operator but got ${describeToken(token)}. The valid operators are '=', '!=', '<', '>', '<=', '>=', '~', '!~', 'IN', 'NOT IN', 'IS' and 'IS NOT'.`,
      token.at,
    );
  }

  private value(): string {
    const token = this.next();
    if (token.kind === "string") return token.text;
    if (token.kind === "word" && !JQL_KEYWORDS.has(token.text.toLowerCase())) return token.text;
    throw jqlSyntax(`Expecting either a value, list or function but got ${describeToken(token)}.`, token.at);
  }

  private list(): string[] {
    const open = this.peek();
    if (!this.take("(")) throw jqlSyntax(`Expecting '(' but got ${describeToken(open)}.`, open.at);
    const values = [this.value()];
    while (this.take(",")) values.push(this.value());
    const close = this.peek();
    if (!this.take(")")) throw jqlSyntax(`Expecting ')' but got ${describeToken(close)}.`, close.at);
    return values;
  }

  private orderBy(): JqlSort[] {
    this.index++;
    const by = this.next();
    if (!isWord(by, "by")) throw jqlSyntax(`Expecting 'by' but got ${describeToken(by)}.`, by.at);
    const sorts: JqlSort[] = [];
    do {
      const name = this.next();
      if (name.kind !== "word" && name.kind !== "string") {
        throw jqlSyntax(`Expecting a field name but got ${describeToken(name)}.`, name.at);
      }
      const field = SORT_FIELDS.get(name.text.toLowerCase());
      if (field === undefined) throw new JqlError(`Not able to sort using field '${name.text}'.`);
      const direction = this.peek();
      const descending = isWord(direction, "desc");
      if (descending || isWord(direction, "asc")) this.index++;
      sorts.push({ field, descending });
    } while (this.take(","));
    // ASSUMPTION: the wording; the limit is documented, the message is not.
    if (sorts.length > MAX_ORDER_FIELDS) {
      throw new JqlError(
        `Error in the JQL Query: the ORDER BY clause can contain at most ${MAX_ORDER_FIELDS} fields.`,
      );
    }
    return sorts;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Seed data: deterministic, and tricky for YAML frontmatter, Markdown and quoting.

const SEED_SUMMARIES: readonly ((n: number) => string)[] = [
  (n) => `Issue ${n}: a plain summary`,
  (n) => `Fix "quoted" value: colon ${n}`,
  (n) => `Ünïcödé 日本語 ${n} — émoji 🚀`,
  (n) => `--- ${n} looks like a fence`,
  (n) => `# ${n} starts like a heading`,
  (n) => `key: value # ${n}`,
  (n) => `'single' & <angle> [brackets] {braces} ${n}`,
  (n) => `Backslash \\ pipe | percent % ${n}`,
];

const SEED_LABELS: readonly (readonly string[])[] = [
  [],
  ["backend"],
  ["frontend", "ux"],
  ["needs-triage"],
  ["bug", "p1", "customer:acme"],
];

const SEED_PRIORITIES: readonly (string | null)[] = ["Medium", "High", "Low", null, "Highest", "Lowest"];

const adfText = (text: string, marks?: readonly AdfJson[]): AdfJson =>
  marks === undefined ? { type: "text", text } : { type: "text", text, marks };
const adfParagraph = (...content: AdfJson[]): AdfJson => ({ type: "paragraph", content });
const adfListItem = (text: string): AdfJson => ({ type: "listItem", content: [adfParagraph(adfText(text))] });
const adfCell = (type: "tableHeader" | "tableCell", text: string): AdfJson => ({
  type,
  attrs: {},
  content: [adfParagraph(adfText(text))],
});

/** The every-10th extras: a table, a panel and a mention. */
function seedExtras(n: number): AdfJson[] {
  const row = (type: "tableHeader" | "tableCell", cells: string[]): AdfJson => ({
    type: "tableRow",
    content: cells.map((text) => adfCell(type, text)),
  });
  return [
    {
      type: "table",
      attrs: { isNumberColumnEnabled: false, layout: "default" },
      content: [row("tableHeader", ["Field", "Value"]), row("tableCell", ["number", String(n)])],
    },
    { type: "panel", attrs: { panelType: "info" }, content: [adfParagraph(adfText(`Panel of issue ${n}`))] },
    adfParagraph(
      adfText("Ping "),
      { type: "mention", attrs: { id: ALICE_ACCOUNT, text: "@Alice Example", accessLevel: "" } },
      adfText(" about it."),
    ),
  ];
}

/** Paragraphs, lists, code and marks; every 10th (from 7) has none; every 10th (from 10) adds `seedExtras`. */
function seedDescription(n: number): AdfJson | null {
  if (n % 10 === 7) return null;
  const content: AdfJson[] = [
    { type: "heading", attrs: { level: 2 }, content: [adfText(`Context ${n}`)] },
    adfParagraph(
      adfText(`Description of issue ${n}: `),
      adfText("bold", [{ type: "strong" }]),
      adfText(", "),
      adfText("emphasis", [{ type: "em" }]),
      adfText(", "),
      adfText("code", [{ type: "code" }]),
      adfText(" and "),
      adfText("a link", [{ type: "link", attrs: { href: `https://example.com/issues/${n}` } }]),
      adfText("."),
    ),
    { type: "bulletList", content: [adfListItem("first point"), adfListItem("--- not a rule")] },
    {
      type: "orderedList",
      attrs: { order: 1 },
      content: [adfListItem("step one"), adfListItem("# not a heading")],
    },
    { type: "codeBlock", attrs: { language: "yaml" }, content: [adfText(`id: ${n}\nquote: "a: b"\n---`)] },
  ];
  if (n % 10 === 0) content.push(...seedExtras(n));
  return { type: "doc", version: 1, content };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading JSON values sent by the client.

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === "string");

/** The request body as a JSON object; anything else answers 400 as Jira's JSON reader does. */
function parseJsonObject(text: string): JsonObject {
  // ASSUMPTION: the wording (Jira passes on its JSON parser's message, which names the position).
  if (text.trim() === "") fail(400, "No content to map due to end-of-input");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return fail(400, `Unexpected character in the JSON request body: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) return fail(400, "The JSON request body must be an object.");
  return parsed;
}

/** `{key}` or `{id}` (also `{name}` where `byName` is given) → the string naming it, or undefined. */
function reference(value: unknown, members: readonly string[]): string | undefined {
  if (!isObject(value)) return undefined;
  for (const member of members) {
    const named = value[member];
    if (typeof named === "string" || typeof named === "number") return String(named);
  }
  return undefined;
}

function isAdfDocument(value: unknown): value is AdfJson {
  return isObject(value) && value.type === "doc" && value.version === 1 && Array.isArray(value.content);
}

// ---------------------------------------------------------------------------------------------------------------
// The site's state.

interface ResolvedOptions {
  readonly email: string;
  readonly projects: readonly FakeTrackerProjectSpec[];
  readonly users: readonly FakeTrackerUser[];
  readonly zone: string;
  readonly timestampZone: "utc" | "account";
  readonly now: () => number;
  readonly pageSize: number;
}

function buildProject(spec: FakeTrackerProjectSpec, index: number): Project {
  const statuses = spec.statuses ?? DEFAULT_STATUSES;
  if (statuses.length === 0) throw new Error(`fake tracker: project ${spec.key} needs a status`);
  const issueTypes = spec.issueTypes ?? DEFAULT_ISSUE_TYPES;
  const transitions = spec.transitions ?? DEFAULT_TRANSITIONS;
  const names = new Set(statuses.map((status) => status.name));
  for (const transition of transitions) {
    const unknown = [transition.to, ...transition.from].find((name) => name !== "*" && !names.has(name));
    if (unknown !== undefined)
      throw new Error(`fake tracker: transition ${transition.id} names no status ${unknown}`);
  }
  if (!issueTypes.some((type) => !type.subtask && type.hierarchyLevel === 0)) {
    throw new Error(`fake tracker: project ${spec.key} needs a standard (level 0) issue type`);
  }
  return {
    id: spec.id ?? String(10000 + index),
    key: spec.key,
    name: spec.name ?? `${spec.key} project`,
    hidden: spec.hidden ?? false,
    issueTypes,
    statuses,
    transitions,
    issues: new Map(),
    nextNumber: 1,
  };
}

/** The projects, issues and accounts; everything the handlers and the test helpers change goes through here. */
class Tracker {
  readonly projects: readonly Project[];
  readonly users: ReadonlyMap<string, FakeTrackerUser>;
  readonly me: FakeTrackerUser;
  zone: string;
  /** Bumped by every change, so cached search results know when they are stale. */
  version = 0;
  private readonly byKey = new Map<string, Issue>();
  private readonly byId = new Map<string, Issue>();
  private nextId = 10001;

  /** The token's account (/myself) is the bot, whatever `users` says; it is always assignable too. */
  constructor(readonly options: ResolvedOptions) {
    this.projects = options.projects.map(buildProject);
    this.zone = options.zone;
    const users = new Map(options.users.map((user) => [user.accountId, user]));
    this.me = users.get(BOT_ACCOUNT) ?? {
      accountId: BOT_ACCOUNT,
      displayName: "svc bot",
      emailAddress: options.email,
    };
    users.set(this.me.accountId, this.me);
    this.users = users;
  }

  now(): number {
    return this.options.now();
  }

  /** For the test helpers: a project by key, hidden or not; an unknown key is the test's bug. */
  projectOrThrow(key: string): Project {
    const project = this.projects.find((candidate) => candidate.key === key);
    if (!project) throw new Error(`fake tracker: no project ${key}`);
    return project;
  }

  /** `{projectIdOrKey}` of the project resource: the key (case sensitive) or the id; hidden ones are not found. */
  visibleProject(idOrKey: string): Project | undefined {
    return this.projects.find(
      (project) => !project.hidden && (project.key === idOrKey || project.id === idOrKey),
    );
  }

  /** A key (any case: Jira retries case-insensitively) or an id; undefined when hidden or unknown. */
  visibleIssue(idOrKey: string): Issue | undefined {
    const issue = this.byId.get(idOrKey) ?? this.byKey.get(idOrKey.toUpperCase());
    return issue && !issue.project.hidden ? issue : undefined;
  }

  issueOrThrow(key: string): Issue {
    const issue = this.byKey.get(key.toUpperCase());
    if (!issue) throw new Error(`fake tracker: no issue ${key}`);
    return issue;
  }

  /** A new issue in its project's initial status; `created` and `updated` are `at`. */
  insert(project: Project, type: FakeTrackerIssueType, summary: string, at: number): Issue {
    const number = project.nextNumber++;
    const issue: Issue = {
      id: String(this.nextId++),
      number,
      key: `${project.key}-${number}`,
      project,
      type,
      summary,
      description: null,
      status: project.statuses[0] as FakeTrackerStatus,
      priority: PRIORITIES.find((priority) => priority.name === DEFAULT_PRIORITY) ?? null,
      labels: [],
      assignee: null,
      parent: null,
      children: new Set(),
      created: at,
      updated: at,
    };
    project.issues.set(number, issue);
    this.byKey.set(issue.key, issue);
    this.byId.set(issue.id, issue);
    this.version++;
    return issue;
  }

  /** Writes a validated change; `updated` is the caller's business (`touch`). */
  apply(issue: Issue, change: Change): void {
    if (change.summary !== undefined) issue.summary = change.summary;
    if (change.description !== undefined) issue.description = change.description;
    if (change.labels !== undefined) issue.labels = change.labels;
    if (change.priority !== undefined) issue.priority = change.priority;
    if (change.assignee !== undefined) issue.assignee = change.assignee;
    if (change.type !== undefined) issue.type = change.type;
    if (change.parent !== undefined) this.setParent(issue, change.parent);
    this.version++;
  }

  setParent(issue: Issue, parent: Issue | null): void {
    issue.parent?.children.delete(issue);
    issue.parent = parent;
    parent?.children.add(issue);
  }

  /** `updated` moves to `at`, or to now but strictly later than before. */
  touch(issue: Issue, at?: number): void {
    issue.updated = at ?? Math.max(this.now(), issue.updated + 1);
    this.version++;
  }

  /**
   * Deletes the issue and its subtasks. ASSUMPTION: the children of a deleted epic stay, without a parent,
   * and their `updated` does not move.
   */
  remove(issue: Issue): void {
    for (const child of [...issue.children]) {
      if (child.type.subtask) this.remove(child);
      else this.setParent(child, null);
    }
    this.setParent(issue, null);
    issue.project.issues.delete(issue.number);
    this.byKey.delete(issue.key);
    this.byId.delete(issue.id);
    this.version++;
  }

  subtasksOf(issue: Issue): Issue[] {
    return [...issue.children].filter((child) => child.type.subtask).sort((a, b) => a.number - b.number);
  }

  statusOrThrow(project: Project, name: string): FakeTrackerStatus {
    const status = project.statuses.find((candidate) => candidate.name === name);
    if (!status)
      throw new Error(`fake tracker: project ${project.key} has no status ${JSON.stringify(name)}`);
    return status;
  }

  /** The helpers' change (names, not references) as a `Change`; unknown names are the test's bug. */
  helperChange(project: Project, edit: TrackerIssueEdit & { readonly parent?: string | null }): Change {
    const change: Change = {};
    if (edit.summary !== undefined) change.summary = edit.summary;
    if (edit.description !== undefined) change.description = edit.description;
    if (edit.labels !== undefined) change.labels = [...edit.labels];
    if (edit.priority !== undefined) {
      const priority = edit.priority === null ? null : PRIORITIES.find((p) => p.name === edit.priority);
      if (priority === undefined) throw new Error(`fake tracker: no priority ${edit.priority}`);
      change.priority = priority;
    }
    if (edit.assignee !== undefined) {
      if (edit.assignee !== null && !this.users.has(edit.assignee)) {
        throw new Error(`fake tracker: no account ${edit.assignee}`);
      }
      change.assignee = edit.assignee;
    }
    if (edit.parent !== undefined)
      change.parent = edit.parent === null ? null : this.issueOrThrow(edit.parent);
    if (change.parent && change.parent.project !== project)
      throw new Error("fake tracker: parent in another project");
    return change;
  }

  seed(project: Project, count: number): string[] {
    const standard = project.issueTypes.filter((type) => !type.subtask && type.hierarchyLevel === 0);
    const accounts = [null, ...this.users.keys()];
    const start = this.now() - (count + 1) * MINUTE;
    const keys: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = start + i * MINUTE;
      const n = project.nextNumber;
      const issue = this.insert(project, standard[n % standard.length] as FakeTrackerIssueType, "", created);
      issue.summary = (SEED_SUMMARIES[n % SEED_SUMMARIES.length] as (n: number) => string)(n);
      issue.description = seedDescription(n);
      issue.status = project.statuses[n % project.statuses.length] as FakeTrackerStatus;
      const priority = SEED_PRIORITIES[n % SEED_PRIORITIES.length];
      issue.priority = PRIORITIES.find((candidate) => candidate.name === priority) ?? null;
      issue.labels = [...(SEED_LABELS[n % SEED_LABELS.length] ?? [])];
      issue.assignee = accounts[n % accounts.length] ?? null;
      // Distinct, increasing with the number, with milliseconds, always before the next one's `created`.
      issue.updated = created + 30_000 + (n % 17) * 1000 + 123;
      keys.push(issue.key);
    }
    return keys;
  }
}

function copyIssue(tracker: Tracker, issue: Issue): FakeTrackerIssue {
  return {
    id: issue.id,
    key: issue.key,
    project: issue.project.key,
    type: issue.type.name,
    summary: issue.summary,
    description: issue.description === null ? null : structuredClone(issue.description),
    status: issue.status.name,
    priority: issue.priority?.name ?? null,
    labels: [...issue.labels],
    assignee: issue.assignee,
    parent: issue.parent?.key ?? null,
    subtasks: tracker.subtasksOf(issue).map((subtask) => subtask.key),
    created: issue.created,
    updated: issue.updated,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering: the vendor's JSON shapes.

const ISSUE_FIELDS = [
  "summary",
  "description",
  "status",
  "priority",
  "labels",
  "assignee",
  "parent",
  "issuetype",
  "created",
  "updated",
  "subtasks",
  "project",
] as const;
type IssueField = (typeof ISSUE_FIELDS)[number];
const ISSUE_FIELD_NAMES: ReadonlySet<string> = new Set(ISSUE_FIELDS);

/** Which fields an issue is rendered with; `idsOnly` renders `{id}` alone (search/jql's default). */
type Selection =
  | { readonly idsOnly: true }
  | { readonly idsOnly: false; readonly fields: ReadonlySet<IssueField> };

/**
 * The `fields` parameter: entries may be repeated and comma-separated. `*all` and `*navigable` (all the fake
 * knows are navigable) select everything, `-name` excludes, names include. Only exclusions start from all.
 * ASSUMPTION: unknown names are ignored (they select nothing), and `id` alone (or nothing) is ids-only.
 */
function selectFields(entries: readonly string[], fallback: "id" | "*all"): Selection {
  const items = entries.flatMap((entry) => entry.split(",")).map((item) => item.trim());
  const named = items.filter((item) => item !== "");
  const list = named.length === 0 ? [fallback] : named;
  if (list.every((item) => item === "id")) return { idsOnly: true };
  const included = new Set<IssueField>();
  const excluded = new Set<string>();
  let includes = false;
  for (const item of list) {
    if (item.startsWith("-")) {
      excluded.add(item.slice(1));
      continue;
    }
    includes = true;
    if (item === "*all" || item === "*navigable") for (const field of ISSUE_FIELDS) included.add(field);
    else if (ISSUE_FIELD_NAMES.has(item)) included.add(item as IssueField);
  }
  if (!includes) for (const field of ISSUE_FIELDS) included.add(field);
  for (const field of excluded) included.delete(field as IssueField);
  return { idsOnly: false, fields: included };
}

/** The `expand` value Jira puts on an issue rendered with its fields. */
const ISSUE_EXPAND = "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations";

class Shapes {
  constructor(
    readonly origin: string,
    private readonly tracker: Tracker,
  ) {}

  private api(path: string): string {
    return `${this.origin}${API}${path}`;
  }

  issueUrl(issue: Issue): string {
    return this.api(`/issue/${issue.id}`);
  }

  timestamp(ms: number): string {
    return formatTimestamp(
      ms,
      this.tracker.options.timestampZone === "account" ? this.tracker.zone : undefined,
    );
  }

  issue(issue: Issue, selection: Selection): JsonObject {
    if (selection.idsOnly) return { id: issue.id };
    const fields: JsonObject = {};
    for (const name of ISSUE_FIELDS) {
      if (!selection.fields.has(name)) continue;
      const value = this.field(issue, name);
      // Jira leaves `parent` out of an issue that has none.
      if (value !== undefined) fields[name] = value;
    }
    return { expand: ISSUE_EXPAND, id: issue.id, self: this.issueUrl(issue), key: issue.key, fields };
  }

  private field(issue: Issue, name: IssueField): unknown {
    switch (name) {
      case "summary":
        return issue.summary;
      case "description":
        return issue.description;
      case "status":
        return this.status(issue.status);
      case "priority":
        return issue.priority && this.priority(issue.priority);
      case "labels":
        return issue.labels;
      case "assignee":
        return issue.assignee === null ? null : this.user(issue.assignee);
      case "parent":
        return issue.parent ? this.linkedIssue(issue.parent) : undefined;
      case "issuetype":
        return this.issueType(issue.type);
      case "created":
        return this.timestamp(issue.created);
      case "updated":
        return this.timestamp(issue.updated);
      case "subtasks":
        return this.tracker.subtasksOf(issue).map((subtask) => this.linkedIssue(subtask));
      case "project":
        return this.projectBrief(issue.project);
    }
  }

  /** A parent or subtask as Jira nests it: a few fields only. */
  private linkedIssue(issue: Issue): JsonObject {
    return {
      id: issue.id,
      key: issue.key,
      self: this.issueUrl(issue),
      fields: {
        summary: issue.summary,
        status: this.status(issue.status),
        priority: issue.priority && this.priority(issue.priority),
        issuetype: this.issueType(issue.type),
      },
    };
  }

  status(status: FakeTrackerStatus): JsonObject {
    const category = STATUS_CATEGORIES[status.category];
    return {
      self: this.api(`/status/${status.id}`),
      description: "",
      iconUrl: `${this.origin}/`,
      name: status.name,
      id: status.id,
      statusCategory: { self: this.api(`/statuscategory/${category.id}`), ...category },
    };
  }

  priority(priority: Priority): JsonObject {
    return {
      self: this.api(`/priority/${priority.id}`),
      iconUrl: `${this.origin}/images/icons/priorities/${priority.name.toLowerCase()}.svg`,
      name: priority.name,
      id: priority.id,
    };
  }

  priorityFull(priority: Priority): JsonObject {
    return {
      ...this.priority(priority),
      statusColor: priority.statusColor,
      description: priority.description,
    };
  }

  issueType(type: FakeTrackerIssueType): JsonObject {
    const looks = ISSUE_TYPE_LOOKS.get(type.name) ?? {
      description: `${type.name} work item.`,
      avatarId: 10300,
    };
    return {
      self: this.api(`/issuetype/${type.id}`),
      id: type.id,
      description: looks.description,
      iconUrl: `${this.origin}${API}/universal_avatar/view/type/issuetype/avatar/${looks.avatarId}?size=medium`,
      name: type.name,
      subtask: type.subtask,
      avatarId: looks.avatarId,
      hierarchyLevel: type.hierarchyLevel,
    };
  }

  private avatarUrls(kind: string, id: string): JsonObject {
    const sizes = ["48x48", "24x24", "16x16", "32x32"];
    return Object.fromEntries(
      sizes.map((size) => [size, `${this.origin}/avatars/${kind}/${encodeURIComponent(id)}?size=${size}`]),
    );
  }

  /** ASSUMPTION: every account shares the account's time zone; `emailAddress` only where the user has one. */
  user(accountId: string): JsonObject {
    const user = this.tracker.users.get(accountId);
    return {
      self: this.api(`/user?accountId=${encodeURIComponent(accountId)}`),
      accountId,
      ...(user?.emailAddress === undefined ? {} : { emailAddress: user.emailAddress }),
      avatarUrls: this.avatarUrls("user", accountId),
      displayName: user?.displayName ?? accountId,
      active: true,
      timeZone: this.tracker.zone,
      accountType: "atlassian",
    };
  }

  /** `groups` and `applicationRoles` list their items only when expanded, as Jira's `expand` does. */
  myself(expand: readonly string[]): JsonObject {
    const collection = (name: string, item: string) => ({
      size: 1,
      items: expand.includes(name)
        ? [{ name: item, self: this.api(`/${name === "groups" ? "group" : "applicationrole"}?name=${item}`) }]
        : [],
    });
    return {
      ...this.user(this.tracker.me.accountId),
      emailAddress: this.tracker.options.email,
      locale: "en_US",
      groups: collection("groups", "jira-software-users"),
      applicationRoles: collection("applicationRoles", "jira-software"),
      expand: "groups,applicationRoles",
    };
  }

  projectBrief(project: Project): JsonObject {
    return {
      self: this.api(`/project/${project.id}`),
      id: project.id,
      key: project.key,
      name: project.name,
      projectTypeKey: "software",
      simplified: false,
      avatarUrls: this.avatarUrls("project", project.id),
    };
  }

  project(project: Project): JsonObject {
    return {
      expand: "description,lead,issueTypes,url,projectKeys,permissions,insight",
      ...this.projectBrief(project),
      description: "",
      lead: this.user(this.tracker.me.accountId),
      components: [],
      issueTypes: project.issueTypes.map((type) => this.issueType(type)),
      assigneeType: "UNASSIGNED",
      versions: [],
      roles: {},
      style: "classic",
      isPrivate: false,
      properties: {},
    };
  }

  /** An `IssueTransition`. ASSUMPTION: `hasScreen` exactly when the transition requires fields. */
  transition(transition: FakeTrackerTransition, target: FakeTrackerStatus, withFields: boolean): JsonObject {
    const requires = Object.entries(transition.requires ?? {});
    const shape: JsonObject = {
      id: transition.id,
      name: transition.name,
      to: this.status(target),
      hasScreen: requires.length > 0,
      isGlobal: transition.from.includes("*"),
      isInitial: false,
      isAvailable: true,
      isConditional: false,
      isLooped: false,
    };
    if (withFields) {
      shape.fields = Object.fromEntries(
        requires.map(([name]) => [
          name,
          { required: true, schema: { type: "any", system: name }, name, key: name, operations: ["set"] },
        ]),
      );
    }
    return shape;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Writes: `fields` and `update` of create, edit and transition, validated field by field as Jira collects them.

interface EditTarget {
  readonly tracker: Tracker;
  readonly project: Project;
  /** Undefined while creating. */
  readonly issue: Issue | undefined;
}

type FieldSetter = (value: unknown, target: EditTarget) => Change;

function setSummary(value: unknown): Change {
  // ASSUMPTION: a non-string summary gets the same message as a missing one.
  if (typeof value !== "string" || value.trim() === "") throw new FieldError(SUMMARY_REQUIRED);
  if (/[\r\n]/.test(value)) throw new FieldError(SUMMARY_NEWLINE);
  if (value.length > MAX_SUMMARY) throw new FieldError(SUMMARY_TOO_LONG);
  return { summary: value };
}

/**
 * A description must be an ADF document valid by Atlassian's schema (testing/adf-schema.ts, the judge the
 * converter's tests use too). ASSUMPTION: a document the schema refuses gets the same message as one that
 * is no document at all; the reason goes after it, for the test that hits it.
 */
function setDescription(value: unknown): Change {
  if (value !== null && !isAdfDocument(value)) throw new FieldError(NOT_ADF);
  const problem = value === null ? undefined : adfSchemaProblem(value);
  if (problem !== undefined) throw new FieldError(`${NOT_ADF}: ${problem}`);
  return { description: value };
}

/** ASSUMPTION: the wordings; labels keep the order sent, without repeats. */
function checkLabels(value: unknown): string[] {
  if (!isStringArray(value)) throw new FieldError("Operation value must be an array of strings.");
  for (const label of value) {
    if (label === "") throw new FieldError("The label '' is invalid: labels cannot be empty.");
    if (/\s/.test(label)) throw new FieldError(`The label '${label}' contains spaces which is invalid.`);
    if (label.length > MAX_SUMMARY) throw new FieldError(`The label '${label}' exceeds 255 characters.`);
  }
  return [...new Set(value)];
}

function setPriority(value: unknown): Change {
  if (value === null) return { priority: null };
  const id = isObject(value) ? value.id : undefined;
  const name = isObject(value) ? value.name : undefined;
  const priority = PRIORITIES.find((candidate) => candidate.id === id || candidate.name === name);
  // ASSUMPTION: the wording.
  if (!priority) throw new FieldError("The priority selected is invalid.");
  return { priority };
}

function setAssignee(value: unknown, target: EditTarget): Change {
  if (value === null || (isObject(value) && value.accountId === null)) return { assignee: null };
  const accountId = isObject(value) ? value.accountId : undefined;
  // ASSUMPTION: the wordings.
  if (typeof accountId !== "string") throw new FieldError("Specify the assignee by its accountId.");
  if (!target.tracker.users.has(accountId)) throw new FieldError(`User '${accountId}' does not exist.`);
  return { assignee: accountId };
}

function setParent(value: unknown, target: EditTarget): Change {
  if (value === null) return { parent: null };
  const named = reference(value, ["key", "id"]);
  const parent = named === undefined ? undefined : target.tracker.visibleIssue(named);
  // ASSUMPTION: the wording.
  if (!parent) throw new FieldError("Could not find issue by id or key.");
  return { parent };
}

function setIssueType(value: unknown, target: EditTarget): Change {
  const id = isObject(value) ? value.id : undefined;
  const name = isObject(value) ? value.name : undefined;
  const type = target.project.issueTypes.find((candidate) => candidate.id === id || candidate.name === name);
  if (!type) throw new FieldError("The issue type selected is invalid.");
  return { type };
}

const FIELD_SETTERS: ReadonlyMap<string, FieldSetter> = new Map<string, FieldSetter>([
  ["summary", setSummary],
  ["description", setDescription],
  ["labels", (value) => ({ labels: checkLabels(value) })],
  ["priority", setPriority],
  ["assignee", setAssignee],
  ["parent", setParent],
  ["issuetype", setIssueType],
]);

/** `update.labels` operations on top of `labels`: `add`, `remove`, `set`. */
function applyLabelOperations(labels: readonly string[], operations: readonly JsonObject[]): string[] {
  let result = [...labels];
  for (const operation of operations) {
    if ("set" in operation) result = checkLabels(operation.set);
    else if ("add" in operation) result = [...new Set([...result, ...checkLabels([operation.add])])];
    else if ("remove" in operation) result = result.filter((label) => label !== operation.remove);
    else throw new FieldError("Labels support the operations add, remove and set.");
  }
  return result;
}

/** Reads `fields` and `update` into one change, with each refused field's message (Jira names them all at once). */
function collectChanges(
  body: JsonObject,
  target: EditTarget,
): { change: Change; errors: Record<string, string> } {
  // ASSUMPTION: the wording.
  for (const member of ["fields", "update"]) {
    if (body[member] !== undefined && !isObject(body[member])) fail(400, `'${member}' must be an object.`);
  }
  const fields = isObject(body.fields) ? body.fields : {};
  const update = isObject(body.update) ? body.update : {};
  const errors: Record<string, string> = {};
  let change: Change = {};
  const attempt = (name: string, write: () => Change) => {
    try {
      change = { ...change, ...write() };
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      errors[name] = error.message;
    }
  };
  for (const [name, value] of Object.entries(fields)) {
    const setter = FIELD_SETTERS.get(name);
    if (setter) attempt(name, () => setter(value, target));
    else errors[name] = cannotBeSet(name);
  }
  for (const [name, operations] of Object.entries(update)) {
    const setter = FIELD_SETTERS.get(name);
    // ASSUMPTION: the wording for a field named in both `fields` and `update` (documented as a 400).
    if (name in fields) errors[name] = `Field '${name}' cannot be set in both 'fields' and 'update'.`;
    else if (setter) attempt(name, () => updateOperations(name, operations, setter, target, change));
    else errors[name] = cannotBeSet(name);
  }
  return { change, errors };
}

/** `collectChanges`, refusing the write (400) when any field was refused. */
function readChanges(body: JsonObject, target: EditTarget): Change {
  const { change, errors } = collectChanges(body, target);
  if (Object.keys(errors).length > 0) failFields(errors);
  return change;
}

/** One field's `update` operations; besides labels, only `set` (and `parent: [{set: {none: true}}]`). */
function updateOperations(
  name: string,
  operations: unknown,
  setter: FieldSetter,
  target: EditTarget,
  sofar: Change,
): Change {
  if (!Array.isArray(operations) || !operations.every(isObject)) {
    throw new FieldError('Operations must be an array of objects such as [{"set": …}].');
  }
  if (name === "labels")
    return { labels: applyLabelOperations(sofar.labels ?? target.issue?.labels ?? [], operations) };
  let change: Change = {};
  for (const operation of operations) {
    if (!("set" in operation)) throw new FieldError(`Field '${name}' supports only the operation set.`);
    const value = operation.set;
    const removesParent = name === "parent" && isObject(value) && value.none === true;
    change = { ...change, ...(removesParent ? { parent: null } : setter(value, target)) };
  }
  return change;
}

/**
 * What Jira's hierarchy allows after the change: a subtask needs a parent; a parent sits one level above its
 * child in the same project. ASSUMPTION: an edit cannot change an issue's hierarchy level (Jira moves issues
 * between subtask and standard types with "Move", not with an edit).
 */
function checkHierarchy(target: EditTarget, change: Change): void {
  const type = change.type ?? target.issue?.type;
  const parent = change.parent !== undefined ? change.parent : (target.issue?.parent ?? null);
  if (!type) return;
  if (target.issue && change.type && change.type.hierarchyLevel !== target.issue.type.hierarchyLevel) {
    failFields({ issuetype: "The issue type selected is invalid." });
  }
  if (type.subtask && parent === null) {
    if (target.issue === undefined) failFields({}, [SUBTASK_WITHOUT_PARENT]);
    failFields({ parent: SUBTASK_WITHOUT_PARENT });
  }
  if (parent === null) return;
  const wrong =
    parent === target.issue ||
    parent.project !== target.project ||
    parent.type.hierarchyLevel !== type.hierarchyLevel + 1;
  if (wrong) failFields({ parent: WRONG_HIERARCHY });
}

// ---------------------------------------------------------------------------------------------------------------
// Search: JQL resolved against the site, matching issues cached per query and version, opaque page tokens.

type IssueTest = (issue: Issue) => boolean;

interface ResolvedQuery {
  readonly projects: readonly Project[];
  readonly tests: readonly IssueTest[];
  readonly orderBy: readonly JqlSort[];
}

/** ASSUMPTION: without ORDER BY, the issue navigator's default `created DESC`. */
const DEFAULT_ORDER: readonly JqlSort[] = [{ field: "created", descending: true }];
const ISSUE_KEY = /^[A-Za-z][A-Za-z0-9_]*-\d+$/;

function compareIssues(a: Issue, b: Issue, field: SortField): number {
  switch (field) {
    case "key":
      return a.project.key === b.project.key ? a.number - b.number : a.project.key < b.project.key ? -1 : 1;
    case "id":
      return Number(a.id) - Number(b.id);
    case "created":
      return a.created - b.created;
    case "updated":
      return a.updated - b.updated;
  }
}

/** ASSUMPTION: ties after the ORDER BY fields go by id, ascending. */
function sortIssues(issues: Issue[], orderBy: readonly JqlSort[]): Issue[] {
  const order = orderBy.length === 0 ? DEFAULT_ORDER : orderBy;
  return issues.sort((a, b) => {
    for (const sort of order) {
      const compared = compareIssues(a, b, sort.field);
      if (compared !== 0) return sort.descending ? -compared : compared;
    }
    return Number(a.id) - Number(b.id);
  });
}

/** FNV-1a, to tie a page token to the query it came from. */
function hashText(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

interface SearchRequest {
  readonly jql: string;
  readonly nextPageToken: string | undefined;
  readonly maxResults: number;
  readonly selection: Selection;
}

class Search {
  private cached: { readonly key: string; readonly issues: readonly Issue[] } | undefined;
  repeatTokens = false;

  constructor(
    private readonly tracker: Tracker,
    private readonly pageSize: number,
  ) {}

  /** One page of the query's issues and the token of the next one (undefined on the last page). */
  page(request: SearchRequest): { issues: readonly Issue[]; nextPageToken: string | undefined } {
    const matching = this.matching(request.jql);
    const size = Math.min(request.maxResults, this.pageSize, MAX_RESULTS_CEILING);
    if (this.repeatTokens) {
      const asked = request.nextPageToken;
      const offset = asked === undefined || asked === REPEATED_TOKEN ? 0 : this.offsetOf(asked, request.jql);
      return { issues: matching.slice(offset, offset + size), nextPageToken: asked ?? REPEATED_TOKEN };
    }
    const offset =
      request.nextPageToken === undefined ? 0 : this.offsetOf(request.nextPageToken, request.jql);
    const end = offset + size;
    return {
      issues: matching.slice(offset, end),
      nextPageToken: end < matching.length ? this.tokenFor(end, request.jql) : undefined,
    };
  }

  /**
   * ASSUMPTION: a token is an offset into the query's current result, so issues that move between pages while a
   * client pages (an edit re-sorting them) can be skipped or seen twice, as with any cursor that is not a snapshot.
   */
  private tokenFor(offset: number, jql: string): string {
    return Buffer.from(JSON.stringify({ o: offset, q: hashText(jql) })).toString("base64url");
  }

  private offsetOf(token: string, jql: string): number {
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    } catch {
      decoded = undefined;
    }
    const offset = isObject(decoded) ? decoded.o : undefined;
    if (!isObject(decoded) || decoded.q !== hashText(jql) || typeof offset !== "number" || offset < 0) {
      // ASSUMPTION: the wording; Jira documents no error for a bad or foreign token.
      fail(400, "The nextPageToken is invalid or belongs to another query.");
    }
    return offset;
  }

  /** While set, `count` reads these issues of each project (a snapshot) instead of the current ones. */
  lagging: ReadonlyMap<Project, readonly Issue[]> | undefined;

  /** How many issues `jql` matches (its ORDER BY changes nothing); while `lagging`, among the snapshot's. */
  count(jql: string): number {
    const resolved = this.resolve(JqlParser.parse(jql));
    let count = 0;
    for (const project of resolved.projects) {
      for (const issue of this.lagging?.get(project) ?? project.issues.values())
        if (resolved.tests.every((test) => test(issue))) count++;
    }
    return count;
  }

  private matching(jql: string): readonly Issue[] {
    const key = `${this.tracker.version}\u0000${this.tracker.zone}\u0000${jql}`;
    if (this.cached?.key === key) return this.cached.issues;
    const resolved = this.resolve(JqlParser.parse(jql));
    const found: Issue[] = [];
    for (const project of resolved.projects) {
      for (const issue of project.issues.values()) {
        if (resolved.tests.every((test) => test(issue))) found.push(issue);
      }
    }
    const issues = sortIssues(found, resolved.orderBy);
    this.cached = { key, issues };
    return issues;
  }

  private resolve(query: JqlQuery): ResolvedQuery {
    let projects = this.tracker.projects.filter((project) => !project.hidden);
    const tests: IssueTest[] = [];
    for (const clause of query.clauses) {
      if (clause.kind === "list" && clause.field === "project") {
        const named = new Set(clause.values.map((value) => this.jqlProject(value)));
        projects = projects.filter((project) => named.has(project));
      } else {
        tests.push(this.test(clause));
      }
    }
    return { projects, tests, orderBy: query.orderBy };
  }

  private test(clause: JqlClause): IssueTest {
    if (clause.kind === "contains") {
      // ASSUMPTION: Jira's `~` is a word search with stemming; the fake matches a case-insensitive substring.
      const text = clause.text.toLowerCase();
      return (issue) => issue.summary.toLowerCase().includes(text);
    }
    if (clause.kind === "date") {
      const bound = wallClockToInstant(clause.wall, this.tracker.zone);
      const at = (issue: Issue) => issue[clause.field];
      const compare: Record<DateOperator, IssueTest> = {
        ">=": (issue) => at(issue) >= bound,
        ">": (issue) => at(issue) > bound,
        "<=": (issue) => at(issue) <= bound,
        "<": (issue) => at(issue) < bound,
      };
      return compare[clause.operator];
    }
    if (clause.field === "labels") {
      // ASSUMPTION: labels match exactly (case-sensitive).
      const labels = new Set(clause.values);
      return (issue) => issue.labels.some((label) => labels.has(label));
    }
    const field = clause.field === "parent" ? "parent" : "key";
    const issues = new Set(clause.values.map((value) => this.jqlIssue(value, field)));
    if (field === "key") return (issue) => issues.has(issue);
    return (issue) => issue.parent !== null && issues.has(issue.parent);
  }

  /** A project named in JQL: by key (any case), id or name; unknown and hidden ones are refused alike. */
  private jqlProject(value: string): Project {
    const project = this.tracker.projects.find(
      (candidate) =>
        !candidate.hidden &&
        (candidate.key.toLowerCase() === value.toLowerCase() ||
          candidate.id === value ||
          candidate.name === value),
    );
    if (!project) throw new JqlError(`The value '${value}' does not exist for the field 'project'.`);
    return project;
  }

  /** An issue named in JQL by key or id. ASSUMPTION: `parent` answers with the wording Jira uses for `key`. */
  private jqlIssue(value: string, field: "key" | "parent"): Issue {
    if (!ISSUE_KEY.test(value) && !/^\d+$/.test(value)) {
      throw new JqlError(`The issue key '${value}' for field '${field}' is invalid.`);
    }
    const issue = this.tracker.visibleIssue(value);
    if (!issue) throw new JqlError(`An issue with key '${value}' does not exist for field '${field}'.`);
    return issue;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Handlers.

function issueOr404(call: Call): Issue {
  const issue = call.tracker.visibleIssue(call.params[0] ?? "");
  if (!issue) fail(404, ISSUE_NOT_FOUND);
  return issue;
}

/** `name` as repeated query parameters, each possibly a comma-separated list. */
const queryList = (url: URL, name: string) => url.searchParams.getAll(name);

const SEARCH_MEMBERS: ReadonlyMap<string, (value: unknown) => boolean> = new Map<
  string,
  (value: unknown) => boolean
>([
  ["jql", (value) => typeof value === "string"],
  ["nextPageToken", (value) => typeof value === "string"],
  ["maxResults", Number.isInteger],
  ["fields", isStringArray],
  ["expand", (value) => typeof value === "string"],
  ["properties", isStringArray],
  ["fieldsByKeys", (value) => typeof value === "boolean"],
  ["failFast", (value) => typeof value === "boolean"],
  ["reconcileIssues", (value) => Array.isArray(value) && value.every(Number.isInteger)],
]);

/**
 * The SearchAndReconcileRequestBean (`additionalProperties: false`). ASSUMPTION: an unknown member or a value of
 * the wrong type answers 400, with wordings of our own; `null` counts as absent; `expand`, `properties`,
 * `fieldsByKeys`, `failFast` and `reconcileIssues` are accepted and change nothing (the fake has no rendered
 * fields, issue properties or eventual consistency).
 */
function searchBody(text: string): SearchRequest {
  const body = parseJsonObject(text);
  for (const [name, value] of Object.entries(body)) {
    const valid = SEARCH_MEMBERS.get(name);
    if (!valid) fail(400, `Unrecognized field "${name}" in the search request.`);
    if (value !== null && !valid(value)) fail(400, `Invalid value for "${name}" in the search request.`);
  }
  const fields = isStringArray(body.fields) ? body.fields : [];
  return searchRequest(
    typeof body.jql === "string" ? body.jql : "",
    typeof body.nextPageToken === "string" ? body.nextPageToken : undefined,
    typeof body.maxResults === "number" ? body.maxResults : undefined,
    fields,
  );
}

function searchQuery(url: URL): SearchRequest {
  const raw = url.searchParams.get("maxResults");
  const maxResults = raw === null ? undefined : Number(raw);
  if (maxResults !== undefined && !Number.isInteger(maxResults))
    fail(400, `Invalid value for "maxResults": ${raw}`);
  return searchRequest(
    url.searchParams.get("jql") ?? "",
    url.searchParams.get("nextPageToken") ?? undefined,
    maxResults,
    queryList(url, "fields"),
  );
}

function searchRequest(
  jql: string,
  nextPageToken: string | undefined,
  maxResults: number | undefined,
  fields: readonly string[],
): SearchRequest {
  // ASSUMPTION: the wording; Jira documents the default (50) but no error for a non-positive value.
  if (maxResults !== undefined && maxResults < 1) fail(400, "maxResults must be at least 1.");
  return {
    jql,
    nextPageToken,
    maxResults: maxResults ?? DEFAULT_MAX_RESULTS,
    selection: selectFields(fields, "id"),
  };
}

function runSearch(call: Call, request: SearchRequest): Answer {
  let page: ReturnType<Search["page"]>;
  try {
    page = call.search.page(request);
  } catch (error) {
    if (!(error instanceof JqlError)) throw error;
    return errorCollection(400, [error.message]);
  }
  const issues = page.issues.map((issue) => call.shapes.issue(issue, request.selection));
  const body =
    page.nextPageToken === undefined
      ? { issues, isLast: true }
      : { issues, nextPageToken: page.nextPageToken, isLast: false };
  return { status: 200, body };
}

/**
 * `POST /rest/api/3/search/approximate-count`: a JQLCountRequestBean, whose only member is `jql`
 * (`additionalProperties: false`). ASSUMPTION: an unknown member or a `jql` that is not a string answers 400 with
 * wordings of our own, as for search/jql; a missing one is the empty, unbounded query.
 */
function countIssues(call: Call): Answer {
  const body = parseJsonObject(call.text);
  for (const [name, value] of Object.entries(body)) {
    if (name !== "jql") fail(400, `Unrecognized field "${name}" in the count request.`);
    if (value !== null && typeof value !== "string")
      fail(400, 'Invalid value for "jql" in the count request.');
  }
  try {
    return { status: 200, body: { count: call.search.count(typeof body.jql === "string" ? body.jql : "") } };
  } catch (error) {
    if (!(error instanceof JqlError)) throw error;
    return errorCollection(400, [error.message]);
  }
}

function getIssue(call: Call): Answer {
  const issue = issueOr404(call);
  const selection = selectFields(queryList(call.url, "fields"), "*all");
  const fields = selection.idsOnly ? { idsOnly: false as const, fields: new Set<IssueField>() } : selection;
  return { status: 200, body: call.shapes.issue(issue, fields) };
}

/**
 * Edits an issue. Besides `fields` and `update`, `historyMetadata`, `properties` and `transition` are accepted
 * and ignored (the docs: "issue transition is not supported and is ignored here").
 * ASSUMPTION: every accepted edit moves `updated`, even one that changes nothing.
 */
function editIssue(call: Call): Answer {
  const issue = issueOr404(call);
  const body = parseJsonObject(call.text);
  const target = { tracker: call.tracker, project: issue.project, issue };
  const change = readChanges(body, target);
  checkHierarchy(target, change);
  call.tracker.apply(issue, change);
  call.tracker.touch(issue);
  if (call.url.searchParams.get("returnIssue") !== "true") return { status: 204 };
  return { status: 200, body: call.shapes.issue(issue, selectFields([], "*all")) };
}

function deleteIssue(call: Call): Answer {
  const issue = issueOr404(call);
  const withSubtasks = call.url.searchParams.get("deleteSubtasks") === "true";
  if (!withSubtasks && call.tracker.subtasksOf(issue).length > 0) fail(400, hasSubtasks(issue.key));
  call.tracker.remove(issue);
  return { status: 204 };
}

/** `fields.project`, `fields.issuetype` and `fields.summary` are required; all missing ones are named at once. */
function createIssue(call: Call): Answer {
  const body = parseJsonObject(call.text);
  const { project: named, ...settable } = isObject(body.fields) ? body.fields : {};
  const key = reference(named, ["key", "id"]);
  const project = call.tracker.projects.find(
    (p) => !p.hidden && key !== undefined && (p.key === key || p.id === key),
  );
  const errors: Record<string, string> = {};
  if (!project) errors.project = "Specify a valid project ID or key";
  if (settable.issuetype === undefined) errors.issuetype = "Specify an issue type";
  if (settable.summary === undefined) errors.summary = SUMMARY_REQUIRED;
  if (!project) failFields(errors);
  const target = { tracker: call.tracker, project, issue: undefined };
  const collected = collectChanges({ ...body, fields: settable }, target);
  Object.assign(errors, collected.errors);
  if (Object.keys(errors).length > 0) failFields(errors);
  const change = collected.change;
  checkHierarchy(target, change);
  const issue = call.tracker.insert(project, change.type as FakeTrackerIssueType, "", call.tracker.now());
  call.tracker.apply(issue, change);
  return { status: 201, body: { id: issue.id, key: issue.key, self: call.shapes.issueUrl(issue) } };
}

/**
 * The transitions offered from the issue's status. ASSUMPTION: a global transition into the status the issue
 * is already in is not offered.
 */
function availableTransitions(issue: Issue): FakeTrackerTransition[] {
  return issue.project.transitions.filter(
    (transition) =>
      transition.from.includes(issue.status.name) ||
      (transition.from.includes("*") && transition.to !== issue.status.name),
  );
}

function getTransitions(call: Call): Answer {
  const issue = issueOr404(call);
  const wanted = call.url.searchParams.get("transitionId");
  const withFields = (call.url.searchParams.get("expand") ?? "").split(",").includes("transitions.fields");
  const transitions = availableTransitions(issue)
    .filter((transition) => wanted === null || transition.id === wanted)
    .map((transition) =>
      call.shapes.transition(
        transition,
        call.tracker.statusOrThrow(issue.project, transition.to),
        withFields,
      ),
    );
  return { status: 200, body: { expand: "transitions", transitions } };
}

/**
 * Performs a transition. Only the fields its screen requires may be sent ("a field that isn't included on the
 * transition screen" is a 400); ASSUMPTION: their values are accepted and not stored (the fake has no
 * resolution), and a transition moves `updated`.
 */
function doTransition(call: Call): Answer {
  const issue = issueOr404(call);
  const body = parseJsonObject(call.text);
  const id = isObject(body.transition) ? body.transition.id : undefined;
  if ((typeof id !== "string" || !/^\d+$/.test(id)) && !Number.isInteger(id))
    fail(400, TRANSITION_NOT_INTEGER);
  const transition = availableTransitions(issue).find((candidate) => candidate.id === String(id));
  if (!transition) fail(400, `Transition id '${String(id)}' is not valid for this issue.`);
  const requires = transition.requires ?? {};
  const fields = isObject(body.fields) ? body.fields : {};
  const unknown = Object.keys({ ...fields, ...(isObject(body.update) ? body.update : {}) }).filter(
    (name) => !(name in requires),
  );
  if (unknown.length > 0) failFields(Object.fromEntries(unknown.map((name) => [name, cannotBeSet(name)])));
  const missing = Object.entries(requires).filter(
    ([name]) => fields[name] === undefined || fields[name] === null,
  );
  if (missing.length > 0) failFields(Object.fromEntries(missing));
  issue.status = call.tracker.statusOrThrow(issue.project, transition.to);
  call.tracker.touch(issue);
  return { status: 204 };
}

function getMyself(call: Call): Answer {
  const expand = (call.url.searchParams.get("expand") ?? "").split(",");
  return { status: 200, body: call.shapes.myself(expand) };
}

function getProject(call: Call): Answer {
  const named = call.params[0] ?? "";
  const project = call.tracker.visibleProject(named);
  if (!project) fail(404, `No project could be found with key '${named}'.`);
  return { status: 200, body: call.shapes.project(project) };
}

/**
 * "Get create metadata issue types for a project" (`PageOfCreateMetaIssueTypes`). A project the account
 * cannot see answers 400: the description documents 200, 400 and 401 only. ASSUMPTION: the message, as
 * getProject's.
 */
function getCreateMetaIssueTypes(call: Call): Answer {
  const named = call.params[0] ?? "";
  const project = call.tracker.visibleProject(named);
  if (!project) fail(400, `No project could be found with key '${named}'.`);
  const allowed = ["avatarId", "description", "hierarchyLevel", "iconUrl", "id", "name", "self", "subtask"];
  const issueTypes = project.issueTypes.map((type) =>
    Object.fromEntries(
      Object.entries(call.shapes.issueType(type)).filter(([name]) => allowed.includes(name)),
    ),
  );
  return { status: 200, body: { issueTypes, maxResults: 50, startAt: 0, total: issueTypes.length } };
}

function getPriorities(call: Call): Answer {
  return { status: 200, body: PRIORITIES.map((priority) => call.shapes.priorityFull(priority)) };
}

const ISSUE_PATH = /^\/rest\/api\/3\/issue\/([^/]+)$/;
const TRANSITIONS_PATH = /^\/rest\/api\/3\/issue\/([^/]+)\/transitions$/;
const SEARCH_PATH = /^\/rest\/api\/3\/search\/jql$/;

const ROUTES: readonly Route[] = [
  { method: "POST", path: SEARCH_PATH, handle: (call) => runSearch(call, searchBody(call.text)) },
  { method: "GET", path: SEARCH_PATH, handle: (call) => runSearch(call, searchQuery(call.url)) },
  { method: "POST", path: /^\/rest\/api\/3\/search\/approximate-count$/, handle: countIssues },
  { method: "POST", path: /^\/rest\/api\/3\/issue$/, handle: createIssue },
  { method: "GET", path: ISSUE_PATH, handle: getIssue },
  { method: "PUT", path: ISSUE_PATH, handle: editIssue },
  { method: "DELETE", path: ISSUE_PATH, handle: deleteIssue },
  { method: "GET", path: TRANSITIONS_PATH, handle: getTransitions },
  { method: "POST", path: TRANSITIONS_PATH, handle: doTransition },
  { method: "GET", path: /^\/rest\/api\/3\/myself$/, handle: getMyself },
  { method: "GET", path: /^\/rest\/api\/3\/project\/([^/]+)$/, handle: getProject },
  {
    method: "GET",
    path: /^\/rest\/api\/3\/issue\/createmeta\/([^/]+)\/issuetypes$/,
    handle: getCreateMetaIssueTypes,
  },
  { method: "GET", path: /^\/rest\/api\/3\/priority$/, handle: getPriorities },
];

// ---------------------------------------------------------------------------------------------------------------
// HTTP.

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function send(res: ServerResponse, answer: Answer): void {
  const headers: Record<string, string> = { ...answer.headers };
  let payload: string | undefined;
  if (answer.text !== undefined) {
    payload = answer.text;
    headers["content-type"] ??= "text/plain;charset=UTF-8";
  } else if (answer.body !== undefined) {
    payload = JSON.stringify(answer.body);
    headers["content-type"] = "application/json;charset=UTF-8";
  }
  if (payload !== undefined) headers["content-length"] = String(Buffer.byteLength(payload));
  res.writeHead(answer.status, headers);
  res.end(payload);
}

/** `Authorization: Basic base64(email:token)` → whether it names this account (the scheme is case-insensitive). */
function authenticates(header: string | undefined, email: string, apiToken: string): boolean {
  const encoded = /^basic\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
  return encoded !== undefined && Buffer.from(encoded, "base64").toString("utf8") === `${email}:${apiToken}`;
}

/** The fake: the HTTP side (rate limit, authentication, router, request log) and the test's helpers. */
class FakeTrackerServer implements FakeTracker {
  readonly requests: FakeTrackerRequest[] = [];
  readonly contract: ContractWatch;
  private readonly shapes: Shapes;
  private readonly search: Search;
  private limited = { count: 0, retryAfterSeconds: 0 };
  private closing: Promise<void> | undefined;

  constructor(
    private readonly server: Server,
    readonly origin: string,
    readonly email: string,
    readonly apiToken: string,
    private readonly tracker: Tracker,
    judging: boolean,
  ) {
    this.contract = new ContractWatch("jira", judging);
    this.shapes = new Shapes(origin, tracker);
    this.search = new Search(tracker, tracker.options.pageSize);
  }

  get url(): string {
    return this.origin;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const received = await readRequestBody(req);
    const entry = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: flatHeaders(req),
      body: received.bytes.toString("utf8"),
      status: 0,
      answer: "",
      receivedAt: Date.now(),
    };
    this.requests.push(entry);
    const answer = this.rateLimited() ?? this.unauthenticated(entry.headers) ?? this.answer(entry);
    entry.status = answer.status;
    entry.answer = answer.text ?? (answer.body === undefined ? "" : JSON.stringify(answer.body));
    const requestId = `${this.requests.length}x${this.requests.length.toString(16)}x1`;
    const headers = { "x-arequestid": requestId, ...answer.headers };
    send(res, { ...answer, headers });
    this.contract.observe(
      { ...entry, requestHeaders: entry.headers, answerHeaders: headers },
      answer.deliberate,
    );
  }

  /**
   * ASSUMPTION: the limit is checked before authentication, and the body (the guide documents headers only).
   * `X-RateLimit-Reset` is the request time plus Retry-After, `yyyy-MM-ddTHH:mmZ` as the guide says.
   */
  private rateLimited(): Answer | undefined {
    if (this.limited.count === 0) return undefined;
    this.limited.count--;
    const seconds = this.limited.retryAfterSeconds;
    const reset = `${new Date(Date.now() + seconds * 1000).toISOString().slice(0, 16)}Z`;
    return {
      ...errorCollection(429, ["Rate limit exceeded."]),
      headers: {
        "retry-after": String(seconds),
        "x-ratelimit-limit": "100",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": reset,
        "ratelimit-reason": "jira-burst-based",
      },
    };
  }

  /** ASSUMPTION: the header values (Jira Cloud sends both headers; their values are not documented). */
  private unauthenticated(headers: Readonly<Record<string, string>>): Answer | undefined {
    if (authenticates(headers.authorization, this.email, this.apiToken)) return undefined;
    const headersOut: Record<string, string> = {
      "www-authenticate": `OAuth realm="${encodeURIComponent(this.origin)}"`,
    };
    if (headers.authorization !== undefined) headersOut["x-seraph-loginreason"] = "AUTHENTICATED_FAILED";
    return { status: 401, headers: headersOut, text: UNAUTHENTICATED };
  }

  private answer(entry: FakeTrackerRequest): Answer {
    try {
      return this.route(entry);
    } catch (error) {
      if (error instanceof HttpFailure) return error.answer;
      throw error;
    }
  }

  /**
   * ASSUMPTION: the bodies of an unknown route (Jira's REST layer answers "null for uri: …") and of a known path
   * with another method (405).
   */
  private route(entry: FakeTrackerRequest): Answer {
    const url = new URL(entry.path, this.origin);
    let pathKnown = false;
    for (const route of ROUTES) {
      const found = route.path.exec(url.pathname);
      if (!found) continue;
      pathKnown = true;
      if (route.method !== entry.method) continue;
      const params = found.slice(1).map((param) => decodeURIComponent(param));
      const { tracker, shapes, search } = this;
      return route.handle({ url, params, text: entry.body, tracker, shapes, search });
    }
    if (pathKnown) return { status: 405, body: { message: "Method Not Allowed", "status-code": 405 } };
    return { status: 404, body: { message: `null for uri: ${url.href}`, "status-code": 404 } };
  }

  seed(project: string, count: number): string[] {
    return this.tracker.seed(this.tracker.projectOrThrow(project), count);
  }

  addIssue(project: string, seed: TrackerIssueSeed, at?: number): FakeTrackerIssue {
    const found = this.tracker.projectOrThrow(project);
    const standard = found.issueTypes.find((type) => !type.subtask && type.hierarchyLevel === 0);
    const type = seed.type === undefined ? standard : found.issueTypes.find((t) => t.name === seed.type);
    if (!type) throw new Error(`fake tracker: project ${project} has no issue type ${seed.type}`);
    const change = this.tracker.helperChange(found, seed);
    if (type.subtask && !change.parent) throw new Error("fake tracker: a subtask needs a parent");
    const issue = this.tracker.insert(found, type, seed.summary, at ?? this.tracker.now());
    this.tracker.apply(issue, change);
    if (seed.status !== undefined) issue.status = this.tracker.statusOrThrow(found, seed.status);
    return copyIssue(this.tracker, issue);
  }

  editIssue(key: string, edit: TrackerIssueEdit, at?: number): FakeTrackerIssue {
    const issue = this.tracker.issueOrThrow(key);
    this.tracker.apply(issue, this.tracker.helperChange(issue.project, edit));
    if (edit.status !== undefined) issue.status = this.tracker.statusOrThrow(issue.project, edit.status);
    this.tracker.touch(issue, at);
    return copyIssue(this.tracker, issue);
  }

  deleteIssue(key: string): void {
    this.tracker.remove(this.tracker.issueOrThrow(key));
  }

  issue(key: string): FakeTrackerIssue | undefined {
    const issue = this.tracker.visibleIssue(key) ?? this.hiddenIssue(key);
    return issue && copyIssue(this.tracker, issue);
  }

  private hiddenIssue(key: string): Issue | undefined {
    try {
      return this.tracker.issueOrThrow(key);
    } catch {
      return undefined;
    }
  }

  issues(project: string): FakeTrackerIssue[] {
    return [...this.tracker.projectOrThrow(project).issues.values()].map((issue) =>
      copyIssue(this.tracker, issue),
    );
  }

  setTimeZone(zone: string): void {
    this.tracker.zone = checkZone(zone);
  }

  rateLimitNext(count: number, retryAfterSeconds: number): void {
    this.limited = { count, retryAfterSeconds };
  }

  repeatNextPageToken(on = true): void {
    this.search.repeatTokens = on;
  }

  lagApproximateCount(on = true): void {
    this.search.lagging = on
      ? new Map(this.tracker.projects.map((project) => [project, [...project.issues.values()]]))
      : undefined;
  }

  close(): Promise<void> {
    this.closing ??= closeServer(this.server).then(() => this.contract.assertNone());
    return this.closing;
  }
}

const DEFAULT_USERS = (email: string): FakeTrackerUser[] => [
  { accountId: BOT_ACCOUNT, displayName: "svc bot", emailAddress: email },
  { accountId: ALICE_ACCOUNT, displayName: "Alice Example", emailAddress: "alice@example.com" },
];

/** Starts the fake on `127.0.0.1:0`. */
export async function startFakeTracker(options: FakeTrackerOptions = {}): Promise<FakeTracker> {
  const email = options.email ?? DEFAULT_EMAIL;
  const tracker = new Tracker({
    email,
    projects: options.projects ?? [{ key: "TEST" }],
    users: options.users ?? DEFAULT_USERS(email),
    zone: checkZone(options.timeZone ?? "UTC"),
    timestampZone: options.timestampZone ?? "utc",
    now: options.now ?? Date.now,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
  });
  const server = createServer();
  const origin = await listenOnLoopback(server);
  const fake = new FakeTrackerServer(
    server,
    origin,
    email,
    options.apiToken ?? DEFAULT_TOKEN,
    tracker,
    options.vendorChecks !== false,
  );
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    fake.handle(req, res).catch((error: unknown) => {
      console.error("fake tracker:", error);
      if (!res.headersSent) send(res, { status: 500 });
    });
  });
  return fake;
}

/** startFakeTracker for one ava test; the test's teardown closes it. */
export async function givenFakeTracker(
  t: ExecutionContext,
  options: FakeTrackerOptions = {},
): Promise<FakeTracker> {
  const tracker = await startFakeTracker(options);
  t.teardown(() => tracker.close());
  return tracker;
}
