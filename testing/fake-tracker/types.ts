/**
 * The fake tracker's public names: its options, the copies of its state the test helpers hand out, the request
 * log entry and the `FakeTracker` interface tests drive (testing/fake-tracker.ts re-exports them all).
 */
import type { FakeRequestBase } from "../fake-server.js";
import type { ContractWatch } from "../vendor-contract.js";

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
  /** The project's components (names); default API, Web, CLI. */
  readonly components?: readonly string[];
  /** The project's versions (names), what fixVersions may name; default 1.0, 2.0. */
  readonly versions?: readonly string[];
  /** The token cannot see it: project GET 404, issue GETs 404, JQL naming it 400 (as Jira answers). */
  readonly hidden?: boolean;
}

/** A custom field of the site (issue 35): Story Points, Team, Sprint, … */
export interface FakeTrackerCustomField {
  readonly id: string; // "customfield_10016"
  readonly name: string; // "Story Points"
  /** number, text field, single select, multi select, Jira Software's sprint, cascading select. */
  readonly kind: "number" | "string" | "option" | "options" | "sprint" | "cascading";
  /** The options of a select. */
  readonly options?: readonly string[];
  /** False: not on the edit screen (editmeta leaves it out; an edit setting it is a 400). Default true. */
  readonly onEditScreen?: boolean;
  /** False: not on the create screen (createmeta leaves it out; a create setting it is a 400). Default true. */
  readonly onCreateScreen?: boolean;
}

/** What a custom field holds as the fake stores it: a number, an option's value, values, sprint names, a cascade. */
export type FakeCustomValue =
  | number
  | string
  | readonly string[]
  | { readonly value: string; readonly child: string }
  | null;

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
  /**
   * The most comments a search's `comment` field holds of an issue (its oldest ones), and the most one
   * `GET …/comment` page holds, whatever maxResults asks; default 100.
   */
  readonly commentPageSize?: number;
  /** The most fields one create-metadata page (`…/createmeta/{project}/issuetypes/{id}`) holds, whatever maxResults asks; default 50. */
  readonly metaPageSize?: number;
  /** Known accounts (assignee values); default the bot (accountId "557058:bot-0001") and alice ("557058:alice-0002"). */
  readonly users?: readonly FakeTrackerUser[];
  /** The site's custom fields; default Story Points (customfield_10016), Sprint (10020), Team (10050). */
  readonly customFields?: readonly FakeTrackerCustomField[];
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
  readonly components: readonly string[];
  readonly fixVersions: readonly string[];
  readonly duedate: string | null;
  readonly reporter: string | null;
  readonly resolution: string | null;
  /** Custom field values by id (those with a value). */
  readonly custom: Readonly<Record<string, FakeCustomValue>>;
  /** Epoch ms. */
  readonly created: number;
  readonly updated: number;
}

/** The server's state of one comment (a copy). */
export interface FakeTrackerComment {
  readonly id: string; // "10000": numeric string, increasing across the whole site
  readonly issueKey: string;
  /** Account ids. */
  readonly author: string;
  readonly updateAuthor: string;
  /** As stored: the ADF document received or written by a helper. */
  readonly body: AdfJson;
  /** Epoch ms. */
  readonly created: number;
  readonly updated: number;
}

/** How a helper writes a comment as someone else. */
export interface TrackerCommentOptions {
  /** The account writing it; default alice ("557058:alice-0002"). */
  readonly author?: string;
  /** Epoch ms of the write; default now. */
  readonly at?: number;
}

export interface FakeTrackerRequest extends FakeRequestBase {
  /** The body answered (utf8); empty while in flight or when there was none. */
  readonly answer: string;
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
  readonly components?: readonly string[];
  readonly fixVersions?: readonly string[];
  readonly duedate?: string | null;
  /** Default none (the fake's simplification). */
  readonly reporter?: string | null;
  readonly resolution?: string | null;
  readonly custom?: Readonly<Record<string, FakeCustomValue>>;
}

export interface TrackerIssueEdit {
  readonly summary?: string;
  readonly description?: AdfJson | null;
  readonly status?: string; // set directly, no workflow check
  readonly priority?: string | null;
  readonly labels?: readonly string[];
  readonly assignee?: string | null;
  readonly components?: readonly string[];
  readonly fixVersions?: readonly string[];
  readonly duedate?: string | null;
  readonly resolution?: string | null;
  readonly custom?: Readonly<Record<string, FakeCustomValue>>;
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
  /** An admin renames a custom field of the site; no issue's `updated` moves. */
  renameCustomField(id: string, name: string): void;
  /** An admin deletes a custom field of the site: no issue shows it any more; no issue's `updated` moves. */
  removeCustomField(id: string): void;
  /** An admin deletes the issue (its subtasks too); it disappears from every listing; GET answers 404. */
  deleteIssue(key: string): void;
  issue(key: string): FakeTrackerIssue | undefined;
  /** The project's issues in key order. */
  issues(project: string): FakeTrackerIssue[];
  /**
   * Someone else (`options.author`, default alice) comments on the issue: a plain-text body becomes one
   * paragraph. The issue's `updated` moves to the comment's time, as Jira's does.
   */
  addComment(key: string, body: AdfJson | string, options?: TrackerCommentOptions): FakeTrackerComment;
  /** Someone else edits comment `id`: its `updated` (and its issue's) moves to `options.at`, default now. */
  editComment(id: string, body: AdfJson | string, options?: TrackerCommentOptions): FakeTrackerComment;
  /** Someone else deletes comment `id`; its issue's `updated` stays (see comment-store.ts). */
  deleteComment(id: string): void;
  /**
   * `count` comments on the issue, a minute apart in the past (before now), plain text numbered from 1, by
   * `options.author` (default alice); returns their ids, oldest first.
   */
  seedComments(key: string, count: number, options?: TrackerCommentOptions): string[];
  /** The issue's comments, oldest first. */
  comments(key: string): FakeTrackerComment[];
  comment(id: string): FakeTrackerComment | undefined;
  /** The token's account (what /myself answers). */
  readonly self: FakeTrackerUser;
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
