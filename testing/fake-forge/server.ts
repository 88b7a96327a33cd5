/**
 * The fake forge's HTTP side and its helpers: each request is logged, refused uncounted (authentication, then
 * the secondary and primary rate limits) or redirected or routed and counted (unless it ends in a 304 for a
 * matching `If-None-Match`); every exchange goes to the vendor-contract watch, whose verdict `close()` delivers.
 * The helpers change the repositories (issues and comments) as "someone else" (alice) would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ExecutionContext } from "ava";
import { readRequestBody } from "../../core/request-body.js";
import { FakeVendorServer, givenFake, requestEntry, serveRequests, thrownAnswer } from "../fake-server.js";
import { listenOnLoopback } from "../loopback.js";
import { ContractWatch } from "../vendor-contract.js";
import type { Call, Route } from "./call.js";
import { type Answer, errorAnswer, etagOf, fail, matchesEtag, presentedToken, send } from "./http.js";
import { RateLimits } from "./rate-limits.js";
import { getRepository, ROUTES } from "./routes.js";
import { Shapes } from "./shapes.js";
import { copyComment, copyIssue, Forge, parentOf, type Repo } from "./store.js";
import type {
  FakeForge,
  FakeForgeComment,
  FakeForgeIssue,
  FakeForgeOptions,
  FakeForgeRequest,
  IssueEdit,
  IssueRef,
  IssueSeed,
} from "./types.js";
import { DOCS, SOMEONE_ELSE } from "./vendor-data.js";

/** The fake: the HTTP side (gate, router, conditional requests, request log) and the test's helpers. */
class FakeForgeServer extends FakeVendorServer<FakeForgeRequest> implements FakeForge {
  private readonly shapes: Shapes;
  private redirects = { count: 0, location: "" };
  private nextOrigin: string | undefined;

  constructor(
    server: Server,
    origin: string,
    readonly token: string,
    private readonly forge: Forge,
    private readonly limits: RateLimits,
    judging: boolean,
  ) {
    super([server], origin, new ContractWatch("github", judging));
    this.shapes = new Shapes(origin, forge);
  }

  get quotaUsed(): number {
    return this.limits.quotaUsed;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const received = await readRequestBody(req);
    const entry = requestEntry(req, received.bytes.toString("utf8"), { counted: false });
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
      answer = thrownAnswer<Answer>(error);
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
    // "Get the authenticated user": the one route outside a repository.
    if (method === "GET" && url.pathname === "/user")
      return { status: 200, body: this.shapes.authenticatedUser(this.forge.login) };
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

  setParent(repo: string, number: number, parent: number | IssueRef | null): FakeForgeIssue {
    const found = this.forge.findRepo(repo);
    const issue = this.forge.issueOrThrow(found, number);
    const before = issue.parent && this.forge.issueOrThrow(issue.parent.repo, issue.parent.number);
    issue.parent = parent === null ? null : parentOf(this.forge, found, parent);
    const after = issue.parent && this.forge.issueOrThrow(issue.parent.repo, issue.parent.number);
    for (const touched of [issue, before, after])
      if (touched) touched.updatedMs = this.forge.nextStamp(touched.updatedMs);
    return copyIssue(issue);
  }

  addLabel(repo: string, number: number, name: string): FakeForgeIssue {
    const issue = this.forge.issueOrThrow(this.forge.findRepo(repo), number);
    return this.editIssue(repo, number, { labels: [...issue.labels, name] });
  }

  deleteIssue(repo: string, number: number): void {
    this.forge.deleteIssue(this.forge.findRepo(repo), number);
  }

  seedComments(repo: string, count: number, numbers: readonly number[]): number[] {
    return this.forge.seedComments(this.forge.findRepo(repo), count, numbers);
  }

  addComment(repo: string, number: number, body: string, { author = SOMEONE_ELSE } = {}): FakeForgeComment {
    const found = this.forge.findRepo(repo);
    const issue = this.forge.issueOrThrow(found, number);
    const stamp = this.forge.nextStamp(issue.updatedMs);
    return copyComment(this.forge.insertComment(found, issue, author, body, stamp));
  }

  editComment(repo: string, id: number, body: string): FakeForgeComment {
    const comment = this.forge.commentOrThrow(this.forge.findRepo(repo), id);
    this.forge.editComment(comment, body);
    return copyComment(comment);
  }

  deleteComment(repo: string, id: number): void {
    const found = this.forge.findRepo(repo);
    this.forge.removeComment(found, this.forge.commentOrThrow(found, id));
  }

  comments(repo: string, number?: number): FakeForgeComment[] {
    return [...this.forge.findRepo(repo).comments.values()]
      .filter((comment) => number === undefined || comment.issueNumber === number)
      .sort((a, b) => a.id - b.id)
      .map(copyComment);
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
  serveRequests(server, "fake forge", (req, res) => fake.handle(req, res));
  return fake;
}

/** `startFakeForge` for one ava test; the test's teardown closes it. */
export function givenFakeForge(t: ExecutionContext, options: FakeForgeOptions = {}): Promise<FakeForge> {
  return givenFake(t, () => startFakeForge(options));
}
