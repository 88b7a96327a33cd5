/**
 * The writes of a push, in order (the records' creates and updates, the comments' creates, updates and
 * deletes, the records' deletes), each noted in the cache as soon as the server
 * answers it, so that a push stopped anywhere is finished by the next one without writing anything twice:
 * a create goes through the create journal (create-journal.ts) before it is sent, an update or a delete the
 * server already made is found by the next push's sync. Says how far the writes got when one fails (a
 * refusal, no answer, a server fault) or the cache cannot note one (a local fault).
 */

import { dirname } from "node:path";
import type { WriteOutcome } from "../backends/backend.js";
import {
  commentIdOf,
  commentsOf,
  commentToRecord,
  isCommentPath,
  parseCommentPath,
  type ServerComment,
} from "../backends/comment.js";
import type { ProjectCache } from "../cache/cache.js";
import type { Collection } from "../cache/db.js";
import { asLocalFault, isLocalFault } from "../cache/local-fault.js";
import { rememberRecord, syncCommitMessage, writeStateCommit } from "../cache/sync.js";
import { formatCount } from "../core/count.js";
import { SvcError, shellWord, terminalSafe } from "../core/errors.js";
import { BackendUnreachableError, RedirectError, RetryLaterError } from "../core/http.js";
import { progress } from "../core/progress.js";
import { rerunCommand } from "../git/user-command.js";
import { journalCreate, journalCreated } from "./create-journal.js";
import type { PushContext, PushReply, PushRun } from "./push-context.js";
import { crashPoint, dieAfterWrites } from "./push-crash.js";
import type { PlannedWrite } from "./push-plan.js";
import { againWhen, conflictAt, describeWrite, redirectMessage } from "./push-refusals.js";

/**
 * The writes in order, with progress on stderr while they last: a record's own write comes before its
 * comments' (a new comment moves the forge's issue's `updated_at`, which the record's write compares with its
 * base), and a record's deletion after them (the sim deletes a record's comments with it).
 */
export async function applyWrites(
  context: PushRun,
  writes: readonly PlannedWrite[],
  commit: string,
  worktree: string,
): Promise<PushReply | undefined> {
  const records = { create: 0, update: 1, delete: 5 } as const;
  const comments = { create: 2, update: 3, delete: 4 } as const;
  const rank = (write: PlannedWrite) => (isCommentPath(write.path) ? comments : records)[write.kind];
  const sorted = [...writes].sort((a, b) => rank(a) - rank(b));
  const total = sorted.length;
  context.tally.total = total;
  const phase = progress().start(
    `writing ${formatCount(total)} ${total === 1 ? "change" : "changes"} to ${context.backend.description}`,
    `0 of ${total}`,
  );
  // Lines logged while the progress line is on a terminal go above it.
  const shown = { ...context, log: (message: string) => phase.aside(() => context.log(message)) };
  let done = 0;
  try {
    for (const write of sorted) {
      const failed = await applyOne(shown, write, { worktree, commit, done, total });
      if (failed) return failed;
      phase.update(`${++done} of ${total}`);
    }
    return undefined;
  } finally {
    phase.end(`${done} of ${total} done`);
  }
}

/** One write of a push and its audit row; the refusal when it failed. */
async function applyOne(
  context: PushRun,
  write: PlannedWrite,
  at: { worktree: string; commit: string; done: number; total: number },
): Promise<PushReply | undefined> {
  try {
    const conflict = await applyWrite(context, write, at.worktree, at.done);
    if (conflict) return conflict;
  } catch (error) {
    // A local fault (the cache cannot note the write) is said by pushMain, with how far the writes got.
    if (!(error instanceof SvcError) || isLocalFault(error)) throw error;
    return partialFailure(context, write, error, { done: at.done, total: at.total, commit: at.commit });
  }
  context.cache.db.audit({
    op: "write",
    key: write.kind === "create" ? undefined : write.key,
    oid: at.commit,
    detail: { kind: write.kind, path: write.path },
  });
  context.tally.done++;
  context.tally.answered = undefined;
  crashPoint(`after-${write.kind}`);
  dieAfterWrites(at.done + 1);
  return undefined;
}

/** One write; returns the refusal when the server says the record changed under it. */
async function applyWrite(
  context: PushRun,
  write: PlannedWrite,
  worktree: string,
  done: number,
): Promise<PushReply | undefined> {
  if (isCommentPath(write.path)) return await applyCommentWrite(context, write, worktree, done);
  const { cache, backend, log, tally } = context;
  if (write.kind === "create") {
    const row = journalCreate(cache, worktree, write.path, write.oid, write.changes);
    let record: Awaited<ReturnType<typeof backend.create>>;
    try {
      record = await backend.create(write.changes);
    } catch (error) {
      // Proven unwritten: the server answered and refused or redirected, or the request never reached it.
      // No answer (or a 5xx): the next push finds out.
      if (isPermanent(error) || isUnsent(error)) cache.db.journalDrop(row);
      throw error;
    }
    tally.answered = write;
    cache.db.exclusive(() => {
      journalCreated(cache, row, record);
      rememberRecord(cache, backend, record);
    });
    log(`svc: created record ${record.key} from ${write.path} (it becomes ${record.path})`);
    return undefined;
  }
  if (write.kind === "update") {
    return await updated(
      context,
      write,
      done,
      await backend.update(write.key, write.changes, write.base, write.desired),
    );
  }
  const outcome = await backend.remove(write.key, write.base);
  if (outcome.kind === "conflict") return conflictAt(context, write, done, outcome.current);
  tally.answered = write;
  if (outcome.kind === "ok" && outcome.record) {
    // Not deletable on this server: the record stays, changed (the forge closes it), and comes back on pull.
    rememberRecord(cache, backend, outcome.record);
    if (outcome.note) log(`svc: ${write.path}: ${outcome.note}`);
    return undefined;
  }
  cache.db.markDeleted(write.key);
  return undefined;
}

/** What an update's answer leaves: the record noted, or the refusal when it changed or went on the server. */
async function updated(
  context: PushRun,
  write: PlannedWrite,
  done: number,
  outcome: WriteOutcome,
): Promise<PushReply | undefined> {
  if (outcome.kind === "ok") {
    context.tally.answered = write;
    rememberRecord(context.cache, context.backend, outcome.record);
    return undefined;
  }
  if (outcome.kind === "gone" && write.kind !== "create") recordServerDeletion(context, write.key);
  return conflictAt(
    context,
    write,
    done,
    outcome.kind === "gone" ? "deleted on the server" : outcome.current,
  );
}

/**
 * One write of a comment file (backends/comment.ts): as a record's, through the backend's comment source.
 * A create goes through the create journal; its record is the comment's parent (`changes.fields.parent`,
 * push-plan-comments.ts), and its author the pusher (`context.me`).
 */
async function applyCommentWrite(
  context: PushRun,
  write: PlannedWrite,
  worktree: string,
  done: number,
): Promise<PushReply | undefined> {
  const { cache, backend, log, tally } = context;
  const comments = commentsOf(backend);
  if (!comments) throw new SvcError("SVC_BACKEND", `${write.path}: ${backend.description} has no comments`);
  const { source } = comments;
  const commentRecord = (comment: ServerComment) =>
    commentToRecord(comment, backend.schema.fileName(comment.parentKey), source.versioned);
  if (write.kind === "create") {
    const parent = String(write.changes.fields.parent ?? "");
    const row = journalCreate(cache, worktree, write.path, write.oid, write.changes);
    let comment: ServerComment;
    try {
      comment = await source.create(parent, write.changes.body ?? "", context.me?.author ?? "");
    } catch (error) {
      if (isPermanent(error) || isUnsent(error)) cache.db.journalDrop(row);
      throw error;
    }
    tally.answered = write;
    const record = cache.db.exclusive(() => {
      const made = commentRecord(comment);
      journalCreated(cache, row, made);
      rememberRecord(cache, backend, made);
      return made;
    });
    log(`svc: posted comment ${comment.id} from ${write.path} (it becomes ${record.path})`);
    return undefined;
  }
  const id = commentIdOf(write.key);
  // The record the comment is on: the one whose file its folder names (`comments/TEST-42/` → TEST-42).
  const stem = parseCommentPath(write.path)?.stem;
  const parent = (stem !== undefined && cache.db.keyAt(`${backend.schema.folder}/${stem}.md`)) || "";
  if (write.kind === "update") {
    const outcome = await source.update(id, write.changes.body ?? "", write.base, parent);
    return await updated(
      context,
      write,
      done,
      outcome.kind === "ok" ? { kind: "ok", record: commentRecord(outcome.comment) } : outcome,
    );
  }
  const outcome = await source.remove(id, write.base, parent);
  if (outcome.kind === "conflict") return conflictAt(context, write, done, outcome.current);
  tally.answered = write;
  cache.db.markDeleted(write.key);
  return undefined;
}

/** A 4xx answer a retry cannot change (not a timeout, a conflict or a rate limit). */
function isPermanent(error: unknown): boolean {
  const status = error instanceof SvcError ? error.data.status : undefined;
  return (
    typeof status === "number" && status >= 400 && status < 500 && ![408, 409, 425, 429].includes(status)
  );
}

/**
 * A write the server never acted on: the request did not reach it, or it answered with a redirect or with
 * a Retry-After (a 429 or 503: not done, come back later).
 */
function isUnsent(error: unknown): boolean {
  return (
    (error instanceof BackendUnreachableError && !error.sent) ||
    error instanceof RedirectError ||
    error instanceof RetryLaterError
  );
}

/**
 * A write failed after `done` others succeeded. A refusal a retry cannot change (a 4xx) names the file and
 * what to change; anything else (no answer, a 5xx) is finished by pushing again.
 */
function partialFailure(
  context: PushContext,
  write: PlannedWrite,
  error: SvcError,
  progress: { done: number; total: number; commit: string },
): PushReply {
  const { done, total, commit } = progress;
  const kept = `${done} of ${total} writes were done and are kept`;
  context.cache.db.audit({ op: "push-partial", oid: commit, detail: { done, planned: total } });
  if (isPermanent(error)) {
    context.log(
      `svc: the server refused the ${describeWrite(write)}: ${error.message}\n` +
        `  ${kept}; pushing again as it is fails the same way. Change ${write.path} as the server asks, then:\n` +
        `  git commit -am ${shellWord(`Fix ${terminalSafe(write.path)}`)} && git push`,
    );
    return {
      ok: false,
      reason: `${write.path}: refused by the server (${error.data.status}); change the file and push`,
    };
  }
  if (write.kind === "delete" && !isUnsent(error))
    listEverythingNext(context.cache, isCommentPath(write.path) ? "comments" : "records");
  const message = error instanceof RedirectError ? redirectMessage(error, context.remote) : error.message;
  if (done === 0 && isUnsent(error)) {
    context.log(
      `svc: the ${describeWrite(write)} failed: ${message}\n  nothing was written${againWhen(error)}`,
    );
    return { ok: false, reason: "nothing was written; push again (see above)" };
  }
  context.log(
    `svc: the ${describeWrite(write)} failed: ${message}\n` +
      `  ${kept}; push again to finish the rest (nothing is written twice)${againWhen(error)}`,
  );
  return { ok: false, reason: `partial: ${done} of ${total} writes done; push again to finish` };
}

/**
 * A local fault (a full or read-only cache) stopped the push: says it, with how far the writes got, and
 * replies `error` (the helper exits 2). The writes the server answered are kept. One it answered that the
 * cache could not note is found by the next push (an update or a delete by its sync, a create by the
 * journal's `sending` row), so pushing again finishes the rest and sends nothing twice. Anything that is
 * no local fault is thrown on.
 */
export function localFaultReply(context: PushRun, error: unknown): PushReply {
  const { tally, cache } = context;
  const reached = tally.done + (tally.answered ? 1 : 0);
  const outcome =
    reached === 0
      ? "nothing was written to the server"
      : `${reached} of ${tally.total} writes reached the server and are kept` +
        (tally.answered
          ? ` (the cache could not note the last, the ${describeWrite(tally.answered)}; the next push finds it on the server and does not send it again)`
          : "");
  const fault = asLocalFault(error, { outcome, rerun: rerunCommand(), root: dirname(cache.dir) });
  if (!fault) throw error;
  context.log(`svc: ${fault.message}`);
  const done = reached === 0 ? "nothing was written" : `partial: ${reached} of ${tally.total} writes done`;
  return { ok: false, reason: `${fault.summary}; ${done}`, broken: true };
}

/**
 * A delete the server may have done although no answer said so: a delta listing cannot show a deletion,
 * so the next sync makes a full listing of the records, or of the comments for a comment (as `svc sync
 * --reconcile` does), and the cache loses it.
 */
function listEverythingNext(cache: ProjectCache, collection: Collection): void {
  cache.db.exclusive(() =>
    cache.db.setSyncState({ ...cache.db.syncState(collection), last_full_ms: 0 }, collection),
  );
}

/**
 * A record the server no longer has, found out at write time (a delta sync cannot see deletions): the
 * cache drops it and its `main` gains a commit without the file, so the `git pull` the message asks for
 * brings the deletion.
 */
function recordServerDeletion(context: PushContext, key: string): void {
  const { cache, backend } = context;
  cache.db.exclusive(() => {
    if (!cache.db.record(key)) return;
    cache.db.markDeleted(key);
    const tip = cache.tip();
    const commit = writeStateCommit(
      cache,
      tip ? [tip] : [],
      syncCommitMessage(backend, "0 changed, 1 removed"),
    );
    cache.setTip(commit, "found-deleted");
  });
}
