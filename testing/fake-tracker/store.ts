/**
 * The fake tracker's site: projects (with their issue types, statuses and workflow), issues and accounts.
 * Everything the handlers and the test helpers change goes through `Tracker`, which bumps `version` so that
 * cached search results know when they are stale.
 */
import { CommentStore } from "./comment-store.js";
import { extraHelperChange } from "./fields.js";
import type { Change, Comment, Issue, Project } from "./model.js";
import { SEED_LABELS, SEED_PRIORITIES, SEED_SUMMARIES, seedDescription } from "./seed-data.js";
import type {
  FakeCustomValue,
  FakeTrackerCustomField,
  FakeTrackerIssue,
  FakeTrackerIssueType,
  FakeTrackerProjectSpec,
  FakeTrackerStatus,
  FakeTrackerUser,
  TrackerIssueEdit,
} from "./types.js";
import {
  BOT_ACCOUNT,
  DEFAULT_ISSUE_TYPES,
  DEFAULT_PRIORITY,
  DEFAULT_STATUSES,
  DEFAULT_TRANSITIONS,
  MINUTE,
  PRIORITIES,
} from "./vendor-data.js";

export type { Change, Comment, Issue, Project };

export interface ResolvedOptions {
  readonly email: string;
  readonly projects: readonly FakeTrackerProjectSpec[];
  readonly users: readonly FakeTrackerUser[];
  readonly zone: string;
  readonly timestampZone: "utc" | "account";
  readonly now: () => number;
  readonly pageSize: number;
  readonly commentPageSize: number;
  readonly metaPageSize: number;
  readonly customFields: readonly FakeTrackerCustomField[];
}

function buildProject(spec: FakeTrackerProjectSpec, index: number): Project {
  const statuses = spec.statuses ?? DEFAULT_STATUSES;
  if (statuses.length === 0) throw new Error(`fake tracker: project ${spec.key} needs a status`);
  const issueTypes = spec.issueTypes ?? DEFAULT_ISSUE_TYPES;
  const transitions = spec.transitions ?? DEFAULT_TRANSITIONS;
  const names = new Set(statuses.map((status) => status.name));
  for (const transition of transitions) {
    const unknown = [transition.to, ...transition.from].find((name) => name !== "*" && !names.has(name));
    if (unknown !== undefined)
      throw new Error(`fake tracker: transition ${transition.id} names no status ${unknown}`);
  }
  if (!issueTypes.some((type) => !type.subtask && type.hierarchyLevel === 0)) {
    throw new Error(`fake tracker: project ${spec.key} needs a standard (level 0) issue type`);
  }
  return {
    id: spec.id ?? String(10000 + index),
    key: spec.key,
    name: spec.name ?? `${spec.key} project`,
    hidden: spec.hidden ?? false,
    issueTypes,
    statuses,
    transitions,
    components: spec.components ?? ["API", "Web", "CLI"],
    versions: spec.versions ?? ["1.0", "2.0"],
    issues: new Map(),
    nextNumber: 1,
  };
}

/** The projects, issues and accounts; everything the handlers and the test helpers change goes through here. */
export class Tracker {
  readonly projects: readonly Project[];
  readonly users: ReadonlyMap<string, FakeTrackerUser>;
  readonly me: FakeTrackerUser;
  zone: string;
  readonly comments: CommentStore;
  /** The site's custom fields; an admin may rename one (`renameCustomField`). */
  customFields: readonly FakeTrackerCustomField[];
  /** Bumped by every change, so cached search results know when they are stale. */
  version = 0;
  private readonly byKey = new Map<string, Issue>();
  private readonly byId = new Map<string, Issue>();
  private nextId = 10001;

  /** The token's account (/myself) is the bot, whatever `users` says; it is always assignable too. */
  constructor(readonly options: ResolvedOptions) {
    this.projects = options.projects.map(buildProject);
    this.comments = new CommentStore(this);
    this.customFields = options.customFields;
    this.zone = options.zone;
    const users = new Map(options.users.map((user) => [user.accountId, user]));
    this.me = users.get(BOT_ACCOUNT) ?? {
      accountId: BOT_ACCOUNT,
      displayName: "svc bot",
      emailAddress: options.email,
    };
    users.set(this.me.accountId, this.me);
    this.users = users;
  }

  now(): number {
    return this.options.now();
  }

  /** For the test helpers: a project by key, hidden or not; an unknown key is the test's bug. */
  projectOrThrow(key: string): Project {
    const project = this.projects.find((candidate) => candidate.key === key);
    if (!project) throw new Error(`fake tracker: no project ${key}`);
    return project;
  }

  /** `{projectIdOrKey}` of the project resource: the key (case sensitive) or the id; hidden ones are not found. */
  visibleProject(idOrKey: string): Project | undefined {
    return this.projects.find(
      (project) => !project.hidden && (project.key === idOrKey || project.id === idOrKey),
    );
  }

  /** A key (any case: Jira retries case-insensitively) or an id; undefined when hidden or unknown. */
  visibleIssue(idOrKey: string): Issue | undefined {
    const issue = this.byId.get(idOrKey) ?? this.byKey.get(idOrKey.toUpperCase());
    return issue && !issue.project.hidden ? issue : undefined;
  }

  issueOrThrow(key: string): Issue {
    const issue = this.byKey.get(key.toUpperCase());
    if (!issue) throw new Error(`fake tracker: no issue ${key}`);
    return issue;
  }

  /** A new issue in its project's initial status; `created` and `updated` are `at`. */
  insert(project: Project, type: FakeTrackerIssueType, summary: string, at: number): Issue {
    const number = project.nextNumber++;
    const issue: Issue = {
      id: String(this.nextId++),
      number,
      key: `${project.key}-${number}`,
      project,
      type,
      summary,
      description: null,
      status: project.statuses[0] as FakeTrackerStatus,
      priority: PRIORITIES.find((priority) => priority.name === DEFAULT_PRIORITY) ?? null,
      labels: [],
      assignee: null,
      parent: null,
      components: [],
      fixVersions: [],
      duedate: null,
      // ASSUMPTION (a simplification: Jira sets the creator): no reporter unless a test's seed names one, so
      // the records of the tests before issue 35 keep their bytes.
      reporter: null,
      resolution: null,
      custom: new Map(),
      children: new Set(),
      comments: [],
      created: at,
      updated: at,
    };
    project.issues.set(number, issue);
    this.byKey.set(issue.key, issue);
    this.byId.set(issue.id, issue);
    this.version++;
    return issue;
  }

  /** Writes a validated change; `updated` is the caller's business (`touch`). */
  apply(issue: Issue, change: Change): void {
    if (change.summary !== undefined) issue.summary = change.summary;
    if (change.description !== undefined) issue.description = change.description;
    if (change.labels !== undefined) issue.labels = change.labels;
    if (change.priority !== undefined) issue.priority = change.priority;
    if (change.assignee !== undefined) issue.assignee = change.assignee;
    if (change.type !== undefined) issue.type = change.type;
    if (change.parent !== undefined) this.setParent(issue, change.parent);
    if (change.components !== undefined) issue.components = change.components;
    if (change.fixVersions !== undefined) issue.fixVersions = change.fixVersions;
    if (change.duedate !== undefined) issue.duedate = change.duedate;
    if (change.reporter !== undefined) issue.reporter = change.reporter;
    if (change.resolution !== undefined) issue.resolution = change.resolution;
    for (const [id, value] of Object.entries(change.custom ?? {})) {
      if (value === null) issue.custom.delete(id);
      else issue.custom.set(id, value);
    }
    this.version++;
  }

  setParent(issue: Issue, parent: Issue | null): void {
    issue.parent?.children.delete(issue);
    issue.parent = parent;
    parent?.children.add(issue);
  }

  /** `updated` moves to `at`, or to now but strictly later than before. */
  touch(issue: Issue, at?: number): void {
    issue.updated = at ?? Math.max(this.now(), issue.updated + 1);
    this.version++;
  }

  /**
   * Deletes the issue and its subtasks. ASSUMPTION: the children of a deleted epic stay, without a parent,
   * and their `updated` does not move.
   */
  remove(issue: Issue): void {
    for (const child of [...issue.children]) {
      if (child.type.subtask) this.remove(child);
      else this.setParent(child, null);
    }
    this.setParent(issue, null);
    this.comments.forget(issue);
    issue.project.issues.delete(issue.number);
    this.byKey.delete(issue.key);
    this.byId.delete(issue.id);
    this.version++;
  }

  subtasksOf(issue: Issue): Issue[] {
    return [...issue.children].filter((child) => child.type.subtask).sort((a, b) => a.number - b.number);
  }

  statusOrThrow(project: Project, name: string): FakeTrackerStatus {
    const status = project.statuses.find((candidate) => candidate.name === name);
    if (!status)
      throw new Error(`fake tracker: project ${project.key} has no status ${JSON.stringify(name)}`);
    return status;
  }

  /** The helpers' change (names, not references) as a `Change`; unknown names are the test's bug. */
  helperChange(project: Project, edit: TrackerIssueEdit & { readonly parent?: string | null }): Change {
    const change: Change = {};
    if (edit.summary !== undefined) change.summary = edit.summary;
    if (edit.description !== undefined) change.description = edit.description;
    if (edit.labels !== undefined) change.labels = [...edit.labels];
    if (edit.priority !== undefined) {
      const priority = edit.priority === null ? null : PRIORITIES.find((p) => p.name === edit.priority);
      if (priority === undefined) throw new Error(`fake tracker: no priority ${edit.priority}`);
      change.priority = priority;
    }
    if (edit.assignee !== undefined) {
      if (edit.assignee !== null && !this.users.has(edit.assignee)) {
        throw new Error(`fake tracker: no account ${edit.assignee}`);
      }
      change.assignee = edit.assignee;
    }
    if (edit.parent !== undefined)
      change.parent = edit.parent === null ? null : this.issueOrThrow(edit.parent);
    if (change.parent && change.parent.project !== project)
      throw new Error("fake tracker: parent in another project");
    return { ...change, ...extraHelperChange(this, edit) };
  }

  seed(project: Project, count: number): string[] {
    const standard = project.issueTypes.filter((type) => !type.subtask && type.hierarchyLevel === 0);
    const accounts = [null, ...this.users.keys()];
    const start = this.now() - (count + 1) * MINUTE;
    const keys: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = start + i * MINUTE;
      const n = project.nextNumber;
      const issue = this.insert(project, standard[n % standard.length] as FakeTrackerIssueType, "", created);
      issue.summary = (SEED_SUMMARIES[n % SEED_SUMMARIES.length] as (n: number) => string)(n);
      issue.description = seedDescription(n);
      issue.status = project.statuses[n % project.statuses.length] as FakeTrackerStatus;
      const priority = SEED_PRIORITIES[n % SEED_PRIORITIES.length];
      issue.priority = PRIORITIES.find((candidate) => candidate.name === priority) ?? null;
      issue.labels = [...(SEED_LABELS[n % SEED_LABELS.length] ?? [])];
      issue.assignee = accounts[n % accounts.length] ?? null;
      // Distinct, increasing with the number, with milliseconds, always before the next one's `created`.
      issue.updated = created + 30_000 + (n % 17) * 1000 + 123;
      keys.push(issue.key);
    }
    return keys;
  }
}

export function copyIssue(tracker: Tracker, issue: Issue): FakeTrackerIssue {
  return {
    id: issue.id,
    key: issue.key,
    project: issue.project.key,
    type: issue.type.name,
    summary: issue.summary,
    description: issue.description === null ? null : structuredClone(issue.description),
    status: issue.status.name,
    priority: issue.priority?.name ?? null,
    labels: [...issue.labels],
    assignee: issue.assignee,
    parent: issue.parent?.key ?? null,
    subtasks: tracker.subtasksOf(issue).map((subtask) => subtask.key),
    components: [...issue.components],
    fixVersions: [...issue.fixVersions],
    duedate: issue.duedate,
    reporter: issue.reporter,
    resolution: issue.resolution,
    custom: Object.fromEntries(structuredClone([...issue.custom])) as Record<string, FakeCustomValue>,
    created: issue.created,
    updated: issue.updated,
  };
}
