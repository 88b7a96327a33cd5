/**
 * The fake tracker's HTTP side and its helpers: each request is logged, refused by the rate-limit switch
 * (before authentication, as Jira does) or by Basic authentication, or routed; every exchange goes to the
 * vendor-contract watch, whose verdict `close()` delivers. The helpers change the site as "someone else" would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ExecutionContext } from "ava";
import { readRequestBody } from "../../core/request-body.js";
import {
  atlassianResetStamp,
  FakeVendorServer,
  givenFake,
  requestEntry,
  serveRequests,
  thrownAnswer,
} from "../fake-server.js";
import { listenOnLoopback } from "../loopback.js";
import { ContractWatch } from "../vendor-contract.js";
import { copyComment, plainDocument } from "./comment-store.js";
import { DEFAULT_CUSTOM_FIELDS } from "./fields.js";
import { type Answer, authenticates, errorCollection, send } from "./http.js";
import { ROUTES } from "./routes.js";
import { Search } from "./search.js";
import { Shapes } from "./shapes.js";
import { copyIssue, type Issue, Tracker } from "./store.js";
import { checkZone } from "./time.js";
import type {
  AdfJson,
  FakeTracker,
  FakeTrackerComment,
  FakeTrackerIssue,
  FakeTrackerOptions,
  FakeTrackerRequest,
  FakeTrackerUser,
  TrackerCommentOptions,
  TrackerIssueEdit,
  TrackerIssueSeed,
} from "./types.js";
import {
  ALICE_ACCOUNT,
  BOT_ACCOUNT,
  DEFAULT_COMMENT_PAGE_SIZE,
  DEFAULT_EMAIL,
  DEFAULT_PAGE_SIZE,
  DEFAULT_TOKEN,
  UNAUTHENTICATED,
} from "./vendor-data.js";

/** The fake: the HTTP side (rate limit, authentication, router, request log) and the test's helpers. */
class FakeTrackerServer extends FakeVendorServer<FakeTrackerRequest> implements FakeTracker {
  private readonly shapes: Shapes;
  private readonly search: Search;
  private limited = { count: 0, retryAfterSeconds: 0 };

  constructor(
    server: Server,
    origin: string,
    readonly email: string,
    readonly apiToken: string,
    private readonly tracker: Tracker,
    judging: boolean,
  ) {
    super([server], origin, new ContractWatch("jira", judging));
    this.shapes = new Shapes(origin, tracker);
    this.search = new Search(tracker, tracker.options.pageSize);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const received = await readRequestBody(req);
    const entry = requestEntry(req, received.bytes.toString("utf8"), { answer: "" });
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
    const reset = atlassianResetStamp(Date.now() + seconds * 1000);
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
      return thrownAnswer<Answer>(error);
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

  renameCustomField(id: string, name: string): void {
    if (!this.tracker.customFields.some((field) => field.id === id)) throw new Error(`no custom field ${id}`);
    this.tracker.customFields = this.tracker.customFields.map((field) =>
      field.id === id ? { ...field, name } : field,
    );
  }

  removeCustomField(id: string): void {
    if (!this.tracker.customFields.some((field) => field.id === id)) throw new Error(`no custom field ${id}`);
    this.tracker.customFields = this.tracker.customFields.filter((field) => field.id !== id);
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

  get self(): FakeTrackerUser {
    return this.tracker.me;
  }

  addComment(key: string, body: AdfJson | string, options: TrackerCommentOptions = {}): FakeTrackerComment {
    const issue = this.tracker.issueOrThrow(key);
    const doc = typeof body === "string" ? plainDocument(body) : body;
    return copyComment(this.tracker.comments.add(issue, this.author(options), doc, options.at));
  }

  editComment(id: string, body: AdfJson | string, options: TrackerCommentOptions = {}): FakeTrackerComment {
    const comment = this.tracker.comments.byIdOrThrow(id);
    const doc = typeof body === "string" ? plainDocument(body) : body;
    return copyComment(this.tracker.comments.edit(comment, this.author(options), doc, options.at));
  }

  deleteComment(id: string): void {
    this.tracker.comments.delete(this.tracker.comments.byIdOrThrow(id));
  }

  seedComments(key: string, count: number, options: TrackerCommentOptions = {}): string[] {
    const issue = this.tracker.issueOrThrow(key);
    const start = this.tracker.now() - (count + 1) * 60_000;
    const author = this.author(options);
    return Array.from({ length: count }, (_, i) => {
      const at = Math.max(start + i * 60_000, issue.comments.at(-1)?.created ?? 0);
      const doc = plainDocument(`Comment ${i + 1} on ${key}: **not bold**, a \`tick\` and --- a rule?`);
      return this.tracker.comments.add(issue, author, doc, at).id;
    });
  }

  comments(key: string): FakeTrackerComment[] {
    return this.tracker.issueOrThrow(key).comments.map(copyComment);
  }

  comment(id: string): FakeTrackerComment | undefined {
    try {
      return copyComment(this.tracker.comments.byIdOrThrow(id));
    } catch {
      return undefined;
    }
  }

  /** The account a helper writes as; an unknown one is the test's bug. */
  private author(options: TrackerCommentOptions): string {
    const author = options.author ?? ALICE_ACCOUNT;
    if (!this.tracker.users.has(author)) throw new Error(`fake tracker: no account ${author}`);
    return author;
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
    commentPageSize: options.commentPageSize ?? DEFAULT_COMMENT_PAGE_SIZE,
    metaPageSize: options.metaPageSize ?? 50,
    customFields: options.customFields ?? DEFAULT_CUSTOM_FIELDS,
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
  serveRequests(server, "fake tracker", (req, res) => fake.handle(req, res));
  return fake;
}

/** startFakeTracker for one ava test; the test's teardown closes it. */
export function givenFakeTracker(
  t: ExecutionContext,
  options: FakeTrackerOptions = {},
): Promise<FakeTracker> {
  return givenFake(t, () => startFakeTracker(options));
}
