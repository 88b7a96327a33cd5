/**
 * What a push changed, read from the cache's objects once the user's commits are in it: the files that
 * differ from the push's base, their contents on both sides, and the token (version) of each record in the
 * state the user based the change on, which the planner (push-plan.ts) and the staleness check compare with
 * the server's. Also settles create-journal rows whose file the pushed commit no longer has.
 */

import { isCommentKey, isCommentPath } from "../backends/comment.js";
import { parseRecordFile, type RecordContent, recordKeyOf } from "../backends/record.js";
import { isNoChange, recordChanges } from "../backends/record-diff.js";
import type { ProjectCache } from "../cache/cache.js";
import type { JournalRow } from "../cache/db.js";
import { blobsAt, diffCommits } from "../git/commit-files.js";
import { readObjects } from "../git/plumbing.js";
import type { PushContext, PushObjects } from "./push-context.js";
import { type DiffEntry, isUnsafePath } from "./push-plan.js";

/**
 * The contents of the blobs `oids`: from the database, else from the cache's objects (a blob the user's
 * commits brought, which the database never held); an oid in neither is left out of the map.
 */
async function blobContents(
  cache: ProjectCache,
  objects: PushObjects,
  oids: Iterable<string>,
): Promise<Map<string, Buffer>> {
  const contents = new Map<string, Buffer>();
  const read = (oid: string) => objects.cache.read(oid);
  const rest: string[] = [];
  for (const oid of oids) {
    const known = cache.db.blob(oid)?.content;
    let object: ReturnType<typeof read>;
    try {
      object = known ? undefined : read(oid);
    } catch {
      object = undefined; // git says what is wrong with it
    }
    if (known) contents.set(oid, known);
    else if (object?.type === "blob") contents.set(oid, object.content);
    else rest.push(oid);
  }
  for (const [oid, content] of await readObjects(cache.repo, rest)) contents.set(oid, content);
  return contents;
}

/** What a push changed: the diff from its base, the blobs on both sides, and the base's record tokens. */
export interface Changes {
  readonly diff: DiffEntry[];
  readonly contents: Map<string, Buffer>;
  readonly tokenOf: (key: string) => { version: number | null; updatedAt: string } | undefined;
}

/** A record file read with the canonical parser; undefined for a file that does not parse. */
function parsedOrUndefined(
  context: PushContext,
  path: string,
  content: Buffer | undefined,
): RecordContent | undefined {
  if (!content) return undefined;
  try {
    // Only its token is read: a line of a field the server has since lost is no reason to stop.
    return parseRecordFile(context.backend.schema, path, content.toString("utf8"), true);
  } catch {
    return undefined;
  }
}

/** The id a record file carries; undefined for a file that does not parse. */
function idOf(context: PushContext, path: string, content: Buffer | undefined): string | undefined {
  const record = parsedOrUndefined(context, path, content);
  return record && recordKeyOf(context.backend.schema, record.fields);
}

/**
 * Open creates of `worktree` whose file the pushed commit no longer has are settled: the user removed the
 * file, or pulled the push that renamed it (a push killed between moving the cache's main and noting it
 * leaves such rows), and a new file at that path later is a new record.
 */
export async function settleAbandonedCreates(
  cache: ProjectCache,
  objects: PushObjects,
  worktree: string,
  commit: string,
): Promise<JournalRow[]> {
  const open = cache.db.journalRows(worktree, "created");
  if (open.length === 0) return open;
  const present = await blobsAt(
    cache.repo,
    objects.trees,
    commit,
    open.map((row) => row.path).filter((path) => !isUnsafePath(path)),
  );
  for (const row of open) if (!present.has(row.path)) cache.db.journalSettle(row.id, row.content_oid);
  return open.filter((row) => present.has(row.path));
}

/**
 * What `commit` changed since `mergeBase`: the diff, the blobs on both sides, and each record's token (its
 * version) in the state the user based the change on.
 */
export async function loadChanges(
  context: PushContext,
  objects: PushObjects,
  commit: string,
  mergeBase: string,
  worktree: string,
  open: readonly JournalRow[],
): Promise<Changes> {
  const { cache, backend } = context;
  const schema = backend.schema;
  // Tokens (versions) come from the state the user last saw: the commit a push of the base produced, if
  // the base is a pushed commit, else the base itself.
  const tokenTree = cache.db.pushResult(mergeBase) ?? mergeBase;
  context.trace(`base ${mergeBase}, tokens from ${tokenTree}`);
  const diff = await diffCommits(cache.repo, objects.trees, mergeBase, commit);
  const oids = new Set<string>();
  for (const entry of diff)
    for (const oid of [entry.oldOid, entry.newOid]) if (!/^0+$/.test(oid)) oids.add(oid);
  // The token tree's files are asked for by record key below; a changed file is almost always its own
  // record's file, so those are listed at once, beside reading the blobs, and only the rest later. A path
  // git cannot look up (`..` parts of a crafted tree) is left to the planner, which refuses it.
  const changedPaths = new Set(diff.map((entry) => entry.path));
  const [contents, listed] = await Promise.all([
    blobContents(cache, objects, oids),
    blobsAt(
      cache.repo,
      objects.trees,
      tokenTree,
      [...changedPaths].filter((path) => !isUnsafePath(path)),
    ),
  ]);

  // The files of the token tree the plan can ask about: the records the changed files name.
  const keys = new Set<string>();
  // Each record's file in the base (the user's own files), by record key.
  const baseFiles = new Map<string, { path: string; oid: string }>();
  for (const entry of diff) {
    // Comment files carry their tokens themselves (helper/push-plan-comments.ts).
    if (isCommentPath(entry.path)) continue;
    for (const oid of [entry.oldOid, entry.newOid]) {
      const id = idOf(context, entry.path, contents.get(oid));
      if (id) keys.add(id);
      const created = cache.db.createdKey(worktree, entry.path, oid);
      if (created) keys.add(created);
      const key = id ?? created;
      if (key && oid === entry.oldOid && !/^0+$/.test(oid)) baseFiles.set(key, { path: entry.path, oid });
    }
  }
  for (const row of open) if (row.created_key && !isCommentKey(row.created_key)) keys.add(row.created_key);
  const unlisted = [...keys].map((key) => schema.fileName(key)).filter((path) => !changedPaths.has(path));
  const tokenFiles =
    unlisted.length === 0
      ? listed
      : new Map([...listed, ...(await blobsAt(cache.repo, objects.trees, tokenTree, unlisted))]);
  const tokenFrom = (record: RecordContent) => {
    const version =
      schema.tokenFields.version === undefined ? undefined : record.fields[schema.tokenFields.version];
    const updatedAt = record.fields[schema.tokenFields.updatedAt];
    return {
      version: typeof version === "number" ? version : null,
      updatedAt: typeof updatedAt === "string" ? updatedAt : "",
    };
  };
  const tokenOf = (key: string) => {
    // A push's result also holds what that push's sync brought: newer versions of records the push did
    // not write, and deletions, which the user's files do not have. Its token is the user's only where the
    // user's file holds its content (the push wrote it); else the user's own file says which version they
    // edited: an edit of an older version is stale, not a write over the newer one.
    const mine = tokenTree === mergeBase ? undefined : baseFiles.get(key);
    const own = mine && parsedOrUndefined(context, mine.path, contents.get(mine.oid));
    const oid = tokenFiles.get(schema.fileName(key));
    const content = oid ? (cache.db.blob(oid)?.content ?? contents.get(oid)) : undefined;
    if (!oid || !content) return own && tokenFrom(own);
    const record = parseRecordFile(schema, schema.fileName(key), content.toString("utf8"), true);
    if (own && mine?.oid !== oid && !isNoChange(recordChanges(schema, record, own))) return tokenFrom(own);
    return tokenFrom(record);
  };
  return { diff, contents, tokenOf };
}
