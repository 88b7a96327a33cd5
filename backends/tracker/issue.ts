/**
 * One issue object of the tracker's REST API v3 (`GET /rest/api/3/issue/{key}`, the `issues` of
 * `POST /rest/api/3/search/jql`) as a record: validated member by member (a hostile server's key never
 * becomes a path outside `issues/`), the description converted from ADF (adf.ts), the timestamps written
 * in one canonical form.
 */
import { isObject } from "../../core/checks.js";
import { excerpt } from "../../core/errors.js";
import { serverClockFloor } from "../../core/http.js";
import type { BackendRecord } from "../backend.js";
import { type FieldValue, stringList } from "../record.js";
import { adfToMarkdown } from "./adf.js";
import { EXTRA_SYSTEM_FIELDS, type FieldCatalog, readExtraFields } from "./field-catalog.js";
import { ISSUE_KEY, trackerFileName } from "./schema.js";

/** The fields a record needs, asked for by name (a listing sends nothing more). */
export const RECORD_FIELDS = [
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
  ...EXTRA_SYSTEM_FIELDS,
] as const;

/** An issue as svc needs it. */
export interface TrackerIssue {
  readonly id: string;
  readonly key: string;
  /** The description as the server sent it (an ADF document), or null. */
  readonly description: unknown;
  /** Keys of its subtasks, when the answer carried the `subtasks` field. */
  readonly subtasks: readonly string[];
  readonly record: BackendRecord;
}

/**
 * The tracker's timestamp (`2026-11-23T10:30:00.000+0000`, in any offset) as RFC 3339 UTC with
 * milliseconds (`2026-11-23T10:30:00.000Z`), or undefined when it is not one.
 */
export function canonicalTime(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const match =
    /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):?(\d{2}))$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction = "", zone, sign, oh, om] = match;
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(local);
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  )
    return undefined;
  const offset = zone === "Z" ? 0 : (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
  if (Number(oh) > 23 || Number(om) > 59) return undefined;
  const ms = local - offset + Math.floor(Number(`0.${fraction || "0"}`) * 1000);
  return new Date(ms).toISOString();
}

function nameOf(value: unknown): string | null | undefined {
  if (value === null || value === undefined) return null;
  return isObject(value) && typeof value.name === "string" ? value.name : undefined;
}

/**
 * Validates one issue object; returns the reason it is malformed, or the issue. Its fields beyond the fixed
 * ones are read by `catalog` (the project's field list).
 */
export function toTrackerIssue(value: unknown, catalog: FieldCatalog): TrackerIssue | string {
  if (!isObject(value)) return "an issue must be an object";
  const { id, key } = value;
  if (typeof key !== "string" || !ISSUE_KEY.test(key)) return `bad issue key ${excerpt(String(key), 40)}`;
  if (typeof id !== "string" || !/^[0-9]{1,20}$/.test(id)) return `${key}: bad id ${excerpt(String(id), 30)}`;
  const f = value.fields;
  if (!isObject(f)) return `${key}: fields is not an object`;
  if (typeof f.summary !== "string") return `${key}: summary is not a string`;
  const status = nameOf(f.status);
  const type = nameOf(f.issuetype);
  const priority = nameOf(f.priority);
  if (status === undefined) return `${key}: status has no name`;
  if (type === undefined) return `${key}: issuetype has no name`;
  if (priority === undefined) return `${key}: priority has no name`;
  const labels = f.labels ?? [];
  if (!Array.isArray(labels) || !labels.every((label) => typeof label === "string"))
    return `${key}: labels is not a list of strings`;
  const assignee = f.assignee ?? null;
  if (assignee !== null && !(isObject(assignee) && typeof assignee.accountId === "string"))
    return `${key}: assignee has no accountId`;
  const parent = f.parent ?? null;
  if (parent !== null && !(isObject(parent) && typeof parent.key === "string" && ISSUE_KEY.test(parent.key)))
    return `${key}: parent has no key`;
  const created = canonicalTime(f.created);
  const updated = canonicalTime(f.updated);
  if (created === undefined) return `${key}: created is not a timestamp`;
  if (updated === undefined) return `${key}: updated is not a timestamp`;
  const subtasks = Array.isArray(f.subtasks)
    ? f.subtasks.flatMap((task) => (isObject(task) && typeof task.key === "string" ? [task.key] : []))
    : [];
  const extra = readExtraFields(key, f, catalog);
  if (typeof extra === "string") return extra;
  const fields: Record<string, FieldValue> = {
    id,
    key,
    type,
    title: f.summary,
    status,
    priority,
    labels: labels as string[],
    assignee: assignee === null ? null : (assignee.accountId as string),
    parent: parent === null ? null : (parent.key as string),
    created_at: created,
    updated_at: updated,
    ...extra,
  };
  const description = f.description ?? null;
  if (description !== null && !(isObject(description) && description.type === "doc"))
    return `${key}: description is not an ADF document`;
  return {
    id,
    key,
    description,
    subtasks,
    record: {
      key,
      path: trackerFileName(key),
      version: null,
      updatedAt: updated,
      content: { fields, body: adfToMarkdown(description) },
      raw: fields,
    },
  };
}

/** Whether `b` is the name `a`, in any case (Jira's status and type names). */
export function sameName(a: string, b: FieldValue | undefined): boolean {
  return typeof b === "string" && a.toLowerCase() === b.toLowerCase();
}

/** The labels edit as operations on the issue's labels: the user's additions and removals only. */
export function labelUpdate(current: TrackerIssue, wanted: FieldValue | undefined): Record<string, string>[] {
  if (wanted === undefined) return [];
  const want = stringList(wanted);
  const have = stringList(current.record.content.fields.labels);
  return [
    ...have.filter((label) => !want.includes(label)).map((label) => ({ remove: label })),
    ...want.filter((label) => !have.includes(label)).map((label) => ({ add: label })),
  ];
}

/** The server's `Date` header as an RFC 3339 UTC time, a second early (it has second precision). */
export function serverTime(date: string | undefined): string | undefined {
  const ms = serverClockFloor(date);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}
