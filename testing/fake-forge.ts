/**
 * A fake of GitHub's REST API for issues (API version 2022-11-28) on an ephemeral loopback port, for the forge
 * backend's end-to-end tests (DESIGN.md §6: "a fake server … that speaks the vendor's real request/response
 * shapes").
 *
 * Shapes follow GitHub's published OpenAPI description (github/rest-api-description,
 * descriptions/api.github.com/api.github.com.2022-11-28.json) and the REST reference pages it generates:
 * - `GET /repos/{owner}/{repo}/issues` ("List repository issues": `state` open|closed|all, `labels` comma list,
 *   `sort` created|updated|comments, `direction` asc|desc, `since` ISO 8601, `per_page` default 30 max 100,
 *   `page` default 1) → an array of `issue`; pull requests are issues too and carry `pull_request`.
 *   Pagination is the `Link` header with absolute URLs; GitHub writes them in the `/repositories/{id}/issues`
 *   form, which this fake also serves.
 * - `GET|PATCH /repos/{owner}/{repo}/issues/{issue_number}` ("Get an issue", "Update an issue"), 410 for a
 *   deleted issue; `POST /repos/{owner}/{repo}/issues` ("Create an issue") → 201 with `Location`.
 * - `GET|POST|PUT /repos/{owner}/{repo}/issues/{issue_number}/labels` and `DELETE …/labels/{name}`
 *   ("List/Add/Set/Remove labels for an issue") → an array of `label`.
 * - Errors are `{message, documentation_url, status}` ("status" a string, as api.github.com sends it now);
 *   422 adds `errors: [{resource, code, field, message?}]` ("Validation Failed").
 * - Rate limits ("Rate limits for the REST API"): `x-ratelimit-*` headers on every answer; over the primary
 *   limit 403 with remaining 0; a secondary limit 403 or 429 with `retry-after`. "Use conditional requests":
 *   a 304 does not count against the primary limit.
 * - Conditional requests use the weak `ETag` only; `Last-Modified` is sent on single issues but
 *   `If-Modified-Since` is not modelled.
 * Where GitHub documents nothing, the choice is marked ASSUMPTION in a comment.
 *
 * Tests steer it through switches (`setRateLimit`, `secondaryLimit`, `redirect`, `setNextOrigin`), change data
 * as "someone else" would (`addIssue`, `editIssue`, `addLabel`, `deleteIssue`), and read `requests`, each marked
 * `counted` when it used primary quota (authenticated, not a 304, not refused by a rate limit).
 *
 * Every exchange is judged as it happens against `@octokit/openapi`'s description (testing/vendor-contract.ts);
 * `close()`, which each test's teardown calls, fails naming every departure. An answer or request wrong on
 * purpose says so where it is made (`deliberate`; DELIBERATE_HEADER).
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ExecutionContext } from "ava";
import { closeServer, listenOnLoopback } from "./loopback.js";
import { ContractWatch } from "./vendor-contract.js";

export interface FakeForgeRepoSpec {
  readonly owner: string;
  readonly name: string;
  /** Issues disabled on the repository: every issues endpoint answers 410 "Issues are disabled for this repo". */
  readonly issuesDisabled?: boolean;
  /** The token cannot see it: every request answers 404 "Not Found" (as for a private repo). */
  readonly hidden?: boolean;
  /** Numeric repository id, used in Link URLs (`/repositories/<id>/issues?...`); default 1000 + index. */
  readonly id?: number;
}

export interface FakeForgeOptions {
  /** The token the fake accepts (`Bearer <token>` or `token <token>`); default "fake-forge-token-0123456789". */
  readonly token?: string;
  /** Default: one repository acme/widgets. */
  readonly repos?: readonly FakeForgeRepoSpec[];
  /** Primary rate limit per hour (x-ratelimit-limit); default 5000. */
  readonly quota?: number;
  /** Clock in ms for created_at/updated_at/closed_at and x-ratelimit-reset; default Date.now. */
  readonly now?: () => number;
  /** The login of the token's user (author of issues svc creates); default "svc-bot". */
  readonly login?: string /**
   * `false`: exchanges are not judged against the vendor's description (the benchmarks, which time svc);
   * every test leaves it on.
   */;
  readonly vendorChecks?: false;
}

export interface FakeForgeLabel {
  readonly name: string;
}

export type StateReason = "completed" | "not_planned" | "reopened";

/** The server's state of one issue or pull request (a copy). */
export interface FakeForgeIssue {
  readonly number: number;
  readonly title: string;
  readonly body: string | null;
  readonly state: "open" | "closed";
  readonly stateReason: StateReason | null;
  /** Label names in order. */
  readonly labels: readonly string[];
  /** Assignee logins. */
  readonly assignees: readonly string[];
  readonly pullRequest: boolean;
  /** ISO 8601 UTC, second precision, "Z" (as GitHub: 2011-04-22T13:33:48Z). */
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly closedAt: string | null;
}

export interface FakeForgeRequest {
  readonly method: string;
  /** Path and query exactly as sent. */
  readonly path: string;
  /** Lower-case header names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** 0 while in flight. */
  readonly status: number;
  /** Whether this request was counted against the primary quota (a 304 is not, nor a 401). */
  readonly counted: boolean;
  /** `Date.now()` when it arrived (the real clock, not the `now` option). */
  readonly receivedAt: number;
}

export interface IssueSeed {
  readonly title: string;
  readonly body?: string | null;
  readonly state?: "open" | "closed";
  readonly stateReason?: StateReason | null;
  readonly labels?: readonly string[];
  readonly assignees?: readonly string[];
  readonly pullRequest?: boolean;
}

export interface IssueEdit {
  readonly title?: string;
  readonly body?: string | null;
  readonly state?: "open" | "closed";
  readonly stateReason?: StateReason | null;
  readonly labels?: readonly string[];
  readonly assignees?: readonly string[];
}

export interface FakeForge {
  /** Base URL to configure as SVC_FORGE_BASE_URL: "http://127.0.0.1:<port>" (no path, like https://api.github.com). */
  readonly url: string;
  /** Same as url; goes on SVC_ALLOWED_ORIGINS. */
  readonly origin: string;
  readonly token: string;
  /** Every request received, oldest first. */
  readonly requests: readonly FakeForgeRequest[];
  /** Requests counted against the primary quota so far. */
  readonly quotaUsed: number;
  /**
   * Creates `count` issues in "owner/name" (plus `pullRequests` pull requests interleaved evenly), with varied
   * tricky titles and bodies, labels and assignees; returns the issue numbers (not the PRs), in order. Each
   * gets a distinct updated_at in the past, increasing with the number.
   */
  seed(repo: string, count: number, options?: { pullRequests?: number }): number[];
  /** One issue or pull request, created server-side by "someone else" (alice). */
  addIssue(repo: string, seed: IssueSeed): FakeForgeIssue;
  /** Someone else edits it in the browser: updated_at moves to now (strictly later than before, at least +1 s). */
  editIssue(repo: string, number: number, edit: IssueEdit): FakeForgeIssue;
  /** Someone adds a label in the browser (updated_at moves, as on GitHub). */
  addLabel(repo: string, number: number, name: string): FakeForgeIssue;
  /** An admin deletes the issue (it disappears from every listing; GET answers 410 "This issue was deleted"). */
  deleteIssue(repo: string, number: number): void;
  issue(repo: string, number: number): FakeForgeIssue | undefined;
  /** Issues and pull requests, by number. */
  issues(repo: string): FakeForgeIssue[];
  /** The numeric id of "owner/name" (what Link URLs name). */
  repositoryId(repo: string): number;
  /**
   * Sets the primary limit state: remaining requests and the reset time (seconds from now). When remaining is 0,
   * counted requests answer 403 with the documented rate-limit body until the reset passes; then the quota
   * refills.
   */
  setRateLimit(remaining: number, resetInSeconds: number): void;
  /** The next `count` requests answer a secondary rate limit: `status` (403 default, or 429), with `retry-after`. */
  secondaryLimit(count: number, options?: { status?: 403 | 429; retryAfterSeconds?: number }): void;
  /** From now on, the Link rel="next" of listings points to this origin instead (hostile; undefined: honest). */
  setNextOrigin(origin: string | undefined): void;
  /** The next `count` requests answer 301 with Location set to `location` (GitHub does this for renamed repos). */
  redirect(count: number, location: string): void;
  /**
   * Every exchange judged against the vendor's description as it happened (testing/vendor-contract.ts);
   * `close()` fails naming each departure.
   */
  readonly contract: ContractWatch;
  /** Closes the server; rejects, naming them, when any exchange departed from the vendor's description. */
  close(): Promise<void>;
}

interface Label {
  readonly id: number;
  readonly name: string;
  readonly color: string;
  readonly description: string | null;
  readonly default: boolean;
}

interface Issue {
  readonly number: number;
  readonly id: number;
  readonly author: string;
  readonly pullRequest: boolean;
  title: string;
  body: string | null;
  state: "open" | "closed";
  stateReason: StateReason | null;
  /** Names, as the repository's labels spell them. */
  labels: string[];
  assignees: string[];
  readonly createdMs: number;
  updatedMs: number;
  closedMs: number | null;
  closedBy: string | null;
}

interface Repo {
  readonly id: number;
  readonly owner: string;
  readonly name: string;
  readonly hidden: boolean;
  readonly issuesDisabled: boolean;
  readonly issues: Map<number, Issue>;
  readonly deleted: Set<number>;
  /** Lower-cased name → label (GitHub matches label names case-insensitively). */
  readonly labels: Map<string, Label>;
  nextNumber: number;
}

interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** Sent as JSON; undefined sends no body. */
  readonly body?: unknown;
}

/** One request as the handlers see it; `params` are the route's captures after the repository. */
interface Call {
  readonly method: string;
  readonly url: URL;
  readonly repo: Repo;
  readonly params: readonly string[];
  readonly text: string;
  readonly forge: Forge;
  readonly shapes: Shapes;
  readonly origin: string;
  /** The origin of Link rel="next" (the fake's own unless `setNextOrigin` changed it). */
  readonly nextOrigin: string;
}

interface Route {
  readonly method: string;
  readonly path: RegExp;
  /** The reference page errors cite in `documentation_url`. */
  readonly docs: string;
  readonly handle: (call: Call) => Answer;
}

const DOCS = "https://docs.github.com/rest";
const ISSUES_DOCS = `${DOCS}/issues/issues`;
const LABELS_DOCS = `${DOCS}/issues/labels`;
const RATE_DOCS = `${DOCS}/overview/rate-limits-for-the-rest-api`;
const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;
/**
 * The length limits are not in the OpenAPI description; they come from GitHub's recorded 422s:
 * "title is too long (maximum is 256 characters)" (googleapis/repo-automation-bots#1895, anomalyco/opencode#3723)
 * and "body is too long (maximum is 65536 characters)" (JasonEtco/create-an-issue#123, projectdiscovery/nuclei#634).
 */
const MAX_TITLE = 256;
const MAX_BODY = 65_536;
const HOUR_MS = 3_600_000;
const STATE_REASONS: readonly StateReason[] = ["completed", "not_planned", "reopened"];
/** Who edits in the browser and creates issues "server-side" (a collaborator, not the token's user). */
const SOMEONE_ELSE = "alice";
const TEAM = ["alice", "bob", "carol"] as const;

/** GitHub's default labels for a new repository (name, color, description). */
const DEFAULT_LABELS: readonly (readonly [string, string, string])[] = [
  ["bug", "d73a4a", "Something isn't working"],
  ["documentation", "0075ca", "Improvements or additions to documentation"],
  ["duplicate", "cfd3d7", "This issue or pull request already exists"],
  ["enhancement", "a2eeef", "New feature or request"],
  ["good first issue", "7057ff", "Good for newcomers"],
  ["help wanted", "008672", "Extra attention is needed"],
  ["invalid", "e4e669", "This doesn't seem right"],
  ["question", "d876e3", "Further information is requested"],
  ["wontfix", "ffffff", "This will not be worked on"],
];

const SEED_TITLES: readonly ((n: number) => string)[] = [
  (n) => `Issue ${n}: a plain title`,
  (n) => `Fix "quoted" value: colon ${n}`,
  (n) => `Ünïcödé 日本語 ${n} — émoji 🚀`,
  (n) => `--- ${n} looks like a fence`,
  (n) => `key: value # ${n}`,
  (n) => `'single' & <angle> [brackets] ${n}`,
];

/** Bodies that break naive handling: null, empty, CRLF, `---` lines, YAML-looking text, emoji, trailing spaces. */
const SEED_BODIES: readonly ((n: number) => string | null)[] = [
  (n) => `Plain body of issue ${n}.`,
  () => null,
  (n) => `Windows line endings ${n}\r\nsecond line\r\n`,
  (n) => `---\ntitle: not the real title\nstate: closed\nnumber: ${n}\n---\nBody after a front-matter block.`,
  () => "",
  (n) => `Emoji 🎉🧪 and a ZWJ sequence 👩‍💻 (${n})\n\nNon-BMP: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, e\u0301, zero\u200bwidth`,
  (n) => `Above a rule ${n}\n\n---\n\nbelow it, with trailing spaces   \n\n`,
  (n) => `\`\`\`yaml\nid: ${n}\nlist: [1, 2]\nquote: "a: b"\n\`\`\`\n`,
];

const SEED_ASSIGNEES: readonly (readonly string[])[] = [[], ["alice"], ["bob", "carol"]];
const REACTIONS = ["+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"] as const;

const SEED_LABELS: readonly (readonly string[])[] = [
  [],
  ["bug"],
  ["enhancement"],
  ["documentation", "good first issue"],
  ["bug", "help wanted"],
];

class HttpFailure extends Error {
  constructor(readonly answer: Answer) {
    super(`HTTP ${answer.status}`);
  }
}

function errorAnswer(status: number, message: string, docs: string, extra: object = {}): Answer {
  return { status, body: { message, ...extra, documentation_url: docs, status: String(status) } };
}

function fail(status: number, message: string, docs: string): never {
  throw new HttpFailure(errorAnswer(status, message, docs));
}

interface FieldError {
  readonly code: "missing_field" | "invalid" | "custom";
  readonly field: string;
  readonly message?: string;
  readonly value?: unknown;
}

function invalid(docs: string, error: FieldError): never {
  throw new HttpFailure(
    errorAnswer(422, "Validation Failed", docs, { errors: [{ resource: "Issue", ...error }] }),
  );
}

/** ISO 8601 UTC at second precision, as GitHub writes timestamps. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

const floorSecond = (ms: number): number => Math.floor(ms / 1000) * 1000;

/** Characters as a person counts them (code points), for the length limits. ASSUMPTION: GitHub counts so. */
const characters = (text: string): number => [...text].length;

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, answer: Answer, payload: string | undefined): void {
  const headers: Record<string, string> = { ...answer.headers };
  if (payload !== undefined) {
    headers["content-type"] = "application/json; charset=utf-8";
    headers["content-length"] = String(Buffer.byteLength(payload));
  }
  res.writeHead(answer.status, headers);
  res.end(payload);
}

/** A weak validator derived from the body alone, so the same body always carries the same ETag. */
function etagOf(payload: string): string {
  return `W/"${createHash("sha256").update(payload).digest("hex")}"`;
}

/** `If-None-Match` names this ETag (a list, `*`, or the strong form of a weak tag all match, as RFC 9110 §13.1.2). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = etag.replace(/^W\//, "");
  return header
    .split(",")
    .map((tag) => tag.trim())
    .some((tag) => tag === "*" || tag.replace(/^W\//, "") === bare);
}

/** The token from `Authorization: Bearer <token>` or `token <token>` (the scheme is case-insensitive). */
function presentedToken(header: string | undefined): string | undefined {
  return /^(?:bearer|token)\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
}

function parseJsonObject(text: string, docs: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail(400, "Problems parsing JSON", docs);
  }
  // ASSUMPTION: a JSON value that is not an object is refused like unparsable JSON.
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return fail(400, "Problems parsing JSON", docs);
  }
  return parsed as Record<string, unknown>;
}

/** `title` of a create or update: a string or a number (the schema allows both), not blank, at most 256. */
function checkTitle(value: unknown, docs: string): string {
  if (typeof value !== "string" && typeof value !== "number")
    invalid(docs, { code: "missing_field", field: "title" });
  const title = String(value);
  if (title.trim() === "") invalid(docs, { code: "missing_field", field: "title" });
  if (characters(title) > MAX_TITLE) {
    invalid(docs, {
      code: "custom",
      field: "title",
      message: `title is too long (maximum is ${MAX_TITLE} characters)`,
    });
  }
  return title;
}

function checkBody(value: unknown, docs: string): string | null {
  if (value === null) return null;
  if (typeof value !== "string") invalid(docs, { code: "invalid", field: "body", value });
  if (characters(value) > MAX_BODY) {
    invalid(docs, {
      code: "custom",
      field: "body",
      message: `body is too long (maximum is ${MAX_BODY} characters)`,
    });
  }
  return value;
}

/** `labels`: names, or objects with a `name` (both forms are in the schema). */
function checkLabelNames(value: unknown, docs: string): string[] {
  if (!Array.isArray(value)) invalid(docs, { code: "invalid", field: "labels", value });
  return value.map((item: unknown) => {
    const name = typeof item === "object" && item !== null ? (item as { name?: unknown }).name : item;
    if (typeof name !== "string" || name.trim() === "")
      invalid(docs, { code: "invalid", field: "labels", value });
    return name;
  });
}

function checkState(value: unknown, docs: string): "open" | "closed" {
  if (value !== "open" && value !== "closed") invalid(docs, { code: "invalid", field: "state", value });
  return value;
}

function checkStateReason(value: unknown, docs: string): StateReason | null {
  // The 2022-11-28 description lists these three; later versions add "duplicate", which this fake refuses.
  if (value !== null && !STATE_REASONS.includes(value as StateReason)) {
    invalid(docs, { code: "invalid", field: "state_reason", value });
  }
  return value as StateReason | null;
}

/** The query of a listing, validated; bad enum values answer 422 (ASSUMPTION: GitHub's wording for them varies). */
interface ListQuery {
  readonly state: "open" | "closed" | "all";
  readonly sort: "created" | "updated" | "comments";
  readonly direction: "asc" | "desc";
  readonly sinceMs: number | undefined;
  readonly labels: readonly string[];
  readonly perPage: number;
  readonly page: number;
}

function enumParam<T extends string>(
  params: URLSearchParams,
  name: string,
  allowed: readonly T[],
  docs: string,
): T {
  const value = params.get(name) ?? allowed[0];
  if (!allowed.includes(value as T)) invalid(docs, { code: "invalid", field: name, value });
  return value as T;
}

/** A positive integer parameter; anything else means the default. ASSUMPTION: GitHub ignores junk here. */
function countParam(params: URLSearchParams, name: string, fallback: number): number {
  const raw = params.get(name);
  return raw !== null && /^\d{1,9}$/.test(raw) && Number(raw) > 0 ? Number(raw) : fallback;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function parseListQuery(params: URLSearchParams, docs: string): ListQuery {
  const since = params.get("since");
  if (since !== null && (!ISO_8601.test(since) || Number.isNaN(Date.parse(since)))) {
    invalid(docs, { code: "invalid", field: "since", value: since });
  }
  return {
    state: enumParam(params, "state", ["open", "closed", "all"], docs),
    sort: enumParam(params, "sort", ["created", "updated", "comments"], docs),
    direction: enumParam(params, "direction", ["desc", "asc"], docs),
    sinceMs: since === null ? undefined : Date.parse(since),
    labels: (params.get("labels") ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== ""),
    perPage: Math.min(countParam(params, "per_page", DEFAULT_PER_PAGE), MAX_PER_PAGE),
    page: countParam(params, "page", 1),
  };
}

function sortKey(issue: Issue, sort: ListQuery["sort"]): number {
  if (sort === "updated") return issue.updatedMs;
  // Nobody comments in this fake, so sort=comments orders by number alone.
  if (sort === "comments") return 0;
  return issue.createdMs;
}

/**
 * The issues a listing selects, sorted; ties broken by number in the same direction. The reference says `since`
 * keeps issues "updated after the given time"; ASSUMPTION: an issue updated exactly then is kept too.
 */
function selectIssues(repo: Repo, query: ListQuery): Issue[] {
  const sign = query.direction === "asc" ? 1 : -1;
  return [...repo.issues.values()]
    .filter((issue) => query.state === "all" || issue.state === query.state)
    .filter((issue) => query.sinceMs === undefined || issue.updatedMs >= query.sinceMs)
    .filter((issue) => query.labels.every((name) => issue.labels.some((l) => l.toLowerCase() === name)))
    .sort((a, b) => sign * (sortKey(a, query.sort) - sortKey(b, query.sort) || a.number - b.number));
}

/**
 * The `Link` header of one result page: absolute URLs in the `/repositories/{id}/issues` form, the request's
 * query with `page` replaced; `prev`/`next`/`last`/`first` where they apply (none when there is one page).
 */
function linkHeader(
  origin: string,
  nextOrigin: string,
  repo: Repo,
  url: URL,
  page: number,
  last: number,
): string | undefined {
  const at = (base: string, target: number) => {
    const params = new URLSearchParams(url.searchParams);
    params.set("page", String(target));
    return `<${base}/repositories/${repo.id}/issues?${params.toString()}>`;
  };
  const links: string[] = [];
  if (page > 1) links.push(`${at(origin, Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) links.push(`${at(nextOrigin, page + 1)}; rel="next"`, `${at(origin, last)}; rel="last"`);
  if (page > 1) links.push(`${at(origin, 1)}; rel="first"`);
  return links.length === 0 ? undefined : links.join(", ");
}

/** The repositories, their issues and labels, and who may be assigned: what requests and the test's helpers change. */
class Forge {
  readonly repos: readonly Repo[];
  /** Who may be assigned: the token's user first (user ID 1), then alice, bob and carol (who author seeded issues). */
  readonly collaborators: readonly string[];
  private readonly userIds: Map<string, number>;
  private nextLabelId = 4_200_000_000;
  /** Seeded issues are stamped from a day before the fake started, so `since` filters work with the clock. */
  private readonly seedEpoch: number;

  constructor(
    readonly login: string,
    readonly clock: () => number,
    specs: readonly FakeForgeRepoSpec[],
  ) {
    this.collaborators = [login, ...TEAM.filter((name) => name !== login)];
    this.userIds = new Map(this.collaborators.map((name, index) => [name, index + 1]));
    this.seedEpoch = floorSecond(clock()) - 24 * HOUR_MS;
    this.repos = specs.map((spec, index) => this.createRepo(spec, index));
  }

  private createRepo(spec: FakeForgeRepoSpec, index: number): Repo {
    const repo: Repo = {
      id: spec.id ?? 1000 + index,
      owner: spec.owner,
      name: spec.name,
      hidden: spec.hidden ?? false,
      issuesDisabled: spec.issuesDisabled ?? false,
      issues: new Map(),
      deleted: new Set(),
      labels: new Map(),
      nextNumber: 1,
    };
    for (const [name, color, description] of DEFAULT_LABELS) {
      repo.labels.set(name, { id: this.nextLabelId++, name, color, description, default: true });
    }
    return repo;
  }

  /** A stable id per login, handed out in order of first appearance after the collaborators. */
  userId(login: string): number {
    let id = this.userIds.get(login);
    if (id === undefined) {
      id = 100 + this.userIds.size;
      this.userIds.set(login, id);
    }
    return id;
  }

  findRepo(fullName: string): Repo {
    const repo = this.repos.find((r) => `${r.owner}/${r.name}`.toLowerCase() === fullName.toLowerCase());
    if (!repo) throw new Error(`the fake forge has no repository ${JSON.stringify(fullName)}`);
    return repo;
  }

  /** The repository a path names (`/repos/{owner}/{repo}…` or `/repositories/{id}…`) and the rest of the path. */
  splitPath(pathname: string): { repo: Repo | undefined; rest: string } | undefined {
    const byName = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(pathname);
    if (byName) {
      const full = `${byName[1]}/${byName[2]}`.toLowerCase();
      return {
        repo: this.repos.find((r) => `${r.owner}/${r.name}`.toLowerCase() === full),
        rest: byName[3] ?? "",
      };
    }
    const byId = /^\/repositories\/(\d+)(\/.*)?$/.exec(pathname);
    if (byId) return { repo: this.repos.find((r) => r.id === Number(byId[1])), rest: byId[2] ?? "" };
    return undefined;
  }

  labelOf(repo: Repo, name: string): Label {
    const label = repo.labels.get(name.toLowerCase());
    if (!label) throw new Error(`the fake forge lost label ${name}`);
    return label;
  }

  /** Label names as the repository spells them, deduplicated; a name it does not have becomes a new label. */
  private uniqueLabels(repo: Repo, names: readonly string[]): string[] {
    for (const name of names) {
      if (!repo.labels.has(name.toLowerCase())) {
        const label = { id: this.nextLabelId++, name, color: "ededed", description: null, default: false };
        repo.labels.set(name.toLowerCase(), label);
      }
    }
    return [...new Set(names.map((name) => this.labelOf(repo, name).name))];
  }

  /**
   * The next updated_at: now, at second precision. ASSUMPTION: when the clock has not passed the previous
   * updated_at by a whole second, one second is added, so updated_at strictly increases with every change.
   */
  nextStamp(previousMs = 0): number {
    return Math.max(floorSecond(this.clock()), previousMs + 1000);
  }

  insertIssue(repo: Repo, seed: IssueSeed, author: string, createdMs: number, updatedMs = createdMs): Issue {
    const number = repo.nextNumber++;
    const state = seed.state ?? "open";
    const issue: Issue = {
      number,
      id: 3_000_000_000 + repo.id * 100_000 + number,
      author,
      pullRequest: seed.pullRequest ?? false,
      title: seed.title,
      body: seed.body === undefined ? null : seed.body,
      state,
      stateReason: seed.stateReason ?? (state === "closed" ? "completed" : null),
      labels: this.uniqueLabels(repo, seed.labels ?? []),
      assignees: [...(seed.assignees ?? [])],
      createdMs,
      updatedMs,
      closedMs: state === "closed" ? updatedMs : null,
      closedBy: state === "closed" ? author : null,
    };
    repo.issues.set(number, issue);
    return issue;
  }

  /** Applies a change as `actor`; updated_at moves only when something changed (ASSUMPTION: no-op edits do not). */
  edit(repo: Repo, issue: Issue, edit: IssueEdit, actor: string): void {
    const before = JSON.stringify(issue);
    if (edit.title !== undefined) issue.title = edit.title;
    if (edit.body !== undefined) issue.body = edit.body;
    if (edit.labels !== undefined) issue.labels = this.uniqueLabels(repo, edit.labels);
    if (edit.assignees !== undefined) issue.assignees = [...new Set(edit.assignees)];
    const stamp = this.nextStamp(issue.updatedMs);
    if (edit.state === "closed") close(issue, edit.stateReason, actor, stamp);
    if (edit.state === "open") reopen(issue);
    if (JSON.stringify(issue) !== before) issue.updatedMs = stamp;
  }

  issueOrThrow(repo: Repo, number: number): Issue {
    const issue = repo.issues.get(number);
    if (!issue) throw new Error(`the fake forge has no issue ${repo.owner}/${repo.name}#${number}`);
    return issue;
  }

  /** `count` issues plus `pullRequests` pull requests spread evenly among them; returns the issues' numbers. */
  seed(repo: Repo, count: number, pullRequests: number): number[] {
    const numbers: number[] = [];
    const total = count + pullRequests;
    for (let index = 0; index < total; index++) {
      const pullRequest =
        Math.floor(((index + 1) * pullRequests) / total) > Math.floor((index * pullRequests) / total);
      const issue = this.seedOne(repo, index, pullRequest);
      if (!pullRequest) numbers.push(issue.number);
    }
    return numbers;
  }

  /** One seeded issue: the `ordinal` picks its title, body, state, labels and assignees from the tables. */
  private seedOne(repo: Repo, ordinal: number, pullRequest: boolean): Issue {
    const number = repo.nextNumber;
    const closedAs: StateReason | undefined =
      ordinal % 5 === 3 ? "completed" : ordinal % 7 === 5 ? "not_planned" : undefined;
    const labels = [...(SEED_LABELS[ordinal % SEED_LABELS.length] as readonly string[])];
    if (!closedAs && ordinal % 4 === 1) labels.push("status/in-progress");
    if (!closedAs && ordinal % 4 === 2) labels.push("status/in-review");
    const createdMs = this.seedEpoch + number * 2000;
    if (createdMs + 1000 > this.clock())
      throw new Error("the fake forge seeds at most 43,199 issues a repository");
    const seed: IssueSeed = {
      title: (SEED_TITLES[ordinal % SEED_TITLES.length] as (n: number) => string)(number),
      body: (SEED_BODIES[ordinal % SEED_BODIES.length] as (n: number) => string | null)(number),
      state: closedAs ? "closed" : "open",
      stateReason: closedAs ?? null,
      labels,
      assignees: SEED_ASSIGNEES[ordinal % SEED_ASSIGNEES.length],
      pullRequest,
    };
    return this.insertIssue(repo, seed, TEAM[number % TEAM.length] as string, createdMs, createdMs + 1000);
  }
}

/**
 * "Update an issue": `state_reason` is "ignored unless `state` is changed". Closing sets the given reason, or
 * "completed" when none (or "reopened") is given. ASSUMPTION: `state: "closed"` with a reason on an already
 * closed issue changes the reason and keeps closed_at, as the web UI can.
 */
function close(issue: Issue, reason: StateReason | null | undefined, actor: string, stamp: number): void {
  const closeReason = reason === "not_planned" || reason === "completed" ? reason : undefined;
  if (issue.state === "closed") {
    if (closeReason !== undefined) issue.stateReason = closeReason;
    return;
  }
  issue.state = "closed";
  issue.stateReason = closeReason ?? "completed";
  issue.closedMs = stamp;
  issue.closedBy = actor;
}

/** Reopening sets state_reason "reopened" and clears closed_at and closed_by; an open issue stays as it is. */
function reopen(issue: Issue): void {
  if (issue.state === "open") return;
  issue.state = "open";
  issue.stateReason = "reopened";
  issue.closedMs = null;
  issue.closedBy = null;
}

function copyIssue(issue: Issue): FakeForgeIssue {
  return {
    number: issue.number,
    title: issue.title,
    body: issue.body,
    state: issue.state,
    stateReason: issue.stateReason,
    labels: [...issue.labels],
    assignees: [...issue.assignees],
    pullRequest: issue.pullRequest,
    createdAt: isoSeconds(issue.createdMs),
    updatedAt: isoSeconds(issue.updatedMs),
    closedAt: issue.closedMs === null ? null : isoSeconds(issue.closedMs),
  };
}

/** GitHub's JSON for the state (the OpenAPI `issue`, `label`, `simple-user`), with API URLs on the fake's origin. */
class Shapes {
  /** ASSUMPTION: web pages (html_url) live under the fake's own origin, so nothing points at github.com. */
  private readonly web: string;

  constructor(
    private readonly origin: string,
    private readonly forge: Forge,
  ) {
    this.web = `${origin}/web`;
  }

  repoApi(repo: Repo): string {
    return `${this.origin}/repos/${repo.owner}/${repo.name}`;
  }

  /**
   * GitHub's `full-repository`. ASSUMPTION: the dates (the fake has no history of the repository itself)
   * and the counts svc never reads (forks, stars, watchers, size: 0).
   */
  repository(repo: Repo): object {
    const api = this.repoApi(repo);
    const full = `${repo.owner}/${repo.name}`;
    const open = [...repo.issues.values()].filter((issue) => issue.state === "open").length;
    const created = "2020-01-01T00:00:00Z";
    return {
      id: repo.id,
      node_id: `R_kgDO${Buffer.from(String(repo.id)).toString("base64url")}`,
      name: repo.name,
      full_name: full,
      owner: this.user(repo.owner),
      private: false,
      html_url: `${this.web}/${full}`,
      description: null,
      fork: false,
      url: api,
      archive_url: `${api}/{archive_format}{/ref}`,
      assignees_url: `${api}/assignees{/user}`,
      blobs_url: `${api}/git/blobs{/sha}`,
      branches_url: `${api}/branches{/branch}`,
      collaborators_url: `${api}/collaborators{/collaborator}`,
      comments_url: `${api}/comments{/number}`,
      commits_url: `${api}/commits{/sha}`,
      compare_url: `${api}/compare/{base}...{head}`,
      contents_url: `${api}/contents/{+path}`,
      contributors_url: `${api}/contributors`,
      deployments_url: `${api}/deployments`,
      downloads_url: `${api}/downloads`,
      events_url: `${api}/events`,
      forks_url: `${api}/forks`,
      git_commits_url: `${api}/git/commits{/sha}`,
      git_refs_url: `${api}/git/refs{/sha}`,
      git_tags_url: `${api}/git/tags{/sha}`,
      git_url: `git://${new URL(this.origin).host}/${full}.git`,
      issue_comment_url: `${api}/issues/comments{/number}`,
      issue_events_url: `${api}/issues/events{/number}`,
      issues_url: `${api}/issues{/number}`,
      keys_url: `${api}/keys{/key_id}`,
      labels_url: `${api}/labels{/name}`,
      languages_url: `${api}/languages`,
      merges_url: `${api}/merges`,
      milestones_url: `${api}/milestones{/number}`,
      notifications_url: `${api}/notifications{?since,all,participating}`,
      pulls_url: `${api}/pulls{/number}`,
      releases_url: `${api}/releases{/id}`,
      ssh_url: `git@${new URL(this.origin).hostname}:${full}.git`,
      stargazers_url: `${api}/stargazers`,
      statuses_url: `${api}/statuses/{sha}`,
      subscribers_url: `${api}/subscribers`,
      subscription_url: `${api}/subscription`,
      tags_url: `${api}/tags`,
      teams_url: `${api}/teams`,
      trees_url: `${api}/git/trees{/sha}`,
      clone_url: `${this.web}/${full}.git`,
      mirror_url: null,
      hooks_url: `${api}/hooks`,
      svn_url: `${this.web}/${full}`,
      homepage: null,
      language: null,
      forks: 0,
      forks_count: 0,
      stargazers_count: 0,
      watchers: 0,
      watchers_count: 0,
      size: 0,
      default_branch: "main",
      open_issues: open,
      open_issues_count: open,
      has_issues: !repo.issuesDisabled,
      has_projects: false,
      has_wiki: false,
      has_pages: false,
      has_discussions: false,
      archived: false,
      disabled: false,
      license: null,
      pushed_at: created,
      created_at: created,
      updated_at: created,
      network_count: 0,
      subscribers_count: 0,
    };
  }

  user(login: string): object {
    const id = this.forge.userId(login);
    const api = `${this.origin}/users/${login}`;
    return {
      login,
      id,
      node_id: `U_kgDO${Buffer.from(String(id)).toString("base64url")}`,
      avatar_url: `${this.web}/avatars/${id}`,
      gravatar_id: "",
      url: api,
      html_url: `${this.web}/${login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: "User",
      user_view_type: "public",
      site_admin: false,
    };
  }

  /** The issue's labels as the labels endpoints answer them. */
  labels(repo: Repo, issue: Issue): object[] {
    return issue.labels.map((name) => {
      const label = this.forge.labelOf(repo, name);
      return {
        id: label.id,
        node_id: `LA_kwDO${Buffer.from(String(label.id)).toString("base64url")}`,
        url: `${this.repoApi(repo)}/labels/${encodeURIComponent(label.name)}`,
        name: label.name,
        color: label.color,
        default: label.default,
        description: label.description,
      };
    });
  }

  issue(repo: Repo, issue: Issue): object {
    const api = `${this.repoApi(repo)}/issues/${issue.number}`;
    const closedAt = issue.closedMs === null ? null : isoSeconds(issue.closedMs);
    return {
      id: issue.id,
      node_id: `${issue.pullRequest ? "PR" : "I"}_kwDO${Buffer.from(String(issue.id)).toString("base64url")}`,
      url: api,
      repository_url: this.repoApi(repo),
      labels_url: `${api}/labels{/name}`,
      comments_url: `${api}/comments`,
      events_url: `${api}/events`,
      html_url: `${this.web}/${repo.owner}/${repo.name}/${issue.pullRequest ? "pull" : "issues"}/${issue.number}`,
      number: issue.number,
      state: issue.state,
      title: issue.title,
      body: issue.body,
      user: this.user(issue.author),
      labels: this.labels(repo, issue),
      assignee: issue.assignees[0] === undefined ? null : this.user(issue.assignees[0]),
      assignees: issue.assignees.map((login) => this.user(login)),
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: 0,
      ...(issue.pullRequest ? { pull_request: this.pullRequest(repo, issue, closedAt), draft: false } : {}),
      closed_at: closedAt,
      created_at: isoSeconds(issue.createdMs),
      updated_at: isoSeconds(issue.updatedMs),
      closed_by: issue.closedBy === null ? null : this.user(issue.closedBy),
      author_association: issue.author === repo.owner ? "OWNER" : "COLLABORATOR",
      state_reason: issue.stateReason,
      timeline_url: `${api}/timeline`,
      performed_via_github_app: null,
      reactions: {
        url: `${api}/reactions`,
        total_count: 0,
        ...Object.fromEntries(REACTIONS.map((r) => [r, 0])),
      },
    };
  }

  /** ASSUMPTION: a pull request closed as completed was merged when it was closed. */
  private pullRequest(repo: Repo, issue: Issue, closedAt: string | null): object {
    const html = `${this.web}/${repo.owner}/${repo.name}/pull/${issue.number}`;
    return {
      url: `${this.repoApi(repo)}/pulls/${issue.number}`,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      merged_at: issue.stateReason === "completed" ? closedAt : null,
    };
  }
}

/**
 * The primary limit (an hourly quota that refills when its reset time passes) and the secondary-limit switch
 * ("Rate limits for the REST API": over either, 403 or 429; a 304 and a 401 do not count).
 */
class RateLimits {
  used = 0;
  /** Counted requests since the fake started (refills do not reset it). */
  quotaUsed = 0;
  private resetMs: number;
  private secondary = {
    count: 0,
    status: 403 as 403 | 429,
    retryAfterSeconds: undefined as number | undefined,
  };

  constructor(
    readonly quota: number,
    private readonly clock: () => number,
  ) {
    this.resetMs = clock() + HOUR_MS;
  }

  set(remaining: number, resetInSeconds: number): void {
    this.used = Math.max(0, this.quota - remaining);
    this.resetMs = this.clock() + resetInSeconds * 1000;
  }

  setSecondary(count: number, status: 403 | 429, retryAfterSeconds: number | undefined): void {
    this.secondary = { count, status, retryAfterSeconds };
  }

  count(): void {
    this.used++;
    this.quotaUsed++;
  }

  headers(): Record<string, string> {
    return {
      "x-ratelimit-limit": String(this.quota),
      "x-ratelimit-remaining": String(Math.max(0, this.quota - this.used)),
      "x-ratelimit-used": String(this.used),
      "x-ratelimit-reset": String(Math.ceil(this.resetMs / 1000)),
      "x-ratelimit-resource": "core",
    };
  }

  /** The secondary limit's refusal while the switch has answers left. */
  secondaryRefusal(requestId: string): Answer | undefined {
    if (this.secondary.count === 0) return undefined;
    this.secondary.count--;
    const retry = this.secondary.retryAfterSeconds;
    return {
      status: this.secondary.status,
      headers: retry === undefined ? {} : { "retry-after": String(retry) },
      body: {
        message:
          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you " +
          `reach out to GitHub Support for help, please include the request ID ${requestId}.`,
        documentation_url: `${RATE_DOCS}#about-secondary-rate-limits`,
      },
    };
  }

  /** The primary limit's refusal when the quota is spent and the reset has not passed (else it refills). */
  primaryRefusal(userId: number): Answer | undefined {
    if (this.clock() >= this.resetMs) {
      this.used = 0;
      this.resetMs = this.clock() + HOUR_MS;
    }
    if (this.used < this.quota) return undefined;
    return {
      status: 403,
      body: { message: `API rate limit exceeded for user ID ${userId}.`, documentation_url: RATE_DOCS },
    };
  }
}

// ---- The HTTP handlers: each gets the resolved repository and the route's captures ----

function targetIssue(call: Call, docs: string): Issue {
  const number = Number(call.params[0]);
  if (call.repo.deleted.has(number)) fail(410, "This issue was deleted", docs);
  const issue = call.repo.issues.get(number);
  if (!issue) fail(404, "Not Found", docs);
  return issue;
}

function listIssues(call: Call): Answer {
  const query = parseListQuery(call.url.searchParams, `${ISSUES_DOCS}#list-repository-issues`);
  const selected = selectIssues(call.repo, query);
  const last = Math.max(1, Math.ceil(selected.length / query.perPage));
  const start = (query.page - 1) * query.perPage;
  const link = linkHeader(call.origin, call.nextOrigin, call.repo, call.url, query.page, last);
  return {
    status: 200,
    headers: link === undefined ? {} : { link },
    body: selected.slice(start, start + query.perPage).map((issue) => call.shapes.issue(call.repo, issue)),
  };
}

function getIssue(call: Call): Answer {
  const issue = targetIssue(call, `${ISSUES_DOCS}#get-an-issue`);
  return {
    status: 200,
    headers: { "last-modified": new Date(issue.updatedMs).toUTCString() },
    body: call.shapes.issue(call.repo, issue),
  };
}

/** `assignees` (or the deprecated `assignee`) of a create or update, each a collaborator. */
function checkAssignees(call: Call, input: Record<string, unknown>, docs: string): string[] | undefined {
  let logins: unknown = input.assignees;
  if (logins === undefined && "assignee" in input) logins = input.assignee === null ? [] : [input.assignee];
  if (logins === undefined) return undefined;
  if (!Array.isArray(logins) || logins.some((login) => typeof login !== "string")) {
    invalid(docs, { code: "invalid", field: "assignees", value: logins });
  }
  const strangers = logins.filter((login: string) => !call.forge.collaborators.includes(login));
  if (strangers.length > 0) invalid(docs, { code: "invalid", field: "assignees", value: strangers });
  return logins as string[];
}

/** `milestone`: only null, since this fake has no milestones (a number names one that does not exist). */
function checkMilestone(input: Record<string, unknown>, docs: string): void {
  if (input.milestone !== undefined && input.milestone !== null) {
    invalid(docs, { code: "invalid", field: "milestone", value: input.milestone });
  }
}

function createIssue(call: Call): Answer {
  const docs = `${ISSUES_DOCS}#create-an-issue`;
  const input = parseJsonObject(call.text, docs);
  const seed: IssueSeed = {
    title: checkTitle(input.title, docs),
    body: input.body === undefined ? null : checkBody(input.body, docs),
    labels: input.labels === undefined ? [] : checkLabelNames(input.labels, docs),
    assignees: checkAssignees(call, input, docs) ?? [],
  };
  checkMilestone(input, docs);
  const forge = call.forge;
  const issue = forge.insertIssue(call.repo, seed, forge.login, forge.nextStamp());
  return {
    status: 201,
    headers: { location: `${call.shapes.repoApi(call.repo)}/issues/${issue.number}` },
    body: call.shapes.issue(call.repo, issue),
  };
}

/** A pull request's number edits its issue fields, as GitHub's issues endpoint does. */
function updateIssue(call: Call): Answer {
  const docs = `${ISSUES_DOCS}#update-an-issue`;
  const issue = targetIssue(call, docs);
  const input = parseJsonObject(call.text, docs);
  checkMilestone(input, docs);
  const edit: IssueEdit = {
    title: input.title === undefined ? undefined : checkTitle(input.title, docs),
    body: input.body === undefined ? undefined : checkBody(input.body, docs),
    state: input.state === undefined ? undefined : checkState(input.state, docs),
    stateReason: input.state_reason === undefined ? undefined : checkStateReason(input.state_reason, docs),
    labels: input.labels === undefined ? undefined : checkLabelNames(input.labels, docs),
    assignees: checkAssignees(call, input, docs),
  };
  call.forge.edit(call.repo, issue, edit, call.forge.login);
  return { status: 200, body: call.shapes.issue(call.repo, issue) };
}

/** The names of an add/set labels body: `{labels: [...]}`, a bare array, or one name (all in the schema). */
function labelsInput(text: string, docs: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail(400, "Problems parsing JSON", docs);
  }
  if (typeof parsed === "string") return checkLabelNames([parsed], docs);
  const list = Array.isArray(parsed) ? parsed : (parsed as { labels?: unknown } | null)?.labels;
  return checkLabelNames(list, docs);
}

function listIssueLabels(call: Call): Answer {
  const issue = targetIssue(call, `${LABELS_DOCS}#list-labels-for-an-issue`);
  return { status: 200, body: call.shapes.labels(call.repo, issue) };
}

function addIssueLabels(call: Call): Answer {
  const docs = `${LABELS_DOCS}#add-labels-to-an-issue`;
  const issue = targetIssue(call, docs);
  const labels = [...issue.labels, ...labelsInput(call.text, docs)];
  call.forge.edit(call.repo, issue, { labels }, call.forge.login);
  return { status: 200, body: call.shapes.labels(call.repo, issue) };
}

function setIssueLabels(call: Call): Answer {
  const docs = `${LABELS_DOCS}#set-labels-for-an-issue`;
  const issue = targetIssue(call, docs);
  call.forge.edit(call.repo, issue, { labels: labelsInput(call.text, docs) }, call.forge.login);
  return { status: 200, body: call.shapes.labels(call.repo, issue) };
}

function removeIssueLabel(call: Call): Answer {
  const docs = `${LABELS_DOCS}#remove-a-label-from-an-issue`;
  const issue = targetIssue(call, docs);
  const name = decodeURIComponent(call.params[1] as string).toLowerCase();
  if (!issue.labels.some((label) => label.toLowerCase() === name)) fail(404, "Label does not exist", docs);
  const labels = issue.labels.filter((label) => label.toLowerCase() !== name);
  call.forge.edit(call.repo, issue, { labels }, call.forge.login);
  return { status: 200, body: call.shapes.labels(call.repo, issue) };
}

/** `GET /repos/{owner}/{repo}`: the repository, GitHub's `full-repository` with every required member. */
function getRepository(call: Call): Answer {
  return { status: 200, body: call.shapes.repository(call.repo) };
}

const ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: /^$/,
    docs: `${DOCS}/repos/repos#get-a-repository`,
    handle: getRepository,
  },
  { method: "GET", path: /^\/issues$/, docs: `${ISSUES_DOCS}#list-repository-issues`, handle: listIssues },
  { method: "POST", path: /^\/issues$/, docs: `${ISSUES_DOCS}#create-an-issue`, handle: createIssue },
  { method: "GET", path: /^\/issues\/(\d+)$/, docs: `${ISSUES_DOCS}#get-an-issue`, handle: getIssue },
  { method: "PATCH", path: /^\/issues\/(\d+)$/, docs: `${ISSUES_DOCS}#update-an-issue`, handle: updateIssue },
  {
    method: "GET",
    path: /^\/issues\/(\d+)\/labels$/,
    docs: `${LABELS_DOCS}#list-labels-for-an-issue`,
    handle: listIssueLabels,
  },
  {
    method: "POST",
    path: /^\/issues\/(\d+)\/labels$/,
    docs: `${LABELS_DOCS}#add-labels-to-an-issue`,
    handle: addIssueLabels,
  },
  {
    method: "PUT",
    path: /^\/issues\/(\d+)\/labels$/,
    docs: `${LABELS_DOCS}#set-labels-for-an-issue`,
    handle: setIssueLabels,
  },
  {
    method: "DELETE",
    path: /^\/issues\/(\d+)\/labels\/([^/]+)$/,
    docs: `${LABELS_DOCS}#remove-a-label-from-an-issue`,
    handle: removeIssueLabel,
  },
];

/** The fake: the HTTP side (gate, router, conditional requests, request log) and the test's helpers. */
class FakeForgeServer implements FakeForge {
  readonly requests: FakeForgeRequest[] = [];
  readonly contract: ContractWatch;
  private readonly shapes: Shapes;
  private redirects = { count: 0, location: "" };
  private nextOrigin: string | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly server: Server,
    readonly origin: string,
    readonly token: string,
    private readonly forge: Forge,
    private readonly limits: RateLimits,
    judging: boolean,
  ) {
    this.contract = new ContractWatch("github", judging);
    this.shapes = new Shapes(origin, forge);
  }

  get url(): string {
    return this.origin;
  }

  get quotaUsed(): number {
    return this.limits.quotaUsed;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const entry = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: flatHeaders(req),
      body: text,
      status: 0,
      counted: false,
      receivedAt: Date.now(),
    };
    this.requests.push(entry);
    // Deterministic, in GitHub's colon-separated hex form.
    const requestId = `F0F0:${this.requests.length.toString(16).toUpperCase().padStart(8, "0")}`;
    const refused = this.refusal(entry, requestId);
    const { answer, payload } = refused
      ? { answer: refused, payload: JSON.stringify(refused.body) }
      : this.answerCounted(entry);
    entry.status = answer.status;
    entry.counted = !refused && answer.status !== 304;
    const headers = { ...this.limits.headers(), "x-github-request-id": requestId, ...answer.headers };
    send(res, { ...answer, headers }, payload);
    this.contract.observe({
      ...entry,
      requestHeaders: entry.headers,
      answerHeaders: headers,
      answer: payload ?? "",
    });
  }

  /** The uncounted answers that come before routing: authentication, then the secondary and primary limits. */
  private refusal(entry: FakeForgeRequest, requestId: string): Answer | undefined {
    if (presentedToken(entry.headers.authorization) !== this.token) {
      return errorAnswer(401, "Bad credentials", DOCS);
    }
    return (
      this.limits.secondaryRefusal(requestId) ??
      this.limits.primaryRefusal(this.forge.userId(this.forge.login))
    );
  }

  /** Redirects or routes a request that passed the gate; it counts against the quota unless it ends in a 304. */
  private answerCounted(entry: FakeForgeRequest): { answer: Answer; payload: string | undefined } {
    let answer: Answer;
    try {
      answer = this.redirect301() ?? this.route(entry.method, new URL(entry.path, this.origin), entry.body);
    } catch (error) {
      if (!(error instanceof HttpFailure)) throw error;
      answer = error.answer;
    }
    const payload = answer.body === undefined ? undefined : JSON.stringify(answer.body);
    if (entry.method === "GET" && answer.status === 200 && payload !== undefined) {
      const etag = etagOf(payload);
      if (matchesEtag(entry.headers["if-none-match"], etag)) {
        return { answer: { status: 304, headers: { ...answer.headers, etag } }, payload: undefined };
      }
      answer = { ...answer, headers: { ...answer.headers, etag } };
    }
    this.limits.count();
    return { answer, payload };
  }

  private redirect301(): Answer | undefined {
    if (this.redirects.count === 0) return undefined;
    this.redirects.count--;
    const location = this.redirects.location;
    return {
      status: 301,
      headers: { location },
      body: {
        message: "Moved Permanently",
        url: location,
        documentation_url: `${DOCS}/guides/best-practices-for-using-the-rest-api#follow-redirects`,
      },
    };
  }

  /** Finds the route for the method and the path after the repository; anything else answers 404. */
  private route(method: string, url: URL, text: string): Answer {
    const split = this.forge.splitPath(url.pathname);
    if (!split) return fail(404, "Not Found", DOCS);
    for (const route of ROUTES) {
      const found = route.method === method ? route.path.exec(split.rest) : null;
      if (found) return this.dispatch(route, split.repo, { method, url, text, params: found.slice(1) });
    }
    return fail(404, "Not Found", DOCS);
  }

  /** A hidden or unknown repository answers 404, one with issues disabled 410; otherwise the route's handler. */
  private dispatch(
    route: Route,
    repo: Repo | undefined,
    request: Pick<Call, "method" | "url" | "text" | "params">,
  ): Answer {
    if (!repo || repo.hidden) fail(404, "Not Found", route.docs);
    // The repository itself is there with issues disabled: only its issues answer 410.
    if (repo.issuesDisabled && route.handle !== getRepository)
      fail(410, "Issues are disabled for this repo", route.docs);
    const { forge, shapes, origin } = this;
    return route.handle({ ...request, repo, forge, shapes, origin, nextOrigin: this.nextOrigin ?? origin });
  }

  seed(repo: string, count: number, { pullRequests = 0 }: { pullRequests?: number } = {}): number[] {
    return this.forge.seed(this.forge.findRepo(repo), count, pullRequests);
  }

  addIssue(repo: string, seed: IssueSeed): FakeForgeIssue {
    return copyIssue(
      this.forge.insertIssue(this.forge.findRepo(repo), seed, SOMEONE_ELSE, this.forge.nextStamp()),
    );
  }

  editIssue(repo: string, number: number, edit: IssueEdit): FakeForgeIssue {
    const found = this.forge.findRepo(repo);
    const issue = this.forge.issueOrThrow(found, number);
    this.forge.edit(found, issue, edit, SOMEONE_ELSE);
    return copyIssue(issue);
  }

  addLabel(repo: string, number: number, name: string): FakeForgeIssue {
    const issue = this.forge.issueOrThrow(this.forge.findRepo(repo), number);
    return this.editIssue(repo, number, { labels: [...issue.labels, name] });
  }

  deleteIssue(repo: string, number: number): void {
    const found = this.forge.findRepo(repo);
    this.forge.issueOrThrow(found, number);
    found.issues.delete(number);
    found.deleted.add(number);
  }

  issue(repo: string, number: number): FakeForgeIssue | undefined {
    const issue = this.forge.findRepo(repo).issues.get(number);
    return issue ? copyIssue(issue) : undefined;
  }

  issues(repo: string): FakeForgeIssue[] {
    return [...this.forge.findRepo(repo).issues.values()].sort((a, b) => a.number - b.number).map(copyIssue);
  }

  repositoryId(repo: string): number {
    return this.forge.findRepo(repo).id;
  }

  setRateLimit(remaining: number, resetInSeconds: number): void {
    this.limits.set(remaining, resetInSeconds);
  }

  secondaryLimit(
    count: number,
    { status = 403, retryAfterSeconds }: { status?: 403 | 429; retryAfterSeconds?: number } = {},
  ): void {
    this.limits.setSecondary(count, status, retryAfterSeconds);
  }

  setNextOrigin(origin: string | undefined): void {
    this.nextOrigin = origin;
  }

  redirect(count: number, location: string): void {
    this.redirects = { count, location };
  }

  close(): Promise<void> {
    this.closing ??= closeServer(this.server).then(() => this.contract.assertNone());
    return this.closing;
  }
}

/** Starts the fake on `127.0.0.1:0`. */
export async function startFakeForge(options: FakeForgeOptions = {}): Promise<FakeForge> {
  const clock = options.now ?? Date.now;
  const forge = new Forge(
    options.login ?? "svc-bot",
    clock,
    options.repos ?? [{ owner: "acme", name: "widgets" }],
  );
  const limits = new RateLimits(options.quota ?? 5000, clock);
  const server = createServer();
  const origin = await listenOnLoopback(server);
  const fake = new FakeForgeServer(
    server,
    origin,
    options.token ?? "fake-forge-token-0123456789",
    forge,
    limits,
    options.vendorChecks !== false,
  );
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    fake.handle(req, res).catch((error: unknown) => {
      console.error("fake forge:", error);
      if (!res.headersSent) send(res, { status: 500 }, undefined);
    });
  });
  return fake;
}

/** `startFakeForge` for one ava test; the test's teardown closes it. */
export async function givenFakeForge(
  t: ExecutionContext,
  options: FakeForgeOptions = {},
): Promise<FakeForge> {
  const forge = await startFakeForge(options);
  t.teardown(() => forge.close());
  return forge;
}
