/**
 * The fake forge's checks of what a create or an update sends: `title`, `body`, `labels`, `state` and
 * `state_reason`, and a comment's `body`, each refused with GitHub's 422 naming the field (and its recorded wording for the length
 * limits).
 */
import { invalid } from "./http.js";
import type { StateReason } from "./types.js";
import { MAX_BODY, MAX_TITLE, STATE_REASONS } from "./vendor-data.js";

/** Characters as a person counts them (code points), for the length limits. ASSUMPTION: GitHub counts so. */
const characters = (text: string): number => [...text].length;

/** A `field` longer than `max` characters answers 422 with GitHub's recorded wording. */
function checkLength(
  text: string,
  max: number,
  field: "title" | "body",
  docs: string,
  resource?: string,
): void {
  if (characters(text) > max) {
    const message = `${field} is too long (maximum is ${max} characters)`;
    invalid(docs, { code: "custom", field, message }, resource);
  }
}

/** `title` of a create or update: a string or a number (the schema allows both), not blank, at most 256. */
export function checkTitle(value: unknown, docs: string): string {
  if (typeof value !== "string" && typeof value !== "number")
    invalid(docs, { code: "missing_field", field: "title" });
  const title = String(value);
  if (title.trim() === "") invalid(docs, { code: "missing_field", field: "title" });
  checkLength(title, MAX_TITLE, "title", docs);
  return title;
}

export function checkBody(value: unknown, docs: string): string | null {
  if (value === null) return null;
  if (typeof value !== "string") invalid(docs, { code: "invalid", field: "body", value });
  checkLength(value, MAX_BODY, "body", docs);
  return value;
}

/** `labels`: names, or objects with a `name` (both forms are in the schema). */
export function checkLabelNames(value: unknown, docs: string): string[] {
  if (!Array.isArray(value)) invalid(docs, { code: "invalid", field: "labels", value });
  return value.map((item: unknown) => {
    const name = typeof item === "object" && item !== null ? (item as { name?: unknown }).name : item;
    if (typeof name !== "string" || name.trim() === "")
      invalid(docs, { code: "invalid", field: "labels", value });
    return name;
  });
}

export function checkState(value: unknown, docs: string): "open" | "closed" {
  if (value !== "open" && value !== "closed") invalid(docs, { code: "invalid", field: "state", value });
  return value;
}

export function checkStateReason(value: unknown, docs: string): StateReason | null {
  // The 2022-11-28 description lists these three; later versions add "duplicate", which this fake refuses.
  if (value !== null && !STATE_REASONS.includes(value as StateReason)) {
    invalid(docs, { code: "invalid", field: "state_reason", value });
  }
  return value as StateReason | null;
}

/**
 * A comment's `body` (required): a string, not blank, at most 65,536 characters, as an issue's. ASSUMPTION:
 * a blank body answers 422 `missing_field`, and the resource is named "IssueComment".
 */
export function checkCommentBody(value: unknown, docs: string): string {
  if (typeof value !== "string" || value.trim() === "")
    invalid(docs, { code: "missing_field", field: "body" }, "IssueComment");
  checkLength(value, MAX_BODY, "body", docs, "IssueComment");
  return value;
}
