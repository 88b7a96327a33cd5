/**
 * The project's history as this machine's cache saw it (`svc log`, `svc init --at`): each move of the
 * cache's `main` is a row of `tip_history` (when, and why: a sync that found changes, a push, …), and what
 * changed between two consecutive states is the difference of their trees. It is what svc observed, not the
 * server's own audit trail: two server edits between two syncs are one change here, and a record created
 * and deleted between them is not seen at all.
 */
import { COMMENTS_FOLDER, commentSchema, isCommentPath } from "../backends/comment.js";
import { parseRecordFile, type RecordSchema } from "../backends/record.js";
import { jsonEqual } from "../core/checks.js";
import { identityOf, parseCommit, parseCommitObject } from "../git/objects.js";
import { parseDiffTree, parseLsTree, readObjects, runGit, type TreeChange } from "../git/plumbing.js";
import type { ProjectCache } from "./cache.js";
import type { TipOp, TipRow } from "./db.js";

export interface RecordChange {
  readonly path: string;
  readonly change: "created" | "changed" | "deleted";
  /** Frontmatter fields whose value changed (not the version and update time, which change every time). */
  readonly fields: readonly string[];
  readonly bodyChanged: boolean;
  /** The new version's update time, as the server wrote it; undefined for a deletion. */
  readonly updatedAt: string | undefined;
  /** Who made the new version, where the backend says. */
  readonly changedBy: string | undefined;
  /** False when a version's contents are not in the cache (a rebuilt cache), so fields are unknown. */
  readonly detailed: boolean;
}

export interface HistoryEntry {
  readonly commit: string;
  readonly op: TipOp;
  /** When this machine's cache reached this state (ms since 1970). */
  readonly seenMs: number;
  /** For a push made from this machine: the pushed commit's author, `Name <email>`. */
  readonly pushedBy: string | undefined;
  /** The first state noted: its record count. */
  readonly records: number | undefined;
  /**
   * The first state of a rebuilt cache: the commit of the working tree's history it continues (its parent,
   * the user's `origin/main` when the cache was rebuilt), which its changes are listed against.
   */
  readonly continues: string | undefined;
  readonly changes: readonly RecordChange[];
}

export interface HistoryOptions {
  /** Only changes made (on the server, else seen here) at or after this time. */
  readonly sinceMs?: number;
  /** Only these files (paths in the working tree, e.g. `issues/0001.md`). */
  readonly paths?: readonly string[];
}

const ZERO_OID = "0".repeat(40);

/** The row of the state the cache held at `atMs`: the last move of `main` at or before it. */
export function stateAt(tips: readonly TipRow[], atMs: number): TipRow | undefined {
  let found: TipRow | undefined;
  for (const tip of tips) if (tip.at_ms <= atMs) found = tip;
  return found;
}

/** Every noted state with what changed since the one before, newest first, filtered by `options`. */
export async function readHistory(
  cache: ProjectCache,
  schema: RecordSchema,
  options: HistoryOptions = {},
): Promise<HistoryEntry[]> {
  const tips = cache.db.tips().filter((tip, i, all) => i === 0 || tip.commit_oid !== all[i - 1]?.commit_oid);
  if (tips.length === 0) return [];
  const continued = await continuedCommit(cache, tips[0] as TipRow);
  const diffs = await diffConsecutive(cache, schema, tips, continued, options.paths);
  const changedOids = [...diffs.values()].flatMap((changes) =>
    changes.flatMap((change) => [change.oldOid, change.oid].filter((oid) => oid !== ZERO_OID)),
  );
  const contents = await cache.blobContents(new Set(changedOids));
  const changedBy = cache.db.changedBy([...new Set(changedOids)]);
  const authors = await pushAuthors(cache, tips);
  const first = tips[0];
  const entries: HistoryEntry[] = [];
  for (const tip of tips) {
    const raw = diffs.get(tip.commit_oid) ?? [];
    const changes = raw
      .map((change) => describeChange(schema, change, contents, changedBy))
      .filter((change) => keep(change, tip, options.sinceMs));
    const isFirst = tip === first;
    if (!isFirst && changes.length === 0) continue;
    if (isFirst && options.sinceMs !== undefined && tip.at_ms < options.sinceMs && changes.length === 0)
      continue;
    entries.push({
      commit: tip.commit_oid,
      op: tip.op,
      seenMs: tip.at_ms,
      pushedBy: tip.pushed_commit ? authors.get(tip.pushed_commit) : undefined,
      records: isFirst ? await recordCount(cache, schema, tip.commit_oid) : undefined,
      continues: isFirst ? continued : undefined,
      changes,
    });
  }
  return entries.reverse();
}

/** Whether `change` is at or after `sinceMs`: by its time on the server, else when this machine saw it. */
function keep(change: RecordChange, tip: TipRow, sinceMs: number | undefined): boolean {
  if (sinceMs === undefined) return true;
  const server = change.updatedAt === undefined ? Number.NaN : Date.parse(change.updatedAt);
  return (Number.isNaN(server) ? tip.at_ms : server) >= sinceMs;
}

/**
 * The commit the first state `first` continues: its parent, when the cache holds it. A rebuilt cache's first
 * listing is written on top of the user's `origin/main`, whose commits were copied in (cache/open.ts); a new
 * cache's first state has no parent.
 */
async function continuedCommit(cache: ProjectCache, first: TipRow): Promise<string | undefined> {
  const body = (await readObjects(cache.repo, [first.commit_oid])).get(first.commit_oid);
  let parent: string | undefined;
  try {
    parent = body === undefined ? undefined : parseCommit(body).parents[0];
  } catch {
    parent = undefined;
  }
  return parent && cache.hasObject(parent) ? parent : undefined;
}

/**
 * commit → the record files that differ between it and the state noted before it, from one
 * `git diff-tree --stdin` over every consecutive pair; the first state against the commit it `continued`,
 * if any (a new cache's first state has nothing to compare with).
 */
async function diffConsecutive(
  cache: ProjectCache,
  schema: RecordSchema,
  tips: readonly TipRow[],
  continued: string | undefined,
  paths: readonly string[] | undefined,
): Promise<Map<string, TreeChange[]>> {
  const first = tips[0];
  const pairs: string[] = continued && first ? [`${first.commit_oid} ${continued}\n`] : [];
  for (let i = 1; i < tips.length; i++) {
    const [current, previous] = [tips[i], tips[i - 1]];
    // A state whose commit is gone (an old cache's repository lost objects) is skipped, not fatal.
    if (current && previous && cache.hasObject(current.commit_oid) && cache.hasObject(previous.commit_oid))
      pairs.push(`${current.commit_oid} ${previous.commit_oid}\n`);
  }
  if (pairs.length === 0) return new Map();
  const pathspecs = paths && paths.length > 0 ? paths : [schema.folder, COMMENTS_FOLDER];
  const { stdout } = await runGit(
    cache.repo,
    [
      "diff-tree",
      "--stdin",
      "-r",
      "-z",
      "--raw",
      "--no-renames",
      "--",
      ...pathspecs.map((path) => `:(literal)${path}`),
    ],
    { input: pairs.join("") },
  );
  return parseDiffTree(stdout);
}

function describeChange(
  schema: RecordSchema,
  raw: TreeChange,
  contents: ReadonlyMap<string, Buffer>,
  changedBy: ReadonlyMap<string, string>,
): RecordChange {
  const change = raw.status === "A" ? "created" : raw.status === "D" ? "deleted" : "changed";
  const before = parsedFile(schema, raw.path, contents.get(raw.oldOid));
  const after = parsedFile(schema, raw.path, contents.get(raw.oid));
  // A comment's token fields and field order are its schema's (the versioned one names them all).
  const fileSchema = isCommentPath(raw.path) ? commentSchema(schema, true) : schema;
  const updated = after?.fields[fileSchema.tokenFields.updatedAt];
  // A comment's new version is its author's: only the author edits a comment on every backend.
  const author = isCommentPath(raw.path) ? after?.fields.author : undefined;
  const base = {
    path: raw.path,
    change,
    updatedAt: typeof updated === "string" ? updated : undefined,
    changedBy:
      change === "deleted" ? undefined : typeof author === "string" ? author : changedBy.get(raw.oid),
  } as const;
  if (change !== "changed") {
    return { ...base, fields: [], bodyChanged: false, detailed: change === "deleted" || after !== undefined };
  }
  if (!before || !after) return { ...base, fields: [], bodyChanged: false, detailed: false };
  const token = new Set([fileSchema.tokenFields.updatedAt, fileSchema.tokenFields.version]);
  const names = [...new Set([...Object.keys(before.fields), ...Object.keys(after.fields)])];
  // In the schema's order, so every change of the same record reads the same way.
  const order = new Map(fileSchema.fields.map((field, i) => [field.name, i]));
  const fields = names
    .filter((name) => !token.has(name) && !jsonEqual(before.fields[name], after.fields[name]))
    .sort((a, b) => (order.get(a) ?? Number.MAX_SAFE_INTEGER) - (order.get(b) ?? Number.MAX_SAFE_INTEGER));
  return { ...base, fields, bodyChanged: before.body !== after.body, detailed: true };
}

/**
 * A version's frontmatter and body, or undefined when the cache lacks it or it cannot be read: a record by
 * `schema`, a comment by its schema (with `version` where the backend's comments have one, so both are tried).
 */
function parsedFile(
  schema: RecordSchema,
  path: string,
  content: Buffer | undefined,
): { fields: Record<string, unknown>; body: string } | undefined {
  if (!isCommentPath(path)) return parsed(schema, path, content);
  return (
    parsed(commentSchema(schema, true), path, content) ?? parsed(commentSchema(schema, false), path, content)
  );
}

/** A version's frontmatter and body by `schema`, or undefined when the cache lacks it or it cannot be read. */
function parsed(
  schema: RecordSchema,
  path: string,
  content: Buffer | undefined,
): { fields: Record<string, unknown>; body: string } | undefined {
  if (content === undefined) return undefined;
  try {
    // svc's own rendering of a past state, which may name a field the server has since lost.
    const record = parseRecordFile(schema, path, content.toString("utf8"), true);
    return { fields: record.fields as Record<string, unknown>, body: record.body };
  } catch {
    return undefined;
  }
}

/** pushed commit → its author (`Name <email>`), read from the commits the pushes copied into the cache. */
async function pushAuthors(cache: ProjectCache, tips: readonly TipRow[]): Promise<Map<string, string>> {
  const pushed = [...new Set(tips.flatMap((tip) => (tip.pushed_commit ? [tip.pushed_commit] : [])))];
  const authors = new Map<string, string>();
  for (const [oid, body] of await readObjects(cache.repo, pushed)) {
    const author = identityOf(parseCommitObject(body).author);
    if (author) authors.set(oid, author);
  }
  return authors;
}

/** How many record files the state `commit` holds. */
async function recordCount(cache: ProjectCache, schema: RecordSchema, commit: string): Promise<number> {
  if (!cache.hasObject(commit)) return 0;
  const { stdout } = await runGit(cache.repo, ["ls-tree", "-r", "-z", commit, "--", schema.folder]);
  return parseLsTree(stdout).length;
}
