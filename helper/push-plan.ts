/**
 * The push planner (DESIGN.md §4 "Push"): from the files a push changed, relative to the server state the
 * user based them on, the REST writes to make. Pure: contents, base tokens and the create journal come in
 * as functions, so every rule here has a table-driven test.
 *
 * Rules:
 * - Only `<folder>/<name>.md` files are records; anything else is refused, naming the file.
 * - A new file without an id is a create; with the id of an existing record it is a duplicate (refused),
 *   unless that record's own file is deleted in the same push (a rename: an update, renamed back later).
 * - A changed file is an update carrying only the writable fields that differ from the base, plus the body
 *   if it differs. Server-controlled fields (`id`, `version`, timestamps) are never sent: an edit of them is
 *   ignored and reported.
 * - A deleted file is a delete.
 */
import type { BaseToken, RecordChanges } from "../backends/backend.js";
import { UserFacingError } from "../backends/errors.js";
import {
  type FieldValue,
  parseRecordFile,
  type RecordContent,
  type RecordFields,
  type RecordSchema,
} from "../backends/record.js";

export interface DiffEntry {
  /** git's status letter: A, M, D, T (type change). */
  readonly status: string;
  readonly path: string;
  readonly oldMode: string;
  readonly newMode: string;
  readonly oldOid: string;
  readonly newOid: string;
}

export type PlannedWrite =
  | {
      readonly kind: "create";
      readonly path: string;
      readonly oid: string;
      readonly changes: RecordChanges;
      /** Already created by an earlier, interrupted push of this same file (the create journal). */
      readonly createdKey: string | undefined;
    }
  | {
      readonly kind: "update";
      readonly key: string;
      readonly path: string;
      readonly base: BaseToken;
      readonly changes: RecordChanges;
      /** The record's writable fields and body as the user wants them (for replay and merge checks). */
      readonly desired: RecordContent;
      /** The record as the user's base had it. */
      readonly original: RecordContent;
    }
  | { readonly kind: "delete"; readonly key: string; readonly path: string; readonly base: BaseToken };

export interface PlanProblem {
  readonly path: string;
  readonly message: string;
}

export interface Plan {
  readonly writes: PlannedWrite[];
  readonly problems: PlanProblem[];
  /** Files whose server-controlled fields were edited; the edits are not sent. */
  readonly ignoredEdits: { readonly path: string; readonly fields: string[] }[];
}

export interface PlanInput {
  readonly schema: RecordSchema;
  readonly entries: readonly DiffEntry[];
  /** The bytes of a blob of the base or the pushed tree. */
  readonly read: (oid: string) => Buffer;
  /** The concurrency token of record `key` in the user's base, or undefined if the base has no such record. */
  readonly baseToken: (key: string) => BaseToken | undefined;
  /** The key an earlier push created from this file (path and content), if the create journal has one. */
  readonly journal: (path: string, oid: string) => string | undefined;
  /** The largest record file the backend accepts. */
  readonly maxFileBytes: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function keyOf(fields: RecordFields): string | undefined {
  const id = fields.id;
  return id === undefined || id === null ? undefined : String(id);
}

function sameValue(a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => item === b[i]);
  return a === b;
}

/** The user's body equals the base's, or differs only by a final newline an editor added or removed. */
export function sameBody(base: string, mine: string): boolean {
  return mine === base || mine === `${base}\n` || base === `${mine}\n`;
}

/** The writable fields and body of `mine` that differ from `base`; absent fields are unchanged (or cleared, for optional ones). */
export function changesBetween(
  schema: RecordSchema,
  base: RecordContent,
  mine: RecordContent,
): RecordChanges {
  const fields: Record<string, FieldValue> = {};
  for (const spec of schema.fields) {
    if (spec.serverControlled) continue;
    let value = mine.fields[spec.name];
    if (value === undefined) {
      if (!spec.omitWhenAbsent) continue;
      value = null;
    }
    const before = base.fields[spec.name] ?? (spec.omitWhenAbsent ? null : undefined);
    if (!sameValue(before, value)) fields[spec.name] = value;
  }
  return sameBody(base.body, mine.body) ? { fields } : { fields, body: mine.body };
}

function writable(schema: RecordSchema, content: RecordContent): RecordContent {
  const fields: Record<string, FieldValue> = {};
  for (const spec of schema.fields) {
    const value = content.fields[spec.name];
    if (!spec.serverControlled && value !== undefined) fields[spec.name] = value;
  }
  return { fields, body: content.body };
}

export function planPush(input: PlanInput): Plan {
  const { schema } = input;
  const problems: PlanProblem[] = [];
  const ignoredEdits: Plan["ignoredEdits"] = [];
  const writes: PlannedWrite[] = [];
  const recordFile = new RegExp(`^${schema.folder}/[^/]+\\.md$`);

  const parse = (path: string, oid: string): RecordContent | undefined => {
    const bytes = input.read(oid);
    if (bytes.length > input.maxFileBytes) {
      problems.push({
        path,
        message: `the file is ${bytes.length} bytes; this backend accepts records of at most ${input.maxFileBytes} bytes`,
      });
      return undefined;
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      problems.push({ path, message: "the file is not valid UTF-8; save it as UTF-8" });
      return undefined;
    }
    try {
      return parseRecordFile(schema, path, text);
    } catch (error) {
      if (!(error instanceof UserFacingError)) throw error;
      problems.push({ path, message: error.message.replace(`${path}: `, "") });
      return undefined;
    }
  };

  // Deleted record files by key: an added file carrying one of these ids is that record, renamed.
  const deletedKeys = new Map<string, DiffEntry>();
  for (const entry of input.entries) {
    if (entry.status === "D" && recordFile.test(entry.path)) {
      const base = parse(entry.path, entry.oldOid);
      const key = base && keyOf(base.fields);
      if (key) deletedKeys.set(key, entry);
    }
  }
  const renamed = new Set<string>();
  const addedIds = new Map<string, string>();

  const update = (key: string, path: string, base: RecordContent, mine: RecordContent) => {
    const token = input.baseToken(key);
    if (!token) {
      problems.push({ path, message: `record ${key} is not in the server state this push is based on` });
      return;
    }
    const edited = schema.fields
      .filter((spec) => spec.serverControlled && mine.fields[spec.name] !== undefined)
      .filter((spec) => !sameValue(mine.fields[spec.name], base.fields[spec.name]))
      .map((spec) => spec.name);
    if (edited.length > 0) ignoredEdits.push({ path, fields: edited });
    const changes = changesBetween(schema, base, mine);
    if (Object.keys(changes.fields).length === 0 && changes.body === undefined) return;
    writes.push({
      kind: "update",
      key,
      path,
      base: token,
      changes,
      desired: writable(schema, { fields: { ...base.fields, ...mine.fields }, body: mine.body }),
      original: base,
    });
  };

  const create = (entry: DiffEntry, mine: RecordContent) => {
    writes.push({
      kind: "create",
      path: entry.path,
      oid: entry.newOid,
      changes: { fields: writable(schema, mine).fields, body: mine.body },
      createdKey: input.journal(entry.path, entry.newOid),
    });
  };

  for (const entry of input.entries) {
    if (!recordFile.test(entry.path)) {
      if (entry.status === "D") {
        problems.push({
          path: entry.path,
          message: `deleting files outside ${schema.folder}/ is not something the server can record`,
        });
      } else {
        problems.push({
          path: entry.path,
          message: `only ${schema.folder}/<name>.md files are records; move the file into ${schema.folder}/ or remove it from the commit`,
        });
      }
      continue;
    }
    if (
      (entry.status !== "D" && entry.newMode !== "100644" && entry.newMode !== "100755") ||
      entry.status === "T"
    ) {
      problems.push({
        path: entry.path,
        message: "a record must be a regular file (not a link or a submodule)",
      });
      continue;
    }
    if (entry.status === "D") {
      const base = parse(entry.path, entry.oldOid);
      const key = base && keyOf(base.fields);
      if (!base) continue;
      if (!key) {
        const created = input.journal(entry.path, entry.oldOid);
        if (created) {
          const token = input.baseToken(created);
          if (token) writes.push({ kind: "delete", key: created, path: entry.path, base: token });
        }
        continue;
      }
      const token = input.baseToken(key);
      if (!token) {
        problems.push({
          path: entry.path,
          message: `record ${key} is not in the server state this push is based on`,
        });
        continue;
      }
      writes.push({ kind: "delete", key, path: entry.path, base: token });
      continue;
    }
    const mine = parse(entry.path, entry.newOid);
    if (!mine) continue;
    const mineKey = keyOf(mine.fields);
    if (entry.status === "A") {
      if (mineKey === undefined) {
        create(entry, mine);
        continue;
      }
      const other = addedIds.get(mineKey);
      if (other) {
        problems.push({
          path: entry.path,
          message: `two files have id ${mineKey}: ${other} and this one; keep one`,
        });
        continue;
      }
      addedIds.set(mineKey, entry.path);
      const was = deletedKeys.get(mineKey);
      if (was) {
        const base = parse(was.path, was.oldOid);
        if (!base) continue;
        renamed.add(mineKey);
        update(mineKey, entry.path, base, mine);
        continue;
      }
      problems.push({
        path: entry.path,
        message: input.baseToken(mineKey)
          ? `two files have id ${mineKey}; a new record must not carry an id (remove the \`id:\` line to create one)`
          : `id ${mineKey} is not a record on the server; remove the \`id:\` line to create a new record`,
      });
      continue;
    }
    // Modified.
    const base = parse(entry.path, entry.oldOid);
    if (!base) continue;
    const baseKey = keyOf(base.fields) ?? input.journal(entry.path, entry.oldOid);
    if (!baseKey) {
      // A file this user created in a push that never reached the server: still a create.
      create(entry, mine);
      continue;
    }
    update(baseKey, entry.path, base, mine);
  }
  // A rename is an update; drop the delete planned for the old file.
  const result = writes.filter((write) => !(write.kind === "delete" && renamed.has(write.key)));
  return { writes: result, problems, ignoredEdits };
}

/** A one-line summary of a plan's problems for git's `[remote rejected]` line. */
export function problemSummary(problems: readonly PlanProblem[]): string {
  const first = problems[0];
  if (!first) return "";
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
  // Cut by code points, not through excerpt(): its JSON quoting would show up as `\"` in git's output.
  const line = Array.from(first.message.split("\n")[0] ?? "");
  const short = line.length <= 118 ? line.join("") : `${line.slice(0, 117).join("")}…`;
  return `${first.path}: ${short}${more}`;
}
