/**
 * The fake tracker's answers and refusals: an `Answer` is what a handler returns (JSON or plain text, with the
 * reason when it departs from the vendor's description on purpose); a handler refuses by throwing an
 * `ErrorCollection` answer (`fail`, `failFields`). Also here: reading the client's JSON as Jira's reader does,
 * writing an answer, and Basic authentication.
 */
import type { ServerResponse } from "node:http";
import { HttpFailure, writeAnswer } from "../fake-server.js";
import type { AdfJson } from "./types.js";

export interface Answer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** Sent as text/plain instead of `body`. */
  readonly text?: string;
  /** Why this answer departs from the vendor's description on purpose (a fault a test injects). */
  readonly deliberate?: string;
}

export function errorCollection(
  status: number,
  errorMessages: readonly string[],
  errors: Readonly<Record<string, string>> = {},
): Answer {
  return { status, body: { errorMessages, errors } };
}

export function fail(status: number, message: string): never {
  throw new HttpFailure(errorCollection(status, [message]));
}

export function failFields(
  errors: Readonly<Record<string, string>>,
  errorMessages: readonly string[] = [],
): never {
  throw new HttpFailure(errorCollection(400, errorMessages, errors));
}

export function send(res: ServerResponse, answer: Answer): void {
  if (answer.text !== undefined) {
    writeAnswer(res, answer.status, answer.headers, answer.text, "text/plain;charset=UTF-8");
  } else {
    const payload = answer.body === undefined ? undefined : JSON.stringify(answer.body);
    writeAnswer(res, answer.status, answer.headers, payload, "application/json;charset=UTF-8");
  }
}

/** `Authorization: Basic base64(email:token)` → whether it names this account (the scheme is case-insensitive). */
export function authenticates(header: string | undefined, email: string, apiToken: string): boolean {
  const encoded = /^basic\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
  return encoded !== undefined && Buffer.from(encoded, "base64").toString("utf8") === `${email}:${apiToken}`;
}

// Reading JSON values sent by the client.

export type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);
export const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === "string");

/** The request body as a JSON object; anything else answers 400 as Jira's JSON reader does. */
export function parseJsonObject(text: string): JsonObject {
  // ASSUMPTION: the wording (Jira passes on its JSON parser's message, which names the position).
  if (text.trim() === "") fail(400, "No content to map due to end-of-input");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return fail(400, `Unexpected character in the JSON request body: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) return fail(400, "The JSON request body must be an object.");
  return parsed;
}

/** The first of `members` (`key`, `id`) that the object names, as a string; undefined when none does. */
export function reference(value: unknown, members: readonly string[]): string | undefined {
  if (!isObject(value)) return undefined;
  for (const member of members) {
    const named = value[member];
    if (typeof named === "string" || typeof named === "number") return String(named);
  }
  return undefined;
}

export function isAdfDocument(value: unknown): value is AdfJson {
  return isObject(value) && value.type === "doc" && value.version === 1 && Array.isArray(value.content);
}
