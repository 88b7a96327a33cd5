/**
 * The fake forge's public names: its options, the copies of its state the test helpers hand out, the request
 * log entry and the `FakeForge` interface tests drive (testing/fake-forge.ts re-exports them all).
 */
import type { FakeRequestBase } from "../fake-server.js";
import type { ContractWatch } from "../vendor-contract.js";

export interface FakeForgeRepoSpec {
  readonly owner: string;
  readonly name: string;
  /** Issues disabled on the repository: every issues endpoint answers 410 "Issues are disabled for this repo". */
  readonly issuesDisabled?: boolean;
  /** The token cannot see it: every request answers 404 "Not Found" (as for a private repo). */
  readonly hidden?: boolean;
  /** Numeric repository id, used in Link URLs (`/repositories/<id>/issues?...`); default 1000 + index. */
  readonly id?: number;
  /** The titles of its milestones, numbered 1, 2, … in this order (all open); default none. */
  readonly milestones?: readonly string[];
  /**
   * The names of the issue types its owner has; default GitHub's for a new organization (Task, Bug,
   * Feature). `null`: an owner without issue types (a user): `GET …/issue-types` answers 404.
   */
  readonly issueTypes?: readonly string[] | null;
  /**
   * `false`: the token has no push access, so the forge drops milestone and type changes without a word
   * (the description's "Without push access to the repository, … changes are silently dropped").
   */
  readonly pushAccess?: false;
}

export interface FakeForgeOptions {
  /** The token the fake accepts (`Bearer <token>` or `token <token>`); default "fake-forge-token-0123456789". */
  readonly token?: string;
  /** Default: one repository acme/widgets. */
  readonly repos?: readonly FakeForgeRepoSpec[];
  /** Primary rate limit per hour (x-ratelimit-limit); default 5000. */
  readonly quota?: number;
  /** Clock in ms for created_at/updated_at/closed_at and x-ratelimit-reset; default Date.now. */
  readonly now?: () => number;
  /** The login of the token's user (author of issues svc creates); default "svc-bot". */
  readonly login?: string;
  /**
   * `false`: exchanges are not judged against the vendor's description (the benchmarks, which time svc);
   * every test leaves it on.
   */
  readonly vendorChecks?: false;
}

export interface FakeForgeLabel {
  readonly name: string;
}

export type StateReason = "completed" | "not_planned" | "reopened";

/** The server's state of one issue or pull request (a copy). */
export interface FakeForgeIssue {
  readonly number: number;
  readonly title: string;
  readonly body: string | null;
  readonly state: "open" | "closed";
  readonly stateReason: StateReason | null;
  /** Label names in order. */
  readonly labels: readonly string[];
  /** Assignee logins. */
  readonly assignees: readonly string[];
  readonly pullRequest: boolean;
  /** ISO 8601 UTC, second precision, "Z" (as GitHub: 2011-04-22T13:33:48Z). */
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly closedAt: string | null;
  /** Its milestone's title, type's name, and parent issue (`owner/name` and number), or null. */
  readonly milestone: string | null;
  readonly type: string | null;
  readonly parent: IssueRef | null;
  /** Its database id (`id`), which the sub-issue calls name it by. */
  readonly id: number;
}

/** An issue of one of the fake's repositories. */
export interface IssueRef {
  /** `owner/name`. */
  readonly repo: string;
  readonly number: number;
}

/** The server's state of one issue comment (a copy). */
export interface FakeForgeComment {
  readonly id: number;
  /** The issue or pull request it is on. */
  readonly issueNumber: number;
  /** The login of its author. */
  readonly author: string;
  readonly body: string;
  /** ISO 8601 UTC, second precision, "Z". */
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface FakeForgeRequest extends FakeRequestBase {
  /** Whether this request was counted against the primary quota (a 304 is not, nor a 401). */
  readonly counted: boolean;
}

export interface IssueSeed {
  readonly title: string;
  readonly body?: string | null;
  readonly state?: "open" | "closed";
  readonly stateReason?: StateReason | null;
  readonly labels?: readonly string[];
  readonly assignees?: readonly string[];
  readonly pullRequest?: boolean;
  /** A milestone's title and an issue type's name the repository has. */
  readonly milestone?: string;
  readonly type?: string;
  /** Its parent: an issue of this repository by number, or of another of the fake's. */
  readonly parent?: number | IssueRef;
}

export interface IssueEdit {
  readonly title?: string;
  readonly body?: string | null;
  readonly state?: "open" | "closed";
  readonly stateReason?: StateReason | null;
  readonly labels?: readonly string[];
  readonly assignees?: readonly string[];
  /** A milestone's title or an issue type's name the repository has; null removes it. */
  readonly milestone?: string | null;
  readonly type?: string | null;
}

export interface FakeForge {
  /** Base URL to configure as SVC_FORGE_BASE_URL: "http://127.0.0.1:<port>" (no path, like https://api.github.com). */
  readonly url: string;
  /** Same as url; goes on SVC_ALLOWED_ORIGINS. */
  readonly origin: string;
  readonly token: string;
  /** Every request received, oldest first. */
  readonly requests: readonly FakeForgeRequest[];
  /** Requests counted against the primary quota so far. */
  readonly quotaUsed: number;
  /**
   * Creates `count` issues in "owner/name" (plus `pullRequests` pull requests interleaved evenly), with varied
   * tricky titles and bodies, labels and assignees; returns the issue numbers (not the PRs), in order. Each
   * gets a distinct updated_at in the past, increasing with the number.
   */
  seed(repo: string, count: number, options?: { pullRequests?: number }): number[];
  /** One issue or pull request, created server-side by "someone else" (alice). */
  addIssue(repo: string, seed: IssueSeed): FakeForgeIssue;
  /** Someone else edits it in the browser: updated_at moves to now (strictly later than before, at least +1 s). */
  editIssue(repo: string, number: number, edit: IssueEdit): FakeForgeIssue;
  /**
   * Someone makes issue `number` a sub-issue of `parent` (null: of none) in the browser; both issues'
   * updated_at move.
   */
  setParent(repo: string, number: number, parent: number | IssueRef | null): FakeForgeIssue;
  /** Someone adds a label in the browser (updated_at moves, as on GitHub). */
  addLabel(repo: string, number: number, name: string): FakeForgeIssue;
  /**
   * An admin deletes the issue (it disappears from every listing; GET answers 410 "This issue was deleted");
   * its comments go with it.
   */
  deleteIssue(repo: string, number: number): void;
  issue(repo: string, number: number): FakeForgeIssue | undefined;
  /**
   * `count` comments spread round-robin over the issues or pull requests `numbers` (the bench: N comments
   * over M issues), by the token's user, alice, bob and carol in turn, with varied tricky bodies, stamped in
   * the past; returns their ids in order. Each moves its issue's updated_at, as a comment does on GitHub.
   */
  seedComments(repo: string, count: number, numbers: readonly number[]): number[];
  /**
   * A comment on issue (or pull request) `number` posted server-side, by "someone else" (alice) unless
   * `author` names another login (the token's user's login makes it "yours"); it moves the issue's updated_at.
   */
  addComment(repo: string, number: number, body: string, options?: { author?: string }): FakeForgeComment;
  /** Someone edits the comment in the browser: updated_at moves to now (at least +1 s) when the body changed. */
  editComment(repo: string, id: number, body: string): FakeForgeComment;
  /** Someone deletes the comment (it disappears from every listing; GET answers 404). */
  deleteComment(repo: string, id: number): void;
  /** The repository's comments (on issues and pull requests), by id; those of issue `number` when given. */
  comments(repo: string, number?: number): FakeForgeComment[];
  /** Issues and pull requests, by number. */
  issues(repo: string): FakeForgeIssue[];
  /** The numeric id of "owner/name" (what Link URLs name). */
  repositoryId(repo: string): number;
  /**
   * Sets the primary limit state: remaining requests and the reset time (seconds from now). When remaining is 0,
   * counted requests answer 403 with the documented rate-limit body until the reset passes; then the quota
   * refills.
   */
  setRateLimit(remaining: number, resetInSeconds: number): void;
  /** The next `count` requests answer a secondary rate limit: `status` (403 default, or 429), with `retry-after`. */
  secondaryLimit(count: number, options?: { status?: 403 | 429; retryAfterSeconds?: number }): void;
  /** From now on, the Link rel="next" of listings points to this origin instead (hostile; undefined: honest). */
  setNextOrigin(origin: string | undefined): void;
  /** The next `count` requests answer 301 with Location set to `location` (GitHub does this for renamed repos). */
  redirect(count: number, location: string): void;
  /**
   * Every exchange judged against the vendor's description as it happened (testing/vendor-contract.ts);
   * `close()` fails naming each departure.
   */
  readonly contract: ContractWatch;
  /** Closes the server; rejects, naming them, when any exchange departed from the vendor's description. */
  close(): Promise<void>;
}
