/**
 * One issue object of the forge's REST API (`GET /repos/{owner}/{repo}/issues[/{number}]`) as a record:
 * validated member by member, pull requests told apart (they carry a `pull_request` member), the status
 * read from state, state reason and the two status labels (schema.ts), the body byte for byte (`null` → empty),
 * the milestone's title, the type's name and the parent from `parent_issue_url` (issue 35; a parent in another
 * repository is kept aside, not shown): all from the object itself, so a listing needs no request per issue.
 */
import { isObject, RFC3339 } from "../../core/checks.js";
import { excerpt } from "../../core/errors.js";
import type { BackendRecord } from "../backend.js";
import { forgeFileName, isStatusLabel, statusOf } from "./schema.js";
import type { WireIssue } from "./wire.js";

/** An issue as svc needs it, with every label (the status ones too) and its raw state. */
export interface ForgeIssue {
  readonly number: number;
  /** The issue's database id (`id`), which the sub-issue calls name it by. */
  readonly id: number;
  /** The number of its milestone, or null. */
  readonly milestone: number | null;
  readonly state: "open" | "closed";
  readonly stateReason: WireIssue["state_reason"];
  /** Every label name, in the server's order, the status labels included. */
  readonly labels: readonly string[];
  readonly record: BackendRecord;
}

/** A pull request: listed by the issues endpoints, but not a record. */
export const PULL_REQUEST = Symbol("pull request");

/**
 * The names of a list the vendor describes as names or objects with the name in `member`. An object without
 * one (the description makes it optional) is refused: a label svc could not name would be dropped by the
 * next PATCH, which sends the whole list.
 */
function names(list: unknown, member: string, what: string): string[] | string {
  if (!Array.isArray(list)) return `${what} is not a list`;
  const out: string[] = [];
  for (const item of list) {
    const name = typeof item === "string" ? item : isObject(item) ? item[member] : undefined;
    if (typeof name !== "string") return `${what} holds an entry without a ${member}`;
    out.push(name);
  }
  return out;
}

/**
 * The members of the vendor's "issue" svc reads, checked; labels and assignees as their names, the state as
 * one of the two the description's text names.
 */
type ReadIssue = Pick<
  WireIssue,
  "number" | "title" | "body" | "state_reason" | "created_at" | "updated_at"
> & {
  readonly state: "open" | "closed";
  readonly labels: string[];
  readonly assignees: string[];
} & Planning;

/** What plans the issue (issue 35): milestone, type and parent, each undefined when it has none. */
interface Planning {
  readonly id: number;
  readonly milestone: { readonly number: number; readonly title: string } | undefined;
  readonly type: string | undefined;
  /** The parent's number in `home`, else `owner/repo#N`. */
  readonly parent: number | string | undefined;
}

/** The issue's place in a plan: its database id, milestone, type and parent, or the reason it is malformed. */
function readPlanning(value: Record<string, unknown>, at: string, home: string): Planning | string {
  const id = value.id;
  if (typeof id !== "number" || !Number.isSafeInteger(id)) return `${at}: id is not a whole number`;
  // Nullable, and optional where the repository has none (issue types): absent is none.
  const milestone = value.milestone ?? null;
  if (
    milestone !== null &&
    !(isObject(milestone) && typeof milestone.number === "number" && typeof milestone.title === "string")
  )
    return `${at}: milestone has no number and title`;
  const type = value.type ?? null;
  if (type !== null && !(isObject(type) && typeof type.name === "string")) return `${at}: type has no name`;
  const parent = parentOf(value.parent_issue_url ?? null, home);
  if (parent === null) return `${at}: parent_issue_url is no issue's API URL`;
  return {
    id,
    milestone:
      milestone === null
        ? undefined
        : { number: milestone.number as number, title: milestone.title as string },
    type: type === null ? undefined : (type.name as string),
    parent,
  };
}

/**
 * The parent an issue's `parent_issue_url` names (`…/repos/{owner}/{repo}/issues/{number}`): its number when
 * it is in `home` (`owner/repo`, compared as GitHub compares names: without case), else `owner/repo#N`;
 * undefined for none, null for a URL that names no issue.
 */
export function parentOf(url: unknown, home: string): number | string | undefined | null {
  if (url === null) return undefined;
  if (typeof url !== "string") return null;
  const found = /\/repos\/([^/?#]+)\/([^/?#]+)\/issues\/([1-9][0-9]*)$/.exec(url);
  if (!found) return null;
  const number = Number(found[3]);
  if (!Number.isSafeInteger(number)) return null;
  const repo = `${decodeURIComponent(found[1] as string)}/${decodeURIComponent(found[2] as string)}`;
  return repo.toLowerCase() === home.toLowerCase() ? number : `${repo}#${number}`;
}

/** The reason `value` is not the vendor's "issue", or its members svc reads. */
function readIssue(value: Record<string, unknown>, number: number, home: string): ReadIssue | string {
  const at = `issue ${number}`;
  if (typeof value.title !== "string") return `${at}: title is not a string`;
  if (value.body !== null && value.body !== undefined && typeof value.body !== "string")
    return `${at}: body is not a string`;
  if (value.state !== "open" && value.state !== "closed") return `${at}: state is neither open nor closed`;
  const reason = value.state_reason ?? null;
  // Any text is taken: a reason the description adds later is still a closed issue's reason.
  if (reason !== null && typeof reason !== "string") return `${at}: state_reason is not a string`;
  const labels = names(value.labels, "name", `${at}: labels`);
  if (typeof labels === "string") return labels;
  // Optional in the description: none is no assignee.
  const assignees = names(value.assignees ?? [], "login", `${at}: assignees`);
  if (typeof assignees === "string") return assignees;
  for (const member of ["created_at", "updated_at"] as const) {
    const time = value[member];
    if (typeof time !== "string" || !RFC3339.test(time)) return `${at}: ${member} is not a timestamp`;
  }
  const planning = readPlanning(value, at, home);
  if (typeof planning === "string") return planning;
  return {
    ...planning,
    number,
    title: value.title,
    body: value.body as WireIssue["body"],
    state: value.state,
    state_reason: reason as WireIssue["state_reason"],
    labels,
    assignees,
    created_at: value.created_at as string,
    updated_at: value.updated_at as string,
  };
}

/**
 * Validates one issue object of repository `home` (`owner/repo`); returns the reason it is malformed,
 * `PULL_REQUEST`, or the issue.
 */
export function toForgeIssue(value: unknown, home: string): ForgeIssue | typeof PULL_REQUEST | string {
  if (!isObject(value)) return "an issue must be an object";
  const number = value.number;
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 1)
    return `bad issue number ${excerpt(String(number), 30)}`;
  if (value.pull_request !== undefined && value.pull_request !== null) return PULL_REQUEST;
  const issue = readIssue(value, number, home);
  if (typeof issue === "string") return issue;
  const state = issue.state;
  // Optional and nullable in the description: absent is no reason.
  const stateReason = issue.state_reason ?? null;
  const key = String(number);
  const fields = {
    id: number,
    title: issue.title,
    status: statusOf(state, stateReason, issue.labels),
    labels: issue.labels.filter((name) => !isStatusLabel(name)),
    assignees: issue.assignees,
    ...(issue.milestone === undefined ? {} : { milestone: issue.milestone.title }),
    ...(issue.type === undefined ? {} : { type: issue.type }),
    ...(issue.parent === undefined ? {} : { parent: issue.parent }),
    created_at: issue.created_at,
    updated_at: issue.updated_at,
  };
  return {
    number,
    id: issue.id,
    milestone: issue.milestone?.number ?? null,
    state,
    stateReason,
    labels: issue.labels,
    record: {
      key,
      path: forgeFileName(number),
      version: null,
      updatedAt: issue.updated_at,
      // The description allows no body (absent or null): an empty file body.
      content: { fields, body: issue.body ?? "" },
      raw: fields,
    },
  };
}
