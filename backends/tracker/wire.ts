/**
 * The tracker's wire shapes, from Atlassian's Jira Cloud platform REST API v3 description through the
 * model types `jira.js` (version 6, package-lock.json) generates from it. Type-only: `verbatimModuleSyntax`
 * keeps `import type` out of the emitted JavaScript, so neither jira.js nor zod reaches the bundle.
 *
 * Nearly every member of these models is optional: the code reading an answer says what absence means.
 * One shape jira.js lacks is written here from the description itself (fixtures/vendor/SHAPES.md says
 * which and from which version): `CreateMetaIssueTypes`.
 */
import type {
  CreatedIssue,
  DashboardUser,
  ErrorCollection,
  Issue,
  IssueTypeDetails,
  IssueUpdateDetails,
  JQLCountRequest,
  JQLCountResults,
  Project,
  SearchAndReconcileRequest,
  SearchAndReconcileResults,
  Transitions,
} from "jira.js/cloud";

/** `POST /rest/api/3/search/jql` ("Search for issues using JQL enhanced search (POST)"). */
export type SearchRequest = SearchAndReconcileRequest;
export type SearchResults = SearchAndReconcileResults;
/** An issue as `GET /rest/api/3/issue/{key}` and a search answer it. */
export type WireIssue = Issue;
/** `POST /rest/api/3/search/approximate-count` ("Count issues using JQL"). */
export type CountRequest = JQLCountRequest;
export type CountResults = JQLCountResults;
/** The body of `POST /rest/api/3/issue` and `PUT /rest/api/3/issue/{key}`, and its answer. */
export type IssueEdit = IssueUpdateDetails;
export type { CreatedIssue, ErrorCollection, IssueTypeDetails, Project, Transitions };
/** `GET /rest/api/3/myself` ("Get current user"; jira.js names its answer `DashboardUser`). */
export type Myself = DashboardUser;

/**
 * `GET /rest/api/3/issue/createmeta/{projectIdOrKey}/issuetypes` ("Get create metadata issue types for a
 * project"): the description's `PageOfCreateMetaIssueTypes`. jira.js keeps only its write-only
 * `createMetaIssueType`; the answer's read-only `issueTypes` is written here from the description.
 */
export interface CreateMetaIssueTypes {
  readonly issueTypes?: IssueTypeDetails[];
  readonly maxResults?: number;
  readonly startAt?: number;
  readonly total?: number;
}
