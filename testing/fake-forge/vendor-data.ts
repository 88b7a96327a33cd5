/**
 * GitHub's fixed values as the fake forge serves them: the reference pages errors cite, the paging and length
 * limits, the state reasons of the 2022-11-28 description, the collaborators, a new repository's labels and the
 * reactions an issue counts.
 */
import type { StateReason } from "./types.js";

export const DOCS = "https://docs.github.com/rest";
export const ISSUES_DOCS = `${DOCS}/issues/issues`;
export const LABELS_DOCS = `${DOCS}/issues/labels`;
export const MILESTONES_DOCS = `${DOCS}/issues/milestones`;
export const SUB_ISSUES_DOCS = `${DOCS}/issues/sub-issues`;
export const ISSUE_TYPES_DOCS = `${DOCS}/issues/issue-types`;
export const COMMENTS_DOCS = `${DOCS}/issues/comments`;
export const USERS_DOCS = `${DOCS}/users/users`;
export const RATE_DOCS = `${DOCS}/overview/rate-limits-for-the-rest-api`;
export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 100;
/**
 * The length limits are not in the OpenAPI description; they come from GitHub's recorded 422s:
 * "title is too long (maximum is 256 characters)" (googleapis/repo-automation-bots#1895, anomalyco/opencode#3723)
 * and "body is too long (maximum is 65536 characters)" (JasonEtco/create-an-issue#123, projectdiscovery/nuclei#634).
 */
export const MAX_TITLE = 256;
export const MAX_BODY = 65_536;
export const HOUR_MS = 3_600_000;
export const STATE_REASONS: readonly StateReason[] = ["completed", "not_planned", "reopened"];
/** Who edits in the browser and creates issues "server-side" (a collaborator, not the token's user). */
export const SOMEONE_ELSE = "alice";
export const TEAM = ["alice", "bob", "carol"] as const;

/** GitHub's default labels for a new repository (name, color, description). */
export const DEFAULT_LABELS: readonly (readonly [string, string, string])[] = [
  ["bug", "d73a4a", "Something isn't working"],
  ["documentation", "0075ca", "Improvements or additions to documentation"],
  ["duplicate", "cfd3d7", "This issue or pull request already exists"],
  ["enhancement", "a2eeef", "New feature or request"],
  ["good first issue", "7057ff", "Good for newcomers"],
  ["help wanted", "008672", "Extra attention is needed"],
  ["invalid", "e4e669", "This doesn't seem right"],
  ["question", "d876e3", "Further information is requested"],
  ["wontfix", "ffffff", "This will not be worked on"],
];

/** The issue types GitHub gives a new organization. */
export const DEFAULT_ISSUE_TYPES: readonly string[] = ["Task", "Bug", "Feature"];

export const REACTIONS = ["+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"] as const;
