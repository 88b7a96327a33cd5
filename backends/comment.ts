/**
 * Comments as records of their own (DESIGN.md §2 "Comments", issue 34): the neutral shape every backend's
 * comment client returns (`ServerComment`), the source a backend offers them through (`CommentSource`),
 * the comment file's schema, its path, and the conversion into the `BackendRecord` the cache stores.
 *
 * A comment is a file `comments/<record file name without .md>/<comment id>.md`: frontmatter `id, author,
 * created_at, updated_at` (+ `version` where the backend has one), all server-controlled, then the body byte
 * for byte, rendered by the one canonical renderer (backends/record.ts). In the cache a comment is a row of
 * the same records table as the records, keyed `comment:<id>`: a record key never holds a colon on any
 * backend (sim and forge numbers, tracker `TEST-42`, wiki page ids), so the two never collide, and the sync
 * and the push tell them apart by the key (or the path) alone.
 */
import type { Backend, BackendRecord, BaseToken, Listing } from "./backend.js";
import { field, type RecordSchema } from "./record.js";

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
}

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

/** The comments of a backend that has them: `Backend.commentSource`. */
export interface CommentSource {
  /** Whether comment files carry a `version` (sim, wiki). */
  readonly versioned: boolean;
  /** The longest body the server takes, in UTF-16 code units, where it says (forge 65,536; tracker 32,767). */
  readonly bodyMaxLength?: number;
  /** Every live comment of the project. */
  listAll(): Promise<CommentListing>;
  /** Comments with `updatedAt >= since` (inclusive). */
  listChangedSince(since: string): Promise<CommentListing>;
  /** Posts one comment on record `parentKey`. `author`: the name the sim records (others ignore it). */
  create(parentKey: string, body: string, author: string): Promise<ServerComment>;
  /** Replaces the body of comment `id` if it is still at `base`. */
  update(id: string, body: string, base: BaseToken): Promise<CommentWriteOutcome>;
  /** Deletes comment `id` if it is still at `base`. */
  remove(id: string, base: BaseToken): Promise<Exclude<CommentWriteOutcome, { kind: "ok" }> | { kind: "ok" }>;
  /**
   * Who the user is, asked of the server where it knows (forge `GET /user`); `configured` is what the
   * user's git config names (`svc.author`, else `user.email`), which the sim takes as is.
   */
  whoAmI(configured: string | undefined): Promise<CommentIdentity>;
}

/** The folder of comment files. */
export const COMMENTS_FOLDER = "comments";

/** The cache key prefix of comments (never part of a record key). */
export const COMMENT_KEY_PREFIX = "comment:";

export function commentKey(id: string): string {
  return `${COMMENT_KEY_PREFIX}${id}`;
}

export function isCommentKey(key: string): boolean {
  return key.startsWith(COMMENT_KEY_PREFIX);
}

/** The comment id of a cache key `comment:<id>`. */
export function commentIdOf(key: string): string {
  return key.slice(COMMENT_KEY_PREFIX.length);
}

export function isCommentPath(path: string): boolean {
  return path.startsWith(`${COMMENTS_FOLDER}/`);
}

/**
 * The comment schema of a backend whose records have `recordSchema`: same `kind`, folder `comments`, every
 * field server-controlled. `version` only where the backend's comments have one.
 */
export function commentSchema(
  recordSchema: RecordSchema,
  versioned: boolean,
  bodyMaxLength?: number,
): RecordSchema {
  return {
    ...(bodyMaxLength === undefined ? {} : { bodyMaxLength }),
    // Every backend refuses an empty comment.
    bodyProblem: (body) =>
      body.trim() === "" ? "the comment is empty; write its text below the `---` line" : undefined,
    kind: recordSchema.kind,
    folder: COMMENTS_FOLDER,
    fields: [
      field("id", "numeric-id", { serverControlled: true, required: true }),
      field("author", "string", { serverControlled: true, required: true }),
      field("created_at", "timestamp", { serverControlled: true, required: true }),
      field("updated_at", "timestamp", { serverControlled: true, required: true }),
      ...(versioned ? [field("version", "integer", { serverControlled: true, required: true })] : []),
    ],
    tokenFields: { version: versioned ? "version" : undefined, updatedAt: "updated_at" },
    // A comment's file depends on its record's file: the path is kept with the comment (BackendRecord.path).
    fileName: (key) => `${COMMENTS_FOLDER}/${commentIdOf(key)}.md`,
  };
}

/** `issues/0042.md` → `0042`: the stem that names a record's comment folder. */
export function recordStem(recordPath: string): string {
  const name = recordPath.slice(recordPath.lastIndexOf("/") + 1);
  return name.endsWith(".md") ? name.slice(0, -3) : name;
}

/** `comments/0042/1000000001.md` for comment `id` of the record whose file is `recordPath`. */
export function commentPath(recordPath: string, id: string): string {
  return `${COMMENTS_FOLDER}/${recordStem(recordPath)}/${id}.md`;
}

/** `comments/<stem>/<name>.md` split, or undefined for any other path (deeper, shallower, not `.md`). */
export function parseCommentPath(path: string): { stem: string; name: string } | undefined {
  const match = /^comments\/([^/]+)\/([^/]+)\.md$/.exec(path);
  return match ? { stem: match[1] as string, name: match[2] as string } : undefined;
}

/**
 * The record the cache stores for `comment`, on the record whose file is `recordPath`
 * (`schema.fileName(comment.parentKey)`).
 */
export function commentToRecord(
  comment: ServerComment,
  recordPath: string,
  versioned: boolean,
): BackendRecord {
  const fields = {
    id: comment.id,
    author: comment.author,
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    ...(versioned ? { version: comment.version } : {}),
  };
  return {
    key: commentKey(comment.id),
    path: commentPath(recordPath, comment.id),
    version: versioned ? comment.version : null,
    updatedAt: comment.updatedAt,
    content: { fields, body: comment.body },
    raw: { ...comment },
  };
}

/**
 * Whether a comment whose file names `author` is the user's: its author is the user's name, or (the
 * display name with the account id: tracker, wiki) ends with the user's id in parentheses.
 */
export function isOwnComment(author: string, me: CommentIdentity): boolean {
  return author === me.author || author === me.id || author.endsWith(` (${me.id})`);
}

const schemas = new WeakMap<Backend, RecordSchema>();

/** The comments of `backend` and their schema, or undefined where it has none (or they are turned off). */
export function commentsOf(backend: Backend): { source: CommentSource; schema: RecordSchema } | undefined {
  const source = backend.commentSource;
  if (!source) return undefined;
  let schema = schemas.get(backend);
  if (!schema) {
    schema = commentSchema(backend.schema, source.versioned, source.bodyMaxLength);
    schemas.set(backend, schema);
  }
  return { source, schema };
}

/** The schema of the file whose cache key is `key`: a comment's, or the backend's records'. */
export function schemaForKey(backend: Backend, key: string): RecordSchema {
  return (isCommentKey(key) && commentsOf(backend)?.schema) || backend.schema;
}

/** Like `schemaForKey`, by the file's path. */
export function schemaForPath(backend: Backend, path: string): RecordSchema {
  return (isCommentPath(path) && commentsOf(backend)?.schema) || backend.schema;
}

/** A comment listing as a listing of the records the cache stores (`commentToRecord`). */
export function commentRecordsOf(backend: Backend, listing: CommentListing, versioned: boolean): Listing {
  const records = listing.comments.map((comment) =>
    commentToRecord(comment, backend.schema.fileName(comment.parentKey), versioned),
  );
  return {
    records,
    complete: listing.complete,
    ...(listing.liveCount === undefined ? {} : { liveCount: listing.liveCount }),
  };
}

/**
 * The comments of `backend` as the sync lists records (cache/sync.ts): every one, or those changed since,
 * as `BackendRecord`s; undefined where the backend has none.
 */
export function commentListingSource(
  backend: Backend,
): Pick<Backend, "description" | "overlapMs" | "listAll" | "listChangedSince"> | undefined {
  const source = backend.commentSource;
  if (!source) return undefined;
  return {
    description: backend.description,
    overlapMs: backend.overlapMs,
    listAll: async () => commentRecordsOf(backend, await source.listAll(), source.versioned),
    listChangedSince: async (since) =>
      commentRecordsOf(backend, await source.listChangedSince(since), source.versioned),
  };
}
