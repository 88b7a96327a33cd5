/**
 * The forge backend (issue 14; DESIGN.md §2, §6): a repository's issues on GitHub's REST API as
 * `issues/0042.md` records, read and written.
 *
 * - Bearer auth from `FORGE_TOKEN`; the header never appears in an error or a log.
 * - Listing: `GET /repos/{o}/{r}/issues?state=all&sort=updated&direction=asc&per_page=100`, `since` for a
 *   delta, following `Link: <…>; rel="next"`. A next URL must be on the API's own origin (and pass the
 *   allowlist and the pagination guard) before it is asked. Pull requests are skipped.
 * - Conditional requests: each result page's `ETag` is kept in the cache with the keys it listed; the
 *   next listing sends `If-None-Match`, and a `304` (which costs no quota) stands for the same keys. So a
 *   no-op `git fetch` spends none of the hourly quota.
 * - Writes: the forge has no `If-Match` for issues. Immediately before each write the issue is read again
 *   (conditionally) and its `updated_at` compared with the base; newer → `fetch first`. A write landing
 *   between that read and the write cannot be detected (README "The forge"); the window is one round trip.
 *   `git rm` closes the issue as not planned: the REST API cannot delete issues.
 */
import { isObject } from "../../core/checks.js";
import { excerpt, SvcError, UserFacingError } from "../../core/errors.js";
import { HttpClient, serverClockFloor } from "../../core/http.js";
import { PageWalk } from "../../core/pagination.js";
import type {
  BackendRecord,
  BaseToken,
  DeleteOutcome,
  Listing,
  RecordChanges,
  Validator,
  ValidatorStore,
  WritableBackend,
  WriteOutcome,
} from "../backend.js";
import { stringList } from "../record.js";
import { RestClient, type RestResponse, readForWrite, UnexpectedShapeError } from "../rest.js";
import { checkForgeProject, type ForgeConfig } from "./config.js";
import { type ForgeIssue, PULL_REQUEST, toForgeIssue } from "./issue.js";
import { linkTarget } from "./link.js";
import { patchFor } from "./patch.js";
import { forgeLimits } from "./quota.js";
import { FORGE_SCHEMA, type ForgeStatus, forgeStateOf } from "./schema.js";
import type { CreateIssueBody, ErrorBody, ListIssuesQuery, UpdateIssueBody, WireIssue } from "./wire.js";

/** The most the forge serves per result page. */
const PER_PAGE = 100;
const API_VERSION = "2022-11-28";

/** What `git rm` of an issue does on the forge, said in the push output. */
export const CLOSED_NOTE = "closed as not planned; it stays as status wont_fix";

interface Answer {
  /** The server's answer: 200, a 304 for a kept answer, or a refusal. */
  readonly response: RestResponse;
  /** The JSON of a 200, or of the kept answer a 304 stands for; undefined for any other status. */
  readonly value?: unknown;
  /** The kept validator a `304` confirmed. */
  readonly reused?: Validator;
}

/** The kept validator of `url` with its payload read, or undefined (none kept, or unreadable: ask afresh). */
function keptValidator(
  store: ValidatorStore | undefined,
  url: string,
): { validator: Validator; value: unknown } | undefined {
  const validator = store?.lookup(url);
  if (!validator) return undefined;
  try {
    return { validator, value: JSON.parse(validator.payload) };
  } catch {
    return undefined;
  }
}

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

  constructor(
    private readonly config: ForgeConfig,
    readonly project: string,
    private readonly http: HttpClient,
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
  }

  /** The backend of `project` at `config.baseUrl`, its origin checked against the allowlist first. */
  static create(config: ForgeConfig, project: string, agent: string): ForgeBackend {
    const http = new HttpClient({ agent, allowedOrigins: config.allowedOrigins });
    http.checkEgress(config.baseUrl);
    return new ForgeBackend(config, project, http);
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

  private call(method: string, url: string, body?: unknown, etag?: string): Promise<RestResponse> {
    return this.rest.call(method, url, body, etag === undefined ? {} : { "if-none-match": etag });
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

  /**
   * A GET made conditional by the validator kept for `url`: a `304` gives the kept answer back (and costs
   * no quota). Only `keep` answers' validators are written at once (one issue); a listing's are returned.
   */
  private async conditionalGet(url: string, what: string, keep: "now" | "later"): Promise<Answer> {
    const known = keptValidator(this.validators, url);
    const response = await this.call("GET", url, undefined, known?.validator.etag);
    if (response.status === 304 && known) return { response, value: known.value, reused: known.validator };
    if (response.status !== 200) return { response };
    const value = this.rest.parse(what, response);
    const etag = response.headers.etag;
    if (keep === "now" && etag && this.validators) {
      this.validators.remember({ url, etag, payload: response.body.toString("utf8") });
    }
    return { response, value };
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
    const pairs = Object.entries(query).map(
      ([name, value]) => `${name}=${encodeURIComponent(String(value))}`,
    );
    return this.repoPath(`/issues?${pairs.join("&")}`);
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
      const issue = toForgeIssue(item);
      if (issue === PULL_REQUEST) continue;
      if (typeof issue === "string") throw this.malformed(issue, status);
      issues.push(issue);
    }
    return issues;
  }

  /** The next result page's URL from a `Link` header, checked before anything is sent to it. */
  private nextPage(link: string | undefined, walk: PageWalk, what: string): string | undefined {
    const next = linkTarget(link, "next");
    if (next === undefined || next === "") return undefined;
    let url: URL;
    try {
      url = new URL(next, this.config.baseUrl);
    } catch {
      throw new SvcError(
        "SVC_BACKEND",
        `${this.description}: ${what}: the Link header's next URL is not a URL`,
      );
    }
    if (url.origin !== this.origin) {
      throw new UserFacingError(
        "SVC_BACKEND",
        `${this.description}: ${what}: the Link header points the next result page to ${url.origin}, not to ${this.origin}; svc does not follow it (it would send FORGE_TOKEN there) and stopped the listing. Report it to the admins of ${this.origin}`,
        { data: { origin: url.origin } },
      );
    }
    this.http.checkEgress(url.href);
    walk.follow(url.href);
    return url.href;
  }

  /**
   * Every result page from `first`. The order is by `updated_at`, paged by offset: an issue updated while
   * the pages are read moves to the end and may push another past a page already read. When that can have
   * happened (an issue updated after the listing began, with more than one page), the listing is marked
   * incomplete and its cursor held at `since`, so no deletion is inferred and the next sync asks again.
   */
  private async walk(
    first: string,
    what: string,
    since?: string,
    limit?: number,
  ): Promise<Listing & { more: boolean }> {
    const walk = new PageWalk({ server: this.origin, listing: what, pointer: 'Link rel="next"', first });
    const records: BackendRecord[] = [];
    const unchanged: string[] = [];
    const validators: Validator[] = [];
    let startedAt: string | undefined;
    let pages = 0;
    for (let url: string | undefined = first; url !== undefined; pages++) {
      const answer = await this.conditionalGet(url, what, "later");
      const headers = answer.response.headers;
      startedAt ??= serverTime(headers.date);
      let next: string | undefined;
      if (answer.reused) {
        // Kept again with this listing: its validators may replace the earlier ones.
        validators.push(answer.reused);
        const kept = keptPage(answer.value);
        unchanged.push(...kept.keys);
        next = kept.next;
        if (linkTarget(headers.link, "next") !== undefined) next = headers.link;
      } else if (answer.response.status === 200) {
        const issues = this.issuesOf(answer.value, what, answer.response.status);
        for (const issue of issues) records.push(issue.record);
        next = headers.link;
        const etag = headers.etag;
        const page = { keys: issues.map((issue) => issue.record.key), next: headers.link ?? null };
        if (etag) validators.push({ url, etag, payload: JSON.stringify(page) });
      } else {
        throw this.failure(what, answer.response);
      }
      if (limit !== undefined && records.length > limit) return { records, complete: false, more: true };
      url = this.nextPage(next, walk, what);
    }
    const moved =
      pages > 1 && startedAt !== undefined && records.some((record) => record.updatedAt >= startedAt);
    return {
      records,
      unchanged,
      validators,
      complete: since === undefined && !moved,
      more: false,
      ...(moved && since !== undefined ? { cursorCeiling: since } : {}),
    };
  }

  async listAll(): Promise<Listing> {
    return await this.primeDelta(await this.walk(this.listUrl(), `listing the issues of ${this.project}`));
  }

  /**
   * After a complete full listing, the delta listing the next fetch will make (from the newest `updated_at`,
   * less the overlap, as the sync computes it), unless its validator is kept already: so even the first
   * `git fetch` after a clone is answered `304` and spends no quota; the clone spends the request instead.
   * Its records are part of the listing: one changed since the full listing must not hide behind its ETag.
   */
  private async primeDelta(listing: Listing): Promise<Listing> {
    let newest: string | undefined;
    for (const record of listing.records)
      if (newest === undefined || record.updatedAt > newest) newest = record.updatedAt;
    if (!listing.complete || newest === undefined) return listing;
    const since = new Date(Date.parse(newest) - this.overlapMs).toISOString().replace(/\.\d+Z$/, "Z");
    if (this.validators?.lookup(this.listUrl(since))) return listing;
    const delta = await this.listChangedSince(since);
    return {
      ...listing,
      records: [...listing.records, ...delta.records],
      validators: [...(listing.validators ?? []), ...(delta.validators ?? [])],
      replacesValidators: delta.replacesValidators,
      ...(delta.cursorCeiling === undefined ? {} : { cursorCeiling: delta.cursorCeiling }),
    };
  }

  async listChangedSince(since: string): Promise<Listing> {
    const seconds = since.replace(/\.\d+Z$/, "Z");
    const listing = await this.walk(
      this.listUrl(seconds),
      `listing the issues of ${this.project} changed since ${seconds}`,
      seconds,
    );
    // Only the latest delta listing's validators are worth keeping: an older `since` is not asked again.
    return { ...listing, replacesValidators: `${this.listUrl()}&since=` };
  }

  /** The first `limit` issues and whether there are more (for `svc list`). */
  async listSome(limit: number): Promise<{ records: BackendRecord[]; more: boolean }> {
    const listing = await this.walk(
      this.listUrl(),
      `listing the issues of ${this.project}`,
      undefined,
      limit,
    );
    return { records: listing.records.slice(0, limit), more: listing.more };
  }

  // -------------------------------------------------------------------------------------------------------
  // Writes

  /** The issue as it is now (read conditionally), or undefined when it is gone or a pull request. */
  async read(key: string): Promise<ForgeIssue | undefined> {
    const what = `reading issue ${key}`;
    const answer = await this.conditionalGet(
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
    const issue = toForgeIssue(answer.value);
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
    const issue = toForgeIssue(this.rest.parse<WireIssue>(what, response));
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

  async create(changes: RecordChanges): Promise<BackendRecord> {
    const fields = changes.fields;
    const status = (typeof fields.status === "string" ? fields.status : "open") as ForgeStatus;
    const target = forgeStateOf(status);
    const labels = [...stringList(fields.labels), ...(target.label ? [target.label] : [])];
    const created = await this.send(
      "POST",
      this.repoPath("/issues"),
      {
        title: typeof fields.title === "string" ? fields.title : "",
        body: changes.body ?? "",
        ...(labels.length > 0 ? { labels } : {}),
        ...(stringList(fields.assignees).length > 0 ? { assignees: stringList(fields.assignees) } : {}),
      },
      "creating an issue",
    );
    if (target.state === "open") return created.record;
    // A new issue is open: closing it as done or won't fix is a second request.
    const closed = await this.send(
      "PATCH",
      this.repoPath(`/issues/${created.number}`),
      { state: "closed", state_reason: target.stateReason },
      `closing the new issue ${created.number}`,
    );
    return closed.record;
  }

  async update(key: string, changes: RecordChanges, base: BaseToken): Promise<WriteOutcome> {
    const found = await readForWrite(() => this.read(key), base);
    if (found.kind !== "current") return found;
    const current = found.value;
    const patch = patchFor(current, changes);
    if (Object.keys(patch).length === 0) return { kind: "ok", record: current.record };
    const updated = await this.send(
      "PATCH",
      this.repoPath(`/issues/${current.number}`),
      patch,
      `updating issue ${key}`,
    );
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

/** A kept result page: the keys it listed and its `Link` header. */
function keptPage(value: unknown): { keys: string[]; next: string | undefined } {
  if (!isObject(value) || !Array.isArray(value.keys)) return { keys: [], next: undefined };
  return {
    keys: value.keys.filter((key): key is string => typeof key === "string"),
    next: typeof value.next === "string" ? value.next : undefined,
  };
}

/** The server's `Date` header as an RFC 3339 UTC time, a second early (it has second precision). */
function serverTime(date: string | undefined): string | undefined {
  const ms = serverClockFloor(date);
  return ms === undefined ? undefined : new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
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
