/**
 * Comments as records of their own (DESIGN.md §2 "Comments", issue 34): the neutral shape every backend's
 * comment client returns (`ServerComment`) and the source a backend offers them through (`CommentSource`),
 * both declared with the Backend interface in backend.ts and re-exported here; the comment file's schema, its path, and the conversion into the `BackendRecord` the cache stores.
 *
 * A comment is a file `comments/<record file name without .md>/<comment id>.md`: frontmatter `id, author,
 * created_at, updated_at` (+ `version` where the backend has one), all server-controlled, then the body byte
 * for byte, rendered by the one canonical renderer (backends/record.ts). In the cache a comment is a row of
 * the same records table as the records, keyed `comment:<id>`: a record key never holds a colon on any
 * backend (sim and forge numbers, tracker `TEST-42`, wiki page ids), so the two never collide, and the sync
 * and the push tell them apart by the key (or the path) alone.
 */
import type {
  Backend,
  BackendRecord,
  CommentIdentity,
  CommentListing,
  CommentSource,
  IsRecord,
  Listing,
  ServerComment,
} from "./backend.js";
import { field, type RecordSchema } from "./record.js";

export type {
  CommentDeleteOutcome,
  CommentIdentity,
  CommentListing,
  CommentSource,
  CommentWriteOutcome,
  IsRecord,
  ServerComment,
} from "./backend.js";

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
  bodyProblem?: (body: string) => string | undefined,
): RecordSchema {
  return {
    ...(bodyMaxLength === undefined ? {} : { bodyMaxLength }),
    // Every backend refuses an empty comment; then the backend's own rule, where it has one.
    bodyProblem: (body) =>
      body.trim() === "" ? "the comment is empty; write its text below the `---` line" : bodyProblem?.(body),
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
    schema = commentSchema(
      backend.schema,
      source.versioned,
      source.bodyMaxLength,
      source.bodyProblem?.bind(source),
    );
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
    ...(listing.unchanged === undefined ? {} : { unchanged: listing.unchanged.map(commentKey) }),
    ...(listing.validators === undefined ? {} : { validators: listing.validators }),
    ...(listing.replacesValidators === undefined ? {} : { replacesValidators: listing.replacesValidators }),
    ...(listing.cursorCeiling === undefined ? {} : { cursorCeiling: listing.cursorCeiling }),
  };
}

/**
 * The comments of `backend` as the sync lists records (cache/sync.ts): every one, or those changed since,
 * as `BackendRecord`s; undefined where the backend has none. `isRecord`: the live records as the sync knows
 * them when it lists the comments (`CommentSource.listAll`).
 */
export function commentListingSource(
  backend: Backend,
  isRecord?: IsRecord,
): Pick<Backend, "description" | "overlapMs" | "listAll" | "listChangedSince"> | undefined {
  const source = backend.commentSource;
  if (!source) return undefined;
  return {
    description: backend.description,
    overlapMs: backend.overlapMs,
    listAll: async () => commentRecordsOf(backend, await source.listAll(isRecord), source.versioned),
    listChangedSince: async (since) =>
      commentRecordsOf(backend, await source.listChangedSince(since, isRecord), source.versioned),
  };
}

/** `IsRecord` over a fixed set of record keys. */
export function isRecordOf(keys: Iterable<string>): IsRecord {
  const all = new Set(keys);
  return Object.assign((key: string) => all.has(key), { all: () => all });
}
