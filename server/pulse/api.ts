/**
 * The pulse daemon's HTTP API (Document 2 "Endpoints", "Authentication"; DESIGN.md §7) as a `micro`
 * handler:
 *
 *   GET  /api/health               no auth; 200 {status:"ok"} or 503 {status:"degraded", reasons:[…]}
 *   POST /api/pulse/trigger        Bearer; 201 {pulse} new, 200 {pulse, deduplicated:true} for a known dedup_key
 *   GET  /api/pulse/<id>           Bearer; {pulse, attempts}
 *   POST /api/pulse/<id>/cancel    Bearer; 200 {pulse}, 409 when it has finished already
 *
 * Errors are `{"error": {"code", "message", "field"?}}`. A missing token is 401 (with `WWW-Authenticate`),
 * a wrong one 403; tokens are compared in constant time, and the current and the previous token
 * (`PULSE_API_TOKEN_PREVIOUS`, for a rotation) are both accepted. A locked database answers 503 with
 * `Retry-After`; nothing is half-written.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { send, serve } from "micro";
import { readRequestBody } from "../../core/request-body.js";
import { isBusy } from "./db.js";
import type { Logger } from "./log.js";
import { InvalidPulse, type PulseDefaults, parseTriggerBody } from "./pulse-input.js";
import type { Attempt, Pulse, PulseQueue } from "./queue.js";

/** Bodies above this are refused with 413 (a prompt is at most 128 KiB; JSON escaping can double it). */
export const MAX_TRIGGER_BODY_BYTES = 512 * 1024;

export interface Health {
  readonly status: "ok" | "degraded";
  readonly reasons: readonly string[];
  readonly [key: string]: unknown;
}

export interface ApiOptions {
  readonly queue: PulseQueue;
  /** Accepted bearer tokens: the current one, and the previous one during a rotation. */
  readonly tokens: readonly string[];
  readonly defaults: PulseDefaults;
  readonly health: () => Health;
  readonly logger: Logger;
  /** Called after a pulse was added, so the scheduler can look at once instead of at its next tick. */
  readonly onTrigger?: () => void;
  /** Called after a cancel, so a running pulse's runner is stopped. */
  readonly onCancel?: (pulse: Pulse) => void;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Constant-time comparison of `presented` with each accepted token (hashing first evens out lengths). */
export function tokenMatches(presented: string, tokens: readonly string[]): boolean {
  const offered = digest(presented);
  let match = false;
  for (const token of tokens) match = timingSafeEqual(offered, digest(token)) || match;
  return match;
}

/** The pulse as the API shows it: times in RFC 3339, no lease internals. */
export function publicPulse(pulse: Pulse): Record<string, unknown> {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: pulse.id,
    prompt: pulse.prompt,
    source: pulse.source,
    priority: pulse.priority,
    status: pulse.status,
    scheduled_at: pulse.scheduled_at,
    next_run_at: pulse.status === "pending" ? iso(pulse.run_at) : null,
    dedup_key: pulse.dedup_key,
    attempt: pulse.attempt,
    max_attempts: pulse.max_attempts,
    created_at: iso(pulse.created_at),
    updated_at: iso(pulse.updated_at),
    executed_at: pulse.executed_at,
    finished_at: iso(pulse.finished_at),
    exit_code: pulse.exit_code,
    signal: pulse.signal,
    last_error: pulse.last_error,
    output_tail: pulse.output_tail,
    backfilled: pulse.backfilled === 1,
  };
}

function publicAttempt(attempt: Attempt): Record<string, unknown> {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return { ...attempt, started_at: iso(attempt.started_at), finished_at: iso(attempt.finished_at) };
}

function tooLarge(): ApiError {
  return new ApiError(413, "payload_too_large", `the body is larger than ${MAX_TRIGGER_BODY_BYTES} bytes`);
}

function authorize(req: IncomingMessage, tokens: readonly string[]): void {
  const header = req.headers.authorization;
  const challenge = { "www-authenticate": 'Bearer realm="svc-pulse"' };
  if (header === undefined || header.trim() === "") {
    throw new ApiError(
      401,
      "unauthorized",
      "missing Authorization header; send Authorization: Bearer <PULSE_API_TOKEN>",
      {},
      challenge,
    );
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    throw new ApiError(
      401,
      "unauthorized",
      "the Authorization header must be: Bearer <PULSE_API_TOKEN>",
      {},
      challenge,
    );
  }
  if (!tokenMatches(match[1] as string, tokens)) {
    throw new ApiError(403, "forbidden", "the bearer token is not PULSE_API_TOKEN");
  }
}

function parsePulseId(text: string): number {
  const id = Number(text);
  if (!/^[1-9]\d{0,15}$/.test(text) || !Number.isSafeInteger(id)) {
    throw new ApiError(
      404,
      "not_found",
      `no pulse ${JSON.stringify(text)}; pulse ids are positive whole numbers`,
    );
  }
  return id;
}

function methodNotAllowed(method: string, allowed: readonly string[]): ApiError {
  return new ApiError(
    405,
    "method_not_allowed",
    `${method} is not allowed here; use ${allowed.join(" or ")}`,
    {},
    {
      allow: allowed.join(", "),
    },
  );
}

interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

export function createPulseHandler(options: ApiOptions): RequestListener {
  return serve(async (req: IncomingMessage, res: ServerResponse) => {
    let answer: Answer;
    try {
      answer = await route(req, options);
    } catch (error) {
      answer = errorAnswer(error, req, options.logger);
    }
    writeAnswer(req, res, answer);
  });
}

/** Which endpoint answers: by path first, so a wrong method on a known path is 405, not 404. */
async function route(req: IncomingMessage, options: ApiOptions): Promise<Answer> {
  const method = req.method ?? "GET";
  const path = new URL(req.url ?? "/", "http://pulse.invalid").pathname;
  if (path === "/api/health") return health(method, options);
  if (path === "/api/pulse/trigger") return trigger(req, method, options);
  const match = /^\/api\/pulse\/([^/]+)(\/cancel)?$/.exec(path);
  if (match && match[2] === undefined) return showPulse(req, method, match[1] as string, options);
  if (match) return cancelPulse(req, method, match[1] as string, options);
  throw new ApiError(
    404,
    "not_found",
    `no route ${method} ${path.slice(0, 200)}; see GET /api/health, POST /api/pulse/trigger`,
  );
}

/** GET /api/health: no authentication. */
function health(method: string, options: ApiOptions): Answer {
  if (method !== "GET" && method !== "HEAD") throw methodNotAllowed(method, ["GET"]);
  const health = options.health();
  return { status: health.status === "ok" ? 200 : 503, body: health };
}

/** POST /api/pulse/trigger: 201 for a new pulse, 200 with `deduplicated` for a known dedup key. */
async function trigger(req: IncomingMessage, method: string, options: ApiOptions): Promise<Answer> {
  if (method !== "POST") throw methodNotAllowed(method, ["POST"]);
  authorize(req, options.tokens);
  const body = await readJsonBody(req);
  const idempotencyKey = req.headers["idempotency-key"];
  const input = parseTriggerBody(
    body,
    options.queue.now(),
    options.defaults,
    typeof idempotencyKey === "string" ? idempotencyKey : undefined,
  );
  const { pulse, created } = options.queue.enqueue(input);
  // `id` and `status` also at the top, for clients that only want to know which pulse it is.
  const shown = { id: pulse.id, status: pulse.status, pulse: publicPulse(pulse) };
  if (!created) return { status: 200, body: { ...shown, deduplicated: true } };
  options.logger.info("pulse queued", {
    pulse: pulse.id,
    source: pulse.source,
    priority: pulse.priority,
    scheduled_at: pulse.scheduled_at,
  });
  options.onTrigger?.();
  return { status: 201, body: shown };
}

/** The request's body as JSON: 415 unless it says it is JSON, 413 when too large, 400 when not JSON. */
async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    throw new ApiError(
      415,
      "unsupported_media_type",
      "send the body as JSON with Content-Type: application/json",
    );
  }
  const received = await readRequestBody(req, { keepBytes: MAX_TRIGGER_BODY_BYTES });
  if (received.tooLarge) throw tooLarge();
  const raw = received.bytes;
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw new ApiError(400, "invalid_json", "the body is not valid JSON");
  }
}

/** GET /api/pulse/<id>: the pulse and its attempts. */
function showPulse(req: IncomingMessage, method: string, idText: string, options: ApiOptions): Answer {
  if (method !== "GET" && method !== "HEAD") throw methodNotAllowed(method, ["GET"]);
  authorize(req, options.tokens);
  const existing = existingPulse(idText, options.queue);
  return {
    status: 200,
    body: { pulse: publicPulse(existing), attempts: options.queue.attempts(existing.id).map(publicAttempt) },
  };
}

/** POST /api/pulse/<id>/cancel: 409 when the pulse has finished already. */
function cancelPulse(req: IncomingMessage, method: string, idText: string, options: ApiOptions): Answer {
  if (method !== "POST") throw methodNotAllowed(method, ["POST"]);
  authorize(req, options.tokens);
  const existing = existingPulse(idText, options.queue);
  const cancelled = options.queue.cancel(existing.id);
  if (!cancelled) {
    throw new ApiError(
      409,
      "already_finished",
      `pulse ${existing.id} is ${existing.status} already; nothing to cancel`,
      { status: existing.status },
    );
  }
  options.logger.info("pulse cancelled", { pulse: existing.id, was: existing.status });
  options.onCancel?.(cancelled);
  return { status: 200, body: { pulse: publicPulse(cancelled) } };
}

function existingPulse(idText: string, queue: PulseQueue): Pulse {
  const id = parsePulseId(idText);
  const existing = queue.get(id);
  if (!existing) throw new ApiError(404, "not_found", `no pulse ${id}`);
  return existing;
}

/** The answer for a failed request; anything unexpected is logged with its stack and shown as 500. */
function errorAnswer(error: unknown, req: IncomingMessage, logger: Logger): Answer {
  if (error instanceof ApiError) {
    return {
      status: error.status,
      body: { error: { code: error.code, message: error.message, ...error.extra } },
      headers: error.headers,
    };
  }
  if (error instanceof InvalidPulse) {
    return {
      status: 400,
      body: { error: { code: "invalid_pulse", message: error.message, field: error.field } },
    };
  }
  if (isBusy(error)) {
    logger.warn("database locked; answered 503", { path: req.url?.slice(0, 200) });
    return {
      status: 503,
      body: { error: { code: "database_busy", message: "the pulse database is locked; retry shortly" } },
      headers: { "retry-after": "1" },
    };
  }
  logger.error("internal error in the API", { error: (error as Error).stack ?? String(error) });
  return {
    status: 500,
    body: { error: { code: "internal", message: "internal error; see the daemon log" } },
  };
}

function writeAnswer(req: IncomingMessage, res: ServerResponse, answer: Answer): void {
  for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  const body = Buffer.from(`${JSON.stringify(answer.body)}\n`);
  send(res, answer.status, req.method === "HEAD" ? Buffer.alloc(0) : body);
}
