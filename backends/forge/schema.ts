/**
 * The forge's record shape (DESIGN.md §2 and §6): GitHub issues as `issues/0042.md` (the issue number,
 * zero-padded to four digits like the simulator's ids; wider numbers are written in full), frontmatter
 * `id, title, status, labels, assignees, milestone, type, parent, created_at, updated_at`. The forge has no
 * version number: its `updated_at` is the concurrency token.
 *
 * `milestone` (the milestone's title), `type` (the issue type's name) and `parent` (the parent issue's number,
 * from `parent_issue_url`) are each absent when the issue has none: removing the line clears it (issue 35).
 * A parent in another repository is shown as `owner/repo#N`, read-only (planning.ts refuses a change of it).
 *
 * Status is the sim's five values mapped onto the forge's state, state reason and two labels:
 *
 * | status        | state  | state_reason  | label                |
 * |---------------|--------|---------------|----------------------|
 * | `open`        | open   | (any)         | neither label below  |
 * | `in_progress` | open   | (any)         | `status/in-progress` |
 * | `in_review`   | open   | (any)         | `status/in-review`   |
 * | `done`        | closed | `completed` (or none: a close without a reason means completed) |
 * | `wont_fix`    | closed | `not_planned` |                      |
 *
 * Those two labels are the status, never shown in `labels`, and refused there on a write. Any other label,
 * `status/blocked` too, is a label like any other: shown, kept, added and removed as the file says.
 */
import { field, type RecordSchema } from "../record.js";

export const FORGE_STATUSES = ["open", "in_progress", "in_review", "done", "wont_fix"] as const;
export type ForgeStatus = (typeof FORGE_STATUSES)[number];

/** Labels of the forge that carry a status of an open issue, by that status. */
export const STATUS_LABELS = {
  in_progress: "status/in-progress",
  in_review: "status/in-review",
} as const satisfies Partial<Record<ForgeStatus, string>>;

export const FORGE_SCHEMA: RecordSchema = {
  kind: "forge",
  folder: "issues",
  fields: [
    field("id", "integer", { serverControlled: true, required: true }),
    // The forge's own validation: "title is too long (maximum is 256 characters)".
    field("title", "string", { required: true, limit: { maxLength: 256, nonBlank: true } }),
    field("status", "string", { allowed: FORGE_STATUSES }),
    // Label names are at most 50 characters on the forge; an issue carries at most 100 labels.
    field("labels", "string-list", {
      limit: {
        maxItems: 100,
        maxItemLength: 50,
        reserved: (entry) => {
          const status = statusOfLabel(entry);
          return (
            status &&
            `on the forge that label is the status ${status}; remove it from labels and set status: ${status} instead (the statuses: ${FORGE_STATUSES.join(", ")})`
          );
        },
      },
    }),
    // An issue has at most 10 assignees.
    field("assignees", "string-list", { limit: { maxItems: 10, maxItemLength: 39 } }),
    field("milestone", "string", { omitWhenAbsent: true, limit: { nonBlank: true } }),
    field("type", "string", { omitWhenAbsent: true, limit: { nonBlank: true } }),
    // A number of this repository, or another repository's issue as `owner/repo#N` (shown, never written).
    field("parent", "issue-ref", { omitWhenAbsent: true }),
    field("created_at", "timestamp", { serverControlled: true, required: true }),
    field("updated_at", "timestamp", { serverControlled: true, required: true }),
  ],
  tokenFields: { version: undefined, updatedAt: "updated_at" },
  // 2: milestone, type and parent (issue 35); 3: a parent in another repository shown as `owner/repo#N`.
  rendering: "3",
  fileName: (key) => forgeFileName(Number(key)),
  // A new issue is open; a closed status is set by a second request, and so is the parent (the sub-issue link).
  setAfterCreate: ["status", "parent"],
  // The REST API cannot delete an issue: a delete closes it as not planned (backend.ts `remove`).
  deleteDoes: "closed",
  // "body is too long (maximum is 65536 characters)".
  bodyMaxLength: 65_536,
};

/** `issues/0042.md`. */
export function forgeFileName(number: number): string {
  return `${FORGE_SCHEMA.folder}/${String(number).padStart(4, "0")}.md`;
}

/** The status of an issue from its state, state reason and label names. */
export function statusOf(state: string, stateReason: string | null, labels: readonly string[]): ForgeStatus {
  if (state === "closed") return stateReason === "not_planned" ? "wont_fix" : "done";
  // Both labels on one issue: the later stage wins.
  if (labels.includes(STATUS_LABELS.in_review)) return "in_review";
  if (labels.includes(STATUS_LABELS.in_progress)) return "in_progress";
  return "open";
}

/** What the forge must hold for `status`: state, state reason (closed only) and the one status label. */
export function forgeStateOf(status: ForgeStatus): {
  state: "open" | "closed";
  stateReason: "completed" | "not_planned" | null;
  label: string | undefined;
} {
  switch (status) {
    case "done":
      return { state: "closed", stateReason: "completed", label: undefined };
    case "wont_fix":
      return { state: "closed", stateReason: "not_planned", label: undefined };
    case "in_progress":
    case "in_review":
      return { state: "open", stateReason: null, label: STATUS_LABELS[status] };
    default:
      return { state: "open", stateReason: null, label: undefined };
  }
}

/** The status a label stands for (`status/in-progress`: in_progress), or undefined for a plain label. */
export function statusOfLabel(name: string): ForgeStatus | undefined {
  for (const [status, label] of Object.entries(STATUS_LABELS))
    if (label === name) return status as ForgeStatus;
  return undefined;
}

/** Whether the label is one of the two that are a status (any other `status/…` label is a plain label). */
export function isStatusLabel(name: string): boolean {
  return statusOfLabel(name) !== undefined;
}
