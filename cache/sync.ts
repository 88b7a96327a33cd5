/**
 * Sync: bring the cache to the server's state (DESIGN.md §3).
 *
 * The first sync lists everything; later ones ask for records changed since the cursor minus the backend's
 * overlap, and skip records whose version and `updated_at` the cache already has. Deletions are inferred
 * from a complete full listing (`reconcile`, or when the last one is older than the reconcile period); a
 * delta sees them only where the server says so cheaply: its count of records (the sim's listing, the
 * tracker's `countLive`), which makes a full listing at once when it differs from the cache's, or the
 * records it removed lately (the wiki's `listRemoved`), which go at once. A sync that changes nothing
 * writes no commit, unless main lags behind what a push that was cut off wrote to the records. The commit
 * is deterministic: fixed identity, time = newest `updated_at` in the tree, parent = previous tip, so caches
 * that saw the same server states have the same commit ids.
 */
import type { Backend, BackendRecord, Listing, RemovedRecords, ValidatorStore } from "../backends/backend.js";
import { commentListingSource, schemaForKey } from "../backends/comment.js";
import { renderRecordFile } from "../backends/record.js";
import { formatCount } from "../core/count.js";
import { progress } from "../core/progress.js";
import { hashObject } from "../git/objects.js";
import type { ProjectCache } from "./cache.js";
import type { Collection } from "./db.js";
import type { FirstStateBlobs } from "./first-state.js";
import { commitSync, writeSyncCommit } from "./state-commit.js";

export { SVC_IDENTITY, syncCommitMessage, writeStateCommit } from "./state-commit.js";

export interface SyncOptions {
  /** Force a full listing and infer deletions from it. */
  readonly reconcile?: boolean;
  /** A full listing is also made when the last one is older than this (ms). */
  readonly reconcileIntervalMs?: number;
  readonly now?: number;
  readonly trace?: (message: string) => void;
}

export interface SyncResult {
  readonly full: boolean;
  /**
   * How this sync looked for records deleted on the server: `listed`, a complete full listing; `counted`, a
   * delta whose count of the server's records matched the cache's; `named`, a delta whose server named every
   * record it holds as removed (the wiki's trash); `unchecked`, a delta from a server that gives neither (the
   * forge), or named only some, which sees a deletion only at the next full listing.
   */
  readonly deletions: "listed" | "counted" | "named" | "unchecked";
  readonly changed: number;
  readonly deleted: number;
  /** The new commit, when the sync wrote one. */
  readonly commit: string | undefined;
  readonly tip: string;
}

export const DEFAULT_RECONCILE_INTERVAL_MS = 10 * 60 * 1000;

/** The bytes of a record file and its blob id. */
export function renderBlob(backend: Backend, record: BackendRecord): { content: Buffer; oid: string } {
  // A comment's file (key `comment:<id>`) has the comment schema's fields (backends/comment.ts).
  const content = Buffer.from(renderRecordFile(schemaForKey(backend, record.key), record.content));
  return { content, oid: hashObject("blob", content) };
}

/**
 * Stores `record` as the server's current state (after a sync listing or a write's answer); returns
 * whether its file changed.
 */
export function rememberRecord(
  cache: ProjectCache,
  backend: Backend,
  record: BackendRecord,
  known?: { rendered_oid: string; path: string },
): boolean {
  const blob = renderBlob(backend, record);
  storeRecord(cache, record, blob);
  return !known || known.rendered_oid !== blob.oid || known.path !== record.path;
}

/** Stores `record` and its file `blob` (`renderBlob`) as the server's current state. */
function storeRecord(
  cache: ProjectCache,
  record: BackendRecord,
  blob: { content: Buffer; oid: string },
): void {
  cache.db.rememberBlob(blob.oid, record.key, blob.content, record.changedBy);
  cache.db.upsertRecord({
    key: record.key,
    path: record.path,
    version: record.version,
    updated_at: record.updatedAt,
    rendered_oid: blob.oid,
  });
}

/** The cache's HTTP validators, as a backend that makes conditional requests uses them. */
export function validatorStore(cache: ProjectCache): ValidatorStore {
  return {
    lookup: (url) => cache.db.validator(url),
    remember: (validator) => cache.db.keepValidator(validator),
  };
}

/**
 * What one collection is listed from: the backend itself for the records, the backend's comments as records
 * for the comments (backends/comment.ts `commentListingSource`).
 */
export type ListingSource = Pick<Backend, "description" | "overlapMs" | "listAll" | "listChangedSince"> &
  Partial<Pick<Backend, "countLive" | "listRemoved" | "useValidators">>;

/** The collections a sync of `backend` lists, each with its own cursor and count: records, then comments. */
function collectionsOf(backend: Backend): { collection: Collection; source: ListingSource }[] {
  const comments = commentListingSource(backend);
  return [
    { collection: "records", source: backend },
    ...(comments ? [{ collection: "comments" as const, source: comments }] : []),
  ];
}

/**
 * Every record of `backend`, or those changed since `since`, with progress on stderr while it lasts (a
 * first listing of a large project takes a while: its records are counted when it is done). `collection`
 * names what is listed (`the comments of …`).
 */
export async function listRecords(
  backend: ListingSource,
  since?: string,
  collection: Collection = "records",
): Promise<Listing> {
  const phase = progress().start(`listing the ${collection} of ${backend.description}`);
  let listed: number | undefined;
  try {
    const listing = await (since === undefined ? backend.listAll() : backend.listChangedSince(since));
    listed = listing.records.length;
    return listing;
  } finally {
    phase.end(listed === undefined ? "stopped" : `${formatCount(listed)} listed`);
  }
}

/** `cursor`, held back to the listing's ceiling (but never behind `before`, the cursor the sync started from). */
function ceiledCursor(
  cursor: string | null,
  before: string | null,
  listing: Pick<Listing, "cursorCeiling">,
): string | null {
  const ceiling = listing.cursorCeiling;
  if (ceiling === undefined || cursor === null || cursor <= ceiling) return cursor;
  return before !== null && before > ceiling ? before : ceiling;
}

/** Keeps the listing's validators in place of those it replaces; call it in the transaction that applies it. */
function keepValidators(
  cache: ProjectCache,
  listing: Pick<Listing, "validators" | "replacesValidators">,
): void {
  if (listing.replacesValidators !== undefined) cache.db.dropValidators(listing.replacesValidators);
  for (const validator of listing.validators ?? []) cache.db.keepValidator(validator);
}

/**
 * A full listing as a new cache's first sync reads it (cache/open.ts): the records in batches as they
 * arrive (`streamAll`), or `listAll`'s records as one batch; and, once every batch is read, what the
 * listing said about itself. `started` waits for the first batch: the backend's first successful answer,
 * before which nothing may be created.
 */
export class FullListing {
  private readonly iterator: AsyncIterator<readonly BackendRecord[]>;
  private first: IteratorResult<readonly BackendRecord[]> | undefined;
  private said: Omit<Listing, "records"> | undefined;

  constructor(backend: Backend) {
    if (backend.streamAll) {
      this.iterator = backend.streamAll()[Symbol.asyncIterator]();
      this.said = { complete: true };
    } else {
      const whole = async function* (listing: FullListing): AsyncGenerator<readonly BackendRecord[]> {
        const { records, ...said } = await backend.listAll();
        listing.said = said;
        yield records;
      };
      this.iterator = whole(this);
    }
  }

  /** Resolves once the first batch is there; rejects with what the listing throws. */
  async started(): Promise<void> {
    this.first ??= await this.iterator.next();
  }

  async *batches(): AsyncGenerator<readonly BackendRecord[]> {
    await this.started();
    let next = this.first as IteratorResult<readonly BackendRecord[]>;
    while (!next.done) {
      yield next.value;
      next = await this.iterator.next();
    }
    // A stream may end by saying what the listing said about itself (Backend.streamAll).
    const said: unknown = next.value;
    if (typeof said === "object" && said !== null && "complete" in said)
      this.said = said as Omit<Listing, "records">;
  }

  /** What the listing said about itself (complete, validators, cursor ceiling): once every batch is read. */
  summary(): Omit<Listing, "records"> {
    return this.said ?? { complete: false };
  }

  /** Stops reading: the listing is not needed after all. */
  async cancel(): Promise<void> {
    await this.iterator.return?.();
  }
}

/**
 * The first sync of a new cache: a full listing, applied batch by batch as it arrives (one transaction
 * each: the cache is being built where no other process looks, cache/open.ts), then the first state
 * commit. Memory does not grow with the project: nothing is kept across batches but counts and the
 * cursor, and the tree is built from the database. `continues`: the commit the first state commit
 * continues (its parent), so a rebuilt cache carries on the history of the user's repository and
 * `git pull` fast-forwards.
 */
export async function importListing(
  cache: ProjectCache,
  backend: Backend,
  listing: FullListing,
  options: {
    readonly continues?: string;
    readonly trace?: (message: string) => void;
    readonly now?: number;
    /** Keeps the record files for the clone's pack (cache/first-state.ts `FirstStateBlobs`), sealed with the commit. */
    readonly kept?: FirstStateBlobs;
  },
): Promise<SyncResult> {
  const now = options.now ?? Date.now();
  const phase = progress().start(`listing the records of ${backend.description}`);
  let listed = 0;
  let cursor: string | null = null;
  const restoreIndexes = cache.db.deferIndexes();
  try {
    for await (const batch of listing.batches()) {
      cache.db.exclusive(() => {
        for (const record of batch) {
          if (cursor === null || record.updatedAt > cursor) cursor = record.updatedAt;
          const blob = renderBlob(backend, record);
          storeRecord(cache, record, blob);
          options.kept?.add(blob.content);
        }
      });
      listed += batch.length;
      phase.update(`${formatCount(listed)} listed`);
    }
  } catch (error) {
    phase.end("stopped");
    throw error;
  } finally {
    restoreIndexes();
  }
  phase.end(`${formatCount(listed)} listed`);
  options.trace?.(`listed ${listed} records (full)`);
  const said = listing.summary();
  const comments = commentListingSource(backend);
  const commentListing = comments && (await listRecords(comments, undefined, "comments"));
  if (commentListing) options.trace?.(`listed ${commentListing.records.length} comments (full)`);
  return cache.db.exclusive(() => {
    keepValidators(cache, said);
    if (commentListing) {
      importComments(cache, backend, commentListing, now, options.kept);
      keepCommentsState(cache, said);
    }
    const commit = writeSyncCommit(cache, backend, cache.tip(), options.continues, listed, 0);
    options.kept?.seal(commit, () => cache.db.storedBlobCount());
    cache.setTip(commit, "import");
    cache.db.setSyncState({
      cursor: ceiledCursor(cursor, null, said),
      last_sync_ms: now,
      last_full_ms: said.complete ? now : 0,
      count_at_full: said.complete ? listed : null,
    });
    cache.db.audit({ op: "sync", detail: { full: true, listed, changed: listed, deleted: 0, commit } });
    return { full: true, deletions: "listed", changed: listed, deleted: 0, commit, tip: commit };
  });
}

/** A first sync's comments: stored with the records' first state commit, their sync state beside. */
function importComments(
  cache: ProjectCache,
  backend: Backend,
  listing: Listing,
  now: number,
  kept: FirstStateBlobs | undefined,
): void {
  let cursor: string | null = null;
  for (const record of listing.records) {
    if (cursor === null || record.updatedAt > cursor) cursor = record.updatedAt;
    const blob = renderBlob(backend, record);
    storeRecord(cache, record, blob);
    kept?.add(blob.content);
  }
  cache.db.setSyncState(
    {
      cursor,
      last_sync_ms: now,
      last_full_ms: listing.complete ? now : 0,
      count_at_full: listing.complete ? (listing.liveCount ?? listing.records.length) : null,
    },
    "comments",
  );
}

/** The server's count of its records, as `Listing.liveCount` or `Backend.countLive` gives it. */
interface ServerCount {
  readonly count: number;
  readonly approximate: boolean;
}

export async function syncCache(
  cache: ProjectCache,
  backend: Backend,
  options: SyncOptions = {},
): Promise<SyncResult> {
  return await sync(cache, backend, options);
}

/**
 * `syncCache`; `counted`: the server's count a delta sync of this fetch already asked, per collection, for
 * the full listing it makes because of it (at most one count request a fetch); `only`: the collections to
 * list (all of them when undefined). Each collection is asked, then all are applied in one transaction
 * that writes one commit.
 */
async function sync(
  cache: ProjectCache,
  backend: Backend,
  options: SyncOptions,
  counted: Partial<Record<Collection, ServerCount>> = {},
  only?: ReadonlySet<Collection>,
): Promise<SyncResult> {
  const now = options.now ?? Date.now();
  const views: ServerView[] = [];
  for (const { collection, source } of collectionsOf(backend)) {
    if (only && !only.has(collection)) continue;
    if (collection === "comments" && commentsUnchanged(cache, views, options, now)) {
      options.trace?.("the comments are as they were at their last listing: not listed");
      continue;
    }
    views.push(await askServer(cache, source, collection, options, now, counted[collection]));
  }
  const applied = cache.db.exclusive(() => {
    const each = views.map((view) => applyServerView(cache, backend, view, now));
    if (views.some((view) => view.collection === "comments")) {
      keepCommentsState(cache, views.find((view) => view.collection === "records")?.listing);
    }
    const changed = each.reduce((sum, one) => sum + one.changed, 0);
    const deleted = each.reduce((sum, one) => sum + one.deleted, 0);
    const written = commitSync(cache, backend, changed, deleted);
    // One row a sync: the records' figures, the commit, and the comments' figures beside.
    const [records, comments] = (["records", "comments"] as const).map(
      (collection) => each.find((one) => one.collection === collection)?.audit,
    );
    const { full, listed, changed: recordsChanged, deleted: recordsDeleted, ...rest } = records ?? {};
    cache.db.audit({
      op: "sync",
      detail: {
        ...(records ? { full, listed, changed: recordsChanged, deleted: recordsDeleted } : {}),
        commit: written.commit ?? null,
        ...rest,
        ...(comments ? { comments } : {}),
      },
    });
    return { each, changed, deleted, ...written };
  });
  const records = applied.each.find((one) => one.collection === "records");
  const result: SyncResult = {
    full: records?.full ?? false,
    deletions: records?.deletions ?? "unchecked",
    changed: applied.changed,
    deleted: applied.deleted,
    commit: applied.commit,
    tip: applied.tip,
  };
  // Each collection's count is compared with the cache's count of that collection, never a sum.
  const differing = views.filter((view, at) => applied.each[at]?.differs && view.count !== undefined);
  if (differing.length === 0) return result;
  const names = differing.map((view) => view.collection);
  options.trace?.(`the server's count of ${names.join(" and ")} differs from the cache's: a full listing`);
  const whole = await sync(
    cache,
    backend,
    { ...options, reconcile: true },
    Object.fromEntries(differing.map((view) => [view.collection, view.count])),
    new Set(names),
  );
  return {
    ...whole,
    ...(names.includes("records") ? {} : { full: result.full, deletions: result.deletions }),
    changed: whole.changed + result.changed,
    commit: whole.commit ?? result.commit,
  };
}

/** key → what the cache holds of each live record (`liveRecordsOf`, `liveRecordsFor`). */
type LiveRecords = ReturnType<ProjectCache["db"]["liveRecordsOf"]>;

/** What one sync asked the server: its listing, and what tells of deletions where the listing cannot. */
interface ServerView {
  readonly collection: Collection;
  /** A full listing (deletions are what it lacks), not a delta since the cursor. */
  readonly full: boolean;
  readonly listing: Listing;
  /** The server's count of its records, where it gives one (cheaply, or beside a full listing). */
  readonly count: ServerCount | undefined;
  /** The records the server says it removed lately, asked only by a delta without a count. */
  readonly removed: RemovedRecords | undefined;
}

/** Whether this sync lists every record of `collection`: a first sync, `--reconcile`, or the period passed. */
function fullListingDue(
  cache: ProjectCache,
  collection: Collection,
  options: SyncOptions,
  now: number,
): boolean {
  return cache.db.syncState(collection).cursor === null || reconcileDue(cache, collection, options, now);
}

/** Whether `--reconcile` asks for a full listing of `collection`, or its period has passed since the last. */
function reconcileDue(
  cache: ProjectCache,
  collection: Collection,
  options: SyncOptions,
  now: number,
): boolean {
  const reconcileIntervalMs = options.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
  return (
    options.reconcile === true || now - cache.db.syncState(collection).last_full_ms >= reconcileIntervalMs
  );
}

/**
 * Where the cache keeps the comments' state (`Listing.commentsState`) its comments were last listed at: with
 * the HTTP validators, which it is one of (a token the server sends, compared for equality, never parsed).
 */
const COMMENTS_STATE_KEY = "svc:comments-state";

/**
 * Whether a delta sync may leave the comments unlisted: the records' listing of this sync brought the very
 * state the comments were last listed at, and no full listing of them is due.
 */
function commentsUnchanged(
  cache: ProjectCache,
  views: readonly ServerView[],
  options: SyncOptions,
  now: number,
): boolean {
  // A project without comments has no comment cursor: the state kept (only once they were listed) is what
  // says they were, so the cursor is not asked here.
  const state = views.find((view) => view.collection === "records")?.listing.commentsState;
  if (state === undefined || reconcileDue(cache, "comments", options, now)) return false;
  return cache.db.validator(COMMENTS_STATE_KEY)?.etag === state;
}

/** Keeps `records`' comments state once the comments have been listed after it (same transaction). */
function keepCommentsState(cache: ProjectCache, records: Pick<Listing, "commentsState"> | undefined): void {
  const state = records?.commentsState;
  if (state !== undefined) cache.db.keepValidator({ url: COMMENTS_STATE_KEY, etag: state, payload: "" });
}

/** Lists the records (all of them, or those changed since the cursor minus the overlap) and what tells of deletions. */
async function askServer(
  cache: ProjectCache,
  backend: ListingSource,
  collection: Collection,
  options: SyncOptions,
  now: number,
  counted: ServerCount | undefined,
): Promise<ServerView> {
  const before = cache.db.syncState(collection);
  const full = fullListingDue(cache, collection, options, now);
  const since =
    before.cursor === null
      ? undefined
      : new Date(Date.parse(before.cursor) - backend.overlapMs).toISOString();
  backend.useValidators?.(validatorStore(cache));
  // A full listing keeps the server's count beside it (`count_at_full`): asked before it, so that a record
  // removed while the pages are read is still counted and the next delta's count tells.
  const countedBefore = full ? (counted ?? (await backend.countLive?.())) : undefined;
  const listing = await listRecords(backend, full ? undefined : since, collection);
  options.trace?.(`listed ${listing.records.length} ${collection} (${full ? "full" : `since ${since}`})`);
  // A delta cannot show a deletion: the server's count of its records, where it gives one cheaply, can; else
  // the records it says it removed lately.
  const said: ServerCount | undefined =
    listing.liveCount !== undefined ? { count: listing.liveCount, approximate: false } : undefined;
  const count = full
    ? (said ?? countedBefore)
    : listing.complete
      ? (said ?? (await backend.countLive?.()))
      : undefined;
  const removed: RemovedRecords | undefined =
    full || count !== undefined ? undefined : await backend.listRemoved?.();
  return { collection, full, listing, count, removed };
}

/**
 * Writes what the server said of one collection into the cache; call it in one transaction, then
 * `commitSync`. `differs`: the server holds another number of the collection's rows than the cache after
 * this delta (one was deleted there, or created and not yet listed), so the caller lists everything, once.
 */
function applyServerView(
  cache: ProjectCache,
  backend: Backend,
  view: ServerView,
  now: number,
): Omit<SyncResult, "commit" | "tip"> & {
  readonly collection: Collection;
  readonly differs: boolean;
  readonly audit: Record<string, unknown>;
} {
  const { collection, full, listing, count, removed } = view;
  const state = cache.db.syncState(collection);
  // A delta sync looks up only what it listed; only a full listing needs every record (to find deletions).
  const live = full
    ? cache.db.liveRecordsOf(collection)
    : cache.db.liveRecordsFor(listing.records.map((record) => record.key));
  // Asked after the listing: a record it names is removed, even when the (older) listing had it.
  const gone = new Set(removed?.keys ?? []);
  const { changed, cursor } = rememberListed(cache, backend, listing, live, gone, state.cursor);
  keepValidators(cache, listing);
  const deleted = markDeletions(cache, view, live, gone);
  const complete = full && listing.complete;
  const liveAfter = complete || count !== undefined ? cache.db.liveCountOf(collection) : undefined;
  cache.db.setSyncState(
    {
      cursor,
      last_sync_ms: now,
      last_full_ms: complete ? now : state.last_full_ms,
      // The server's own count where it gave one: an approximate count that keeps saying it is lag, whether
      // it lags behind a deletion the listing found or a creation a delta found (or counts what the listing
      // never shows): not taken for a deletion, and no full listing on every fetch because of it.
      count_at_full: complete ? (count?.count ?? liveAfter ?? null) : state.count_at_full,
    },
    collection,
  );
  // An approximate count that still says what it said at the last full listing is the count lagging, not
  // a deletion.
  const differs =
    !full &&
    count !== undefined &&
    count.count !== liveAfter &&
    !(count.approximate && count.count === state.count_at_full);
  // Audited once the commit is written (`sync`), which the row names.
  const audit = {
    full,
    listed: listing.records.length,
    changed,
    deleted,
    ...(count === undefined ? {} : { serverCount: count.count, cacheCount: liveAfter }),
    ...(removed === undefined
      ? {}
      : { removedNamed: removed.keys.length, removedComplete: removed.complete }),
  };
  return { collection, full, deletions: deletionsChecked(view), changed, deleted, differs, audit };
}

/**
 * Stores each listed record the cache does not hold as it is (nor one the server named removed); returns
 * how many changed and the new cursor (the newest `updated_at` seen, held back to the listing's ceiling).
 */
function rememberListed(
  cache: ProjectCache,
  backend: Backend,
  listing: Listing,
  live: LiveRecords,
  gone: ReadonlySet<string>,
  cursorBefore: string | null,
): { changed: number; cursor: string | null } {
  let changed = 0;
  let cursor = cursorBefore;
  for (const record of listing.records) {
    if (cursor === null || record.updatedAt > cursor) cursor = record.updatedAt;
    const known = live.get(record.key);
    if (
      gone.has(record.key) ||
      (known &&
        known.version === record.version &&
        known.updated_at === record.updatedAt &&
        known.path === record.path)
    ) {
      continue;
    }
    if (rememberRecord(cache, backend, record, known)) changed++;
  }
  return { changed, cursor: ceiledCursor(cursor, cursorBefore, listing) };
}

/**
 * Marks deleted what a complete full listing lacks and what the server named removed; returns how many.
 * `live`: the records the cache held before the listing was applied.
 */
function markDeletions(
  cache: ProjectCache,
  { full, listing }: ServerView,
  live: LiveRecords,
  gone: ReadonlySet<string>,
): number {
  let deleted = 0;
  if (full && listing.complete) {
    const present = new Set([...listing.records.map((record) => record.key), ...(listing.unchanged ?? [])]);
    for (const key of live.keys()) {
      if (!present.has(key)) {
        cache.db.markDeleted(key);
        deleted++;
      }
    }
  }
  for (const key of cache.db.liveRecordsFor([...gone]).keys()) {
    cache.db.markDeleted(key);
    deleted++;
  }
  return deleted;
}

/** How this sync looked for records deleted on the server (`SyncResult.deletions`). */
function deletionsChecked({ full, listing, count, removed }: ServerView): SyncResult["deletions"] {
  if (full && listing.complete) return "listed";
  if (count !== undefined) return "counted";
  return removed?.complete ? "named" : "unchecked";
}
