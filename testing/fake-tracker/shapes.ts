/**
 * The fake tracker's JSON shapes, as Jira's OpenAPI description has them: an issue with the fields a
 * `fields` parameter selects, and the statuses, priorities, issue types, users, projects and transitions
 * nested in it or answered alone, with `self` URLs on the fake's origin.
 */

import { FieldShapes } from "./fields.js";
import type { JsonObject } from "./http.js";
import type { Comment, Issue, Project, Tracker } from "./store.js";
import { formatTimestamp } from "./time.js";
import type { FakeTrackerIssueType, FakeTrackerStatus, FakeTrackerTransition } from "./types.js";
import { API, ISSUE_TYPE_LOOKS, type Priority, STATUS_CATEGORIES } from "./vendor-data.js";

const ISSUE_FIELDS = [
  "summary",
  "description",
  "status",
  "priority",
  "labels",
  "assignee",
  "parent",
  "issuetype",
  "created",
  "updated",
  "subtasks",
  "project",
  "comment",
] as const;
export type IssueField = (typeof ISSUE_FIELDS)[number];
const ISSUE_FIELD_NAMES: ReadonlySet<string> = new Set(ISSUE_FIELDS);

/**
 * Which fields an issue is rendered with; `idsOnly` renders `{id}` alone (search/jql's default). `extra`: the
 * fields of issue 35 (fields.ts) by id, `*all` for every one.
 */
export type Selection =
  | { readonly idsOnly: true }
  | {
      readonly idsOnly: false;
      readonly fields: ReadonlySet<IssueField>;
      readonly extra?: ReadonlySet<string>;
    };

/**
 * The `fields` parameter: entries may be repeated and comma-separated. `*all` and `*navigable` (all the fake
 * knows are navigable) select everything, `-name` excludes, names include. Only exclusions start from all.
 * ASSUMPTION: unknown names are ignored (they select nothing), and `id` alone (or nothing) is ids-only.
 */
export function selectFields(entries: readonly string[], fallback: "id" | "*all"): Selection {
  const items = entries.flatMap((entry) => entry.split(",")).map((item) => item.trim());
  const named = items.filter((item) => item !== "");
  const list = named.length === 0 ? [fallback] : named;
  if (list.every((item) => item === "id")) return { idsOnly: true };
  const included = new Set<IssueField>();
  const extra = new Set<string>();
  const excluded = new Set<string>();
  let includes = false;
  for (const item of list) {
    if (item.startsWith("-")) {
      excluded.add(item.slice(1));
      continue;
    }
    includes = true;
    if (item === "*all" || item === "*navigable") {
      for (const field of ISSUE_FIELDS) included.add(field);
      extra.add("*all");
    } else if (ISSUE_FIELD_NAMES.has(item)) included.add(item as IssueField);
    else extra.add(item);
  }
  if (!includes) {
    for (const field of ISSUE_FIELDS) included.add(field);
    extra.add("*all");
  }
  for (const field of excluded) {
    included.delete(field as IssueField);
    extra.delete(field);
  }
  return { idsOnly: false, fields: included, extra };
}

/** The `expand` value Jira puts on an issue rendered with its fields. */
const ISSUE_EXPAND = "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations";

export class Shapes {
  /** The shapes of issue 35's fields. */
  readonly extra: FieldShapes;

  constructor(
    readonly origin: string,
    private readonly tracker: Tracker,
  ) {
    this.extra = new FieldShapes(origin, tracker, (accountId) => this.user(accountId));
  }

  private api(path: string): string {
    return `${this.origin}${API}${path}`;
  }

  issueUrl(issue: Issue): string {
    return this.api(`/issue/${issue.id}`);
  }

  timestamp(ms: number): string {
    return formatTimestamp(
      ms,
      this.tracker.options.timestampZone === "account" ? this.tracker.zone : undefined,
    );
  }

  issue(issue: Issue, selection: Selection): JsonObject {
    if (selection.idsOnly) return { id: issue.id };
    const fields: JsonObject = {};
    for (const name of ISSUE_FIELDS) {
      if (!selection.fields.has(name)) continue;
      const value = this.field(issue, name);
      // Jira leaves `parent` out of an issue that has none.
      if (value !== undefined) fields[name] = value;
    }
    const extra = selection.extra ?? new Set<string>();
    Object.assign(
      fields,
      this.extra.extraFields(issue, (id) => extra.has(id) || extra.has("*all")),
    );
    return { expand: ISSUE_EXPAND, id: issue.id, self: this.issueUrl(issue), key: issue.key, fields };
  }

  private field(issue: Issue, name: IssueField): unknown {
    switch (name) {
      case "summary":
        return issue.summary;
      case "description":
        return issue.description;
      case "status":
        return this.status(issue.status);
      case "priority":
        return issue.priority && this.priority(issue.priority);
      case "labels":
        return issue.labels;
      case "assignee":
        return issue.assignee === null ? null : this.user(issue.assignee);
      case "parent":
        return issue.parent ? this.linkedIssue(issue.parent) : undefined;
      case "issuetype":
        return this.issueType(issue.type);
      case "created":
        return this.timestamp(issue.created);
      case "updated":
        return this.timestamp(issue.updated);
      case "subtasks":
        return this.tracker.subtasksOf(issue).map((subtask) => this.linkedIssue(subtask));
      case "project":
        return this.projectBrief(issue.project);
      case "comment":
        return this.commentPage(issue, 0, this.tracker.options.commentPageSize);
    }
  }

  /** A `PageOfComments`: `max` of the issue's comments (oldest first, or newest first) from `startAt`. */
  commentPage(issue: Issue, startAt: number, max: number, newestFirst = false): JsonObject {
    const thread = newestFirst ? [...issue.comments].reverse() : issue.comments;
    const comments = thread.slice(startAt, startAt + max).map((comment) => this.comment(comment));
    return { comments, maxResults: max, total: thread.length, startAt };
  }

  /** A `Comment`. ASSUMPTION: `jsdPublic` true (no service desk), no `visibility` (svc sets none). */
  comment(comment: Comment): JsonObject {
    return {
      self: this.api(`/issue/${comment.issue.id}/comment/${comment.id}`),
      id: comment.id,
      author: this.user(comment.author),
      body: comment.body,
      updateAuthor: this.user(comment.updateAuthor),
      created: this.timestamp(comment.created),
      updated: this.timestamp(comment.updated),
      jsdPublic: true,
    };
  }

  /** A parent or subtask as Jira nests it: a few fields only. */
  private linkedIssue(issue: Issue): JsonObject {
    return {
      id: issue.id,
      key: issue.key,
      self: this.issueUrl(issue),
      fields: {
        summary: issue.summary,
        status: this.status(issue.status),
        priority: issue.priority && this.priority(issue.priority),
        issuetype: this.issueType(issue.type),
      },
    };
  }

  status(status: FakeTrackerStatus): JsonObject {
    const category = STATUS_CATEGORIES[status.category];
    return {
      self: this.api(`/status/${status.id}`),
      description: "",
      iconUrl: `${this.origin}/`,
      name: status.name,
      id: status.id,
      statusCategory: { self: this.api(`/statuscategory/${category.id}`), ...category },
    };
  }

  priority(priority: Priority): JsonObject {
    return {
      self: this.api(`/priority/${priority.id}`),
      iconUrl: `${this.origin}/images/icons/priorities/${priority.name.toLowerCase()}.svg`,
      name: priority.name,
      id: priority.id,
    };
  }

  priorityFull(priority: Priority): JsonObject {
    return {
      ...this.priority(priority),
      statusColor: priority.statusColor,
      description: priority.description,
    };
  }

  issueType(type: FakeTrackerIssueType): JsonObject {
    const looks = ISSUE_TYPE_LOOKS.get(type.name) ?? {
      description: `${type.name} work item.`,
      avatarId: 10300,
    };
    return {
      self: this.api(`/issuetype/${type.id}`),
      id: type.id,
      description: looks.description,
      iconUrl: `${this.origin}${API}/universal_avatar/view/type/issuetype/avatar/${looks.avatarId}?size=medium`,
      name: type.name,
      subtask: type.subtask,
      avatarId: looks.avatarId,
      hierarchyLevel: type.hierarchyLevel,
    };
  }

  private avatarUrls(kind: string, id: string): JsonObject {
    const sizes = ["48x48", "24x24", "16x16", "32x32"];
    return Object.fromEntries(
      sizes.map((size) => [size, `${this.origin}/avatars/${kind}/${encodeURIComponent(id)}?size=${size}`]),
    );
  }

  /** ASSUMPTION: every account shares the account's time zone; `emailAddress` only where the user has one. */
  user(accountId: string): JsonObject {
    const user = this.tracker.users.get(accountId);
    return {
      self: this.api(`/user?accountId=${encodeURIComponent(accountId)}`),
      accountId,
      ...(user?.emailAddress === undefined ? {} : { emailAddress: user.emailAddress }),
      avatarUrls: this.avatarUrls("user", accountId),
      displayName: user?.displayName ?? accountId,
      active: true,
      timeZone: this.tracker.zone,
      accountType: "atlassian",
    };
  }

  /** `groups` and `applicationRoles` list their items only when expanded, as Jira's `expand` does. */
  myself(expand: readonly string[]): JsonObject {
    const collection = (name: string, item: string) => ({
      size: 1,
      items: expand.includes(name)
        ? [{ name: item, self: this.api(`/${name === "groups" ? "group" : "applicationrole"}?name=${item}`) }]
        : [],
    });
    return {
      ...this.user(this.tracker.me.accountId),
      emailAddress: this.tracker.options.email,
      locale: "en_US",
      groups: collection("groups", "jira-software-users"),
      applicationRoles: collection("applicationRoles", "jira-software"),
      expand: "groups,applicationRoles",
    };
  }

  projectBrief(project: Project): JsonObject {
    return {
      self: this.api(`/project/${project.id}`),
      id: project.id,
      key: project.key,
      name: project.name,
      projectTypeKey: "software",
      simplified: false,
      avatarUrls: this.avatarUrls("project", project.id),
    };
  }

  project(project: Project): JsonObject {
    return {
      expand: "description,lead,issueTypes,url,projectKeys,permissions,insight",
      ...this.projectBrief(project),
      description: "",
      lead: this.user(this.tracker.me.accountId),
      components: [],
      issueTypes: project.issueTypes.map((type) => this.issueType(type)),
      assigneeType: "UNASSIGNED",
      versions: [],
      roles: {},
      style: "classic",
      isPrivate: false,
      properties: {},
    };
  }

  /** An `IssueTransition`. ASSUMPTION: `hasScreen` exactly when the transition requires fields. */
  transition(transition: FakeTrackerTransition, target: FakeTrackerStatus, withFields: boolean): JsonObject {
    const requires = Object.entries(transition.requires ?? {});
    const shape: JsonObject = {
      id: transition.id,
      name: transition.name,
      to: this.status(target),
      hasScreen: requires.length > 0,
      isGlobal: transition.from.includes("*"),
      isInitial: false,
      isAvailable: true,
      isConditional: false,
      isLooped: false,
    };
    if (withFields) {
      shape.fields = Object.fromEntries(
        requires.map(([name]) => [
          name,
          { required: true, schema: { type: "any", system: name }, name, key: name, operations: ["set"] },
        ]),
      );
    }
    return shape;
  }
}
