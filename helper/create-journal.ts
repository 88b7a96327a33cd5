/**
 * The create journal (DESIGN.md §4 "Exactly once"): what makes a create land once although a push can be
 * killed between the server committing a POST and svc hearing the answer.
 *
 * A row is written before each POST leaves (state `sending`), with the working tree, the file's path in the
 * pushed commit, what the POST sends, and how far the cache's records table reached. The answer turns it
 * `created` (key and token); the push that finishes turns it `settled`. Before a later push of the same
 * working tree plans anything, every `sending` row whose process is gone is resolved against the server
 * state the push's sync just brought: a record that entered the cache after the row was written, that no
 * other create claimed, and whose content is what the POST sent, is that create's record; when there is
 * none the create is proven unwritten and forgotten, and the file is a create again.
 *
 * A file is known by its path in the pushed commit, whatever edits followed: while a row is `created`, the
 * id-less file at that path is that record (an edit of it an update, the same content nothing). Once
 * `settled`, the user's base holds the push that renamed the file, so only the file as that push had it
 * (path and blob) still means the record; a new file at the path is a new record.
 *
 * What it cannot do: find a create the server commits after the next push has listed (a server that
 * answers, and commits, later than the next push starts), or one whose record someone changed before the
 * next push listed it. README "Exactly once" says so.
 */
import { realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Backend, BackendRecord, BaseToken, RecordChanges } from "../backends/backend.js";
import { commentIdOf, isCommentKey, isCommentPath, schemaForKey } from "../backends/comment.js";
import { parseRecordFile, type RecordContent } from "../backends/record.js";
import { isNoChange, recordChanges } from "../backends/record-diff.js";
import type { ProjectCache } from "../cache/cache.js";
import type { CachedRecord, JournalRow } from "../cache/db.js";
import { isRunning } from "../core/process.js";
import type { DiffEntry, JournalMatch } from "./push-plan.js";

/** The working tree a push comes from: its git directory, as git told the helper (`GIT_DIR`). */
export function worktreeId(env: NodeJS.ProcessEnv = process.env): string {
  const dir = resolve(env.GIT_DIR ?? ".git");
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

function plannedContent(row: JournalRow): RecordContent {
  const planned = JSON.parse(row.planned) as RecordChanges;
  return { fields: planned.fields, body: planned.body ?? "" };
}

function cachedContent(
  cache: ProjectCache,
  backend: Backend,
  record: CachedRecord,
): RecordContent | undefined {
  const blob = cache.db.blob(record.rendered_oid);
  return (
    blob &&
    parseRecordFile(schemaForKey(backend, record.key), record.path, blob.content.toString("utf8"), true)
  );
}

/**
 * Resolves the `sending` rows of `worktree` whose push is gone, against the cache as the push's sync left
 * it. Returns the paths whose create was found on the server.
 */
export function resolveUnfinishedCreates(
  cache: ProjectCache,
  backend: Backend,
  worktree: string,
  log: (message: string) => void,
): string[] {
  const found: string[] = [];
  cache.db.exclusive(() => {
    const claimed = cache.db.journalClaimedKeys();
    for (const row of cache.db.journalRows(worktree, "sending")) {
      if (row.owner_pid === process.pid || isRunning(row.owner_pid)) continue; // a push of this tree still under way: its answer will come
      const planned = plannedContent(row);
      const record = cache.db.recordsAfter(row.known_rowid).find(
        (candidate) =>
          !claimed.has(candidate.key) &&
          // A comment's create is one of the comments in its folder, a record's one of the records.
          isCommentPath(row.path) === isCommentKey(candidate.key) &&
          (!isCommentPath(row.path) || dirname(candidate.path) === dirname(row.path)) &&
          matches(cache, backend, candidate, planned),
      );
      if (!record) {
        cache.db.journalDrop(row.id);
        continue;
      }
      claimed.add(record.key);
      cache.db.journalCreated(row.id, record.key, record.version, record.updated_at);
      found.push(row.path);
      const what = isCommentKey(record.key)
        ? `posted as comment ${commentIdOf(record.key)}`
        : `created as record ${record.key}`;
      log(
        `svc: ${row.path} was ${what} (${record.path}) by a push that was cut off before the answer arrived; it is not created again`,
      );
    }
  });
  return found;
}

function matches(
  cache: ProjectCache,
  backend: Backend,
  candidate: CachedRecord,
  planned: RecordContent,
): boolean {
  const content = cachedContent(cache, backend, candidate);
  if (!content) return false;
  // A comment is its body as the server gives it back (the tracker respells Markdown through ADF); its
  // fields are all the server's, and its folder says where it went.
  if (isCommentKey(candidate.key)) return content.body === canonicalBody(backend, planned.body);
  const unique = backend.schema.uniqueFields;
  if (unique) return unique.every((name) => content.fields[name] === planned.fields[name]);
  const later = backend.schema.setAfterCreate ?? [];
  const fields = { ...planned.fields };
  for (const name of later) {
    if (content.fields[name] !== undefined) fields[name] = content.fields[name];
  }
  for (const name of backend.schema.serverDefaults ?? []) {
    if ((fields[name] ?? null) === null && content.fields[name] !== undefined)
      fields[name] = content.fields[name];
  }
  return isNoChange(
    recordChanges(backend.schema, content, { fields, body: canonicalBody(backend, planned.body) }),
  );
}

/** `body` as the server gives bodies back; as it is when the backend does not convert them, or cannot this one. */
function canonicalBody(backend: Backend, body: string): string {
  const canonical = backend.schema.canonicalBody;
  if (!canonical) return body;
  try {
    return canonical(body);
  } catch {
    return body;
  }
}

/**
 * The record a create made, as it was at `token`: the cache's copy when it is at that token (a create cut
 * off between its requests holds less than was planned: the forge's new issue is open until its close),
 * else what the create sent.
 */
function createdContent(
  cache: ProjectCache,
  backend: Backend,
  row: JournalRow,
  token: BaseToken,
): RecordContent {
  const cached = row.created_key === null ? undefined : cache.db.record(row.created_key);
  if (cached && cached.updated_at === token.updatedAt && cached.version === token.version) {
    const content = cachedContent(cache, backend, cached);
    if (content) return content;
  }
  return plannedContent(row);
}

/**
 * The planner's view of the journal for one push of `worktree` (PlanInput.journal), given its open creates
 * whose file the pushed commit still has (`openRows`). `baseToken` is the
 * token of a record in the user's base, which wins over the token the create left when the user has
 * pulled the record since.
 */
export function journalLookup(
  cache: ProjectCache,
  backend: Backend,
  worktree: string,
  openRows: readonly JournalRow[],
  baseToken: (key: string) => BaseToken | undefined,
): (path: string, baseOid: string | undefined) => JournalMatch | undefined {
  const open = new Map(openRows.map((row) => [row.path, row]));
  return (path, baseOid) => {
    const row = open.get(path);
    if (row?.created_key) {
      const token = baseToken(row.created_key) ?? {
        version: row.created_version,
        updatedAt: row.created_updated_at ?? "",
      };
      return {
        key: row.created_key,
        created: { original: createdContent(cache, backend, row, token), token },
      };
    }
    const key = baseOid === undefined ? undefined : cache.db.createdKey(worktree, path, baseOid);
    return key === undefined ? undefined : { key };
  };
}

/** Notes a create about to be sent; returns the journal row. */
export function journalCreate(
  cache: ProjectCache,
  worktree: string,
  path: string,
  oid: string,
  changes: RecordChanges,
): number {
  return cache.db.journalStart(worktree, path, oid, JSON.stringify(changes));
}

/** Notes the server's answer to a create. */
export function journalCreated(cache: ProjectCache, row: number, record: BackendRecord): void {
  cache.db.journalCreated(row, record.key, record.version, record.updatedAt);
}

/**
 * The push finished (its result commit is written): every open create of `worktree` is settled, known from
 * now on by its file as this push's commit has it.
 */
export function settleCreates(cache: ProjectCache, worktree: string, diff: readonly DiffEntry[]): void {
  const pushed = new Map(diff.map((entry) => [entry.path, entry.newOid]));
  for (const row of cache.db.journalRows(worktree, "created")) {
    const oid = pushed.get(row.path);
    cache.db.journalSettle(row.id, oid && !/^0+$/.test(oid) ? oid : row.content_oid);
  }
}
