/**
 * The tracker backend (issue 15; DESIGN.md §2, §6): a Jira Cloud project's issues on REST API v3 as
 * `issues/<KEY>-<n>.md` records, read and written.
 *
 * - Basic auth from `TRACKER_EMAIL` and `TRACKER_API_TOKEN`; the header never appears in an error or a log.
 * - Listing: `POST /rest/api/3/search/jql` asking for the record's fields only, ordered by key, following
 *   `nextPageToken` through the pagination guard (a repeated token is an error). A delta listing adds
 *   `updated >= "yyyy/MM/dd HH:mm"`, written in the account's time zone (jql.ts). A listing's cursor never
 *   passes the instant it began (the server's `Date`), so a change made while the pages were read is asked
 *   again.
 * - Deletions: the tracker keeps no tombstones, so a delta listing cannot show one. `countLive` asks
 *   `POST /rest/api/3/search/approximate-count` for the number of issues the full listing's own JQL matches
 *   (one request, no issues sent); cache/sync.ts lists everything when it differs from the cache's.
 * - Writes: the tracker has no version number and no `If-Match`. Immediately before each write the issue is
 *   read again and its `updated` compared with the base; newer → `fetch first`. A write landing between that
 *   read and the write cannot be detected (README "The tracker"); the window is one round trip.
 *   Field edits are one `PUT` with only the changed fields (labels as add/remove operations, so labels
 *   someone else added stay); a status edit is the one workflow transition that reaches the status, made
 *   before the PUT; several steps are never guessed. Creates `POST`, then the transition to the file's
 *   status. `git rm` deletes, never an issue with subtasks.
 * - Comments: `comments()` (comments.ts), listed through the same search (search.ts) with `fields: ["comment"]`
 *   and the same JQL, written with the same mutation spacing; `commentSource` adapts it for the sync and the
 *   push (comment-source.ts), unless `svc.comments` is false.
 * - Mutations are spaced at least `MUTATION_GAP_MS` apart (Document 3: about 5 a second at most);
 *   `429` with `Retry-After` is waited out by the HTTP client's gate for the origin.
 */
import { isObject, jsonEqual } from "../../core/checks.js";
import { SvcError, UserFacingError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import type {
  BackendRecord,
  BaseToken,
  DeleteOutcome,
  Listing,
  RecordChanges,
  ValidatorStore,
  WritableBackend,
  WriteOutcome,
  WriteToCheck,
} from "../backend.js";
import { type FieldValue, type RecordSchema, stringList } from "../record.js";
import {
  AN_OBJECT,
  basicJsonHeaders,
  RestClient,
  type RestResponse,
  readForWrite,
  UnexpectedShapeError,
} from "../rest.js";
import { markdownToAdf } from "./adf.js";
import { approximateCount } from "./approximate-count.js";
import { TrackerCommentSource } from "./comment-source.js";
import { TrackerComments } from "./comments.js";
import { checkProjectKey, type TrackerConfig } from "./config.js";
import { checkTrackerWrites, extraFieldsFor, withSlugs } from "./edit-check.js";
import { errorCollectionText, trackerErrorText } from "./error-text.js";
import { FieldListKeeper } from "./field-catalog.js";
import {
  labelUpdate,
  RECORD_FIELDS,
  sameName,
  serverTime,
  type TrackerIssue,
  toTrackerIssue,
} from "./issue.js";
import { jqlDateTime, jqlString } from "./jql.js";
import { ISSUE_KEY, trackerFileName } from "./schema.js";
import { searchPages, type TrackerSite } from "./search.js";
import type {
  CountRequest,
  CountResults,
  CreatedIssue,
  CreateMetaIssueTypes,
  IssueEdit,
  Myself,
  Project,
  Transitions,
  WireIssue,
} from "./wire.js";
import { type IssueType, issueTypesOf, pickIssueType, type Transition, transitionsOf } from "./workflow.js";

/** At most five mutations a second (Document 3, "Rules for test fixtures" 4). */
export const MUTATION_GAP_MS = 200;

export interface TrackerBackendOptions {
  readonly sleep?: (ms: number) => Promise<void>;
  /** Default `MUTATION_GAP_MS`. */
  readonly mutationGapMs?: number;
  /** False leaves the issues' comments out (`git config svc.comments false`). */
  readonly comments?: boolean;
}

export class TrackerBackend implements WritableBackend {
  readonly kind = "tracker";
  /** JQL dates have minute precision and the search index trails writes by seconds: two minutes back. */
  readonly overlapMs = 120_000;
  /** 32,767 characters of description, each at most 4 bytes of UTF-8 and Markdown around it, plus fences. */
  readonly maxRecordBytes = 1024 * 1024;
  readonly description: string;
  private readonly origin: string;
  private readonly rest: RestClient;
  private readonly site: TrackerSite;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly mutationGapMs: number;
  private lastMutation = 0;
  private zone: Promise<string | undefined> | undefined;
  private types: Promise<readonly IssueType[]> | undefined;
  /** The comments (comment-source.ts), unless `options.comments` is false. */
  readonly commentSource: TrackerCommentSource | undefined;
  /** The project's field list, kept in the cache (field-catalog.ts). */
  private readonly fieldList: FieldListKeeper;

  constructor(
    private readonly config: TrackerConfig,
    readonly project: string,
    http: HttpClient,
    options: TrackerBackendOptions = {},
  ) {
    checkProjectKey(project);
    this.origin = new URL(config.baseUrl).origin;
    this.description = `tracker project ${project} at ${config.baseUrl}`;
    this.rest = new RestClient({
      http,
      description: this.description,
      headers: basicJsonHeaders(config.email, config.apiToken),
      errorText: trackerErrorText,
      unauthorized: () =>
        new UserFacingError(
          "SVC_BACKEND",
          `the tracker at ${this.origin} refused the credentials (401); check TRACKER_EMAIL and TRACKER_API_TOKEN: the token must be an API token of that account (Bearer tokens are not accepted)`,
          { data: { status: 401 } },
        ),
    });
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.mutationGapMs = options.mutationGapMs ?? MUTATION_GAP_MS;
    this.site = {
      origin: this.origin,
      description: this.description,
      rest: this.rest,
      api: (path) => this.api(path),
      call: (method, url, body) => this.call(method, url, body),
      mutate: (method, url, body) => this.mutate(method, url, body),
      failure: (what, response) => this.failure(what, response),
      checkProject: (what) => this.issueTypes(what),
    };
    this.commentSource = options.comments === false ? undefined : new TrackerCommentSource(this.comments());
    this.fieldList = new FieldListKeeper(this.site);
  }

  /**
   * The record schema of the field list loaded last (field-catalog.ts): the fixed fields, then the custom
   * fields by slug. A listing loads the list before it reads an issue, and a fetch or a push lists before it
   * renders or parses a file, so both see the schema of the list the issues were read with.
   */
  get schema(): RecordSchema {
    return this.fieldList.catalog.schema;
  }

  /** Read-only fields, and the fields of issue 35 against each edit or create screen (edit-check.ts). */
  async checkWrites(writes: readonly WriteToCheck[]): Promise<{ path: string; message: string }[]> {
    const screens = {
      project: this.project,
      issueType: (name: FieldValue | undefined) => this.issueType(name, "creating an issue"),
    };
    return await checkTrackerWrites(this.site, await this.fieldList.load(), writes, screens);
  }

  /** The cache's store, where the field list is kept (field-catalog.ts). */
  useValidators(store: ValidatorStore): void {
    this.fieldList.use(store);
  }

  /** The backend of `project` at `config.baseUrl`, its origin checked against the allowlist first. */
  static create(
    config: TrackerConfig,
    project: string,
    agent: string,
    options: TrackerBackendOptions = {},
  ): TrackerBackend {
    const http = new HttpClient({ agent, allowedOrigins: config.allowedOrigins });
    http.checkEgress(config.baseUrl);
    return new TrackerBackend(config, project, http, options);
  }

  /** `GET /rest/api/3/project/{key}` (through the issue types): the credentials work and the project is there. */
  async probe(): Promise<void> {
    await this.issueTypes(`checking project ${this.project}`);
  }

  // -------------------------------------------------------------------------------------------------------
  // Requests

  private api(path: string): string {
    return `${this.config.baseUrl}/rest/api/3${path}`;
  }

  private issuePath(key: string, rest = ""): string {
    return this.api(`/issue/${encodeURIComponent(key)}${rest}`);
  }

  private call(method: string, url: string, body?: unknown): Promise<RestResponse> {
    return this.rest.call(method, url, body);
  }

  /** A write, at least `mutationGapMs` after the one before. */
  private async mutate(method: string, url: string, body?: unknown): Promise<RestResponse> {
    const wait = this.lastMutation + this.mutationGapMs - Date.now();
    if (wait > 0) await this.sleep(wait);
    try {
      return await this.call(method, url, body);
    } finally {
      this.lastMutation = Date.now();
    }
  }

  /** An answer's JSON object, of the vendor's shape `T` (whose members may each be missing). */
  private parse<T>(what: string, response: RestResponse): T {
    return this.rest.parse<T>(what, response, AN_OBJECT);
  }

  /** A refusal or an unexpected answer as an error; 4xx refusals carry the tracker's own words. */
  private failure(what: string, response: RestResponse): SvcError {
    const status = response.status;
    if (status >= 400 && status < 500) {
      return new SvcError(
        "SVC_BACKEND",
        `${what}: the tracker refused it (${status}): ${errorCollectionText(response.body)}`,
        { data: { status } },
      );
    }
    return this.rest.failure(what, response);
  }

  private noProject(what: string): UserFacingError {
    return new UserFacingError(
      "SVC_BACKEND",
      `${what}: the tracker at ${this.origin} has no project ${this.project} or no permission for TRACKER_EMAIL's account to browse it (404); check the key (svc init tracker::<KEY>) and the account's access`,
      { data: { status: 404 } },
    );
  }

  /**
   * The project's issue types (`GET /project/{key}`, else the create metadata's
   * `GET /issue/createmeta/{key}/issuetypes`); a project the account cannot see is an error. Read once.
   */
  private issueTypes(what: string): Promise<readonly IssueType[]> {
    this.types ??= (async () => {
      const key = encodeURIComponent(this.project);
      let response = await this.call("GET", this.api(`/project/${key}`));
      if (response.status === 404) {
        response = await this.call("GET", this.api(`/issue/createmeta/${key}/issuetypes`));
        // Jira's description has no 404 here: a project the create metadata cannot find is a 400.
        if (response.status === 400) throw this.noProject(what);
      }
      if (response.status === 404) throw this.noProject(what);
      if (response.status !== 200) throw this.failure(`${what}: reading project ${this.project}`, response);
      return issueTypesOf(
        this.parse<Project | CreateMetaIssueTypes>(`reading project ${this.project}`, response),
      );
    })();
    this.types.catch(() => {
      this.types = undefined;
    });
    return this.types;
  }

  /** The account's time zone (`/rest/api/3/myself`), read once; undefined when it names none. */
  private timeZone(): Promise<string | undefined> {
    this.zone ??= (async () => {
      const response = await this.call("GET", this.api("/myself"));
      if (response.status !== 200) throw this.failure("reading the account's time zone (/myself)", response);
      const value = this.parse<Myself>("reading the account's time zone", response);
      // Optional in the description: none is the site's default zone (jql.ts).
      return typeof value.timeZone === "string" ? value.timeZone : undefined;
    })();
    this.zone.catch(() => {
      this.zone = undefined;
    });
    return this.zone;
  }

  // -------------------------------------------------------------------------------------------------------
  // Listing

  private malformed(reason: string, status: number): SvcError {
    return new UnexpectedShapeError(
      `${this.description}: the server sent a malformed issue (${reason}); nothing was written`,
      status,
    );
  }

  /** Every result page of `jql`, or the first `limit` issues and whether there are more. */
  private async walk(
    jql: string,
    what: string,
    options: { limit?: number; freshFields?: boolean } = {},
  ): Promise<Listing & { more: boolean }> {
    const { limit } = options;
    const byKey = new Map<string, BackendRecord>();
    let startedAt: string | undefined;
    const catalog = await this.fieldList.load(options.freshFields);
    for await (const page of searchPages(this.site, jql, [...RECORD_FIELDS, ...catalog.ids()], what)) {
      startedAt ??= serverTime(page.date);
      for (const item of page.issues) {
        const issue = toTrackerIssue(item, catalog);
        if (typeof issue === "string") throw this.malformed(issue, page.status);
        byKey.set(issue.key, issue.record);
      }
      if (limit !== undefined && byKey.size > limit)
        return { records: [...byKey.values()], complete: false, more: true };
    }
    return {
      records: [...byKey.values()],
      complete: true,
      more: false,
      ...(startedAt === undefined ? {} : { cursorCeiling: startedAt }),
      // The field list asked for this listing, kept by the cache with it (field-catalog.ts).
      ...(options.freshFields ? { validators: [this.fieldList.validator(catalog)] } : {}),
    };
  }

  private jql(since?: string): string {
    const clauses = [`project = ${jqlString(this.project)}`];
    if (since !== undefined) clauses.push(`updated >= ${jqlString(since)}`);
    return `${clauses.join(" AND ")} ORDER BY key ASC`;
  }

  async listAll(): Promise<Listing> {
    // A full listing asks for the field list again: a field added or renamed since shows in this sync.
    return await this.walk(this.jql(), `listing the issues of project ${this.project}`, {
      freshFields: true,
    });
  }

  async listChangedSince(since: string): Promise<Listing> {
    const ms = Date.parse(since);
    const when = jqlDateTime(ms, await this.timeZone());
    const listing = await this.walk(
      this.jql(when),
      `listing the issues of project ${this.project} updated since ${when}`,
    );
    // Complete: every issue updated since `when` was listed (a delta sync still infers no deletion from it;
    // it compares countLive's count with the cache's).
    return listing;
  }

  /**
   * How many issues the project holds: `POST /rest/api/3/search/approximate-count` (countIssues) with the
   * full listing's JQL, so the two can only disagree about the issues themselves. One request, whose errors
   * are the listing's. Approximate: "Recent updates might not be immediately visible in the returned output"
   * (the vendor's description), so cache/sync.ts does not take a count that still says what it said at the
   * last full listing for a deletion.
   */
  async countLive(): Promise<{ count: number; approximate: boolean }> {
    const what = `counting the issues of project ${this.project}`;
    const request: CountRequest = { jql: this.jql() };
    const response = await this.call("POST", this.api("/search/approximate-count"), request);
    // An unknown project, or one the account may not browse, is a JQL error here too: say which it is.
    if (response.status === 400 || response.status === 404) await this.issueTypes(what);
    if (response.status !== 200) throw this.failure(what, response);
    const count = approximateCount(this.parse<CountResults>(what, response));
    if (typeof count === "string")
      throw new UnexpectedShapeError(`${this.description}: ${what} answered ${count}`, response.status);
    return { count, approximate: true };
  }

  /** The first `limit` issues and whether there are more (for `svc list`). */
  async listSome(limit: number): Promise<{ records: BackendRecord[]; more: boolean }> {
    const listing = await this.walk(this.jql(), `listing the issues of project ${this.project}`, { limit });
    return { records: listing.records.slice(0, limit), more: listing.more };
  }

  /**
   * The project's issue comments (comments.ts), listed with the same JQL as the issues: every issue's, or
   * those of the issues updated since the cursor (a comment added or edited moves its issue's `updated`).
   */
  comments(): TrackerComments {
    return new TrackerComments(this.site, async (since) =>
      since === undefined ? this.jql() : this.jql(jqlDateTime(Date.parse(since), await this.timeZone())),
    );
  }

  // -------------------------------------------------------------------------------------------------------
  // Writes

  /** The issue as it is now (its subtasks too), or undefined when it is gone. */
  async read(key: string): Promise<TrackerIssue | undefined> {
    const what = `reading issue ${key}`;
    const known = await this.fieldList.load();
    const response = await this.call(
      "GET",
      `${this.issuePath(key)}?fields=${[...RECORD_FIELDS, ...known.ids(), "subtasks"].join(",")}`,
    );
    if (response.status === 404) {
      // A project the account can no longer see answers 404 for its issues too: that is no deleted issue.
      await this.issueTypes(what);
      return undefined;
    }
    if (response.status !== 200) throw this.failure(what, response);
    const wire = this.parse<WireIssue>(what, response);
    const catalog = isObject(wire.fields) ? await this.fieldList.covering(wire.fields) : known;
    const issue = toTrackerIssue(wire, catalog);
    if (typeof issue === "string") throw this.malformed(issue, response.status);
    if (issue.key !== key) return undefined; // moved to another project (or renamed): not this record any more
    return issue;
  }

  /** The issue type a create or a type edit sends for `name` (workflow.ts `pickIssueType`). */
  private async issueType(name: FieldValue | undefined, what: string): Promise<IssueType> {
    return pickIssueType(await this.issueTypes(what), name, this.project, what);
  }

  /** The fields of a create or edit: what `changes` says, in the tracker's shapes. */
  private async fieldsFor(
    changes: RecordChanges,
    what: string,
    current?: TrackerIssue,
  ): Promise<Record<string, unknown>> {
    const fields: Record<string, unknown> = {};
    const given = changes.fields;
    if (typeof given.title === "string") fields.summary = given.title;
    if (changes.body !== undefined) {
      const doc = markdownToAdf(changes.body);
      // A new issue without a description sends none; an edit that empties it sends null.
      if (current ? !jsonEqual(doc, current.description ?? null) : doc !== null) fields.description = doc;
    }
    if (current && given.type !== undefined && given.type !== null)
      fields.issuetype = { id: (await this.issueType(given.type, what)).id };
    if (given.priority !== undefined && (current || given.priority !== null))
      fields.priority = typeof given.priority === "string" ? { name: given.priority } : null;
    if (given.assignee !== undefined && (current || given.assignee !== null))
      fields.assignee = typeof given.assignee === "string" ? { accountId: given.assignee } : null;
    if (given.parent !== undefined && (current || given.parent !== null))
      fields.parent = typeof given.parent === "string" ? { key: given.parent } : null;
    return { ...fields, ...extraFieldsFor(changes, await this.fieldList.load(), !current) };
  }

  /** The workflow transition of `issue` whose target is `status` (case-insensitive); refuses when none. */
  private async transitionTo(issue: TrackerIssue, status: string, path: string): Promise<Transition> {
    const what = `reading the workflow transitions of ${issue.key}`;
    const response = await this.call("GET", this.issuePath(issue.key, "/transitions"));
    if (response.status !== 200) throw this.failure(what, response);
    const offered = transitionsOf(this.parse<Transitions>(what, response));
    const found = offered.find((transition) => transition.to.toLowerCase() === status.toLowerCase());
    if (found) return found;
    const from = issue.record.content.fields.status;
    const reachable = [...new Set(offered.map((transition) => transition.to))].filter(
      (name) => name.toLowerCase() !== String(from).toLowerCase(),
    );
    throw new SvcError(
      "SVC_BACKEND",
      `status ${JSON.stringify(status)} cannot be reached from ${JSON.stringify(from)} by one transition of ${issue.key}'s workflow, and svc never guesses a path of several; ` +
        (reachable.length > 0
          ? `from ${JSON.stringify(from)} it can go to ${reachable.map((name) => JSON.stringify(name)).join(", ")}. Set status: to one of those in ${path}, push, and go on from there`
          : `no transition leads anywhere from ${JSON.stringify(from)}; set status: back to ${JSON.stringify(from)} in ${path}`),
      { data: { status: 400 } },
    );
  }

  private async transition(key: string, transition: Transition): Promise<void> {
    const response = await this.mutate("POST", this.issuePath(key, "/transitions"), {
      transition: { id: transition.id },
    });
    if (response.status === 204 || response.status === 200) return;
    const failure = this.failure(
      `the workflow transition ${JSON.stringify(transition.name)} of ${key} (to ${JSON.stringify(transition.to)})`,
      response,
    );
    if (response.status !== 400) throw failure;
    throw new SvcError(
      "SVC_BACKEND",
      `${failure.message}. svc sends no fields with a transition: make this one in the tracker (then git pull), or set another status`,
      { data: failure.data },
    );
  }

  async create(changes: RecordChanges): Promise<BackendRecord> {
    const what = "creating an issue";
    const type = await this.issueType(changes.fields.type, what);
    const fields = {
      project: { key: this.project },
      issuetype: { id: type.id },
      ...(await this.fieldsFor(changes, what)),
    };
    const labels = stringList(changes.fields.labels);
    if (labels.length > 0) Object.assign(fields, { labels });
    const request: IssueEdit = { fields };
    const response = await this.mutate("POST", this.api("/issue"), request);
    if (response.status !== 201 && response.status !== 200) {
      // The server names the fields it refused by id: their slugs go beside them.
      const failure = this.failure(what, response);
      throw new SvcError(failure.code, withSlugs(failure.message, this.fieldList.catalog), {
        data: failure.data,
      });
    }
    const value = this.parse<Partial<CreatedIssue>>(what, response);
    const key = typeof value.key === "string" ? value.key : undefined;
    if (key === undefined || !ISSUE_KEY.test(key))
      throw new UnexpectedShapeError(
        `${this.description}: ${what} answered ${response.status} without a valid issue key`,
        response.status,
      );
    // The issue exists from here on: a failure below must not read as "nothing was created" (that would
    // drop the create journal's entry and create it again). It is reported as unfinished; the next push
    // finds the issue and finishes the status.
    try {
      let issue = await this.read(key);
      const status = changes.fields.status;
      if (issue && typeof status === "string" && !sameName(status, issue.record.content.fields.status)) {
        await this.transition(key, await this.transitionTo(issue, status, trackerFileName(key)));
        issue = await this.read(key);
      }
      if (!issue) throw new SvcError("SVC_BACKEND", `the new issue ${key} could not be read back`);
      return issue.record;
    } catch (error) {
      if (!(error instanceof SvcError)) throw error;
      throw new SvcError("SVC_BACKEND", `created issue ${key}, then ${error.message}`, {
        data: { created: key },
        cause: error,
      });
    }
  }

  async update(key: string, changes: RecordChanges, base: BaseToken): Promise<WriteOutcome> {
    const found = await readForWrite(() => this.read(key), base);
    if (found.kind !== "current") return found;
    const current = found.value;
    const what = `updating issue ${key}`;
    const status = changes.fields.status;
    // A status cannot be emptied: `status: null` leaves it as it is.
    const transition =
      typeof status === "string" && !sameName(status, current.record.content.fields.status)
        ? await this.transitionTo(current, status, current.record.path)
        : undefined;
    const fields = await this.fieldsFor(changes, what, current);
    const update = labelUpdate(current, changes.fields.labels);
    const edit: IssueEdit = {
      ...(Object.keys(fields).length > 0 ? { fields } : {}),
      ...(update.length > 0 ? { update: { labels: update } } : {}),
    };
    if (transition === undefined && Object.keys(edit).length === 0)
      return { kind: "ok", record: current.record };
    if (transition) await this.transition(key, transition);
    if (Object.keys(edit).length > 0) {
      // "Edit issue" answers 204 (200 only with returnIssue, which svc does not ask for): any other answer,
      // a 200 page of a proxy too, is no edit made.
      const response = await this.mutate("PUT", this.issuePath(key), edit);
      if (response.status !== 204) {
        const failure = this.failure(what, response);
        if (!transition) throw failure;
        throw new SvcError(
          "SVC_BACKEND",
          `${failure.message} (the status of ${key} did change to ${JSON.stringify(transition.to)}: run git pull before pushing again)`,
          { data: failure.data },
        );
      }
    }
    const after = await this.read(key);
    return after ? { kind: "ok", record: after.record } : { kind: "gone" };
  }

  async remove(key: string, base: BaseToken): Promise<DeleteOutcome> {
    const found = await readForWrite(() => this.read(key), base);
    if (found.kind !== "current") return found;
    const current = found.value;
    if (current.subtasks.length > 0) {
      const files = current.subtasks.map(trackerFileName);
      throw new SvcError(
        "SVC_BACKEND",
        `issue ${key} has ${current.subtasks.length === 1 ? "the subtask" : "the subtasks"} ${current.subtasks.join(", ")}, and svc never deletes subtasks with their parent; ` +
          `delete ${current.subtasks.length === 1 ? "it" : "them"} first (git rm ${files.join(" ")}), or keep ${key}: git checkout origin/main -- ${current.record.path}`,
        { data: { status: 400, subtasks: current.subtasks } },
      );
    }
    const response = await this.mutate("DELETE", `${this.issuePath(key)}?deleteSubtasks=false`);
    if (response.status === 404) return { kind: "gone" };
    // "Delete issue" answers 204: a 200 (a proxy's page) is no deletion.
    if (response.status !== 204) throw this.failure(`deleting issue ${key}`, response);
    return { kind: "ok" };
  }
}
