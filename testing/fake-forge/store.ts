/**
 * The fake forge's state: repositories, their issues (pull requests among them), comments, labels, milestones,
 * issue types and deleted numbers, and who may be assigned. Everything the handlers and the test helpers change goes through `Forge`.
 */
import { floorSecond, isoSeconds } from "./http.js";
import { SEED_ASSIGNEES, SEED_BODIES, SEED_COMMENTS, SEED_LABELS, SEED_TITLES } from "./seed-data.js";
import type {
  FakeForgeComment,
  FakeForgeIssue,
  FakeForgeRepoSpec,
  IssueEdit,
  IssueRef,
  IssueSeed,
  StateReason,
} from "./types.js";
import { DEFAULT_ISSUE_TYPES, DEFAULT_LABELS, HOUR_MS, TEAM } from "./vendor-data.js";

export interface Label {
  readonly id: number;
  readonly name: string;
  readonly color: string;
  readonly description: string | null;
  readonly default: boolean;
}

export interface Issue {
  readonly number: number;
  readonly id: number;
  readonly author: string;
  readonly pullRequest: boolean;
  title: string;
  body: string | null;
  state: "open" | "closed";
  stateReason: StateReason | null;
  /** Names, as the repository's labels spell them. */
  labels: string[];
  assignees: string[];
  readonly createdMs: number;
  updatedMs: number;
  closedMs: number | null;
  closedBy: string | null;
  /** How many comments it has (the issue's `comments`). */
  commentCount: number;
  milestone: Milestone | null;
  /** An issue type's name. */
  type: string | null;
  parent: { readonly repo: Repo; readonly number: number } | null;
}

/** One milestone of a repository. ASSUMPTION: open, without a description or a due date. */
export interface Milestone {
  readonly number: number;
  readonly id: number;
  readonly title: string;
  readonly createdMs: number;
}

export interface Repo {
  readonly id: number;
  readonly owner: string;
  readonly name: string;
  readonly hidden: boolean;
  readonly issuesDisabled: boolean;
  readonly issues: Map<number, Issue>;
  readonly deleted: Set<number>;
  /** Lower-cased name → label (GitHub matches label names case-insensitively). */
  readonly labels: Map<string, Label>;
  /** Comments on its issues and pull requests, by id (a deleted one is gone: GitHub answers 404 for it). */
  readonly comments: Map<number, Comment>;
  nextNumber: number;
  readonly milestones: readonly Milestone[];
  /** The names of its owner's issue types; null: none (a user's repository). */
  readonly issueTypes: readonly string[] | null;
  /** False: milestone and type changes are dropped without a word. */
  readonly pushAccess: boolean;
}

/** One issue comment (on an issue or a pull request). */
export interface Comment {
  readonly id: number;
  readonly issueNumber: number;
  readonly author: string;
  body: string;
  readonly createdMs: number;
  updatedMs: number;
}

/** The repositories, their issues and labels, and who may be assigned: what requests and the test's helpers change. */
export class Forge {
  readonly repos: readonly Repo[];
  /** Who may be assigned: the token's user first (user ID 1), then alice, bob and carol (who author seeded issues). */
  readonly collaborators: readonly string[];
  private readonly userIds: Map<string, number>;
  private nextLabelId = 4_200_000_000;
  /** Comment ids: one sequence for the whole fake, ten digits like GitHub's (`ls` lists a thread in order). */
  private nextCommentId = 1_500_000_001;
  private lastSeededCommentMs = 0;
  /** Seeded issues are stamped from a day before the fake started, so `since` filters work with the clock. */
  private readonly seedEpoch: number;

  constructor(
    readonly login: string,
    readonly clock: () => number,
    specs: readonly FakeForgeRepoSpec[],
  ) {
    this.collaborators = [login, ...TEAM.filter((name) => name !== login)];
    this.userIds = new Map(this.collaborators.map((name, index) => [name, index + 1]));
    this.seedEpoch = floorSecond(clock()) - 24 * HOUR_MS;
    this.repos = specs.map((spec, index) => this.createRepo(spec, index));
  }

  private createRepo(spec: FakeForgeRepoSpec, index: number): Repo {
    const repo: Repo = {
      id: spec.id ?? 1000 + index,
      owner: spec.owner,
      name: spec.name,
      hidden: spec.hidden ?? false,
      issuesDisabled: spec.issuesDisabled ?? false,
      issues: new Map(),
      deleted: new Set(),
      labels: new Map(),
      comments: new Map(),
      nextNumber: 1,
      milestones: (spec.milestones ?? []).map((title, at) => ({
        number: at + 1,
        id: 9_000_000 + (1000 + index) * 100 + at,
        title,
        createdMs: this.seedEpoch,
      })),
      issueTypes: spec.issueTypes === undefined ? DEFAULT_ISSUE_TYPES : spec.issueTypes,
      pushAccess: spec.pushAccess !== false,
    };
    for (const [name, color, description] of DEFAULT_LABELS) {
      repo.labels.set(name, { id: this.nextLabelId++, name, color, description, default: true });
    }
    return repo;
  }

  /** A stable id per login, handed out in order of first appearance after the collaborators. */
  userId(login: string): number {
    let id = this.userIds.get(login);
    if (id === undefined) {
      id = 100 + this.userIds.size;
      this.userIds.set(login, id);
    }
    return id;
  }

  findRepo(fullName: string): Repo {
    const repo = this.repos.find((r) => `${r.owner}/${r.name}`.toLowerCase() === fullName.toLowerCase());
    if (!repo) throw new Error(`the fake forge has no repository ${JSON.stringify(fullName)}`);
    return repo;
  }

  /** The repository a path names (`/repos/{owner}/{repo}…` or `/repositories/{id}…`) and the rest of the path. */
  splitPath(pathname: string): { repo: Repo | undefined; rest: string } | undefined {
    const byName = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(pathname);
    if (byName) {
      const full = `${byName[1]}/${byName[2]}`.toLowerCase();
      return {
        repo: this.repos.find((r) => `${r.owner}/${r.name}`.toLowerCase() === full),
        rest: byName[3] ?? "",
      };
    }
    const byId = /^\/repositories\/(\d+)(\/.*)?$/.exec(pathname);
    if (byId) return { repo: this.repos.find((r) => r.id === Number(byId[1])), rest: byId[2] ?? "" };
    return undefined;
  }

  labelOf(repo: Repo, name: string): Label {
    const label = repo.labels.get(name.toLowerCase());
    if (!label) throw new Error(`the fake forge lost label ${name}`);
    return label;
  }

  /** Label names as the repository spells them, deduplicated; a name it does not have becomes a new label. */
  private uniqueLabels(repo: Repo, names: readonly string[]): string[] {
    for (const name of names) {
      if (!repo.labels.has(name.toLowerCase())) {
        const label = { id: this.nextLabelId++, name, color: "ededed", description: null, default: false };
        repo.labels.set(name.toLowerCase(), label);
      }
    }
    return [...new Set(names.map((name) => this.labelOf(repo, name).name))];
  }

  /**
   * The next updated_at: now, at second precision. ASSUMPTION: when the clock has not passed the previous
   * updated_at by a whole second, one second is added, so updated_at strictly increases with every change.
   */
  nextStamp(previousMs = 0): number {
    return Math.max(floorSecond(this.clock()), previousMs + 1000);
  }

  insertIssue(repo: Repo, seed: IssueSeed, author: string, createdMs: number, updatedMs = createdMs): Issue {
    const number = repo.nextNumber++;
    const state = seed.state ?? "open";
    const issue: Issue = {
      number,
      id: 3_000_000_000 + repo.id * 100_000 + number,
      author,
      pullRequest: seed.pullRequest ?? false,
      title: seed.title,
      body: seed.body === undefined ? null : seed.body,
      state,
      stateReason: seed.stateReason ?? (state === "closed" ? "completed" : null),
      labels: this.uniqueLabels(repo, seed.labels ?? []),
      assignees: [...(seed.assignees ?? [])],
      createdMs,
      updatedMs,
      closedMs: state === "closed" ? updatedMs : null,
      closedBy: state === "closed" ? author : null,
      commentCount: 0,
      milestone: seed.milestone === undefined ? null : milestoneOf(repo, seed.milestone),
      type: seed.type === undefined ? null : typeOf(repo, seed.type),
      parent: seed.parent === undefined ? null : parentOf(this, repo, seed.parent),
    };
    repo.issues.set(number, issue);
    return issue;
  }

  /** Applies a change as `actor`; updated_at moves only when something changed (ASSUMPTION: no-op edits do not). */
  edit(repo: Repo, issue: Issue, edit: IssueEdit, actor: string): void {
    const before = JSON.stringify(issue);
    if (edit.title !== undefined) issue.title = edit.title;
    if (edit.body !== undefined) issue.body = edit.body;
    if (edit.labels !== undefined) issue.labels = this.uniqueLabels(repo, edit.labels);
    if (edit.assignees !== undefined) issue.assignees = [...new Set(edit.assignees)];
    if (edit.milestone !== undefined)
      issue.milestone = edit.milestone === null ? null : milestoneOf(repo, edit.milestone);
    if (edit.type !== undefined) issue.type = edit.type === null ? null : typeOf(repo, edit.type);
    const stamp = this.nextStamp(issue.updatedMs);
    if (edit.state === "closed") close(issue, edit.stateReason, actor, stamp);
    if (edit.state === "open") reopen(issue);
    if (JSON.stringify(issue) !== before) issue.updatedMs = stamp;
  }

  issueOrThrow(repo: Repo, number: number): Issue {
    const issue = repo.issues.get(number);
    if (!issue) throw new Error(`the fake forge has no issue ${repo.owner}/${repo.name}#${number}`);
    return issue;
  }

  /**
   * A comment by `author` on issue (or pull request) `issue`, stamped `createdMs`. ASSUMPTION: as on GitHub,
   * a new comment moves its issue's updated_at (the issue listing's `sort=updated` and `since` find it);
   * editing or deleting a comment does not.
   */
  insertComment(repo: Repo, issue: Issue, author: string, body: string, createdMs: number): Comment {
    const comment: Comment = {
      id: this.nextCommentId++,
      issueNumber: issue.number,
      author,
      body,
      createdMs,
      updatedMs: createdMs,
    };
    repo.comments.set(comment.id, comment);
    issue.commentCount++;
    issue.updatedMs = Math.max(issue.updatedMs, createdMs);
    return comment;
  }

  /** A new body; updated_at moves only when the body changed (ASSUMPTION, as for issues). */
  editComment(comment: Comment, body: string): void {
    if (comment.body === body) return;
    comment.body = body;
    comment.updatedMs = this.nextStamp(comment.updatedMs);
  }

  /** Someone deletes the comment: it disappears from every listing and its issue's count. */
  removeComment(repo: Repo, comment: Comment): void {
    repo.comments.delete(comment.id);
    const issue = repo.issues.get(comment.issueNumber);
    if (issue) issue.commentCount--;
  }

  commentOrThrow(repo: Repo, id: number): Comment {
    const comment = repo.comments.get(id);
    if (!comment) throw new Error(`the fake forge has no comment ${id} in ${repo.owner}/${repo.name}`);
    return comment;
  }

  /** An issue deleted by an admin takes its comments with it. */
  deleteIssue(repo: Repo, number: number): void {
    this.issueOrThrow(repo, number);
    repo.issues.delete(number);
    repo.deleted.add(number);
    for (const [id, comment] of repo.comments) if (comment.issueNumber === number) repo.comments.delete(id);
  }

  /**
   * `count` comments spread round-robin over the issues (or pull requests) `numbers`, by the token's user and
   * the team in turn, stamped a second apart in id order from a second after the newest of those issues was
   * created (ids increase with time, as on GitHub); returns their ids in order.
   */
  seedComments(repo: Repo, count: number, numbers: readonly number[]): number[] {
    const issues = numbers.map((number) => this.issueOrThrow(repo, number));
    if (issues.length === 0) throw new Error("the fake forge seeds comments over at least one issue");
    const authors = [this.login, ...TEAM.filter((name) => name !== this.login)];
    let stamp = Math.max(this.lastSeededCommentMs, ...issues.map((issue) => issue.createdMs));
    const ids: number[] = [];
    for (let index = 0; index < count; index++) {
      stamp += 1000;
      if (stamp > this.clock()) throw new Error("the fake forge seeds comments only in the past");
      const body = (SEED_COMMENTS[index % SEED_COMMENTS.length] as (n: number) => string)(index + 1);
      const author = authors[index % authors.length] as string;
      const issue = issues[index % issues.length] as Issue;
      ids.push(this.insertComment(repo, issue, author, body, stamp).id);
    }
    this.lastSeededCommentMs = stamp;
    return ids;
  }

  /** `count` issues plus `pullRequests` pull requests spread evenly among them; returns the issues' numbers. */
  seed(repo: Repo, count: number, pullRequests: number): number[] {
    const numbers: number[] = [];
    const total = count + pullRequests;
    for (let index = 0; index < total; index++) {
      const pullRequest =
        Math.floor(((index + 1) * pullRequests) / total) > Math.floor((index * pullRequests) / total);
      const issue = this.seedOne(repo, index, pullRequest);
      if (!pullRequest) numbers.push(issue.number);
    }
    return numbers;
  }

  /** One seeded issue: the `ordinal` picks its title, body, state, labels and assignees from the tables. */
  private seedOne(repo: Repo, ordinal: number, pullRequest: boolean): Issue {
    const number = repo.nextNumber;
    const closedAs: StateReason | undefined =
      ordinal % 5 === 3 ? "completed" : ordinal % 7 === 5 ? "not_planned" : undefined;
    const labels = [...(SEED_LABELS[ordinal % SEED_LABELS.length] as readonly string[])];
    if (!closedAs && ordinal % 4 === 1) labels.push("status/in-progress");
    if (!closedAs && ordinal % 4 === 2) labels.push("status/in-review");
    const createdMs = this.seedEpoch + number * 2000;
    if (createdMs + 1000 > this.clock())
      throw new Error("the fake forge seeds at most 43,199 issues a repository");
    const seed: IssueSeed = {
      title: (SEED_TITLES[ordinal % SEED_TITLES.length] as (n: number) => string)(number),
      body: (SEED_BODIES[ordinal % SEED_BODIES.length] as (n: number) => string | null)(number),
      state: closedAs ? "closed" : "open",
      stateReason: closedAs ?? null,
      labels,
      assignees: SEED_ASSIGNEES[ordinal % SEED_ASSIGNEES.length],
      pullRequest,
    };
    return this.insertIssue(repo, seed, TEAM[number % TEAM.length] as string, createdMs, createdMs + 1000);
  }
}

/**
 * "Update an issue": `state_reason` is "ignored unless `state` is changed". Closing sets the given reason, or
 * "completed" when none (or "reopened") is given. ASSUMPTION: `state: "closed"` with a reason on an already
 * closed issue changes the reason and keeps closed_at, as the web UI can.
 */
function close(issue: Issue, reason: StateReason | null | undefined, actor: string, stamp: number): void {
  const closeReason = reason === "not_planned" || reason === "completed" ? reason : undefined;
  if (issue.state === "closed") {
    if (closeReason !== undefined) issue.stateReason = closeReason;
    return;
  }
  issue.state = "closed";
  issue.stateReason = closeReason ?? "completed";
  issue.closedMs = stamp;
  issue.closedBy = actor;
}

/** Reopening sets state_reason "reopened" and clears closed_at and closed_by; an open issue stays as it is. */
function reopen(issue: Issue): void {
  if (issue.state === "open") return;
  issue.state = "open";
  issue.stateReason = "reopened";
  issue.closedMs = null;
  issue.closedBy = null;
}

/** The milestone titled `title` (the test's seeds and edits name milestones by title). */
export function milestoneOf(repo: Repo, title: string): Milestone {
  const found = repo.milestones.find((milestone) => milestone.title === title);
  if (!found) throw new Error(`the fake forge's ${repo.owner}/${repo.name} has no milestone ${title}`);
  return found;
}

/** The issue type named `name`, as its owner spells it. */
export function typeOf(repo: Repo, name: string): string {
  const found = repo.issueTypes?.find((type) => type.toLowerCase() === name.toLowerCase());
  if (!found) throw new Error(`the fake forge's ${repo.owner}/${repo.name} has no issue type ${name}`);
  return found;
}

/** The parent a seed names: a number in `repo`, or an issue of another of the fake's repositories. */
export function parentOf(forge: Forge, repo: Repo, ref: number | IssueRef): { repo: Repo; number: number } {
  const at = typeof ref === "number" ? repo : forge.findRepo(ref.repo);
  const number = typeof ref === "number" ? ref : ref.number;
  forge.issueOrThrow(at, number);
  return { repo: at, number };
}

export function copyIssue(issue: Issue): FakeForgeIssue {
  return {
    number: issue.number,
    title: issue.title,
    body: issue.body,
    state: issue.state,
    stateReason: issue.stateReason,
    labels: [...issue.labels],
    assignees: [...issue.assignees],
    pullRequest: issue.pullRequest,
    createdAt: isoSeconds(issue.createdMs),
    updatedAt: isoSeconds(issue.updatedMs),
    closedAt: issue.closedMs === null ? null : isoSeconds(issue.closedMs),
    milestone: issue.milestone?.title ?? null,
    type: issue.type,
    parent: issue.parent && {
      repo: `${issue.parent.repo.owner}/${issue.parent.repo.name}`,
      number: issue.parent.number,
    },
    id: issue.id,
  };
}

export function copyComment(comment: Comment): FakeForgeComment {
  return {
    id: comment.id,
    issueNumber: comment.issueNumber,
    author: comment.author,
    body: comment.body,
    createdAt: isoSeconds(comment.createdMs),
    updatedAt: isoSeconds(comment.updatedMs),
  };
}
