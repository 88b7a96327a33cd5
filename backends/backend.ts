/**
 * The interface every backend implements (DESIGN.md §6). A backend turns the server's records into
 * `BackendRecord`s (key, file path, concurrency token, the content the canonical renderer writes) and
 * carries out the writes a push plans, each guarded by the version the user based the edit on.
 */
import type { FieldValue, RecordContent, RecordSchema } from "./record.js";

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
  /** Who made this version, where the server says (the wiki: the version's author); `svc log` shows it. */
  readonly changedBy?: string;
}

export interface Listing {
  readonly records: readonly BackendRecord[];
  /** False when the server cut the listing short: deletions must not be inferred from it. */
  readonly complete: boolean;
  /**
   * Keys the server listed again without sending them (a `304 Not Modified` for a result page the cache
   * already holds): present, and as the cache has them. They count as listed when deletions are inferred.
   */
  readonly unchanged?: readonly string[];
  /** The validators of this listing's result pages, kept with the sync that applies it (never before). */
  readonly validators?: readonly Validator[];
  /**
   * Kept validators whose URL starts with this are dropped when this listing's are kept: those of earlier
   * delta listings, whose `since` will not be asked again.
   */
  readonly replacesValidators?: string;
  /**
   * The sync cursor must not move past this: the listing may have skipped records changed while it was
   * being read (offset pagination over a changing order), so the next delta sync asks again from here.
   */
  readonly cursorCeiling?: string;
  /**
   * How many records the server holds now, when the listing's own answer says so (the simulator's
   * `X-Svc-Live-Count` header, an extension of Document 1): a delta sync compares it with the cache's count
   * after applying the listing, and lists everything when they differ (a record was deleted on the server).
   */
  readonly liveCount?: number;
  /**
   * Where the project's comments stand, when the records' listing says (the simulator's
   * `X-Svc-Comments-State`, an extension of Document 1): an opaque token that changes with any change of a
   * comment. A delta sync whose records listing brings the token the last comments listing was read with
   * lists no comments: nothing changed there.
   */
  readonly commentsState?: string;
}

/** What `Backend.listRemoved` found. */
export interface RemovedRecords {
  readonly keys: readonly string[];
  /**
   * The answer named every record the server holds as removed (one result page held them all), so none
   * removed that way was missed; false when there were more than one answer holds.
   */
  readonly complete: boolean;
}

/**
 * An HTTP validator the cache keeps from an earlier answer: the `ETag` of the answer at `url`, and what the
 * backend needs to use a `304` in place of that answer (for a result page, the keys it listed; for one
 * record, the answer's body).
 */
export interface Validator {
  readonly url: string;
  readonly etag: string;
  readonly payload: string;
}

/** The validators of a project's cache. `remember` writes at once: only for answers about one record. */
export interface ValidatorStore {
  lookup(url: string): Validator | undefined;
  remember(validator: Validator): void;
}

export interface Backend {
  readonly kind: string;
  /** The project as the remote URL names it. */
  readonly project: string;
  readonly schema: RecordSchema;
  /** For messages: `sim project demo at http://127.0.0.1:7878`. */
  readonly description: string;
  /** The largest record file a push may send. */
  readonly maxRecordBytes: number;
  /** How far before the cursor a delta sync asks, to cover writes that landed in the same instant. */
  readonly overlapMs: number;
  listAll(): Promise<Listing>;
  /**
   * The records `listAll` gives, in batches as the server's answer arrives, for a first sync whose memory
   * must not grow with the project (cache/open.ts). A complete listing when the iteration ends without an
   * error. Backends whose listing is paginated anyway may leave it out: `listAll` serves then. A generator
   * may return what the listing said about itself (`Listing` without its records); else it is complete.
   */
  streamAll?(): AsyncIterable<readonly BackendRecord[]>;
  /** Records with `updatedAt >= since` (inclusive). */
  listChangedSince(since: string): Promise<Listing>;
  /**
   * How many records the server holds now, from one cheap request, for a backend whose delta listing does
   * not say (`Listing.liveCount`): a delta sync compares it with the cache's count, as above. `approximate`:
   * the server's count may lag behind recent changes (a count equal to the one the last full listing saw is
   * then not taken for a deletion).
   */
  countLive?(): Promise<{ readonly count: number; readonly approximate: boolean }>;
  /**
   * The records the server removed lately, from one cheap request, for a backend that gives no count (the
   * wiki: the space's pages in the trash, deleted or archived): a delta sync removes those the cache still
   * holds.
   */
  listRemoved?(): Promise<RemovedRecords>;
  /** Backends that make conditional requests are handed the cache's validators before a sync or a push. */
  useValidators?(store: ValidatorStore): void;
  /**
   * One read-only request, for `svc doctor`: resolves when the server accepts the credentials and knows the
   * project; throws the backend's usual error otherwise (a 401 names the credential variables, and its
   * `data.status` is the server's status).
   */
  probe?(): Promise<void>;
  /**
   * The records' comments (backends/comment.ts), where the backend has them and the user has not turned
   * them off (`git config svc.comments false`, `svc init --no-comments`). Set by the sim, the forge, the
   * tracker and the wiki, each an adapter of its `comments()` client (backends/<kind>/comment-source.ts).
   */
  readonly commentSource?: CommentSource;
}

/** The fields (writable ones only) and body a write sends; absent members are left as they are. */
export interface RecordChanges {
  readonly fields: Readonly<Record<string, FieldValue>>;
  readonly body?: string;
}

/** What the user's edit was based on: the concurrency token the write is conditional on. */
export interface BaseToken {
  readonly version: number | null;
  readonly updatedAt: string;
}

export type WriteOutcome =
  | { readonly kind: "ok"; readonly record: BackendRecord }
  /** The record changed on the server since the base (409 or a newer token). */
  | { readonly kind: "conflict"; readonly current: string }
  /** The record no longer exists on the server. */
  | { readonly kind: "gone" };

export type DeleteOutcome =
  /**
   * Removed; or, where the server cannot delete (the forge closes the issue instead), `record` is what
   * the record became and `note` says so to the user.
   */
  | { readonly kind: "ok"; readonly record?: BackendRecord; readonly note?: string }
  | Exclude<WriteOutcome, { kind: "ok" }>;

/** A record write a push plans, as a backend's check before the push's writes sees it (`checkWrites`). */
export interface WriteToCheck {
  readonly kind: "create" | "update";
  /** The file the write comes from. */
  readonly path: string;
  /** An update's record key. */
  readonly key?: string;
  readonly changes: RecordChanges;
  /** An update's record as the user's base had it. */
  readonly original?: RecordContent;
}

export interface WritableBackend extends Backend {
  /**
   * Why some of a push's planned record writes would be refused by rules only the server knows (the
   * tracker: a field off the edit screen, a value not among its allowed values, a read-only field;
   * the forge: a milestone title or an issue type the repository lacks, no push access):
   * asked once per push, after planning and before any write; each problem refuses the push as a planner's
   * problem does (helper/push-check.ts), naming its file. Reads only. Backends without such rules leave it out.
   */
  checkWrites?(
    writes: readonly WriteToCheck[],
  ): Promise<readonly { readonly path: string; readonly message: string }[]>;
  create(content: RecordChanges): Promise<BackendRecord>;
  /**
   * Writes `changes` if the record is still at `base`. `desired` is the whole record as the user wants it
   * (writable fields and body), for backends whose update replaces the record (the wiki's PUT).
   */
  update(key: string, changes: RecordChanges, base: BaseToken, desired: RecordContent): Promise<WriteOutcome>;
  remove(key: string, base: BaseToken): Promise<DeleteOutcome>;
}

export function isWritable(backend: Backend): backend is WritableBackend {
  return "create" in backend && "update" in backend && "remove" in backend;
}

/** A comment as every backend's comment client returns it (the vendor's shape, checked and made neutral). */
export interface ServerComment {
  /** The vendor's comment id as a string. */
  readonly id: string;
  /** The record's key as the backend's `BackendRecord.key` has it (sim "42", tracker "TEST-42"). */
  readonly parentKey: string;
  /** As written in the file: the login (forge), the display name with the account id, the sim's name. */
  readonly author: string;
  /** What "you" is compared with: forge login, tracker/wiki accountId, sim author name. */
  readonly authorId: string;
  /** As the file holds it. */
  readonly body: string;
  /** RFC 3339 as the server sends it. */
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly version: number | null;
}

/** A listing of comments, like `Listing` of records. */
export interface CommentListing {
  readonly comments: readonly ServerComment[];
  /** False when the server cut the listing short: deletions must not be inferred from it. */
  readonly complete: boolean;
  /** How many comments the project holds now, when the listing's answer says (the sim's `X-Svc-Live-Count`). */
  readonly liveCount?: number;
  /** Ids of comments listed again without being sent (a `304` for a kept result page): as `Listing.unchanged`. */
  readonly unchanged?: readonly string[];
  /** As `Listing.validators`, `replacesValidators` and `cursorCeiling` (the forge's conditional listing). */
  readonly validators?: readonly Validator[];
  readonly replacesValidators?: string;
  readonly cursorCeiling?: string;
}

/**
 * Whether `parentKey` is a record the sync knows (the cache's, or this sync's listing's), and `all()` of them:
 * what `CommentSource`'s listings are handed. Both read the cache only when first asked.
 */
export type IsRecord = ((parentKey: string) => boolean) & { readonly all: () => ReadonlySet<string> };

/** Who the user is on the server, as comments name their authors. */
export interface CommentIdentity {
  /** Compared with `ServerComment.authorId`. */
  readonly id: string;
  /** As a comment file's `author` names the user (shown in messages). */
  readonly author: string;
}

export type CommentWriteOutcome =
  | { readonly kind: "ok"; readonly comment: ServerComment }
  /** The comment changed on the server since the base (a 409, or a newer `updated_at`). */
  | { readonly kind: "conflict"; readonly current: string }
  | { readonly kind: "gone" };

/** What a delete of a comment came to: done, or why not (as for an update). */
export type CommentDeleteOutcome = Exclude<CommentWriteOutcome, { kind: "ok" }> | { readonly kind: "ok" };

/** The comments of a backend that has them: `Backend.commentSource`. */
export interface CommentSource {
  /** Whether comment files carry a `version` (sim, wiki). */
  readonly versioned: boolean;
  /** The longest body the server takes, in UTF-16 code units, where it says (forge 65,536; tracker 32,767). */
  readonly bodyMaxLength?: number;
  /**
   * Why the server cannot take `body` as a comment, or undefined when it can, where the backend's rule is
   * not a count of the Markdown's characters (the tracker counts the ADF's text); checked before any write.
   */
  bodyProblem?(body: string): string | undefined;
  /**
   * Every live comment of the project. `isRecord`: the project's records as this sync knows them (the cache's
   * and those its records listing just named), for a backend whose comment listing covers more than the
   * project's records: the forge's holds pull requests' comments (it asks `isRecord(key)`), the wiki's every
   * space of the site (it keeps those on `isRecord.all()`). Others ignore it.
   */
  listAll(isRecord?: IsRecord): Promise<CommentListing>;
  /** Comments with `updatedAt >= since` (inclusive); `isRecord` as for `listAll`. */
  listChangedSince(since: string, isRecord?: IsRecord): Promise<CommentListing>;
  /** Posts one comment on record `parentKey`. `author`: the name the sim records (others ignore it). */
  create(parentKey: string, body: string, author: string): Promise<ServerComment>;
  /**
   * Replaces the body of comment `id` if it is still at `base`. `parentKey`: the record it is on, for a
   * backend whose comment paths name it (the tracker's `/issue/{key}/comment/{id}`).
   */
  update(id: string, body: string, base: BaseToken, parentKey: string): Promise<CommentWriteOutcome>;
  /** Deletes comment `id` (on record `parentKey`) if it is still at `base`. */
  remove(id: string, base: BaseToken, parentKey: string): Promise<CommentDeleteOutcome>;
  /**
   * Who the user is, asked of the server where it knows (forge `GET /user`); `configured` is what the
   * user names (`git config svc.author`, else git's author email), which the sim takes as is.
   */
  whoAmI(configured: string | undefined): Promise<CommentIdentity>;
}
