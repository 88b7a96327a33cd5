/**
 * A listing as a sync reads and keeps it, for the first sync of a cache (first-sync.ts) and every later one
 * (sync.ts): a record rendered by the one renderer and stored with its blob, the listing read with progress,
 * its validators and cursor ceiling kept, the records the comments' listing is handed (`knownRecords`), and the
 * comments' state the sync compares (`COMMENTS_STATE_KEY`).
 */
import type { Backend, BackendRecord, IsRecord, Listing, ValidatorStore } from "../backends/backend.js";
import { schemaForKey } from "../backends/comment.js";
import { renderRecordFile } from "../backends/record.js";
import { formatCount } from "../core/count.js";
import { progress } from "../core/progress.js";
import { hashObject } from "../git/objects.js";
import type { ProjectCache } from "./cache.js";
import type { Collection } from "./db.js";

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
export function storeRecord(
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

/**
 * Where the cache keeps the `rendering` of the schema its record files were rendered with
 * (`RecordSchema.rendering`; "" for the first rendering): a sync that finds another renders every record anew.
 */
export const RENDERING_KEY = "svc:rendering";

/** The `rendering` the cache's record files were rendered with ("" when none is kept: the first). */
export function renderedWith(cache: ProjectCache): string {
  return cache.db.validator(RENDERING_KEY)?.etag ?? "";
}

/** The `rendering` of `backend`'s schema now ("" for the first). */
export function renderingOf(backend: Backend): string {
  return backend.schema.rendering ?? "";
}

/** Keeps that the cache's record files are rendered as `backend`'s schema renders them now (same transaction). */
export function keepRendering(cache: ProjectCache, backend: Backend): void {
  cache.db.keepValidator({ url: RENDERING_KEY, etag: renderingOf(backend), payload: "" });
}

/**
 * The cache's validators without those of HTTP answers (svc's own entries, `svc:…`, stay): a listing made
 * with it is answered whole, never `304`, so every record it lists can be rendered anew.
 */
export function ownEntriesOnly(store: ValidatorStore): ValidatorStore {
  return {
    lookup: (url) => (url.startsWith("svc:") ? store.lookup(url) : undefined),
    remember: (validator) => store.remember(validator),
  };
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

/**
 * Where the comments' cursor starts after a complete listing that found none: at the records' cursor (a
 * comment written after the listing is newer than every record it saw), so the next fetch asks a delta, not
 * the whole listing again (the wiki's covers the site, the tracker's is a search of every issue). Not for a
 * listing that kept validators (the forge's): asked again as it was, it is answered 304 for nothing, while
 * a delta from elsewhere would be a new question answered in full once.
 */
export function emptyListingCursor(
  listing: Pick<Listing, "complete" | "validators">,
  recordsCursor: string | null,
): string | null {
  return listing.complete && (listing.validators ?? []).length === 0 ? recordsCursor : null;
}

/** `cursor`, held back to the listing's ceiling (but never behind `before`, the cursor the sync started from). */
export function ceiledCursor(
  cursor: string | null,
  before: string | null,
  listing: Pick<Listing, "cursorCeiling">,
): string | null {
  const ceiling = listing.cursorCeiling;
  if (ceiling === undefined || cursor === null || cursor <= ceiling) return cursor;
  return before !== null && before > ceiling ? before : ceiling;
}

/** Keeps the listing's validators in place of those it replaces; call it in the transaction that applies it. */
export function keepValidators(
  cache: ProjectCache,
  listing: Pick<Listing, "validators" | "replacesValidators">,
): void {
  if (listing.replacesValidators !== undefined) cache.db.dropValidators(listing.replacesValidators);
  for (const validator of listing.validators ?? []) cache.db.keepValidator(validator);
}

/** The live records of the cache, and those of `listed` (keys read once, when first asked). */
export function knownRecords(cache: ProjectCache, listed: ReadonlySet<string> = new Set()): IsRecord {
  let keys: Set<string> | undefined;
  const all = () => {
    keys ??= new Set([...cache.db.liveRecordsOf("records").keys(), ...listed]);
    return keys;
  };
  return Object.assign((key: string) => all().has(key), { all });
}

/**
 * Where the cache keeps the comments' state (`Listing.commentsState`) its comments were last listed at: with
 * the HTTP validators, which it is one of (a token the server sends, compared for equality, never parsed).
 */
export const COMMENTS_STATE_KEY = "svc:comments-state";

/** Keeps `records`' comments state once the comments have been listed after it (same transaction). */
export function keepCommentsState(
  cache: ProjectCache,
  records: Pick<Listing, "commentsState"> | undefined,
): void {
  const state = records?.commentsState;
  if (state !== undefined) cache.db.keepValidator({ url: COMMENTS_STATE_KEY, etag: state, payload: "" });
}
