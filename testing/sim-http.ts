/**
 * HTTP helpers for the simulator's tests: `callSim` for ordinary requests (global fetch), `rawRequest` for
 * what fetch cannot send (raw paths like `/projects/..%2F..`, invalid UTF-8, bodies streamed in chunks that
 * the server may stop reading), and the checks every answer must pass (`assertEnvelope`, `responseSummary`).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type Agent, type ClientRequest, type IncomingMessage, request } from "node:http";
import type { ExecutionContext } from "ava";

export interface SimResponse {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly bytes: Buffer;
  readonly text: string;
  /** The body parsed as JSON; throws with the body in the message when it is not JSON. */
  json<T = unknown>(): T;
}

function toResponse(status: number, headers: Record<string, string>, bytes: Buffer): SimResponse {
  const text = bytes.toString("utf8");
  return {
    status,
    headers,
    bytes,
    text,
    json<T>() {
      try {
        return JSON.parse(text) as T;
      } catch (error) {
        throw new Error(
          `expected a JSON body with status ${status}, got ${JSON.stringify(text.slice(0, 200))}`,
          {
            cause: error,
          },
        );
      }
    },
  };
}

export interface CallOptions {
  /** Sent as the JSON body with `Content-Type: application/json` unless `contentType` says otherwise. */
  readonly json?: unknown;
  /** Sent as is; no Content-Type unless `contentType` is given. */
  readonly body?: string | Uint8Array;
  /** `null` sends no Content-Type even with `json`. */
  readonly contentType?: string | null;
  /** `X-Svc-Agent`; absent by default. */
  readonly agent?: string;
  readonly ifMatch?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * One request with the global fetch, on a connection of its own (`Connection: close` unless `headers` say
 * otherwise); `path` starts with `/` (fetch normalizes dot segments, see `rawRequest`).
 */
export async function callSim(
  url: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<SimResponse> {
  // A new connection per request: a kept-alive one the simulator closes after its 5 s idle timeout can be
  // reused by fetch at that very moment on a loaded machine ("fetch failed", seen on Node 22.16).
  const headers: Record<string, string> = { connection: "close", ...options.headers };
  let body: Uint8Array | undefined;
  if (options.json !== undefined) {
    body = Buffer.from(JSON.stringify(options.json));
    if (options.contentType === undefined) headers["content-type"] = "application/json";
  } else if (options.body !== undefined) {
    body = typeof options.body === "string" ? Buffer.from(options.body) : options.body;
  }
  if (typeof options.contentType === "string") headers["content-type"] = options.contentType;
  if (options.agent !== undefined) headers["x-svc-agent"] = options.agent;
  if (options.ifMatch !== undefined) headers["if-match"] = options.ifMatch;
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return toResponse(response.status, Object.fromEntries(response.headers), bytes);
}

export interface RawRequest {
  readonly method: string;
  /** Sent byte for byte as the request target. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * One buffer (sent with Content-Length unless headers say otherwise), or chunks (sent chunked unless
   * headers give a Content-Length), possibly generated while the request is under way.
   */
  readonly body?:
    | Buffer
    | readonly Buffer[]
    | ((request: ClientRequest) => Iterable<Buffer> | AsyncIterable<Buffer>);
  readonly agent?: Agent | false;
}

export type RawOutcome =
  | ({ readonly kind: "response" } & SimResponse)
  | { readonly kind: "error"; readonly code: string; readonly message: string };

/**
 * A request through `node:http`. A generated body is written only while the server keeps reading and no
 * response has arrived, so a server that answers early and cuts the connection ends the request instead of
 * stalling it. Resolves with the response or with the connection error; at most 20 s.
 */
export function rawRequest(url: string, spec: RawRequest): Promise<RawOutcome> {
  const target = new URL(url);
  return new Promise<RawOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let req: ClientRequest;
    try {
      req = request(
        {
          host: target.hostname,
          port: target.port,
          method: spec.method,
          path: spec.path,
          headers: requestHeaders(spec),
          agent: spec.agent ?? false,
        },
        (res) => collectResponse(res, settle),
      );
    } catch (error) {
      throw new Error(
        `cannot send ${spec.method} ${JSON.stringify(spec.path)}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    const timer = setTimeout(() => {
      req.destroy(new Error("no answer within 20 s"));
    }, 20_000);
    req.on("error", (error: NodeJS.ErrnoException) =>
      settle({ kind: "error", code: error.code ?? "ERR", message: error.message }),
    );
    writeBody(req, spec.body, () => settled).catch((error: Error) => req.destroy(error));
  });
}

/** The spec's headers, with a Content-Length for a one-buffer body unless they give one. */
function requestHeaders(spec: RawRequest): Record<string, string> {
  const headers: Record<string, string> = { ...spec.headers };
  if (Buffer.isBuffer(spec.body) && !Object.keys(headers).some((h) => h.toLowerCase() === "content-length")) {
    headers["content-length"] = String(spec.body.length);
  }
  return headers;
}

/** Reads the whole response, its headers flattened, into `settle`; a broken response settles as an error. */
function collectResponse(res: IncomingMessage, settle: (outcome: RawOutcome) => void): void {
  const chunks: Buffer[] = [];
  res.on("data", (chunk: Buffer) => chunks.push(chunk));
  res.on("end", () => {
    const flat: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    settle({ kind: "response", ...toResponse(res.statusCode ?? 0, flat, Buffer.concat(chunks)) });
  });
  res.on("error", (error: NodeJS.ErrnoException) =>
    settle({ kind: "error", code: error.code ?? "ERR", message: error.message }),
  );
}

/**
 * Sends the body and ends the request. Chunks are written only while the server keeps reading (a full
 * buffer waits for `drain`, `close` or `response`) and stop once the request is settled or destroyed.
 */
async function writeBody(
  req: ClientRequest,
  body: RawRequest["body"],
  settled: () => boolean,
): Promise<void> {
  if (body === undefined) {
    req.end();
    return;
  }
  if (Buffer.isBuffer(body)) {
    req.end(body);
    return;
  }
  const chunks = typeof body === "function" ? body(req) : body;
  for await (const chunk of chunks) {
    if (settled() || req.destroyed) return;
    if (!req.write(chunk)) {
      await new Promise<void>((resume) => {
        const done = () => {
          req.off("drain", done);
          req.off("close", done);
          req.off("response", done);
          resume();
        };
        req.on("drain", done);
        req.on("close", done);
        req.on("response", done);
      });
    }
  }
  if (!settled() && !req.destroyed) req.end();
}

/** The response of a `rawRequest`, or a failed assertion naming the connection error. */
export function expectResponse(outcome: RawOutcome): SimResponse {
  if (outcome.kind === "error") assert.fail(`expected a response, got ${outcome.code}: ${outcome.message}`);
  return outcome;
}

/** `response_summary` of the audit row for an answer with `status` and these body bytes. */
export function responseSummary(status: number, body: Uint8Array): string {
  return `${status}:${createHash("sha256").update(body).digest("hex").slice(0, 16)}`;
}

export interface ErrorEnvelope {
  readonly error: string;
  readonly message: string;
  readonly details: Record<string, unknown>;
}

/**
 * Asserts the error envelope of Document 1 "Errors": a JSON body with exactly `error` (the kind),
 * `message` (non-empty) and `details` (an object), and no stack trace. Returns the envelope.
 */
export function assertEnvelope(
  t: ExecutionContext,
  response: SimResponse,
  status: number,
  kind: string,
): ErrorEnvelope {
  const context = `${response.status} ${response.text.slice(0, 300)}`;
  t.is(response.status, status, context);
  t.regex(response.headers["content-type"] ?? "", /^application\/json\b/, context);
  const body = response.json<ErrorEnvelope>();
  t.deepEqual(Object.keys(body).sort(), ["details", "error", "message"], context);
  t.is(body.error, kind, context);
  t.true(typeof body.message === "string" && body.message.length > 0, context);
  t.true(body.details !== null && typeof body.details === "object" && !Array.isArray(body.details), context);
  t.notRegex(response.text, /\n\s+at |\.js:\d+/, `a stack trace in the answer: ${context}`);
  return body;
}

/** RFC 3339 UTC with milliseconds, the simulator's timestamp format (DESIGN.md §5). */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
