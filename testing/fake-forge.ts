/**
 * A fake of GitHub's REST API for issues (API version 2022-11-28) on an ephemeral loopback port, for the forge
 * backend's end-to-end tests (DESIGN.md §6: "a fake server … that speaks the vendor's real request/response
 * shapes").
 *
 * Shapes follow GitHub's published OpenAPI description (github/rest-api-description,
 * descriptions/api.github.com/api.github.com.2022-11-28.json) and the REST reference pages it generates:
 * - `GET /repos/{owner}/{repo}/issues` ("List repository issues": `state` open|closed|all, `labels` comma list,
 *   `sort` created|updated|comments, `direction` asc|desc, `since` ISO 8601, `per_page` default 30 max 100,
 *   `page` default 1) → an array of `issue`; pull requests are issues too and carry `pull_request`.
 *   Pagination is the `Link` header with absolute URLs; GitHub writes them in the `/repositories/{id}/issues`
 *   form, which this fake also serves.
 * - `GET|PATCH /repos/{owner}/{repo}/issues/{issue_number}` ("Get an issue", "Update an issue"), 410 for a
 *   deleted issue; `POST /repos/{owner}/{repo}/issues` ("Create an issue") → 201 with `Location`.
 * - Issue comments ("REST API endpoints for issue comments"): `GET /repos/{owner}/{repo}/issues/comments`
 *   (repository-wide, comments on pull requests included; `sort` created|updated, `direction`, `since`,
 *   `per_page`, `page`, Link pagination in the `/repositories/{id}/issues/comments` form),
 *   `GET|POST /repos/{owner}/{repo}/issues/{issue_number}/comments`, `GET|PATCH|DELETE
 *   /repos/{owner}/{repo}/issues/comments/{comment_id}` (404 for a deleted one); a body of at most 65,536
 *   characters (GitHub's 422). A new comment moves its issue's `updated_at`.
 * - `GET /user` ("Get the authenticated user"): the token's user (`login`).
 * - Milestones, issue types and sub-issues (issue 35; testing/fake-forge/planning.ts): `GET …/milestones`,
 *   `GET …/issue-types` (404 for an owner without them), `POST …/issues/{n}/sub_issues`, `DELETE
 *   …/issues/{n}/sub_issue`, `GET …/issues/{n}/sub_issues`, `GET …/issues/{n}/parent`; an issue's `milestone`,
 *   `type` and `parent_issue_url`; a PATCH's or create's `milestone` (a number) and `type` (a name), dropped
 *   without a word when the repository's spec says the token has no push access.
 * - `GET|POST|PUT /repos/{owner}/{repo}/issues/{issue_number}/labels` and `DELETE …/labels/{name}`
 *   ("List/Add/Set/Remove labels for an issue") → an array of `label`.
 * - Errors are `{message, documentation_url, status}` ("status" a string, as api.github.com sends it now);
 *   422 adds `errors: [{resource, code, field, message?}]` ("Validation Failed").
 * - Rate limits ("Rate limits for the REST API"): `x-ratelimit-*` headers on every answer; over the primary
 *   limit 403 with remaining 0; a secondary limit 403 or 429 with `retry-after`. "Use conditional requests":
 *   a 304 does not count against the primary limit.
 * - Conditional requests use the weak `ETag` only; `Last-Modified` is sent on single issues but
 *   `If-Modified-Since` is not modelled.
 * Where GitHub documents nothing, the choice is marked ASSUMPTION in a comment.
 *
 * Tests steer it through switches (`setRateLimit`, `secondaryLimit`, `redirect`, `setNextOrigin`), change data
 * as "someone else" would (`addIssue`, `editIssue`, `addLabel`, `deleteIssue`, `addComment`, `editComment`,
 * `deleteComment`; `seed` and `seedComments` in bulk), and read `requests`, each marked
 * `counted` when it used primary quota (authenticated, not a 304, not refused by a rate limit).
 *
 * Every exchange is judged as it happens against `@octokit/openapi`'s description (testing/vendor-contract.ts);
 * `close()`, which each test's teardown calls, fails naming every departure. An answer or request wrong on
 * purpose says so where it is made (`deliberate`; DELIBERATE_HEADER).
 *
 * The parts, in testing/fake-forge/: `types.ts` (the public names, re-exported here), `vendor-data.ts` and
 * `seed-data.ts` (GitHub's fixed values; the seeds), `store.ts` (repositories and issues), `checks.ts` and
 * `listing.ts` (what requests send and ask for), `shapes.ts` (the JSON), `routes.ts`, `comment-routes.ts` and
 * `planning.ts` (the handlers and their tables), `rate-limits.ts` (the limits and their switches), `server.ts` (HTTP, the contract watch, the helpers).
 */
export { givenFakeForge, startFakeForge } from "./fake-forge/server.js";
export type {
  FakeForge,
  FakeForgeComment,
  FakeForgeIssue,
  FakeForgeLabel,
  FakeForgeOptions,
  FakeForgeRepoSpec,
  FakeForgeRequest,
  IssueEdit,
  IssueRef,
  IssueSeed,
  StateReason,
} from "./fake-forge/types.js";
