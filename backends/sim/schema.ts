/**
 * The simulator's record shape (Document 1 "Issue", DESIGN.md §2 and §5): the five statuses, the field
 * order of its files and which fields the server owns.
 */
import { field, type RecordSchema } from "../record.js";

export const SIM_STATUSES = ["open", "in_progress", "in_review", "done", "wont_fix"] as const;
export type SimStatus = (typeof SIM_STATUSES)[number];

export const SIM_SCHEMA: RecordSchema = {
  kind: "sim",
  folder: "issues",
  fields: [
    field("id", "integer", { serverControlled: true, required: true }),
    // DESIGN.md §5: the simulator refuses longer titles, more or longer labels with 400 (server/sim/validate.ts).
    field("title", "string", { required: true, limit: { maxLength: 1000, nonBlank: true } }),
    field("status", "string", { allowed: SIM_STATUSES }),
    field("labels", "string-list", { limit: { maxItems: 100, maxItemLength: 200 } }),
    field("created_at", "timestamp", { serverControlled: true, required: true }),
    field("updated_at", "timestamp", { serverControlled: true, required: true }),
    field("version", "integer", { serverControlled: true, required: true }),
    field("assignee", "string", { nullable: true, omitWhenAbsent: true }),
  ],
  tokenFields: { version: "version", updatedAt: "updated_at" },
  fileName: (key) => simFileName(Number(key)),
};

/** `issues/0042.md`: the id zero-padded to four digits; wider ids are written in full, never truncated. */
export function simFileName(id: number): string {
  return `${SIM_SCHEMA.folder}/${String(id).padStart(4, "0")}.md`;
}

/** The issue as the simulator's REST surface carries it: `{frontmatter, body}`. */
export interface SimIssue {
  readonly frontmatter: {
    readonly id: number;
    readonly title: string;
    readonly status: SimStatus;
    readonly labels: readonly string[];
    readonly created_at: string;
    readonly updated_at: string;
    readonly version: number;
    readonly assignee?: string | null;
  };
  readonly body: string;
}

/**
 * The response header in which the simulator's issue listings say how many issues the project holds: an
 * extension of Document 1 (a delta listing cannot show a deletion; the count can, issue 31).
 */
export const LIVE_COUNT_HEADER = "x-svc-live-count";

/**
 * The response header in which the simulator's issue listings say where the project's comments stand:
 * `<count>.<greatest id>.<sum of versions>` (an extension of Document 1, issue 34). Any change of a comment
 * changes it (a create raises the greatest id, ids are never reused; a delete lowers the count unless a create
 * came with it; an edit raises the sum), so a fetch whose issue listing brings the same state as the last
 * comment listing needs no comment listing: a no-op fetch stays one request.
 */
export const COMMENTS_STATE_HEADER = "x-svc-comments-state";
