/**
 * The interface every backend implements (DESIGN.md §6), as far as the read path needs it. A backend turns
 * the server's records into `BackendRecord`s: the record's key, its file path, its concurrency token and
 * the content the canonical renderer writes.
 */
import type { RecordContent, RecordSchema } from "./record.js";

export interface BackendRecord {
  /** Stable identity on the server: the sim's issue id as a string. */
  readonly key: string;
  /** The file in the tree: `issues/0042.md`. */
  readonly path: string;
  /** The server's version number, where it has one. */
  readonly version: number | null;
  /** RFC 3339; the delta-sync cursor is the newest of these. */
  readonly updatedAt: string;
  readonly content: RecordContent;
  /** The record as the server sent it (after validation), kept in the cache. */
  readonly raw: unknown;
}

export interface Listing {
  readonly records: readonly BackendRecord[];
  /** False when the server cut the listing short: deletions must not be inferred from it. */
  readonly complete: boolean;
}

export interface Backend {
  readonly kind: string;
  /** The project as the remote URL names it. */
  readonly project: string;
  readonly schema: RecordSchema;
  /** For messages: `sim project demo at http://127.0.0.1:7878`. */
  readonly description: string;
  /** How far before the cursor a delta sync asks, to cover writes that landed in the same instant. */
  readonly overlapMs: number;
  listAll(): Promise<Listing>;
  /** Records with `updatedAt >= since` (inclusive). */
  listChangedSince(since: string): Promise<Listing>;
}
