/**
 * A fake of Jira Cloud's platform REST API v3 (the "tracker") on an ephemeral loopback port, for the tracker
 * backend's end-to-end tests (DESIGN.md §6: "a fake server … that speaks the vendor's real request/response
 * shapes").
 *
 * Shapes follow the vendor's OpenAPI description (https://developer.atlassian.com/cloud/jira/platform/swagger-v3.v3.json,
 * version 1001.0.0-SNAPSHOT of late 2025) and the reference pages it generates:
 * - `POST|GET /rest/api/3/search/jql` ("Search for issues using JQL enhanced search"): `jql` (must be bounded: a
 *   query with no restriction answers 400 "Unbounded JQL queries are not allowed here. …"), `nextPageToken`,
 *   `maxResults` (default 50; "may return fewer items per page"), `fields` (default `id`: "By default, this
 *   resource returns IDs only", unlike GET issue whose default is `*all`; `*all`, `*navigable`, names, `-name`),
 *   `expand`, `properties`, `fieldsByKeys`, `failFast`, `reconcileIssues` → `{issues, nextPageToken?, isLast}`.
 *   "The `nextPageToken` field is not included in the response for the last page" (JRACLOUD-92184).
 * - `POST /rest/api/3/search/approximate-count` ("Count issues using JQL", countIssues): `JQLCountRequestBean`
 *   `{jql}` (bounded, as for search/jql; `additionalProperties: false`) → `JQLCountResultsBean` `{count}`. "Recent
 *   updates might not be immediately visible": `lagApproximateCount` makes the count lag behind on purpose.
 * - `GET|PUT|DELETE /rest/api/3/issue/{issueIdOrKey}`: PUT answers 204 (200 with `returnIssue=true`) and ignores
 *   `transition`; DELETE needs `deleteSubtasks=true` for an issue with subtasks ("An issue cannot be deleted if
 *   it has one or more subtasks").
 * - `POST /rest/api/3/issue` → 201 `CreatedIssue` `{id, key, self}`; a subtask needs `parent`.
 * - `GET|POST /rest/api/3/issue/{issueIdOrKey}/transitions`: `Transitions` `{expand, transitions: IssueTransition[]}`
 *   (`expand=transitions.fields` adds each transition screen's `fields`); POST answers 204.
 * - `GET /rest/api/3/myself` (`expand=groups,applicationRoles`), `GET /rest/api/3/project/{projectIdOrKey}` (the key
 *   is case sensitive; issue types included by default), `GET /rest/api/3/priority`.
 * - `GET /rest/api/3/issue/createmeta/{projectIdOrKey}/issuetypes` → `PageOfCreateMetaIssueTypes`; a project the
 *   account cannot see answers 400 (the description has no 404 here). `…/issuetypes/{issueTypeId}` →
 *   `PageOfCreateMetaIssueTypeWithField` (`fields`: the type's create screen, `FieldCreateMetadata` with
 *   `allowedValues`; `startAt`, `maxResults` ≤ 200, `total`); a field off it is a create's 400.
 * - Errors are an `ErrorCollection` `{errorMessages: string[], errors: {field: message}}`; the wording of each one
 *   is Jira's as recorded in public client code and issue threads where it could be found (see the constants).
 * - Authentication is Basic `base64(email:apiToken)`. Jira Cloud answers a missing or wrong credential with 401 and
 *   the plain-text body "Client must be authenticated to access this resource." (atlassian/gajira-login#59,
 *   jira-node/node-jira-client#255), not with JSON.
 * - Rate limiting ("Rate limiting" guide): 429 with `Retry-After` (seconds), `X-RateLimit-Reset` (ISO 8601,
 *   `yyyy-MM-ddTHH:mmZ`), `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `RateLimit-Reason`.
 * - Timestamps are `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (`2026-11-23T10:30:00.000+0000`). JQL dates are wall-clock times
 *   at minute precision in the account's time zone (the one /myself reports).
 * Where the vendor documents nothing, the choice is marked ASSUMPTION in a comment.
 *
 * JQL is a strict subset, parsed as Jira's parser would refuse anything else: clauses joined by AND over `project`
 * (`=`, `in`; by key, id or name), `key`/`issuekey` and `parent` (`=`, `in`), `labels` (`=`, `in`), `summary ~`,
 * `created`/`updated` (`>=`, `>`, `<=`, `<` with `yyyy/MM/dd HH:mm`, `yyyy-MM-dd HH:mm`, `yyyy/MM/dd`,
 * `yyyy-MM-dd`), then `ORDER BY key|id|created|updated [ASC|DESC], …`. What the fake does not know answers 400
 * "Error in the JQL Query: …" naming the fake's limit.
 *
 * - Comments ("Issue comments"): `GET|POST /rest/api/3/issue/{issueIdOrKey}/comment` (`startAt`, `maxResults`,
 *   `orderBy`; a `PageOfComments`), `GET|PUT|DELETE …/comment/{id}`; and the `comment` field of an issue (in
 *   a search with `fields=comment`: the issue's first comments as a `PageOfComments`, `total` the thread's
 *   length). Bodies are ADF valid by Atlassian's schema, at most 32,767 characters of text. A comment added or
 *   edited moves its issue's `updated`. testing/fake-tracker/comment-store.ts and comment-routes.ts.
 *
 * Tests change data as "someone else" would (`addIssue`, `editIssue`, `deleteIssue`, `addComment`,
 * `editComment`, `deleteComment`, `seedComments`), steer the fake through
 * switches (`setTimeZone`, `rateLimitNext`, `repeatNextPageToken`, `lagApproximateCount`) and read `requests`.
 *
 * Every exchange is judged as it happens against the operations recorded in
 * fixtures/vendor/jira-platform-v3.json (testing/vendor-contract.ts); `close()`, which each test's teardown
 * calls, fails naming every departure. An answer or request wrong on purpose says so where it is made
 * (`deliberate`; DELIBERATE_HEADER).
 *
 * The parts, in testing/fake-tracker/: `types.ts` (the public names, re-exported here), `vendor-data.ts` and
 * `seed-data.ts` (Jira's fixed values and wordings; the seeds), `store.ts` (the site's state), `time.ts` (zones),
 * `jql.ts` and `search.ts` (JQL, paging, and the token and count faults), `writes.ts` (field validation),
 * `shapes.ts` (the JSON), `*-routes.ts` and `routes.ts` (the handlers and their table), `server.ts` (HTTP, the
 * rate-limit fault, authentication, the contract watch and the helpers).
 */
export { givenFakeTracker, startFakeTracker } from "./fake-tracker/server.js";
export type {
  AdfJson,
  FakeCustomValue,
  FakeTracker,
  FakeTrackerComment,
  FakeTrackerCustomField,
  FakeTrackerIssue,
  FakeTrackerIssueType,
  FakeTrackerOptions,
  FakeTrackerProjectSpec,
  FakeTrackerRequest,
  FakeTrackerStatus,
  FakeTrackerTransition,
  FakeTrackerUser,
  TrackerCommentOptions,
  TrackerIssueEdit,
  TrackerIssueSeed,
} from "./fake-tracker/types.js";
