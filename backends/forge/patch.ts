/**
 * The forge's PATCH body (pure): only what a push changed, on the issue as the server has it now
 * (backend.ts sends it).
 */
import type { RecordChanges } from "../backend.js";
import { stringList } from "../record.js";
import type { ForgeIssue } from "./issue.js";
import { type ForgeStatus, forgeStateOf, isStatusLabel, STATUS_LABELS } from "./schema.js";
import type { UpdateIssueBody } from "./wire.js";

/**
 * The PATCH body for `changes` on the issue as it is now: only what differs. Labels are a delta on the
 * current labels (the user's additions and removals, the status label swapped), so labels someone else
 * added are kept; the status sets state and state reason only when they change. A milestone is sent as its
 * number (`milestoneNumber` of its title; null removes it), a type as its name (null removes it). The parent
 * is no member of the PATCH: it is the sub-issue calls' (backend.ts).
 */
export function patchFor(
  current: ForgeIssue,
  changes: RecordChanges,
  milestoneNumber: (title: string) => number = noMilestones,
): UpdateIssueBody {
  const patch: UpdateIssueBody = {};
  const fields = changes.fields;
  const before = current.record.content.fields;
  if (typeof fields.title === "string" && fields.title !== before.title) patch.title = fields.title;
  if (fields.milestone !== undefined && fields.milestone !== (before.milestone ?? null))
    patch.milestone = typeof fields.milestone === "string" ? milestoneNumber(fields.milestone) : null;
  if (fields.type !== undefined && fields.type !== (before.type ?? null))
    patch.type = typeof fields.type === "string" ? fields.type : null;
  if (changes.body !== undefined && changes.body !== current.record.content.body) patch.body = changes.body;
  if (fields.assignees !== undefined && !sameList(stringList(fields.assignees), stringList(before.assignees)))
    patch.assignees = stringList(fields.assignees);
  let labels = [...current.labels];
  if (fields.labels !== undefined) {
    const wanted = stringList(fields.labels);
    const had = stringList(before.labels);
    labels = labels.filter((name) => isStatusLabel(name) || !had.includes(name) || wanted.includes(name));
    for (const name of wanted) if (!labels.includes(name)) labels.push(name);
  }
  if (typeof fields.status === "string" && fields.status !== before.status) {
    const target = forgeStateOf(fields.status as ForgeStatus);
    // The two status labels svc knows give way to the target's; other `status/*` labels are not svc's.
    const known: readonly string[] = Object.values(STATUS_LABELS);
    labels = labels.filter((name) => !known.includes(name));
    if (target.label) labels.push(target.label);
    if (target.state !== current.state) patch.state = target.state;
    if (target.state === "closed" && target.stateReason !== current.stateReason) {
      // A reason is sent with the state it belongs to, also when only the reason changes.
      patch.state = target.state;
      patch.state_reason = target.stateReason;
    }
  }
  if (!sameList(labels, current.labels)) patch.labels = labels;
  return patch;
}

function noMilestones(title: string): number {
  throw new Error(`no milestone list was read for the milestone ${title}`);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}
