/**
 * The fake tracker's state as plain shapes: a project, its issues and their comments, and what a write sets.
 * Kept apart from the store (store.ts) so that the parts the store is made of (comment-store.ts) can name them
 * without importing the store.
 */
import type { AdfJson, FakeTrackerIssueType, FakeTrackerStatus, FakeTrackerTransition } from "./types.js";
import type { Priority } from "./vendor-data.js";

export interface Project {
  readonly id: string;
  readonly key: string;
  readonly name: string;
  readonly hidden: boolean;
  readonly issueTypes: readonly FakeTrackerIssueType[];
  readonly statuses: readonly FakeTrackerStatus[];
  readonly transitions: readonly FakeTrackerTransition[];
  readonly components: readonly string[];
  readonly versions: readonly string[];
  /** By number; numbers only grow, so insertion order is key order. */
  readonly issues: Map<number, Issue>;
  nextNumber: number;
}

export interface Issue {
  readonly id: string;
  readonly number: number;
  readonly key: string;
  readonly project: Project;
  type: FakeTrackerIssueType;
  summary: string;
  description: AdfJson | null;
  status: FakeTrackerStatus;
  priority: Priority | null;
  labels: string[];
  assignee: string | null;
  parent: Issue | null;
  components: string[];
  fixVersions: string[];
  duedate: string | null;
  reporter: string | null;
  resolution: string | null;
  /** Custom field values by id (fields.ts). */
  readonly custom: Map<string, unknown>;
  /** Issues whose `parent` is this one (subtasks, or the children of an epic). */
  readonly children: Set<Issue>;
  /** Its comments, oldest first (comment-store.ts). */
  readonly comments: Comment[];
  readonly created: number;
  updated: number;
}

/** One comment on an issue; its id is site-wide and increasing. */
export interface Comment {
  readonly id: string;
  readonly issue: Issue;
  /** Account ids of who wrote it and who edited it last. */
  readonly author: string;
  updateAuthor: string;
  body: AdfJson;
  readonly created: number;
  updated: number;
}

/** What a write sets; a member that is present (even `null`) is written. */
export interface Change {
  summary?: string;
  description?: AdfJson | null;
  labels?: string[];
  priority?: Priority | null;
  assignee?: string | null;
  parent?: Issue | null;
  type?: FakeTrackerIssueType;
  components?: string[];
  fixVersions?: string[];
  duedate?: string | null;
  reporter?: string | null;
  resolution?: string | null;
  /** Custom field values by id; null clears. */
  custom?: Record<string, unknown>;
}
