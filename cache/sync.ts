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
import type { Backend, IsRecord, Listing, RemovedRecords } from "../backends/backend.js";
import { commentListingSource } from "../backends/comment.js";
import type { ProjectCache } from "./cache.js";
import type { Collection } from "./db.js";
import {
  COMMENTS_STATE_KEY,
  ceiledCursor,
  emptyListingCursor,
  keepCommentsState,
  keepRendering,
  keepValidators,
  knownRecords,
  type ListingSource,
  listRecords,
  ownEntriesOnly,
  rememberRecord,
  renderedWith,
  renderingOf,
  validatorStore,
} from "./listing.js";
import { commitSync } from "./state-commit.js";

export { type ListingSource, listRecords, rememberRecord, renderBlob, validatorStore } from "./listing.js";
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

/**
 * The collections a sync of `backend` lists, each with its own cursor and count: records, then comments.
 * `isRecord`: the live records once the records are listed (what the comments' listing keeps).
 */
function collectionsOf(
  backend: Backend,
  isRecord: IsRecord,
): { collection: Collection; source: ListingSource }[] {
  const comments = commentListingSource(backend, isRecord);
  return [
    { collection: "records", source: backend },
    ...(comments ? [{ collection: "comments" as const, source: comments }] : []),
  ];
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
  // Files rendered by an older svc (or, on the tracker, with another field list): every record is listed,
  // whole (no 304 holds a record back), and rendered anew, so this cache shows what a new clone shows.
  backend.useValidators?.(validatorStore(cache));
  const rerender = renderedWith(cache) !== renderingOf(backend);
  if (rerender)
    options.trace?.("the cache's files were rendered otherwise: every record is listed and rendered anew");
  // The records are asked first: a comment's parent is a record of the cache or of this records listing.
  const listed = new Set<string>();
  const isRecord = knownRecords(cache, listed);
  for (const { collection, source } of collectionsOf(backend, isRecord)) {
    if (only && !only.has(collection)) continue;
    if (collection === "comments" && commentsUnchanged(cache, views, options, now)) {
      options.trace?.("the comments are as they were at their last listing: not listed");
      continue;
    }
    const whole = rerender && collection === "records";
    const view = await askServer(cache, source, collection, options, now, counted[collection], whole);
    if (collection === "records") for (const record of view.listing.records) listed.add(record.key);
    views.push(view);
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
 * Whether a delta sync may leave the comments unlisted: the records' listing of this sync brought the very
 * state the comments were last listed at, and no full listing of them is due.
 */
function commentsUnchanged(
  cache: ProjectCache,
  views: readonly ServerView[],
  options: SyncOptions,
  now: number,
): boolean {
  // The comment cursor does not say they were listed (an empty listing starts it at the records'): the
  // state kept (only once they were listed) is what says they were, so the cursor is not asked here.
  const state = views.find((view) => view.collection === "records")?.listing.commentsState;
  if (state === undefined || reconcileDue(cache, "comments", options, now)) return false;
  return cache.db.validator(COMMENTS_STATE_KEY)?.etag === state;
}

/** Lists the records (all of them, or those changed since the cursor minus the overlap) and what tells of deletions. */
async function askServer(
  cache: ProjectCache,
  backend: ListingSource,
  collection: Collection,
  options: SyncOptions,
  now: number,
  counted: ServerCount | undefined,
  whole = false,
): Promise<ServerView> {
  const before = cache.db.syncState(collection);
  const full = whole || fullListingDue(cache, collection, options, now);
  const since =
    before.cursor === null
      ? undefined
      : new Date(Date.parse(before.cursor) - backend.overlapMs).toISOString();
  backend.useValidators?.(whole ? ownEntriesOnly(validatorStore(cache)) : validatorStore(cache));
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
  // Compared after the listing: the tracker's full listing asks its field list again, and a field renamed
  // there renders its records otherwise.
  const records = collection === "records";
  const rerender = records && full && renderedWith(cache) !== renderingOf(backend);
  const listed = rememberListed(cache, backend, listing, live, gone, state.cursor, rerender);
  const { changed } = listed;
  // A project without comments: where the next listing of them starts (listing.ts `emptyListingCursor`).
  const cursor =
    listed.cursor ??
    (collection === "comments" && full
      ? emptyListingCursor(listing, cache.db.syncState("records").cursor)
      : null);
  keepValidators(cache, listing);
  const deleted = markDeletions(cache, view, live, gone);
  const complete = full && listing.complete;
  if (records && complete) keepRendering(cache, backend);
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
 * `rerender`: every listed record is rendered anew, also one whose version and time the cache holds.
 */
function rememberListed(
  cache: ProjectCache,
  backend: Backend,
  listing: Listing,
  live: LiveRecords,
  gone: ReadonlySet<string>,
  cursorBefore: string | null,
  rerender: boolean,
): { changed: number; cursor: string | null } {
  let changed = 0;
  let cursor = cursorBefore;
  for (const record of listing.records) {
    if (cursor === null || record.updatedAt > cursor) cursor = record.updatedAt;
    const known = live.get(record.key);
    if (
      gone.has(record.key) ||
      (known &&
        !rerender &&
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
