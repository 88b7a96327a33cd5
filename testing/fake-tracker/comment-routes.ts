/**
 * The fake tracker's comment routes (Jira's "Issue comments" group): list an issue's comments a page at a
 * time (`startAt`, `maxResults`, `orderBy`), add one, and get, update or delete one. A comment's body is an
 * ADF document valid by Atlassian's schema, as a description must be (testing/adf-schema.ts), of at most
 * 32,767 characters of text; a refusal is Jira's `ErrorCollection` under `errors.comment`. An issue the
 * account cannot see, and a comment that is not on the issue named, answer 404. Comments are written as the
 * token's account (the bot); the test helpers write them as someone else.
 */
import { adfSchemaProblem } from "../adf-schema.js";
import type { Call } from "./call.js";
import { adfTextLength } from "./comment-store.js";
import { type Answer, fail, failFields, isAdfDocument, parseJsonObject } from "./http.js";
import { issueOr404 } from "./issue-routes.js";
import type { Comment } from "./store.js";
import type { AdfJson } from "./types.js";
import {
  COMMENT_EMPTY,
  COMMENT_TOO_LONG,
  commentNotFound,
  MAX_COMMENT_TEXT,
  NOT_ADF,
} from "./vendor-data.js";

function commentOr404(call: Call): Comment {
  const issue = issueOr404(call);
  const id = call.params[1] ?? "";
  const comment = call.tracker.comments.on(issue, id);
  if (!comment) fail(404, commentNotFound(id));
  return comment;
}

/** A non-negative integer query parameter, or `fallback`; anything else answers 400. ASSUMPTION: the wording. */
export function count(call: Call, name: string, fallback: number): number {
  const raw = call.url.searchParams.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) fail(400, `Invalid value for "${name}": ${raw}`);
  return value;
}

/**
 * The body of an add or update (`Comment`: `body`, and `visibility` and `properties`, which the fake accepts
 * and ignores). ASSUMPTION: a body that is no valid ADF document gets the descriptions' message under
 * `errors.comment`, with the reason after it.
 */
function commentBody(call: Call): AdfJson {
  const request = parseJsonObject(call.text);
  const body = request.body;
  if (body === undefined || body === null) failFields({ comment: COMMENT_EMPTY });
  if (!isAdfDocument(body)) return failFields({ comment: NOT_ADF });
  const problem = adfSchemaProblem(body);
  if (problem !== undefined) failFields({ comment: `${NOT_ADF}: ${problem}` });
  const text = adfTextLength(body);
  if (text === 0) failFields({ comment: COMMENT_EMPTY });
  if (text > MAX_COMMENT_TEXT) failFields({ comment: COMMENT_TOO_LONG });
  return body;
}

/** `GET …/comment`: `orderBy` only `created`, `+created` or `-created` (anything else is the documented 400). */
export function getComments(call: Call): Answer {
  const issue = issueOr404(call);
  const orderBy = call.url.searchParams.get("orderBy");
  // ASSUMPTION: the wording.
  if (orderBy !== null && !["created", "+created", "-created"].includes(orderBy))
    fail(400, `The orderBy value '${orderBy}' is invalid: comments can be ordered by created only.`);
  const startAt = count(call, "startAt", 0);
  const pageSize = call.tracker.options.commentPageSize;
  const maxResults = Math.min(count(call, "maxResults", pageSize), pageSize);
  return { status: 200, body: call.shapes.commentPage(issue, startAt, maxResults, orderBy === "-created") };
}

export function addComment(call: Call): Answer {
  const issue = issueOr404(call);
  const body = commentBody(call);
  const comment = call.tracker.comments.add(issue, call.tracker.me.accountId, body);
  return { status: 201, body: call.shapes.comment(comment) };
}

export function getComment(call: Call): Answer {
  return { status: 200, body: call.shapes.comment(commentOr404(call)) };
}

export function updateComment(call: Call): Answer {
  const comment = commentOr404(call);
  const body = commentBody(call);
  call.tracker.comments.edit(comment, call.tracker.me.accountId, body);
  return { status: 200, body: call.shapes.comment(comment) };
}

export function deleteComment(call: Call): Answer {
  call.tracker.comments.delete(commentOr404(call));
  return { status: 204 };
}
