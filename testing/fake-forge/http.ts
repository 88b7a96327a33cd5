/**
 * The fake forge's answers and refusals: an `Answer` is what a handler returns (sent as JSON); a handler refuses
 * by throwing GitHub's error body (`fail`) or a 422 "Validation Failed" naming the field (`invalid`). Also here:
 * writing an answer, the weak ETag and `If-None-Match`, the token a request presents, reading the client's JSON,
 * and GitHub's timestamps.
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { HttpFailure, writeAnswer } from "../fake-server.js";

export interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** Sent as JSON; undefined sends no body. */
  readonly body?: unknown;
}

export function errorAnswer(status: number, message: string, docs: string, extra: object = {}): Answer {
  return { status, body: { message, ...extra, documentation_url: docs, status: String(status) } };
}

export function fail(status: number, message: string, docs: string): never {
  throw new HttpFailure(errorAnswer(status, message, docs));
}

interface FieldError {
  readonly code: "missing_field" | "invalid" | "custom";
  readonly field: string;
  readonly message?: string;
  readonly value?: unknown;
}

/** A 422 "Validation Failed" naming the field of the `resource` ("Issue" unless said). */
export function invalid(docs: string, error: FieldError, resource = "Issue"): never {
  throw new HttpFailure(errorAnswer(422, "Validation Failed", docs, { errors: [{ resource, ...error }] }));
}

/** ISO 8601 UTC at second precision, as GitHub writes timestamps. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export const floorSecond = (ms: number): number => Math.floor(ms / 1000) * 1000;

/** The answer with `payload`, its body already serialized (the ETag is derived from those very bytes). */
export function send(res: ServerResponse, answer: Answer, payload: string | undefined): void {
  writeAnswer(res, answer.status, answer.headers, payload, "application/json; charset=utf-8");
}

/** A weak validator derived from the body alone, so the same body always carries the same ETag. */
export function etagOf(payload: string): string {
  return `W/"${createHash("sha256").update(payload).digest("hex")}"`;
}

/** `If-None-Match` names this ETag (a list, `*`, or the strong form of a weak tag all match, as RFC 9110 §13.1.2). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = etag.replace(/^W\//, "");
  return header
    .split(",")
    .map((tag) => tag.trim())
    .some((tag) => tag === "*" || tag.replace(/^W\//, "") === bare);
}

/** The token from `Authorization: Bearer <token>` or `token <token>` (the scheme is case-insensitive). */
export function presentedToken(header: string | undefined): string | undefined {
  return /^(?:bearer|token)\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
}

export function parseJsonObject(text: string, docs: string): Record<string, unknown> {
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
