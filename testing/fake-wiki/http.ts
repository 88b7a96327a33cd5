/**
 * The fake wiki's answers and refusals: an `Answer` is what a handler returns (an object as JSON, a string as
 * text/plain, or a hostile stream); a handler refuses by throwing the vendor's v2 error envelope (`fail`), and
 * a valid request the fake does not model fails loudly (`notModelled`). Also here: the query parameters and
 * JSON bodies every route reads, and writing an answer.
 */
import type { ServerResponse } from "node:http";
import { HttpFailure, writeAnswer } from "../fake-server.js";
import type { VendorErrorBody } from "./types.js";
import { DEFAULT_LIMIT, MAX_LIMIT } from "./vendor-data.js";

export interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** An object is sent as JSON; a string as text/plain; undefined sends no body. */
  readonly body?: unknown;
  /** Instead of `body`: this many bytes of JSON, streamed (a hostile `oversized` listing). */
  readonly stream?: { readonly bytes: number; readonly announce: boolean };
  /** Why this answer departs from the vendor's description on purpose (a fault a test injects). */
  readonly deliberate?: string;
}

export function vendorError(
  status: number,
  code: string,
  title: string,
  detail: string | null = null,
): Answer {
  const body: VendorErrorBody = { errors: [{ status, code, title, detail }] };
  return { status, body };
}

export function fail(status: number, code: string, title: string, detail: string | null = null): never {
  throw new HttpFailure(vendorError(status, code, title, detail));
}

/** The fake's own gaps (valid vendor requests it does not model) fail loudly, never silently. */
export function notModelled(what: string): never {
  fail(400, "BAD_REQUEST", "Not supported by the fake wiki", what);
}

/** The body as the request log keeps it: the text sent, or "" (none, or a stream). */
export function answerText(answer: Answer): string {
  if (answer.body === undefined) return "";
  return typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
}

export function send(res: ServerResponse, answer: Answer): void {
  const text = typeof answer.body === "string";
  const payload = answer.body === undefined ? undefined : answerText(answer);
  const contentType = text ? "text/plain;charset=UTF-8" : "application/json;charset=UTF-8";
  writeAnswer(res, answer.status, answer.headers, payload, contentType);
}

/** Values of a query parameter given as a comma-separated list, repeated, or both. */
export function listParam(params: URLSearchParams, name: string): string[] {
  return params
    .getAll(name)
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter((value) => value !== "");
}

export function oneOf<T extends string>(value: string, allowed: readonly T[], name: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    fail(400, "INVALID_REQUEST_PARAMETER", `Invalid value for '${name}': ${value}`);
  }
  return value as T;
}

export function parseLimit(params: URLSearchParams): number {
  const raw = params.get("limit");
  if (raw === null) return DEFAULT_LIMIT;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
    fail(400, "INVALID_REQUEST_PARAMETER", `'limit' must be an integer between 1 and ${MAX_LIMIT}: ${raw}`);
  }
  // ASSUMPTION: above the documented maximum the vendor clamps rather than refusing.
  return Math.min(Number(raw), MAX_LIMIT);
}

export function parseId(raw: string, what: string): string {
  if (!/^\d{1,18}$/.test(raw)) fail(400, "INVALID_REQUEST_PARAMETER", `'id' must be a ${what} id: ${raw}`);
  return String(BigInt(raw));
}

export function parseJsonBody(text: string, contentType: string | undefined): unknown {
  if (!/^application\/json\b/i.test(contentType ?? "")) {
    fail(415, "UNSUPPORTED_MEDIA_TYPE", "Unsupported Media Type", "Content-Type must be application/json");
  }
  try {
    return JSON.parse(text);
  } catch {
    return fail(400, "INVALID_REQUEST_PARAMETER", "Could not parse the request body as JSON");
  }
}

export function parseJsonObject(text: string, contentType: string | undefined): Record<string, unknown> {
  const parsed = parseJsonBody(text, contentType);
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    fail(400, "INVALID_REQUEST_PARAMETER", "The request body must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}
