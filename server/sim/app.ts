/**
 * The simulator's HTTP surface (Document 1 "Endpoints", "Errors", "Limits"; DESIGN.md §5) as a `micro`
 * request handler.
 *
 * Layering, outermost first: the audit row (one per request, whatever happens inside, written before the
 * response leaves so a client that got its answer also finds its row), the body limit (413), the rate limit
 * (429; `/healthz` exempt), routing, validation, the store. Every non-2xx answer is a JSON envelope; an
 * unexpected exception becomes `internal` without a stack trace on the wire.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { send, serve } from "micro";
import { COMMENTS_STATE_HEADER, SIM_STATUSES } from "../../backends/sim/schema.js";
import { NO_BODY, type ReceivedBody, readRequestBody } from "../../core/request-body.js";
import { commentRoute, issueCommentsRoute, projectCommentsRoute } from "./comment-routes.js";
import { RateLimiter } from "./rate-limit.js";
import {
  digest16,
  failure,
  invalidBody,
  json,
  listingReply,
  methodNotAllowed,
  notFound,
  parseJsonBody,
  type Reply,
  UnsupportedMediaType,
  versionMismatch,
} from "./replies.js";
import type { AuditRow, SimStore } from "./store.js";
import {
  InvalidRequest,
  isValidSlug,
  parseIfMatch,
  parseIssueId,
  parseIssueInput,
  parseSince,
} from "./validate.js";

/** Request bodies over this many bytes get 413 `payload_too_large`. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** A too-large body is read and dropped up to this size so the client sees the 413; beyond it the connection is cut. */
const MAX_DRAIN_BYTES = 16 * 1024 * 1024;
const AUDIT_BODY_CHARS = 256;
const MAX_AGENT_CHARS = 200;
const MAX_AUDIT_PATH_CHARS = 2048;

/**
 * Serialized GET answers of single issues, keyed by project and id, dropped on every write to that issue.
 * One process serves one store (Document 1), so the cache is exact; it saves the read, the JSON and the
 * SHA-256 on the hottest route.
 */
class IssueAnswers {
  private readonly answers = new Map<string, Reply>();

  constructor(private readonly limit = 10_000) {}

  get(slug: string, id: number): Reply | undefined {
    return this.answers.get(`${slug}/${id}`);
  }

  remember(slug: string, id: number, reply: Reply): Reply {
    if (this.answers.size >= this.limit) this.answers.clear();
    const body = reply.body ?? Buffer.alloc(0);
    const cached = { ...reply, bodyDigest: digest16(body) };
    this.answers.set(`${slug}/${id}`, cached);
    return cached;
  }

  forget(slug: string, id: number): void {
    this.answers.delete(`${slug}/${id}`);
  }
}

/** The first `AUDIT_BODY_CHARS` characters (code points, so a surrogate pair is never split) of the body. */
function auditBody(bytes: Buffer): string {
  // A code point takes at most 4 bytes, so the characters kept are all within the first 4 × N bytes.
  const text = bytes.subarray(0, AUDIT_BODY_CHARS * 4).toString("utf8");
  let end = 0;
  let count = 0;
  for (const char of text) {
    if (count === AUDIT_BODY_CHARS) break;
    end += char.length;
    count++;
  }
  return text.slice(0, end);
}

/** Splits `/projects/a/issues/1?since=…` into decoded segments and the query; undefined if undecodable. */
function parseTarget(target: string): { segments: string[]; query: URLSearchParams } | undefined {
  const queryAt = target.indexOf("?");
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  const query = new URLSearchParams(queryAt === -1 ? "" : target.slice(queryAt + 1));
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  if (!trimmed.startsWith("/")) return undefined;
  try {
    const segments = trimmed === "/" ? [] : trimmed.slice(1).split("/").map(decodeURIComponent);
    return { segments, query };
  } catch {
    return undefined;
  }
}

export interface SimAppOptions {
  readonly store: SimStore;
  /** Requests per second per agent, also the burst; 0 turns the limit off. */
  readonly rateLimit: number;
  /** Where unexpected failures are reported (stderr in `svc sim`). */
  readonly logError?: (message: string) => void;
}

/** What routing reads and writes: the store, and the cached answers it keeps exact. */
interface Routes {
  readonly store: SimStore;
  readonly answers: IssueAnswers;
}

/** `/projects/<slug>/issues/<id>`: GET (cached), PATCH, DELETE. */
function issueRoute(
  { store, answers }: Routes,
  req: IncomingMessage,
  method: string,
  slug: string,
  idSegment: string,
  body: Buffer,
): Reply {
  const id = parseIssueId(idSegment);
  // GET needs no project check: a missing project has no issues (and this is the hot path).
  if (id !== undefined && method === "GET") {
    const cached = answers.get(slug, id);
    if (cached) return cached;
    const issue = store.getIssue(slug, id);
    if (issue) return answers.remember(slug, id, json(200, issue));
  }
  if (id === undefined || !store.hasProject(slug)) {
    return notFound(`no issue ${JSON.stringify(idSegment.slice(0, 40))} in project ${slug}`, {
      project: slug,
    });
  }
  if (method === "GET") {
    return notFound(`no issue ${id} in project ${slug}`, { project: slug, id });
  }
  if (method === "PATCH") {
    const changes = parseIssueInput(parseJsonBody(req, body), "update");
    const expected = parseIfMatch(req.headers["if-match"]);
    answers.forget(slug, id);
    const outcome = store.patchIssue(slug, id, changes, expected);
    if (outcome.kind === "ok") return json(200, outcome.issue);
    if (outcome.kind === "not_found")
      return notFound(`no issue ${id} in project ${slug}`, { project: slug, id });
    return versionMismatch(outcome.current, expected);
  }
  if (method === "DELETE") {
    const expected = parseIfMatch(req.headers["if-match"]);
    answers.forget(slug, id);
    const outcome = store.deleteIssue(slug, id, expected);
    if (outcome.kind === "ok") return { status: 204 };
    if (outcome.kind === "not_found")
      return notFound(`no issue ${id} in project ${slug}`, { project: slug, id });
    return versionMismatch(outcome.current, expected);
  }
  return methodNotAllowed(method, ["GET", "PATCH", "DELETE"]);
}

/** `/projects/<slug>/issues`: GET (optionally `?since=`), POST. */
function issuesRoute(
  { store }: Routes,
  req: IncomingMessage,
  method: string,
  slug: string,
  query: URLSearchParams,
  body: Buffer,
): Reply {
  if (method === "GET") {
    const since = query.get("since");
    const normalized = since === null ? undefined : parseSince(since);
    if (!store.hasProject(slug)) return notFound(`no project ${slug}`, { project: slug });
    // Read before the snapshot, as the count is: a comment written meanwhile is listed at the next fetch.
    const comments = { [COMMENTS_STATE_HEADER]: store.comments.state(slug) };
    return listingReply(store.issueCount(slug), store.issueSnapshot(slug, normalized), comments);
  }
  if (method === "POST") {
    const input = parseIssueInput(parseJsonBody(req, body), "create") as { title: string };
    return json(201, store.createIssue(slug, input));
  }
  return methodNotAllowed(method, ["GET", "POST"]);
}

/** `/projects/<slug>/issues/<id>/transitions`: GET. */
function transitionsRoute({ store }: Routes, method: string, slug: string, idSegment: string): Reply {
  if (method !== "GET") return methodNotAllowed(method, ["GET"]);
  const id = parseIssueId(idSegment);
  const issue = id === undefined ? undefined : store.getIssue(slug, id);
  if (!issue) return notFound(`no issue ${JSON.stringify(idSegment.slice(0, 40))} in project ${slug}`);
  return json(200, { current: issue.frontmatter.status, available: [...SIM_STATUSES] });
}

/** Every route under `/projects`; throws `InvalidRequest` and `UnsupportedMediaType` for bad bodies. */
function route(
  routes: Routes,
  req: IncomingMessage,
  method: string,
  segments: string[],
  query: URLSearchParams,
  body: Buffer,
): Reply {
  const { store } = routes;
  if (segments[0] !== "projects") return notFound("no such route; see GET /projects");
  if (segments.length === 1) {
    return method === "GET" ? json(200, store.listProjects()) : methodNotAllowed(method, ["GET"]);
  }
  const slug = segments[1] ?? "";
  if (!isValidSlug(slug)) {
    return notFound("no project has this slug; slugs are letters, digits, '.', '_' and '-' (at most 64)");
  }
  if (segments.length === 2) {
    if (method !== "GET") return methodNotAllowed(method, ["GET"]);
    const project = store.getProject(slug);
    return project ? json(200, project) : notFound(`no project ${slug}`, { project: slug });
  }
  if (segments[2] === "comments" && segments.length <= 4) {
    return segments.length === 3
      ? projectCommentsRoute(store, method, slug, query)
      : commentRoute(store, req, method, slug, segments[3] ?? "", body);
  }
  if (segments[2] !== "issues" || segments.length > 5) return notFound("no such route; see GET /projects");
  if (segments.length === 3) return issuesRoute(routes, req, method, slug, query, body);
  const idSegment = segments[3] ?? "";
  if (segments.length === 4) return issueRoute(routes, req, method, slug, idSegment, body);
  if (segments[4] === "comments") {
    return issueCommentsRoute(store, req, method, slug, idSegment, query, body);
  }
  if (segments[4] !== "transitions") return notFound("no such route; see GET /projects");
  return transitionsRoute(routes, method, slug, idSegment);
}

/** The 429 for an agent over its rate, undefined when the request may go on. */
function rateLimited(limiter: RateLimiter, agent: string): Reply | undefined {
  const decision = limiter.take(agent);
  if (decision.allowed) return undefined;
  return failure(
    429,
    "rate_limited",
    `too many requests from agent ${JSON.stringify(agent.slice(0, 40) || "(anonymous)")}; retry after ${decision.retryAfterSeconds} s`,
    { retry_after: decision.retryAfterSeconds },
    { "retry-after": String(decision.retryAfterSeconds) },
  );
}

/** The request's answer, layer by layer (the module comment): body limit, `/healthz`, rate limit, routes. */
function answer(
  routes: Routes,
  limiter: RateLimiter,
  req: IncomingMessage,
  received: ReceivedBody,
  agent: string,
): Reply {
  if (received.tooLarge) {
    return failure(413, "payload_too_large", `the request body is larger than ${MAX_BODY_BYTES} bytes`, {
      limit_bytes: MAX_BODY_BYTES,
    });
  }
  const method = req.method === "HEAD" ? "GET" : (req.method ?? "GET");
  const target = parseTarget(req.url ?? "/");
  if (target?.segments.length === 1 && target.segments[0] === "healthz") {
    return method === "GET"
      ? { status: 200, body: Buffer.from("ok"), headers: { "content-type": "text/plain; charset=utf-8" } }
      : methodNotAllowed(method, ["GET"]);
  }
  const limited = rateLimited(limiter, agent);
  if (limited) return limited;
  if (!target) return notFound("the request path cannot be decoded");
  try {
    return route(routes, req, method, target.segments, target.query, received.bytes);
  } catch (error) {
    if (error instanceof InvalidRequest) return invalidBody(error.message, error.details);
    if (error instanceof UnsupportedMediaType) {
      return failure(415, "invalid_body", "send the body as JSON with Content-Type: application/json", {
        content_type: String(req.headers["content-type"] ?? "").slice(0, 100),
      });
    }
    throw error;
  }
}

/**
 * Audit rows are committed in batches: the rows of every request answered in one turn of the event loop
 * go into one transaction, and only then do their responses leave. A client that has its answer also
 * finds its row, and the commit (a WAL write) is paid once per batch instead of once per request.
 */
class AuditBatches {
  private pending: { row: AuditRow; respond: (committed: boolean) => void }[] = [];

  constructor(
    private readonly store: SimStore,
    private readonly logError: (message: string) => void,
  ) {}

  /** Queues `row`; `respond` runs once the batch holding it is committed (`true`) or has failed (`false`). */
  auditThenRespond(row: AuditRow, respond: (committed: boolean) => void): void {
    if (this.pending.length === 0) setImmediate(() => this.flush());
    this.pending.push({ row, respond });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    let committed = true;
    try {
      this.store.appendAuditBatch(batch.map((entry) => entry.row));
    } catch (error) {
      committed = false;
      this.logError(`svc-sim: cannot write ${batch.length} audit rows: ${(error as Error).message}`);
    }
    for (const entry of batch) entry.respond(committed);
  }
}

/** The `X-Svc-Agent` header, cut to its limit; "" when absent. */
function agentOf(req: IncomingMessage): string {
  const agentHeader = req.headers["x-svc-agent"];
  return (Array.isArray(agentHeader) ? agentHeader[0] : agentHeader)?.slice(0, MAX_AGENT_CHARS) ?? "";
}

/**
 * The audit row of a request and the reply it is about to get; `streamed`: the digest of a streamed body
 * (all of it but the last chunk is sent by then).
 */
function auditRow(
  req: IncomingMessage,
  agent: string,
  received: ReceivedBody,
  reply: Reply,
  streamed?: string,
): AuditRow {
  // What the client receives: a HEAD answer carries the headers of GET but no body.
  const responseBody = (req.method !== "HEAD" && reply.body) || Buffer.alloc(0);
  const digest =
    streamed ??
    (reply.bodyDigest !== undefined && responseBody === reply.body
      ? reply.bodyDigest
      : digest16(responseBody));
  return {
    ts: new Date().toISOString(),
    agent_id: agent === "" ? null : agent,
    method: (req.method ?? "").slice(0, 16),
    path: (req.url ?? "").slice(0, MAX_AUDIT_PATH_CHARS),
    status: reply.status,
    request_body: auditBody(received.bytes),
    response_summary: `${reply.status}:${digest}`,
  };
}

/**
 * Sends `reply`; a connection whose body was too large or abandoned is closed after it (`socket` captured
 * before the response could let go of it).
 */
function sendReply(res: ServerResponse, reply: Reply, received: ReceivedBody, socket: Socket): void {
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (received.abandoned || received.tooLarge) res.setHeader("connection", "close");
  if (reply.status === 204) {
    res.statusCode = 204;
    res.end();
  } else {
    send(res, reply.status, reply.body ?? Buffer.alloc(0));
  }
  if (received.abandoned) res.on("finish", () => socket.destroySoon());
}

/** Resolves when `res` may take more (or is gone: then it says false). */
function writable(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve(!res.destroyed);
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

/**
 * Sends a streamed reply. Its last chunk (the closing `]`) waits for the audit row, which needs the digest
 * of the whole body: a client that has its whole answer also finds its row. A failure on the way, or an
 * audit row that cannot be written, cuts the connection: a 200 is already on its way, and a client must
 * not take a part of a listing for all of it. A client that goes away ends the reading.
 */
async function streamReply(
  res: ServerResponse,
  reply: Reply,
  audited: (digest: string, respond: (committed: boolean) => void) => void,
  logError: (message: string) => void,
): Promise<void> {
  const hash = createHash("sha256");
  res.writeHead(reply.status, reply.headers);
  const chunks = (reply.stream as Iterable<Buffer>)[Symbol.iterator]();
  let last: Buffer | undefined;
  try {
    for (let next = chunks.next(); !next.done; next = chunks.next()) {
      if (last !== undefined) {
        hash.update(last);
        if (!res.write(last) && !(await writable(res))) break;
      }
      last = next.value;
    }
  } catch (error) {
    logError(`svc-sim: internal error while streaming a listing: ${(error as Error).stack}`);
    last = undefined;
  } finally {
    chunks.return?.();
  }
  if (last === undefined || res.destroyed) {
    audited(hash.digest("hex").slice(0, 16), () => res.destroy());
    return;
  }
  const final = last;
  audited(hash.update(final).digest("hex").slice(0, 16), (committed) => {
    if (committed) res.end(final);
    else res.destroy();
  });
}

export function createSimHandler(options: SimAppOptions): RequestListener {
  const routes: Routes = { store: options.store, answers: new IssueAnswers() };
  const limiter = new RateLimiter(options.rateLimit);
  const logError = options.logError ?? ((message: string) => process.stderr.write(`${message}\n`));
  const audit = new AuditBatches(options.store, logError);

  return serve(async (req: IncomingMessage, res: ServerResponse) => {
    const agent = agentOf(req);
    // Captured before anything can detach it: the response lets go of the socket when it finishes.
    const socket = req.socket;
    let received: ReceivedBody = NO_BODY;
    let reply: Reply;
    try {
      received = await readRequestBody(req, { keepBytes: MAX_BODY_BYTES, drainBytes: MAX_DRAIN_BYTES });
      reply = answer(routes, limiter, req, received, agent);
    } catch (error) {
      logError(
        `svc-sim: internal error on ${req.method} ${req.url?.slice(0, 200)}: ${(error as Error).stack}`,
      );
      reply = failure(500, "internal", "the simulator failed on this request; see its stderr");
    }
    if (reply.stream && req.method !== "HEAD") {
      await streamReply(
        res,
        reply,
        (digest, respond) => audit.auditThenRespond(auditRow(req, agent, received, reply, digest), respond),
        logError,
      );
      return;
    }
    audit.auditThenRespond(auditRow(req, agent, received, reply), (committed) => {
      const sent = committed
        ? reply
        : failure(500, "internal", "the simulator could not record this request in its audit log");
      sendReply(res, sent, received, socket);
    });
  });
}
