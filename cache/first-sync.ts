/**
 * The first sync of a new cache (cache/open.ts builds it): a full listing read batch by batch as it arrives
 * (`FullListing`), applied where no other process looks yet, then the first state commit; the comments are
 * listed in full after the records and stored with that commit.
 */
import type { Backend, BackendRecord, Listing } from "../backends/backend.js";
import { commentListingSource } from "../backends/comment.js";
import { formatCount } from "../core/count.js";
import { progress } from "../core/progress.js";
import type { ProjectCache } from "./cache.js";
import type { FirstStateBlobs } from "./first-state.js";
import {
  ceiledCursor,
  emptyListingCursor,
  keepCommentsState,
  keepRendering,
  keepValidators,
  knownRecords,
  listRecords,
  renderBlob,
  storeRecord,
} from "./listing.js";
import { writeSyncCommit } from "./state-commit.js";
import type { SyncResult } from "./sync.js";

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
  // The records are in the cache by now (stored batch by batch above).
  const comments = commentListingSource(backend, knownRecords(cache));
  const commentListing = comments && (await listRecords(comments, undefined, "comments"));
  if (commentListing) options.trace?.(`listed ${commentListing.records.length} comments (full)`);
  return cache.db.exclusive(() => {
    keepValidators(cache, said);
    keepRendering(cache, backend);
    if (commentListing) {
      importComments(cache, backend, commentListing, now, options.kept, ceiledCursor(cursor, null, said));
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

/**
 * A first sync's comments: stored with the records' first state commit, their sync state beside.
 * `recordsCursor`: where an empty listing's cursor starts (a comment written after it is newer than every
 * record listed before it).
 */
function importComments(
  cache: ProjectCache,
  backend: Backend,
  listing: Listing,
  now: number,
  kept: FirstStateBlobs | undefined,
  recordsCursor: string | null,
): void {
  let cursor: string | null = null;
  for (const record of listing.records) {
    if (cursor === null || record.updatedAt > cursor) cursor = record.updatedAt;
    const blob = renderBlob(backend, record);
    storeRecord(cache, record, blob);
    kept?.add(blob.content);
  }
  keepValidators(cache, listing);
  cache.db.setSyncState(
    {
      cursor: ceiledCursor(cursor ?? emptyListingCursor(listing, recordsCursor), null, listing),
      last_sync_ms: now,
      last_full_ms: listing.complete ? now : 0,
      count_at_full: listing.complete ? (listing.liveCount ?? listing.records.length) : null,
    },
    "comments",
  );
}
