/**
 * `cache.db` (DESIGN.md §3): the last known server state, the blob contents behind every OID we rendered,
 * the sync cursor, the create journal and the helper's append-only audit table. Migrated by
 * `PRAGMA user_version`; WAL; file mode 0600 (it holds record contents).
 *
 * `CacheDb` is the one gateway every part uses; the schema's revisions are cache/db-schema.ts, and the
 * statements of each table group are cache/db-records.ts, cache/db-objects.ts and cache/db-bookkeeping.ts.
 */
import type { Validator } from "../backends/backend.js";
import { SvcError } from "../core/errors.js";
import type { Database } from "../core/sqlite.js";
import { openStore } from "../core/sqlite-store.js";
import {
  type AuditEvent,
  bookkeepingStatements,
  type JournalRow,
  type SyncState,
  type TipOp,
  type TipRow,
} from "./db-bookkeeping.js";
import { objectStatements } from "./db-objects.js";
import { type CachedRecord, recordStatements } from "./db-records.js";
import { CACHE_MIGRATIONS, SCHEMA_VERSION } from "./db-schema.js";

export type { AuditEvent, AuditOp, JournalRow, SyncState, TipOp, TipRow } from "./db-bookkeeping.js";
export type { CachedRecord } from "./db-records.js";

/** What a sync lists on its own, with its own cursor and count: the records, or their comments. */
export type Collection = "records" | "comments";

export class CacheDb {
  readonly db: Database;
  private readonly statements;
  /** Opened `building` (see the constructor). */
  private readonly building: boolean;

  /**
   * `building`: the database of a cache being built in a folder of its own (cache/open.ts), which no other
   * process opens and which is deleted if the build fails: no write-ahead log and no syncs to disk while
   * the first listing goes in (every page would otherwise be written twice), and a larger page cache. The
   * next open of the finished cache turns the log on.
   */
  constructor(
    path: string,
    private readonly identity: { backend: string; project: string; agent: string },
    options: { building?: boolean } = {},
  ) {
    this.building = options.building === true;
    this.db = openStore(path, {
      building: this.building,
      // A swarm of agents shares one cache: a writer waits for the others rather than failing.
      busyTimeoutMs: 30_000,
      fileMode: 0o600,
      schema: {
        migrations: CACHE_MIGRATIONS,
        latest: SCHEMA_VERSION,
        tooNew: (current) =>
          `the cache ${path} has schema revision ${current}, newer than this svc (${SCHEMA_VERSION}); upgrade svc or remove the cache folder`,
        // The write lock first: a revision another process ran meanwhile is then seen, and skipped.
        immediate: true,
      },
      cannotOpen: (error) =>
        new SvcError("SVC_STORE", `cannot open the cache database ${path}: ${error.message}`, {
          cause: error,
        }),
    });
    this.statements = {
      ...recordStatements(this.db),
      ...objectStatements(this.db),
      ...bookkeepingStatements(this.db),
    };
  }

  /** Runs `work` holding SQLite's write lock (BEGIN IMMEDIATE): one writer per cache across processes. */
  exclusive<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /**
   * For the first listing of a database opened `building`: drops the indexes of `records` and `oid_map`
   * that no insert needs (their keys stay), and returns what makes them again, exactly as the schema
   * wrote them. Each index built once from the whole table is cheaper than kept up record by record
   * (measured, 100,000 records: the inserts ~1,300 ms with them, ~950 ms without plus ~150 ms to build
   * them after). A database not opened `building` keeps its indexes; the returned function does nothing.
   */
  deferIndexes(): () => void {
    if (!this.building) return () => {};
    const indexes = this.db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('records', 'oid_map')",
      )
      .all() as { name: string; sql: string }[];
    this.db.transaction(() => {
      for (const { name } of indexes) this.db.exec(`DROP INDEX "${name.replaceAll('"', '""')}"`);
    })();
    let restored = false;
    return () => {
      if (restored) return;
      restored = true;
      this.db.transaction(() => {
        for (const { sql } of indexes) this.db.exec(sql);
      })();
    };
  }

  record(key: string): CachedRecord | undefined {
    return this.statements.record.get(key) as CachedRecord | undefined;
  }

  /** Like `liveRecordsOf`, for the given keys only. */
  liveRecordsFor(
    keys: readonly string[],
  ): Map<string, { version: number | null; updated_at: string; rendered_oid: string; path: string }> {
    const found = new Map<
      string,
      { version: number | null; updated_at: string; rendered_oid: string; path: string }
    >();
    for (const key of keys) {
      const row = this.statements.liveRecord.get(key) as
        | { version: number | null; updated_at: string; rendered_oid: string; path: string }
        | undefined;
      if (row) found.set(key, row);
    }
    return found;
  }

  upsertRecord(record: CachedRecord): void {
    // Positional: binding by name looks up each of an object's properties (measured: ~1 µs a record more).
    const { key, path, version, updated_at, rendered_oid } = record;
    this.statements.upsertRecord.run(key, path, version, updated_at, rendered_oid);
  }

  markDeleted(key: string): void {
    this.statements.markDeleted.run(key);
  }

  /** (path, oid) of every live record: the tree of the cache's `main`. */
  treeEntries(): { path: string; rendered_oid: string; updated_at: string }[] {
    return this.statements.tree.all() as { path: string; rendered_oid: string; updated_at: string }[];
  }

  /**
   * (path, oid) of every live record in byte order of the path, read as it is iterated: git's order of a
   * tree's entries at every level (cache/state-tree.ts builds the trees in one pass over it).
   */
  treeEntriesByPath(): IterableIterator<{ path: string; rendered_oid: string }> {
    return this.statements.treeByPath.iterate() as IterableIterator<{ path: string; rendered_oid: string }>;
  }

  /** Counts a state commit written (each leaves a few loose objects, a tree of every record among them). */
  countStateCommit(): void {
    this.statements.countCommit.run();
  }

  commitsSincePack(): number {
    return this.statements.commitsSincePack.get() as number;
  }

  markPacked(): void {
    this.statements.packed.run();
  }

  /** Live files: records and comments. */
  liveCount(): number {
    return this.statements.liveCount.get() as number;
  }

  /** Live rows of one collection: the records, or the comments (keys `comment:<id>`). */
  liveCountOf(collection: Collection): number {
    return this.statements.collectionCount.get({ comments: collection === "comments" ? 1 : 0 }) as number;
  }

  /** key → {version, updated_at, rendered_oid, path} of every live record of one collection. */
  liveRecordsOf(
    collection: Collection,
  ): Map<string, { version: number | null; updated_at: string; rendered_oid: string; path: string }> {
    const rows = this.statements.collectionVersions.all({ comments: collection === "comments" ? 1 : 0 }) as {
      key: string;
      version: number | null;
      updated_at: string;
      rendered_oid: string;
      path: string;
    }[];
    return new Map(rows.map((row) => [row.key, row]));
  }

  /** The key of the live record at `path`, if one is there. */
  keyAt(path: string): string | undefined {
    return this.statements.keyAt.get(path) as string | undefined;
  }

  /** The blob of the live record at `path`, if one is there. */
  liveOidAt(path: string): string | undefined {
    return this.statements.liveOidAt.get(path) as string | undefined;
  }

  /**
   * The `updated_at` values that can hold the newest time of the live records: the greatest of those in
   * the canonical form (text order is time order to the second there) and every one in another form.
   */
  newestUpdateCandidates(): string[] {
    const canonical = this.statements.newestCanonical.get() as string | undefined;
    const others = this.statements.otherTimes.all() as string[];
    return canonical === undefined ? others : [canonical, ...others];
  }

  /** dir → encoded tree of the state tree as last written ("" is the root); empty when none is kept. */
  stateTrees(): Map<string, Buffer> {
    const rows = this.statements.stateTrees.all() as { dir: string; content: Buffer }[];
    return new Map(rows.map((row) => [row.dir, row.content]));
  }

  /** Paths of live files changed since the state tree was last written. */
  dirtyPaths(): string[] {
    return this.statements.dirtyPaths.all() as string[];
  }

  /**
   * Stores the state tree's directories as written (`replaceAll`: these are all of them) and forgets the
   * changes noted so far, in one transaction.
   */
  saveStateTrees(written: ReadonlyMap<string, Buffer>, removed: Iterable<string>, replaceAll: boolean): void {
    this.db.transaction(() => {
      if (replaceAll) this.statements.dropStateTrees.run();
      for (const dir of removed) this.statements.dropStateTree.run(dir);
      for (const [dir, content] of written) this.statements.putStateTree.run(dir, content);
      this.statements.clearDirty.run();
    })();
  }

  /** Keeps the contents of blob `oid` (record `key`'s file), and who made that version when the backend says. */
  rememberBlob(oid: string, key: string, content: Buffer, changedBy?: string): void {
    this.statements.insertOid.run(oid, key, content, changedBy ?? null);
  }

  /** oid → who made that version, for those of `oids` whose backend said. */
  changedBy(oids: readonly string[]): Map<string, string> {
    const rows = this.statements.changedBy.all(JSON.stringify(oids)) as { oid: string; changed_by: string }[];
    return new Map(rows.map((row) => [row.oid, row.changed_by]));
  }

  blob(oid: string): { oid: string; content: Buffer; written: number } | undefined {
    return this.statements.oid.get(oid) as { oid: string; content: Buffer; written: number } | undefined;
  }

  unwrittenBlobOids(): string[] {
    return this.statements.unwritten.all() as string[];
  }

  markWritten(oids: readonly string[]): void {
    this.statements.markWritten.run(JSON.stringify(oids));
  }

  /**
   * Of `oids`, how many are blobs the cache knows, and which of those it has not written yet: one query
   * each, however many wants a fetch has (a checkout of 10,000 files sends 10,000).
   */
  classifyWants(oids: readonly string[]): { known: number; unwritten: string[] } {
    const list = JSON.stringify(oids);
    return {
      known: this.statements.knownAmong.get(list) as number,
      unwritten: this.statements.unwrittenAmong.all(list) as string[],
    };
  }

  /**
   * Every blob the cache has stored after the one numbered `after` (0: all of them), with its size and
   * number, in the order a prefetch should send them: the live records' (the tip's tree) by path, then the
   * others (older versions, removed records) newest first. Each once. A blob two live records share counts
   * as live when the record it was stored for still has it.
   */
  prefetchCandidates(after = 0): { oid: string; bytes: number; id: number }[] {
    return (this.statements.prefetchCandidates.all(after) as [string, number, number][]).map(
      ([oid, bytes, id]) => ({ oid, bytes, id }),
    );
  }

  /** How far the prefetch has seen the objects folder `objects` of the repository `repo` (0: not at all). */
  prefetchMark(objects: string, repo: string): number {
    return (this.statements.prefetchMark.get(objects, repo) as number | undefined) ?? 0;
  }

  /** The number of the blob the cache stored last (0: none). */
  lastBlobId(): number {
    return this.statements.lastBlobId.get() as number;
  }

  setPrefetchMark(objects: string, repo: string, through: number): void {
    this.statements.setPrefetchMark.run(objects, repo, through);
  }

  /** The contents of the blobs `oids`, streamed in batches (order not kept). */
  *blobContents(oids: readonly string[], batch = 1000): Generator<{ oid: string; content: Buffer }> {
    for (let start = 0; start < oids.length; start += batch) {
      const rows = this.statements.contents.all(JSON.stringify(oids.slice(start, start + batch))) as {
        oid: string;
        content: Buffer;
      }[];
      yield* rows;
    }
  }

  /**
   * How many live records there are, how many distinct blobs they have, and how many blobs the database
   * holds. Every live record's blob is held (`rememberRecord` stores it before the record), so when the
   * three are equal the database holds exactly the live records' blobs, each record its own.
   */
  blobCounts(): { live: number; distinctLive: number; stored: number } {
    const row = this.statements.blobCounts.get() as { live: number; distinct_live: number; stored: number };
    return { live: row.live, distinctLive: row.distinct_live, stored: row.stored };
  }

  /** How many blobs the database holds. */
  storedBlobCount(): number {
    return this.statements.storedCount.get() as number;
  }

  /**
   * The contents of every blob the database holds, in the order they entered it, in batches of `batch`
   * rows (one query each: the caller may wait between them, and the connection stays free). Read in the
   * table's own order, with no lookup per row.
   */
  *storedBlobContents(batch = 1000): Generator<Buffer> {
    for (let after = 0; ; ) {
      const rows = this.statements.blobsAfter.all(after, batch) as { at: number; content: Buffer }[];
      for (const row of rows) yield row.content;
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < batch) return;
      after = last.at;
    }
  }

  /**
   * Notes that the create of `path` (blob `oid` in the pushed commit of working tree `worktree`) is about to
   * be sent, with what it sends; returns the row's id. Written before the request leaves.
   */
  journalStart(worktree: string, path: string, oid: string, planned: string): number {
    const result = this.statements.journalStart.run(
      worktree,
      path,
      oid,
      planned,
      new Date().toISOString(),
      process.pid,
    );
    return Number(result.lastInsertRowid);
  }

  /** The server created record `key` (at `version` / `updatedAt`) for journal row `id`. */
  journalCreated(id: number, key: string, version: number | null, updatedAt: string): void {
    this.statements.journalCreated.run(key, version, updatedAt, id);
  }

  /** Forgets a create that is proven unwritten (the server refused it, or no record of it appeared). */
  journalDrop(id: number): void {
    this.statements.journalDrop.run(id);
  }

  /** The rows of `worktree` in `state`: `sending` (answer unknown) or `created` (push not finished). */
  journalRows(worktree: string, state: "sending" | "created"): JournalRow[] {
    return this.statements.journalRows.all(worktree, state) as JournalRow[];
  }

  /** The key an earlier push created from the file `path` with content `oid`, if any. */
  createdKey(worktree: string, path: string, oid: string): string | undefined {
    const key = this.statements.journalSettledKey.get(path, oid, worktree, worktree) as
      | string
      | null
      | undefined;
    return key ?? undefined;
  }

  /** The push that carried row `id` finished: its file is `oid` in that push's commit. */
  journalSettle(id: number, oid: string): void {
    this.statements.journalSettle.run(oid, id);
  }

  /** Every key the journal has given to a create: a record can be the result of one create only. */
  journalClaimedKeys(): Set<string> {
    return new Set(this.statements.journalClaimed.all() as string[]);
  }

  /** Live records that entered the cache after the records table reached `rowid`. */
  recordsAfter(rowid: number): CachedRecord[] {
    return this.statements.recordsAfter.all(rowid) as CachedRecord[];
  }

  /** The commit a push of `userCommit` produced (the user's commit plus what the server assigned). */
  pushResult(userCommit: string): string | undefined {
    return (this.statements.pushResult.get(userCommit) as string | undefined) ?? undefined;
  }

  recordPush(userCommit: string, resultCommit: string): void {
    this.statements.recordPush.run(userCommit, resultCommit);
  }

  /** The sync state of the records, or of another collection (`comments`: cache/sync.ts). */
  syncState(collection: Collection = "records"): SyncState {
    if (collection === "records") return this.statements.syncState.get() as SyncState;
    return this.statements.collectionSyncState.get(collection) as SyncState;
  }

  setSyncState(state: SyncState, collection: Collection = "records"): void {
    const { cursor, last_sync_ms, last_full_ms, count_at_full } = state;
    const row = { cursor, last_sync_ms, last_full_ms, count_at_full };
    if (collection === "records") this.statements.setSyncState.run(row);
    else this.statements.setCollectionSyncState.run({ ...row, collection });
  }

  /** Who the user is, as comments name authors, as last asked (JSON; helper/push-comments.ts), or undefined. */
  commentIdentity(): string | undefined {
    return (this.statements.commentIdentity.get() as string | null | undefined) ?? undefined;
  }

  setCommentIdentity(json: string): void {
    this.statements.setCommentIdentity.run(json);
  }

  validator(url: string): Validator | undefined {
    return this.statements.validator.get(url) as Validator | undefined;
  }

  /** Drops the validators of every URL that starts with `prefix`. */
  dropValidators(prefix: string): void {
    this.statements.dropValidators.run({ prefix });
  }

  keepValidator(validator: Validator): void {
    this.statements.keepValidator.run({
      url: validator.url,
      etag: validator.etag,
      payload: validator.payload,
    });
  }

  /** Notes that main moved to `commit` now, and why; call it in the transaction that moves it. */
  noteTip(commit: string, op: TipOp, pushedCommit?: string): void {
    this.statements.noteTip.run(commit, Date.now(), op, pushedCommit ?? null);
  }

  /**
   * Whether this cache's history says that `oid` is `tip` or an ancestor of it: `oid` was noted, up to the
   * last time main moved to `tip`, as a tip main moved to or as the user's commit a push built its result
   * on. Main only ever moves to a commit that has the old tip among its ancestors (every commit the cache
   * writes has the tip, or a user's commit containing it, as a parent), and a push's result has the user's
   * commit as a parent; so each of those is an ancestor of `tip`. False says nothing: an older commit of a
   * user's pushed history is an ancestor too, unnoted.
   */
  notedAncestor(oid: string, tip: string): boolean {
    return (this.statements.notedBefore.get({ oid, tip }) as number) > 0;
  }

  /** Every move of main this cache noted, oldest first. */
  tips(): TipRow[] {
    return this.statements.tips.all() as TipRow[];
  }

  audit(event: AuditEvent): void {
    this.statements.audit.run(
      new Date().toISOString(),
      event.op,
      this.identity.backend,
      this.identity.project,
      event.key ?? null,
      event.oid ?? null,
      event.bytes ?? null,
      this.identity.agent,
      event.detail === undefined ? null : JSON.stringify(event.detail),
    );
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
