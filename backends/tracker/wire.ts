/**
 * The tracker's wire shapes, from Atlassian's Jira Cloud platform REST API v3 description through the
 * model types `jira.js` (version 6, package-lock.json) generates from it. Type-only: `verbatimModuleSyntax`
 * keeps `import type` out of the emitted JavaScript, so neither jira.js nor zod reaches the bundle.
 *
 * Nearly every member of these models is optional: the code reading an answer says what absence means.
 * Shapes jira.js lacks or mistypes are written here from the description itself (fixtures/vendor/SHAPES.md
 * says which and from which version): `CreateMetaIssueTypes`, `WireComment`, `WireCommentPage`,
 * `CommentRequest`.
 */
import type {
  Comment,
  CreatedIssue,
  DashboardUser,
  ErrorCollection,
  Issue,
  IssueTypeDetails,
  IssueUpdateDetails,
  JQLCountRequest,
  JQLCountResults,
  PageOfComments,
  PageOfCreateMetaIssueTypeWithField,
  Project,
  SearchAndReconcileRequest,
  SearchAndReconcileResults,
  Transitions,
} from "jira.js/cloud";
import type { AdfDoc } from "./adf.js";

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
/**
 * `GET /rest/api/3/issue/createmeta/{projectIdOrKey}/issuetypes/{issueTypeId}` ("Get create field metadata
 * for a project and issue type id"): a page of the type's create screen, `fields` (and `results`, the same
 * `FieldCreateMetadata` items) with `startAt`, `maxResults`, `total`.
 */
export type CreateMetaFields = PageOfCreateMetaIssueTypeWithField;
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

/**
 * A comment ("Issue comments": `GET|PUT …/issue/{key}/comment/{id}`, the items of a `PageOfComments`).
 * jira.js types `created` and `updated` as `Date` (its zod schemas coerce); on the wire they are strings
 * (`format: date-time`, `2026-11-23T10:30:00.000+0000`). Its models are loose zod objects (an index
 * signature), so `Omit` would drop every named member: the members svc reads are picked.
 */
export type WireComment = Pick<Comment, "id" | "author" | "updateAuthor" | "body" | "self"> & {
  readonly created?: string;
  readonly updated?: string;
};

/** `PageOfComments`: `GET …/issue/{key}/comment`, and an issue's `comment` field (a search with `fields=comment`). */
export type WireCommentPage = Pick<PageOfComments, "maxResults" | "startAt" | "total"> & {
  readonly comments?: WireComment[];
};

/** The body of `POST …/issue/{key}/comment` and `PUT …/comment/{id}` as svc sends it: the ADF body only. */
export interface CommentRequest {
  readonly body: AdfDoc;
}
