/**
 * Validation of what clients send the simulator: request bodies, `If-Match`, `since`, slugs and ids. Pure
 * functions; each failure says what was wrong and what is expected (`invalid_body`, Document 1 "Errors").
 */

import { SIM_STATUSES, type SimStatus } from "../../backends/sim/schema.js";
import { rfc3339Pattern } from "../../core/checks.js";
import type { IssueInput } from "./store.js";

export class InvalidRequest extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const LIMITS = {
  titleLength: 1000,
  labelCount: 100,
  labelLength: 200,
  assigneeLength: 200,
  commentAuthorLength: 200,
} as const;

const WRITABLE = ["title", "status", "labels", "body", "assignee"] as const;
const SERVER_CONTROLLED = new Set(["id", "version", "created_at", "updated_at"]);

const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isValidSlug(slug: string): boolean {
  return SLUG.test(slug) && !slug.includes("..");
}

/** An issue id from a path segment: a positive safe integer written without sign, exponent or leading zero. */
export function parseIssueId(segment: string): number | undefined {
  if (!/^[1-9][0-9]{0,15}$/.test(segment)) return undefined;
  const id = Number(segment);
  return Number.isSafeInteger(id) ? id : undefined;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** A lone UTF-16 surrogate: JSON can carry one (`"\ud800"`), UTF-8 and so SQLite text cannot. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function checkUnicode(value: string, field: string): string {
  if (LONE_SURROGATE.test(value)) {
    throw new InvalidRequest(`${field} contains a lone UTF-16 surrogate; send well-formed Unicode text`, {
      field,
    });
  }
  return value;
}

function checkTitle(value: unknown): string {
  if (typeof value !== "string") {
    throw new InvalidRequest(`title must be a string, got ${typeName(value)}`, { field: "title" });
  }
  if (value.trim() === "") throw new InvalidRequest("title must not be empty", { field: "title" });
  if (value.length > LIMITS.titleLength) {
    throw new InvalidRequest(`title is longer than ${LIMITS.titleLength} characters`, { field: "title" });
  }
  return checkUnicode(value, "title");
}

function checkStatus(value: unknown): SimStatus {
  if (typeof value !== "string" || !(SIM_STATUSES as readonly string[]).includes(value)) {
    throw new InvalidRequest(`status must be one of ${SIM_STATUSES.join(", ")}`, {
      field: "status",
      allowed: SIM_STATUSES,
    });
  }
  return value as SimStatus;
}

function checkLabels(value: unknown): string[] {
  if (!Array.isArray(value)) {
    throw new InvalidRequest(`labels must be an array of strings, got ${typeName(value)}`, {
      field: "labels",
    });
  }
  if (value.length > LIMITS.labelCount) {
    throw new InvalidRequest(`labels has ${value.length} entries; at most ${LIMITS.labelCount} are allowed`, {
      field: "labels",
    });
  }
  for (const label of value) {
    if (typeof label !== "string" || label.trim() === "" || label.length > LIMITS.labelLength) {
      throw new InvalidRequest(
        `each label must be a non-empty string of at most ${LIMITS.labelLength} characters`,
        {
          field: "labels",
        },
      );
    }
    checkUnicode(label, "labels");
  }
  return value as string[];
}

function checkBody(value: unknown): string {
  if (typeof value !== "string") {
    throw new InvalidRequest(`body must be a string, got ${typeName(value)}`, { field: "body" });
  }
  return checkUnicode(value, "body");
}

function checkAssignee(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== "string" || value.trim() === "" || value.length > LIMITS.assigneeLength) {
    throw new InvalidRequest(
      `assignee must be null or a non-empty string of at most ${LIMITS.assigneeLength} characters`,
      { field: "assignee" },
    );
  }
  return checkUnicode(value, "assignee");
}

/** Validates a POST or PATCH body (already parsed JSON): a flat object of writable fields. */
export function parseIssueInput(value: unknown, mode: "create" | "update"): IssueInput {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidRequest(`the request body must be a JSON object, got ${typeName(value)}`);
  }
  const input: { -readonly [K in keyof IssueInput]: IssueInput[K] } = {};
  for (const [key, fieldValue] of Object.entries(value)) {
    if (SERVER_CONTROLLED.has(key)) {
      throw new InvalidRequest(`${key} is assigned by the server; leave it out of the request`, {
        field: key,
      });
    }
    switch (key) {
      case "title":
        input.title = checkTitle(fieldValue);
        break;
      case "status":
        input.status = checkStatus(fieldValue);
        break;
      case "labels":
        input.labels = checkLabels(fieldValue);
        break;
      case "body":
        input.body = checkBody(fieldValue);
        break;
      case "assignee":
        input.assignee = checkAssignee(fieldValue);
        break;
      default:
        throw new InvalidRequest(
          `unknown field ${JSON.stringify(key.slice(0, 64))}; writable fields are ${WRITABLE.join(", ")}`,
          {
            field: key.slice(0, 64),
            allowed: WRITABLE,
          },
        );
    }
  }
  if (mode === "create" && input.title === undefined) {
    throw new InvalidRequest("title is required", { field: "title" });
  }
  if (mode === "update" && Object.keys(input).length === 0) {
    throw new InvalidRequest(`nothing to change: send at least one of ${WRITABLE.join(", ")}`);
  }
  return input;
}

/** A C0 or C1 control character, or DEL: none may be in a comment's author. */
const CONTROL = /\p{Cc}/u;

function checkAuthor(value: unknown): string {
  if (
    typeof value !== "string" ||
    value.trim() === "" ||
    [...value].length > LIMITS.commentAuthorLength ||
    CONTROL.test(value)
  ) {
    throw new InvalidRequest(
      `author must be a non-blank string of at most ${LIMITS.commentAuthorLength} characters without control characters`,
      { field: "author" },
    );
  }
  return checkUnicode(value, "author");
}

function checkCommentBody(value: unknown): string {
  const body = checkBody(value);
  if (body === "") throw new InvalidRequest("body must not be empty", { field: "body" });
  return body;
}

/**
 * Validates a comment's POST body (`{author, body}`, both required) or PATCH body (`{body}`: the author is
 * set when the comment is created and never changes), already parsed JSON.
 */
export function parseCommentInput(
  value: unknown,
  mode: "create" | "update",
): { readonly author?: string; readonly body: string } {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidRequest(`the request body must be a JSON object, got ${typeName(value)}`);
  }
  const writable = mode === "create" ? ["author", "body"] : ["body"];
  let author: string | undefined;
  let body: string | undefined;
  for (const [key, fieldValue] of Object.entries(value)) {
    if (SERVER_CONTROLLED.has(key) || key === "issue_id") {
      throw new InvalidRequest(`${key} is assigned by the server; leave it out of the request`, {
        field: key,
      });
    }
    if (key === "body") body = checkCommentBody(fieldValue);
    else if (key === "author" && mode === "create") author = checkAuthor(fieldValue);
    else if (key === "author") {
      throw new InvalidRequest("author is set when the comment is created and cannot change", {
        field: "author",
      });
    } else {
      throw new InvalidRequest(
        `unknown field ${JSON.stringify(key.slice(0, 64))}; writable fields are ${writable.join(", ")}`,
        { field: key.slice(0, 64), allowed: writable },
      );
    }
  }
  if (mode === "create" && author === undefined) {
    throw new InvalidRequest("author is required", { field: "author" });
  }
  if (body === undefined) throw new InvalidRequest("body is required", { field: "body" });
  return author === undefined ? { body } : { author, body };
}

/**
 * `If-Match` on PATCH (and DELETE): `"3"` or `3` is a version, `*` or absent is the wildcard (undefined).
 * Weak tags and lists are not versions.
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === "*") return undefined;
  const match = /^"?([0-9]{1,15})"?$/.exec(value);
  if (!match || value.startsWith('"') !== value.endsWith('"')) {
    throw new InvalidRequest('If-Match must be a quoted version number such as "3", or *', {
      header: "If-Match",
    });
  }
  return Number(match[1]);
}

/** Lenient where a client may be: lower-case `t`/`z`, any number of fraction digits (cut to milliseconds). */
const SINCE = rfc3339Pattern({ lowerCase: true, maxFractionDigits: Number.POSITIVE_INFINITY });

/**
 * `since` as the store's format (UTC, milliseconds). A `+` in an unencoded query arrives as a space; it is
 * taken back as the `+` the client meant. Fractions beyond milliseconds are cut, which only widens the
 * (inclusive) window.
 */
export function parseSince(raw: string): string {
  const text = raw.replace(/ (\d{2}:\d{2})$/, "+$1");
  const match = SINCE.exec(text);
  const millis = match ? Date.parse(text.toUpperCase()) : Number.NaN;
  if (!match || Number.isNaN(millis)) {
    throw new InvalidRequest("since must be an RFC 3339 timestamp such as 2026-01-31T12:00:00.000Z", {
      parameter: "since",
    });
  }
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = match.slice(1, 7).map(Number);
  // Date.parse rolls 2026-02-30 over to March 2 instead of refusing it.
  const lastOfMonth = new Date(0);
  lastOfMonth.setUTCFullYear(year, month, 0); // day 0 of the next month; setUTCFullYear keeps years 0-99
  const daysInMonth = lastOfMonth.getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 60) {
    throw new InvalidRequest("since is not a real date and time", { parameter: "since" });
  }
  // An offset can carry 0000-01-01 or 9999-12-31 out of four-digit years, where toISOString writes `-000001`
  // or `+010000`, which compare wrongly as text against stored timestamps.
  return new Date(Math.min(Math.max(millis, FIRST_INSTANT), LAST_INSTANT)).toISOString();
}

const FIRST_INSTANT = Date.parse("0000-01-01T00:00:00.000Z");
const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");
