/**
 * The forge backend (issue 14; DESIGN.md §2, §6): a repository's issues on GitHub's REST API as
 * `issues/0042.md` records, read and written.
 *
 * - Bearer auth from `FORGE_TOKEN`; the header never appears in an error or a log.
 * - Listing: `GET /repos/{o}/{r}/issues?state=all&sort=updated&direction=asc&per_page=100`, `since` for a
 *   delta, following `Link: <…>; rel="next"`, through backends/forge/pages.ts (the validators, the next-URL
 *   checks, the primed delta). Pull requests are skipped.
 * - Conditional requests: each result page's `ETag` is kept in the cache with the keys it listed; the
 *   next listing sends `If-None-Match`, and a `304` (which costs no quota) stands for the same keys. So a
 *   no-op `git fetch` spends none of the hourly quota.
 * - Comments: `comments()` (backends/forge/comments.ts), through the same wire; `commentSource` adapts it
 *   for the sync and the push (backends/forge/comment-source.ts) unless comments are turned off.
 * - Milestones, issue types and parents (issue 35): read from the issue objects the listing returns; a push
 *   that changes them is checked against the repository's milestones and issue types before any write, and
 *   a parent is set by the sub-issue calls (backends/forge/planning.ts).
 * - Writes: the forge has no `If-Match` for issues. Immediately before each write the issue is read again
 *   (conditionally) and its `updated_at` compared with the base; newer → `fetch first`. A write landing
 *   between that read and the write cannot be detected (README "The forge"); the window is one round trip.
 *   `git rm` closes the issue as not planned: the REST API cannot delete issues.
 */
import { isObject } from "../../core/checks.js";
import { excerpt, SvcError, UserFacingError } from "../../core/errors.js";
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
import { stringList } from "../record.js";
import { RestClient, type RestResponse, readForWrite, UnexpectedShapeError } from "../rest.js";
import { ForgeCommentSource } from "./comment-source.js";
import { ForgeComments } from "./comments.js";
import { checkForgeProject, type ForgeConfig } from "./config.js";
import { type ForgeIssue, PULL_REQUEST, toForgeIssue } from "./issue.js";
import { ForgePages, type ForgeWire, type Pages, queryString, type UpdatedListing } from "./pages.js";
import { patchFor } from "./patch.js";
import { ForgePlanning, parentNumber } from "./planning.js";
import { forgeLimits } from "./quota.js";
import { FORGE_SCHEMA, type ForgeStatus, forgeStateOf } from "./schema.js";
import type { CreateIssueBody, ErrorBody, ListIssuesQuery, UpdateIssueBody, WireIssue } from "./wire.js";

/** The most the forge serves per result page. */
const PER_PAGE = 100;
const API_VERSION = "2022-11-28";

/** What `git rm` of an issue does on the forge, said in the push output. */
export const CLOSED_NOTE = "closed as not planned; it stays as status wont_fix";

export class ForgeBackend implements WritableBackend {
  readonly kind = "forge";
  readonly schema = FORGE_SCHEMA;
  /** `since` has second precision and listings may lag a little: a minute of overlap, free with ETags. */
  readonly overlapMs = 60_000;
  /** 65,536 characters of body, each at most 4 bytes of UTF-8, plus the frontmatter. */
  readonly maxRecordBytes = 65_536 * 4 + 64 * 1024;
  readonly description: string;
  private readonly owner: string;
  private readonly repo: string;
  private readonly origin: string;
  private validators: ValidatorStore | undefined;
  private readonly rest: RestClient;
  private readonly wire: ForgeWire;
  private readonly pages: ForgePages;
  private readonly planning: ForgePlanning;
  /** `options.comments`: false leaves comments out (`svc.comments false`). */
  readonly commentSource: ForgeCommentSource | undefined;
  /** What this process's issue listings saw, for the comment source: when the last began (ms), pull requests. */
  private issuesListedAt: number | undefined;
  private readonly pullRequests = new Set<string>();

  constructor(
    private readonly config: ForgeConfig,
    readonly project: string,
    http: HttpClient,
    options: { readonly comments?: boolean } = {},
  ) {
    ({ owner: this.owner, repo: this.repo } = checkForgeProject(project));
    this.origin = new URL(config.baseUrl).origin;
    this.description = `forge repository ${project} at ${config.baseUrl}`;
    this.rest = new RestClient({
      http,
      description: this.description,
      headers: {
        authorization: `Bearer ${config.token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": API_VERSION,
      },
      errorText: forgeErrorText,
      unauthorized: (response) =>
        new UserFacingError(
          "SVC_BACKEND",
          `the forge at ${this.origin} refused the token (401 ${forgeErrorText(response.body) ?? "Bad credentials"}); check FORGE_TOKEN: it must be a valid token that can read ${this.project}'s issues (and write them, to push)`,
          { data: { status: 401 } },
        ),
      limits: forgeLimits(this.origin),
    });
    this.wire = {
      rest: this.rest,
      http,
      origin: this.origin,
      baseUrl: config.baseUrl,
      description: this.description,
      validators: () => this.validators,
      failure: (what, response) => this.failure(what, response),
    };
    this.pages = new ForgePages(this.wire);
    this.planning = new ForgePlanning({
      pages: this.pages,
      project,
      call: (method, url, body) => this.call(method, url, body),
      repoPath: (rest) => this.repoPath(rest),
      failure: (what, response) => this.failure(what, response),
      issue: (key) => this.read(key),
    });
    this.commentSource =
      options.comments === false
        ? undefined
        : new ForgeCommentSource(this.comments(), {
            listedAt: () => this.issuesListedAt,
            isPullRequest: (key) => this.pullRequests.has(key),
            overlapMs: this.overlapMs,
          });
  }

  /** The backend of `project` at `config.baseUrl`, its origin checked against the allowlist first. */
  static create(
    config: ForgeConfig,
    project: string,
    agent: string,
    options: { readonly comments?: boolean } = {},
  ): ForgeBackend {
    const http = new HttpClient({ agent, allowedOrigins: config.allowedOrigins });
    http.checkEgress(config.baseUrl);
    return new ForgeBackend(config, project, http, options);
  }

  /** `GET /repos/{owner}/{repo}` ("Get a repository"): the token works and can see the repository. */
  async probe(): Promise<void> {
    const response = await this.call("GET", this.repoPath());
    if (response.status !== 200) throw this.failure(`reading repository ${this.project}`, response);
  }

  useValidators(store: ValidatorStore): void {
    this.validators = store;
  }

  private repoPath(rest = ""): string {
    return `${this.config.baseUrl}/repos/${encodeURIComponent(this.owner)}/${encodeURIComponent(this.repo)}${rest}`;
  }

  // -------------------------------------------------------------------------------------------------------
  // Requests

  private call(method: string, url: string, body?: unknown): Promise<RestResponse> {
    return this.rest.call(method, url, body);
  }

  /** The forge's validation errors (`errors[].message`, else `message`), for a 422. */
  private validationMessage(response: RestResponse): string {
    try {
      const value: unknown = JSON.parse(response.body.toString("utf8"));
      const errors = isObject(value) ? (value as ErrorBody).errors : undefined;
      if (Array.isArray(errors)) {
        // The description: objects with `message` optional, `field` and `code`; older answers: strings.
        const details = (errors as unknown[])
          .map((error) =>
            typeof error === "string"
              ? error
              : isObject(error)
                ? typeof error.message === "string"
                  ? error.message
                  : [error.field, error.code].filter((part) => typeof part === "string").join(" ")
                : "",
          )
          .filter((text) => text !== "");
        if (details.length > 0) return excerpt(details.join("; "), 500);
      }
    } catch {
      // Not JSON: the excerpt below.
    }
    return forgeErrorText(response.body) ?? excerpt(response.body.toString("utf8"), 300);
  }

  /** A repository-level refusal (404/410), or any other unexpected answer, as an error. */
  private failure(what: string, response: RestResponse): SvcError {
    const status = response.status;
    if (status === 404) {
      return new UserFacingError(
        "SVC_BACKEND",
        `${what}: the forge at ${this.origin} has no repository ${this.project}, or FORGE_TOKEN cannot see it (404); check the name (svc init forge::<owner>/<repo>) and the token's access`,
        { data: { status } },
      );
    }
    if (status === 410) {
      return new UserFacingError(
        "SVC_BACKEND",
        `${what}: issues are disabled on ${this.project} (410); an admin can enable them in the repository's settings (Features: Issues)`,
        { data: { status } },
      );
    }
    if (status === 422) {
      return new SvcError(
        "SVC_BACKEND",
        `${what}: the forge refused it (422): ${this.validationMessage(response)}`,
        { data: { status } },
      );
    }
    if (status === 403) {
      return new SvcError(
        "SVC_BACKEND",
        `${what}: the forge refused it (403 ${forgeErrorText(response.body) ?? "Forbidden"}); FORGE_TOKEN needs permission to write ${this.project}'s issues`,
        { data: { status } },
      );
    }
    return this.rest.failure(what, response);
  }

  // -------------------------------------------------------------------------------------------------------
  // Listing

  /** "List repository issues": the query's order is kept, as kept validators are found by the URL. */
  private listUrl(since?: string): string {
    const query: ListIssuesQuery = {
      state: "all",
      sort: "updated",
      direction: "asc",
      per_page: PER_PAGE,
      ...(since === undefined ? {} : { since }),
    };
    return this.repoPath(`/issues?${queryString(query)}`);
  }

  private malformed(reason: string, status: number): SvcError {
    return new UnexpectedShapeError(
      `${this.description}: the server sent a malformed issue (${reason}); nothing was written`,
      status,
    );
  }

  /** The issues of one result page (pull requests skipped). */
  private issuesOf(value: unknown, what: string, status: number): ForgeIssue[] {
    if (!Array.isArray(value))
      throw new UnexpectedShapeError(
        `${this.description}: ${what} answered without a list of issues`,
        status,
      );
    const issues: ForgeIssue[] = [];
    for (const item of value) {
      const issue = toForgeIssue(item, this.project);
      if (issue === PULL_REQUEST) {
        const number = isObject(item) ? item.number : undefined;
        if (typeof number === "number") this.pullRequests.add(String(number));
        continue;
      }
      if (typeof issue === "string") throw this.malformed(issue, status);
      issues.push(issue);
    }
    return issues;
  }

  /** The issues listing as backends/forge/pages.ts walks it. */
  private get issueListing(): UpdatedListing<BackendRecord> {
    return {
      url: (since) => this.listUrl(since),
      what: (since) =>
        `listing the issues of ${this.project}${since === undefined ? "" : ` changed since ${since}`}`,
      overlapMs: this.overlapMs,
      read: (value, what, status) => this.issuesOf(value, what, status).map((issue) => issue.record),
      key: (record) => record.key,
      updatedAt: (record) => record.updatedAt,
    };
  }

  async listAll(): Promise<Listing> {
    this.issuesListedAt = Date.now();
    return toListing(await this.pages.listAll(this.issueListing));
  }

  async listChangedSince(since: string): Promise<Listing> {
    this.issuesListedAt = Date.now();
    return toListing(await this.pages.listChangedSince(this.issueListing, since));
  }

  /** The first `limit` issues and whether there are more (for `svc list`). */
  async listSome(limit: number): Promise<{ records: BackendRecord[]; more: boolean }> {
    const listing = this.issueListing;
    const pages = await this.pages.walk(listing.url(), listing.what(), listing, undefined, limit);
    return { records: pages.items.slice(0, limit), more: pages.more };
  }

  /** The repository's issue comments (backends/forge/comments.ts), through this backend's wire. */
  comments(): ForgeComments {
    return new ForgeComments({
      wire: this.wire,
      pages: this.pages,
      repoUrl: this.repoPath(),
      project: this.project,
      overlapMs: this.overlapMs,
    });
  }

  // -------------------------------------------------------------------------------------------------------
  // Writes

  /** The issue as it is now (read conditionally), or undefined when it is gone or a pull request. */
  async read(key: string): Promise<ForgeIssue | undefined> {
    const what = `reading issue ${key}`;
    const answer = await this.pages.conditionalGet(
      this.repoPath(`/issues/${encodeURIComponent(key)}`),
      what,
      "now",
    );
    const status = answer.response.status;
    if (status === 410) return undefined; // "This issue was deleted"
    if (status === 404) {
      // A repository the token can no longer see answers 404 as well: that is no deleted issue.
      const repo = await this.call("GET", this.repoPath());
      if (repo.status !== 200) throw this.failure(what, repo);
      return undefined;
    }
    if (answer.value === undefined) throw this.failure(what, answer.response);
    const issue = toForgeIssue(answer.value, this.project);
    if (issue === PULL_REQUEST) return undefined;
    if (typeof issue === "string") throw this.malformed(issue, status);
    return issue;
  }

  private async send(
    method: "POST" | "PATCH",
    url: string,
    body: CreateIssueBody | UpdateIssueBody,
    what: string,
  ): Promise<ForgeIssue> {
    const response = await this.call(method, url, body);
    if (response.status !== 200 && response.status !== 201) throw this.failure(what, response);
    const issue = toForgeIssue(this.rest.parse<WireIssue>(what, response), this.project);
    if (issue === PULL_REQUEST || typeof issue === "string")
      throw new UnexpectedShapeError(
        `${this.description}: ${what} answered ${response.status} with ${issue === PULL_REQUEST ? "a pull request" : `a malformed issue (${issue})`}`,
        response.status,
      );
    const etag = response.headers.etag;
    if (etag && this.validators && method === "PATCH") {
      // The answer is the issue as it now is: the next read of it may be a 304.
      this.validators.remember({ url, etag, payload: response.body.toString("utf8") });
    }
    return issue;
  }

  /** The milestones and issue types a push's writes name, checked against the repository's lists. */
  checkWrites(writes: readonly WriteToCheck[]): Promise<readonly { path: string; message: string }[]> {
    return this.planning.problems(writes);
  }

  /** The number of the milestone titled `title` (checkWrites refused any other before the first write). */
  private async milestoneLookup(changes: RecordChanges): Promise<(title: string) => number> {
    if (typeof changes.fields.milestone !== "string") return () => Number.NaN;
    const numbers = await this.planning.milestoneNumbers();
    return (title) => {
      const number = numbers.get(title);
      if (number === undefined)
        throw new UserFacingError("SVC_BACKEND", `${this.project} has no milestone ${JSON.stringify(title)}`);
      return number;
    };
  }

  async create(changes: RecordChanges): Promise<BackendRecord> {
    const fields = changes.fields;
    const status = (typeof fields.status === "string" ? fields.status : "open") as ForgeStatus;
    const target = forgeStateOf(status);
    const labels = [...stringList(fields.labels), ...(target.label ? [target.label] : [])];
    const milestone =
      typeof fields.milestone === "string"
        ? (await this.milestoneLookup(changes))(fields.milestone)
        : undefined;
    const body: CreateIssueBody = {
      title: typeof fields.title === "string" ? fields.title : "",
      body: changes.body ?? "",
      ...(labels.length > 0 ? { labels } : {}),
      ...(stringList(fields.assignees).length > 0 ? { assignees: stringList(fields.assignees) } : {}),
      ...(milestone === undefined ? {} : { milestone }),
      ...(typeof fields.type === "string" ? { type: fields.type } : {}),
    };
    // A create whose milestone or type the forge dropped is not checked here (an error would drop its create
    // journal row, and the next push would create it again): checkWrites refused it when the token has no
    // push access.
    const created = await this.send("POST", this.repoPath("/issues"), body, "creating an issue");
    // The parent and a closed status are set by later requests, as on an update.
    const parent = parentNumber(fields.parent);
    await this.afterCreate(created, () => this.planning.link(created, undefined, parent));
    if (target.state === "open") return parent === undefined ? created.record : await this.reread(created);
    const closed = await this.send(
      "PATCH",
      this.repoPath(`/issues/${created.number}`),
      { state: "closed", state_reason: target.stateReason },
      `closing the new issue ${created.number}`,
    );
    return closed.record;
  }

  /**
   * A request that completes a create (the parent's link): its failure must not read as a refusal of the
   * create, which would drop the create's journal row while the issue exists; the next push finds the issue.
   */
  private async afterCreate(created: ForgeIssue, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      // Whatever the failure (a refusal, no answer, a redirect): the create was made, and must not look unsent.
      if (!(error instanceof SvcError)) throw error;
      throw new SvcError(
        "SVC_BACKEND",
        `issue ${created.number} was created, but then ${error.message}; the next push finds the issue (set its parent again after git pull)`,
        { cause: error },
      );
    }
  }

  /** The issue as it is after a write whose answer was not the issue (a sub-issue link). */
  private async reread(issue: ForgeIssue): Promise<BackendRecord> {
    const now = await this.read(String(issue.number));
    if (!now)
      throw new SvcError("SVC_BACKEND", `${this.description}: issue ${issue.number} is gone after a write`);
    return now.record;
  }

  /**
   * The forge silently drops a milestone or a type a token without push access sends (checkWrites refuses
   * those before any write; this is for a token whose access changed meanwhile): the answer is compared with
   * what was sent, and a dropped change is an error (the record is not what the file says).
   */
  private checkTaken(answer: ForgeIssue, sent: UpdateIssueBody): void {
    const dropped: string[] = [];
    if (sent.milestone !== undefined && answer.milestone !== sent.milestone) dropped.push("milestone");
    if (sent.type !== undefined && (answer.record.content.fields.type ?? null) !== sent.type)
      dropped.push("type");
    if (dropped.length === 0) return;
    throw new SvcError(
      "SVC_BACKEND",
      `the forge took the write of issue ${answer.number} but did not set its ${dropped.join(" and ")} (it drops those without a word for a token without push access to ${this.project}); give FORGE_TOKEN push access, or put the line back as it was`,
      { data: { status: 403 } },
    );
  }

  async update(key: string, changes: RecordChanges, base: BaseToken): Promise<WriteOutcome> {
    const found = await readForWrite(() => this.read(key), base);
    if (found.kind !== "current") return found;
    const current = found.value;
    const patch = patchFor(current, changes, await this.milestoneLookup(changes));
    const from = parentNumber(current.record.content.fields.parent);
    const to = changes.fields.parent === undefined ? from : parentNumber(changes.fields.parent);
    // The links first: the PATCH's answer (when there is one) is then the issue as both left it.
    await this.planning.link(current, from, to);
    if (Object.keys(patch).length === 0)
      return { kind: "ok", record: from === to ? current.record : await this.reread(current) };
    const updated = await this.send(
      "PATCH",
      this.repoPath(`/issues/${current.number}`),
      patch,
      `updating issue ${key}`,
    );
    this.checkTaken(updated, patch);
    return { kind: "ok", record: updated.record };
  }

  /** The REST API cannot delete an issue: it is closed as not planned, and stays as status `wont_fix`. */
  async remove(key: string, base: BaseToken): Promise<DeleteOutcome> {
    // Closed as not planned already (the close of a push whose answer was lost): nothing left to write.
    const found = await readForWrite(
      () => this.read(key),
      base,
      (issue) => issue.state === "closed" && issue.stateReason === "not_planned",
    );
    if (found.kind !== "current") return found;
    const current = found.value;
    const patch = patchFor(current, { fields: { status: "wont_fix" } });
    if (Object.keys(patch).length === 0) return { kind: "ok", record: current.record, note: CLOSED_NOTE };
    const closed = await this.send(
      "PATCH",
      this.repoPath(`/issues/${current.number}`),
      patch,
      `closing issue ${key}`,
    );
    return { kind: "ok", record: closed.record, note: CLOSED_NOTE };
  }
}

/** The forge's own words in an error body (`message`), cut to 300 characters; undefined when it has none. */
function forgeErrorText(body: Buffer): string | undefined {
  try {
    const value: unknown = JSON.parse(body.toString("utf8"));
    const message = isObject(value) ? (value as ErrorBody).message : undefined;
    return typeof message === "string" ? excerpt(message, 300) : undefined;
  } catch {
    return undefined;
  }
}

/** A walk's pages as the sync's `Listing`. */
function toListing(pages: Pages<BackendRecord>): Listing {
  return {
    records: pages.items,
    unchanged: pages.unchanged,
    validators: pages.validators,
    complete: pages.complete,
    ...(pages.replacesValidators === undefined ? {} : { replacesValidators: pages.replacesValidators }),
    ...(pages.cursorCeiling === undefined ? {} : { cursorCeiling: pages.cursorCeiling }),
  };
}
