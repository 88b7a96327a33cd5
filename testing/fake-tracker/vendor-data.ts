/**
 * Jira Cloud's fixed values as the fake serves them: limits, default accounts, the wording of its errors (Jira's
 * own where it could be found: see each constant), its priorities, and the issue types, statuses and workflow
 * of a new project.
 */
import type { FakeTrackerIssueType, FakeTrackerStatus, FakeTrackerTransition } from "./types.js";

export interface Priority {
  readonly id: string;
  readonly name: string;
  readonly statusColor: string;
  readonly description: string;
}

export const API = "/rest/api/3";
export const DEFAULT_EMAIL = "svc-bot@example.com";
export const DEFAULT_TOKEN = "fake-tracker-token-0123456789";
export const BOT_ACCOUNT = "557058:bot-0001";
export const ALICE_ACCOUNT = "557058:alice-0002";
export const DEFAULT_MAX_RESULTS = 50;
/** "It returns max 5000 issues" (the `maxResults` parameter of search/jql). */
export const MAX_RESULTS_CEILING = 5000;
export const DEFAULT_PAGE_SIZE = 100;
/**
 * The most comments one page holds, in a search's `comment` field and in `GET …/comment` (whose
 * `maxResults` defaults to 100). ASSUMPTION: the search's field holds the issue's first (oldest) 100, with
 * `total` the thread's length; Jira Cloud documents no figure for the field.
 */
export const DEFAULT_COMMENT_PAGE_SIZE = 100;
/** Jira's limit of a comment's text ("It exceeds the allowed limit of 32,767 characters"). */
export const MAX_COMMENT_TEXT = 32_767;
/** "orderBy clause can contain a maximum of 7 fields" (the `jql` parameter of search/jql). */
export const MAX_ORDER_FIELDS = 7;
/** Java's String.length(): UTF-16 code units, as JavaScript counts them. */
export const MAX_SUMMARY = 255;
export const MINUTE = 60_000;
/** ASSUMPTION: the opaque first-page token `repeatNextPageToken` hands out. */
export const REPEATED_TOKEN = "RkFLRS1SRVBFQVRFRC1UT0tFTg";

export const UNAUTHENTICATED = "Client must be authenticated to access this resource.";
export const ISSUE_NOT_FOUND = "Issue does not exist or you do not have permission to see it.";
export const UNBOUNDED =
  "Unbounded JQL queries are not allowed here. Please add a search restriction to your query.";
export const SUMMARY_REQUIRED = "You must specify a summary of the issue.";
export const SUMMARY_TOO_LONG = "Summary must be less than 255 characters.";
export const SUMMARY_NEWLINE = "The summary is invalid because it contains newline characters.";
export const NOT_ADF = "Operation value must be an Atlassian Document (see the Atlassian Document Format)";
export const SUBTASK_WITHOUT_PARENT = "Issue type is a sub-task but parent issue key or id not specified.";
export const WRONG_HIERARCHY = "Given parent work item does not belong to appropriate hierarchy.";
/**
 * Jira's refusals of a comment, under `errors.comment`: the text limit as Jira Cloud words it (recorded in
 * mozilla/jira-bugzilla-integration#180 and, under `errors.comment`, jenkinsci/jira-plugin#667), and an empty
 * body as Jira's comment service words it.
 */
export const COMMENT_TOO_LONG =
  "The entered text is too long. It exceeds the allowed limit of 32,767 characters.";
export const COMMENT_EMPTY = "Comment body can not be empty!";
/** ASSUMPTION: the wording of a comment id not found on the issue (Jira's comment service's). */
export const commentNotFound = (id: string) => `Can not find a comment for the id: ${id}.`;
export const TRANSITION_NOT_INTEGER = "'transition' identifier must be an integer";

export const cannotBeSet = (field: string) =>
  `Field '${field}' cannot be set. It is not on the appropriate screen, or unknown.`;
/** The wording of Jira's DeleteIssue resource ("rest.issue.delete.subtasks"), as recorded by client fakes. */
export const hasSubtasks = (key: string) =>
  `The issue '${key}' has subtasks. You must specify the 'deleteSubtasks' parameter to delete this issue with subtasks.`;

export const PRIORITIES: readonly Priority[] = [
  { id: "1", name: "Highest", statusColor: "#d04437", description: "This problem will block progress." },
  {
    id: "2",
    name: "High",
    statusColor: "#f15C75",
    description: "Serious problem that could block progress.",
  },
  { id: "3", name: "Medium", statusColor: "#f79232", description: "Has the potential to affect progress." },
  { id: "4", name: "Low", statusColor: "#707070", description: "Minor problem or easily worked around." },
  {
    id: "5",
    name: "Lowest",
    statusColor: "#999999",
    description: "Trivial problem with little or no impact.",
  },
];
export const DEFAULT_PRIORITY = "Medium";

export const DEFAULT_ISSUE_TYPES: readonly FakeTrackerIssueType[] = [
  { id: "10001", name: "Task", subtask: false, hierarchyLevel: 0 },
  { id: "10002", name: "Bug", subtask: false, hierarchyLevel: 0 },
  { id: "10003", name: "Story", subtask: false, hierarchyLevel: 0 },
  { id: "10004", name: "Epic", subtask: false, hierarchyLevel: 1 },
  { id: "10005", name: "Subtask", subtask: true, hierarchyLevel: -1 },
];

/** Jira Cloud's ids for its default statuses. */
export const DEFAULT_STATUSES: readonly FakeTrackerStatus[] = [
  { id: "10000", name: "To Do", category: "new" },
  { id: "3", name: "In Progress", category: "indeterminate" },
  { id: "10001", name: "Done", category: "done" },
];

export const DEFAULT_TRANSITIONS: readonly FakeTrackerTransition[] = [
  { id: "21", name: "Start progress", from: ["To Do"], to: "In Progress" },
  { id: "11", name: "Stop progress", from: ["In Progress"], to: "To Do" },
  { id: "31", name: "Done", from: ["In Progress"], to: "Done" },
  { id: "41", name: "Reopen", from: ["Done"], to: "To Do" },
];

/** Jira's status categories (`/rest/api/3/statuscategory`). */
export const STATUS_CATEGORIES = {
  new: { id: 2, key: "new", colorName: "blue-gray", name: "To Do" },
  indeterminate: { id: 4, key: "indeterminate", colorName: "yellow", name: "In Progress" },
  done: { id: 3, key: "done", colorName: "green", name: "Done" },
} as const;

/** Descriptions and avatar ids of Jira Cloud's default issue types; others get a generic one. */
export const ISSUE_TYPE_LOOKS: ReadonlyMap<
  string,
  { readonly description: string; readonly avatarId: number }
> = new Map([
  ["Task", { description: "A small, distinct piece of work.", avatarId: 10318 }],
  ["Bug", { description: "A problem or error.", avatarId: 10303 }],
  ["Story", { description: "Functionality or a feature expressed as a user goal.", avatarId: 10315 }],
  ["Epic", { description: "A collection of related bugs, stories, and tasks.", avatarId: 10307 }],
  ["Subtask", { description: "A small piece of work that's part of a larger task.", avatarId: 10316 }],
]);
