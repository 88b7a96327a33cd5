/**
 * The forge's wire shapes, from GitHub's published REST description through its generated types
 * (`@octokit/openapi-types`, the package's version in package-lock.json; API version 2022-11-28). Type-only:
 * `verbatimModuleSyntax` keeps `import type` out of the emitted JavaScript, so none of it reaches the bundle.
 *
 * Where the description makes a member optional or nullable (an issue's `body`, `state_reason`,
 * `assignees`; a label's `name`), the code reading it must say what absence means: these types make tsc ask.
 */
import type { components, operations } from "@octokit/openapi-types";

/** An issue as `GET /repos/{owner}/{repo}/issues[/{number}]`, `POST` and `PATCH` answer it ("issue"). */
export type WireIssue = components["schemas"]["issue"];

/** The body of "Create an issue" (`POST /repos/{owner}/{repo}/issues`). */
export type CreateIssueBody = operations["issues/create"]["requestBody"]["content"]["application/json"];

/** The body of "Update an issue" (`PATCH /repos/{owner}/{repo}/issues/{issue_number}`). */
export type UpdateIssueBody = NonNullable<
  operations["issues/update"]["requestBody"]
>["content"]["application/json"];

/** The query of "List repository issues" svc sends. */
export type ListIssuesQuery = NonNullable<operations["issues/list-for-repo"]["parameters"]["query"]>;

/** A refusal's body ("basic-error"; a 422's "validation-error" adds `errors`). */
export type ErrorBody = components["schemas"]["basic-error"] & {
  readonly errors?: components["schemas"]["validation-error"]["errors"] | string[];
};

/** An issue comment as the comment endpoints answer it ("issue-comment"). */
export type WireComment = components["schemas"]["issue-comment"];

/** The body of "Create an issue comment" (`POST /repos/{owner}/{repo}/issues/{issue_number}/comments`). */
export type CreateCommentBody =
  operations["issues/create-comment"]["requestBody"]["content"]["application/json"];

/** The body of "Update an issue comment" (`PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}`). */
export type UpdateCommentBody =
  operations["issues/update-comment"]["requestBody"]["content"]["application/json"];

/** The query of "List issue comments for a repository" svc sends. */
export type ListCommentsQuery = NonNullable<
  operations["issues/list-comments-for-repo"]["parameters"]["query"]
>;

/** "Get the authenticated user" (`GET /user`): a `private-user` or a `public-user`. */
export type WireAuthenticatedUser =
  operations["users/get-authenticated"]["responses"]["200"]["content"]["application/json"];
