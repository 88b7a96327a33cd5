/**
 * The answers of the simulator's routes (Document 1 "Errors", "Limits" 3): the reply a route returns, JSON
 * and error envelopes, the streamed listings (issues and comments alike, with the live count), and the JSON
 * request body as a route reads it. Shared by app.ts and comment-routes.ts.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { LIVE_COUNT_HEADER } from "../../backends/sim/schema.js";
import { InvalidRequest } from "./validate.js";

export interface Reply {
  readonly status: number;
  readonly body?: Buffer;
  readonly headers?: Record<string, string>;
  /** The first 16 hex digits of the body's SHA-256, when already known (cached answers). */
  readonly bodyDigest?: string;
  /** A body sent as it is made, in place of `body`: the issue listing, which may be far larger than a string. */
  readonly stream?: Iterable<Buffer>;
}

export function digest16(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex").slice(0, 16);
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return {
    status,
    body: Buffer.from(JSON.stringify(value)),
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  };
}

/** Bytes of serialized issues gathered before a chunk of a streamed listing is written. */
export const CHUNK_BYTES = 64 * 1024;

/**
 * The bytes of `JSON.stringify([...items])`, in chunks, made as they are read: one JSON array (Document 1
 * "Limits" 3), never one string.
 */
export function* jsonArrayChunks(items: Iterable<unknown>): Generator<Buffer> {
  let text = "[";
  let first = true;
  for (const item of items) {
    text += first ? JSON.stringify(item) : `,${JSON.stringify(item)}`;
    first = false;
    if (text.length >= CHUNK_BYTES) {
      yield Buffer.from(text);
      text = "";
    }
  }
  yield Buffer.from(`${text}]`);
}

export function failure(
  status: number,
  error: string,
  message: string,
  details: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Reply {
  return json(status, { error, message, details }, headers);
}

export const notFound = (message: string, details: Record<string, unknown> = {}) =>
  failure(404, "not_found", message, details);
export const invalidBody = (message: string, details: Record<string, unknown> = {}) =>
  failure(400, "invalid_body", message, details);

/** The 409 of Document 1 "Optimistic concurrency on PATCH" 3: exactly `error`, `current` and `sent`. */
export function versionMismatch(current: number, sent: number | undefined): Reply {
  return json(409, { error: "version_mismatch", current, sent });
}

export function methodNotAllowed(method: string, allowed: readonly string[]): Reply {
  return failure(
    405,
    "method_not_allowed",
    `${method} is not supported here; use ${allowed.join(" or ")}`,
    { allowed },
    { allow: allowed.join(", ") },
  );
}

export const utf8 = new TextDecoder("utf-8", { fatal: true });

export function parseJsonBody(req: IncomingMessage, bytes: Buffer): unknown {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    throw new UnsupportedMediaType();
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new InvalidRequest("the request body is not valid UTF-8");
  }
  if (text.trim() === "") throw new InvalidRequest("the request body is empty; send a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidRequest(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}

export class UnsupportedMediaType extends Error {}

/**
 * A listing: all of it in one answer (Document 1 "Limits" 3), streamed as it is read, with the count of what
 * is live in `X-Svc-Live-Count` (an extension of Document 1: a delta listing, which cannot show a deletion,
 * tells the client that one happened when the count differs from what it holds; issue 31). The count is read
 * just before the listing's own snapshot: a thing created or deleted in between costs the client one full
 * listing more, or is seen at its next fetch.
 */
export function listingReply(
  liveCount: number,
  items: Iterable<unknown>,
  headers: Readonly<Record<string, string>> = {},
): Reply {
  return {
    status: 200,
    headers: {
      "content-type": "application/json; charset=utf-8",
      [LIVE_COUNT_HEADER]: String(liveCount),
      ...headers,
    },
    stream: jsonArrayChunks(items),
  };
}
