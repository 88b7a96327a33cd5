/**
 * The fake forge's issue comment routes ("REST API endpoints for issue comments"), each on a path after the
 * repository: the repository-wide listing, one issue's listing, one comment (get, update, delete) and a new
 * comment on an issue. Comments on pull requests are issue comments too: listed, posted and edited alike.
 * An unknown or deleted comment answers 404; a comment on a deleted issue 410, as the issue itself does.
 */
import { type Call, type Route, targetIssue } from "./call.js";
import { checkCommentBody } from "./checks.js";
import { type Answer, fail, parseJsonObject } from "./http.js";
import { linkHeader, parseCommentQuery, selectComments } from "./listing.js";
import type { Comment } from "./store.js";
import { COMMENTS_DOCS } from "./vendor-data.js";

function targetComment(call: Call, docs: string): Comment {
  const comment = call.repo.comments.get(Number(call.params[0]));
  if (!comment) fail(404, "Not Found", docs);
  return comment;
}

/** One result page of `comments` as the query selects them, with its `Link` header (listing path `path`). */
function commentPage(call: Call, comments: Iterable<Comment>, docs: string, path: string): Answer {
  const query = parseCommentQuery(call.url.searchParams, docs);
  const selected = selectComments(comments, query);
  const last = Math.max(1, Math.ceil(selected.length / query.perPage));
  const start = (query.page - 1) * query.perPage;
  const link = linkHeader(call.origin, call.nextOrigin, call.repo, call.url, query.page, last, path);
  return {
    status: 200,
    headers: link === undefined ? {} : { link },
    body: selected
      .slice(start, start + query.perPage)
      .map((comment) => call.shapes.comment(call.repo, comment)),
  };
}

/** "List issue comments for a repository": every comment, on issues and pull requests alike. */
function listRepoComments(call: Call): Answer {
  const docs = `${COMMENTS_DOCS}#list-issue-comments-for-a-repository`;
  return commentPage(call, call.repo.comments.values(), docs, "/issues/comments");
}

/** "List issue comments": one issue's (or pull request's); `since`, `per_page` and `page` only. */
function listIssueComments(call: Call): Answer {
  const docs = `${COMMENTS_DOCS}#list-issue-comments`;
  const issue = targetIssue(call, docs);
  const own = [...call.repo.comments.values()].filter((comment) => comment.issueNumber === issue.number);
  return commentPage(call, own, docs, `/issues/${issue.number}/comments`);
}

function getComment(call: Call): Answer {
  const comment = targetComment(call, `${COMMENTS_DOCS}#get-an-issue-comment`);
  return { status: 200, body: call.shapes.comment(call.repo, comment) };
}

/** "Create an issue comment" as the token's user → 201 with `Location`. */
function createComment(call: Call): Answer {
  const docs = `${COMMENTS_DOCS}#create-an-issue-comment`;
  const issue = targetIssue(call, docs);
  const body = checkCommentBody(parseJsonObject(call.text, docs).body, docs);
  const forge = call.forge;
  const comment = forge.insertComment(call.repo, issue, forge.login, body, forge.nextStamp(issue.updatedMs));
  return {
    status: 201,
    headers: { location: `${call.shapes.repoApi(call.repo)}/issues/comments/${comment.id}` },
    body: call.shapes.comment(call.repo, comment),
  };
}

/**
 * "Update an issue comment". ASSUMPTION: like the web page, the API lets a collaborator with write access
 * edit anyone's comment (the fake's token's user has it); a deleted comment answers 404.
 */
function updateComment(call: Call): Answer {
  const docs = `${COMMENTS_DOCS}#update-an-issue-comment`;
  const comment = targetComment(call, docs);
  const body = checkCommentBody(parseJsonObject(call.text, docs).body, docs);
  call.forge.editComment(comment, body);
  return { status: 200, body: call.shapes.comment(call.repo, comment) };
}

/** "Delete an issue comment" → 204 with no body; a deleted or unknown comment answers 404. */
function deleteComment(call: Call): Answer {
  const comment = targetComment(call, `${COMMENTS_DOCS}#delete-an-issue-comment`);
  call.forge.removeComment(call.repo, comment);
  return { status: 204 };
}

export const COMMENT_ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: /^\/issues\/comments$/,
    docs: `${COMMENTS_DOCS}#list-issue-comments-for-a-repository`,
    handle: listRepoComments,
  },
  {
    method: "GET",
    path: /^\/issues\/comments\/(\d+)$/,
    docs: `${COMMENTS_DOCS}#get-an-issue-comment`,
    handle: getComment,
  },
  {
    method: "PATCH",
    path: /^\/issues\/comments\/(\d+)$/,
    docs: `${COMMENTS_DOCS}#update-an-issue-comment`,
    handle: updateComment,
  },
  {
    method: "DELETE",
    path: /^\/issues\/comments\/(\d+)$/,
    docs: `${COMMENTS_DOCS}#delete-an-issue-comment`,
    handle: deleteComment,
  },
  {
    method: "GET",
    path: /^\/issues\/(\d+)\/comments$/,
    docs: `${COMMENTS_DOCS}#list-issue-comments`,
    handle: listIssueComments,
  },
  {
    method: "POST",
    path: /^\/issues\/(\d+)\/comments$/,
    docs: `${COMMENTS_DOCS}#create-an-issue-comment`,
    handle: createComment,
  },
];
