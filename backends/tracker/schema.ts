/**
 * The tracker's record shape (issue 15; DESIGN.md §2): Jira issues as `issues/<KEY>-<n>.md`, named by the
 * issue key; frontmatter `id, key, type, title, status, priority, labels, assignee, parent, created_at,
 * updated_at`. `status` is the workflow status name as the server spells it (`In Progress`), `type` the
 * issue type's name, `priority` its name, `assignee` an account id (what writes accept), `parent` the parent's
 * key. Then (issue 35) `components`, `fix_versions` (names), `due` (YYYY-MM-DD), `reporter` (an account id) and
 * `resolution` (its name), each absent when the issue has none; the custom fields follow, named and typed by
 * the project's field list (field-catalog.ts builds the whole schema: `TrackerBackend.schema`). There is no version number: `updated_at` is the concurrency token. The body is the description
 * converted from ADF (adf.ts), lossless.
 */
import { formatCount } from "../../core/count.js";
import { UserFacingError } from "../../core/errors.js";
import { field, type RecordSchema } from "../record.js";
import { canonicalMarkdown, markdownToAdf } from "./adf.js";

/** An issue key: the project key, `-`, the issue's number. */
export const ISSUE_KEY = /^[A-Z][A-Z0-9_]{1,254}-[1-9][0-9]{0,17}$/;

/**
 * The description's limit as the tracker states it to users ("the field can't contain more than 32,767
 * characters"), counted over the text of the ADF document.
 */
export const DESCRIPTION_MAX_CHARACTERS = 32_767;

export const TRACKER_SCHEMA: RecordSchema = {
  kind: "tracker",
  folder: "issues",
  fields: [
    field("id", "numeric-id", { serverControlled: true, required: true }),
    field("key", "string", { serverControlled: true, required: true }),
    field("type", "string", { nullable: true }),
    // "Summary must be less than 255 characters", and it may not be empty.
    field("title", "string", { required: true, limit: { maxLength: 255, nonBlank: true } }),
    field("status", "string", { nullable: true }),
    field("priority", "string", { nullable: true }),
    // A label is at most 255 characters (and holds no spaces: the tracker's own message says so).
    field("labels", "string-list", { limit: { maxItemLength: 255 } }),
    field("assignee", "string", { nullable: true }),
    field("parent", "string", { nullable: true }),
    field("created_at", "timestamp", { serverControlled: true, required: true }),
    field("updated_at", "timestamp", { serverControlled: true, required: true }),
    // Issue 35: absent when the issue has none. The project's custom fields follow (field-catalog.ts).
    field("components", "string-list", { nullable: true, omitWhenAbsent: true }),
    field("fix_versions", "string-list", { nullable: true, omitWhenAbsent: true }),
    field("due", "date", { nullable: true, omitWhenAbsent: true }),
    field("reporter", "string", { serverControlled: true, omitWhenAbsent: true }),
    field("resolution", "string", { serverControlled: true, omitWhenAbsent: true }),
  ],
  tokenFields: { version: undefined, updatedAt: "updated_at" },
  // Records are known by their issue key, as their files are named.
  keyField: "key",
  fileName: (key) => trackerFileName(key),
  // A new issue starts in the workflow's initial status; another status is a transition after the create.
  setAfterCreate: ["status"],
  // A create without them gets the project's default issue type, the default priority, and maybe the
  // project's default assignee.
  serverDefaults: ["type", "priority", "assignee"],
  bodyProblem: descriptionProblem,
  canonicalBody: canonicalMarkdown,
};

/** `issues/TEST-42.md`. */
export function trackerFileName(key: string): string {
  return `issues/${key}.md`;
}

/**
 * Why the tracker cannot take `body` as a description (a malformed ```adf fence, Markdown ADF cannot hold, too
 * much text), or undefined when it can.
 */
function descriptionProblem(body: string): string | undefined {
  let doc: ReturnType<typeof markdownToAdf>;
  try {
    doc = markdownToAdf(body);
  } catch (error) {
    if (!(error instanceof UserFacingError)) throw error;
    // The message names the line of the description, which is the body: say where its count starts.
    return typeof error.data.line === "number" && error.data.line > 0
      ? `${error.message} (the description's lines are counted from the one after the frontmatter's closing ---)`
      : error.message;
  }
  const characters = textLength(doc);
  return characters > DESCRIPTION_MAX_CHARACTERS
    ? `the description holds ${formatCount(characters)} characters of text; the tracker accepts at most ${formatCount(DESCRIPTION_MAX_CHARACTERS)}`
    : undefined;
}

/** The characters of text an ADF document holds: what the tracker's 32,767 limits count. */
export function textLength(node: unknown): number {
  if (node === null || typeof node !== "object") return 0;
  const { text, content } = node as { text?: unknown; content?: unknown };
  let total = typeof text === "string" ? text.length : 0;
  if (Array.isArray(content)) for (const child of content) total += textLength(child);
  return total;
}
