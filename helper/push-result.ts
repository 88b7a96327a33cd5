/**
 * The end of an accepted push: the result commit on top of the user's (the server state after the writes,
 * so `git pull` fast-forwards), the summary line the user is told (`1 created, 2 updated, 0 deleted`), and
 * what the push ignored. The result commit's message carries the summary, and `summaryOfResult` reads it
 * back: a push of a commit an earlier, cut-off push already carried (`alreadyOnServer`) says what that
 * one wrote instead of writing again.
 */

import type { WritableBackend } from "../backends/backend.js";
import { writeStateCommit } from "../cache/sync.js";
import { findMergeBase } from "../git/merge-base.js";
import { parseCommitObject } from "../git/objects.js";
import { settleCreates } from "./create-journal.js";
import type { PushContext, PushObjects, PushReply, PushRun } from "./push-context.js";
import { crashPoint } from "./push-crash.js";
import type { DiffEntry, Plan, PlannedWrite } from "./push-plan.js";

/**
 * A pushed commit the server's history contains: nothing to write. Up to date when it is the server's tip,
 * what the user last fetched, or a commit an earlier push already carried; an older one would move the
 * user's `origin/main` back (git sets it to what a push says is up to date), so it is refused the way git
 * refuses a push that is behind.
 */
export async function alreadyOnServer(
  context: PushContext,
  objects: PushObjects,
  commit: string,
  tip: string,
  tracking: string,
): Promise<PushReply> {
  if (commit === tip || commit === tracking) return { ok: false, reason: "up to date" };
  const carried = context.forced ? undefined : context.cache.db.pushResult(commit);
  if (carried !== undefined) {
    // An earlier push of this very commit wrote everything and made its result, and was killed before git
    // heard `ok` (git's origin/main does not contain the commit): say what it did.
    const heard =
      tracking !== "" &&
      (await findMergeBase(context.cache.repo, objects.trees.read, commit, tracking)) === commit;
    const summary = heard
      ? undefined
      : summaryOfResult(objects.cache.read(carried)?.content ?? Buffer.alloc(0));
    if (summary) {
      const how = ` by an earlier push of ${commit.slice(0, 12)}, which was cut off before git heard the answer`;
      const wrote = /(^|, )[1-9]\d* /.test(summary);
      context.log(summaryLine(context.backend, summary, wrote, how));
    }
    return { ok: false, reason: "up to date" };
  }
  if (!context.forced) return { ok: false, reason: "non-fast forward" };
  const short = commit.slice(0, 12);
  const folder = context.backend.schema.folder;
  context.log(
    `svc: ${short} is an older state of the server's main; svc cannot move main back (the server keeps records, not commits), and nothing was written.\n` +
      `  To make the records what they were at ${short}, commit that and push it:\n` +
      `  git restore --source=${short} --staged --worktree -- ${folder} && git commit -m "Restore ${folder} as of ${short}" && git push`,
  );
  return {
    ok: false,
    reason: `svc cannot move main back to ${short}; commit the old state instead (see above)`,
  };
}

/** What a push wrote: deletes that left the record on the server (the forge closes an issue) are `kept`. */
interface WriteCounts {
  create: number;
  update: number;
  delete: number;
  kept: number;
}

/** The message of a push's result commit; `summaryOfResult` reads its summary back. */
function resultMessage(backend: WritableBackend, summary: string): string {
  return `svc: push to ${backend.kind} project ${backend.project}\n\n${summary}\n`;
}

/** The summary (`writeSummary`) a result commit's raw object carries, or undefined for another commit. */
export function summaryOfResult(commitObject: Buffer): string | undefined {
  const body = parseCommitObject(commitObject).message.toString("utf8");
  if (!body.startsWith("svc: push to ")) return undefined;
  return /^\d+ created, \d+ updated(, \d+ [a-z]+)*$/m.exec(body)?.[0];
}

/** `svc: <backend>: 1 created, 2 updated, 0 deleted<how>`: what a push wrote, as the user is told. */
function summaryLine(backend: WritableBackend, summary: string, wrote: boolean, how = ""): string {
  return `svc: ${backend.description}: ${summary}${how}${wrote ? "; git pull brings the server's versions and ids" : ""}`;
}

/**
 * The cache's main after a push: on top of the user's commit (a merge when the user was behind), with the
 * tree of the server state after the writes, so `git pull` fast-forwards.
 *
 * Two transactions, so that a push killed anywhere in them is finished by the next one: first the result
 * commit and the note that it is this push's result (`pushes`), then the move of main there, with the
 * journal's open creates settled. `setTip` renames the ref file before its transaction commits; when that
 * one transaction also noted the push, a kill between the rename and the commit left a main containing the
 * user's commit while the database had never heard of the push, and the next push of that commit was
 * refused as non-fast-forward (git's bare hint) although every write had landed. Now such a kill leaves the
 * note: the next push finds its commit carried (`alreadyOnServer`), and one killed before the move plans
 * again and finds every write done.
 */
export async function commitResult(
  context: PushRun,
  objects: PushObjects,
  push: {
    commit: string;
    tipBefore: string;
    mergeBase: string;
    worktree: string;
    diff: readonly DiffEntry[];
    writes: readonly PlannedWrite[];
  },
): Promise<void> {
  const { cache, backend, log } = context;
  const { commit, tipBefore, mergeBase, writes } = push;
  const tipSeen = cache.tip() ?? tipBefore;
  // The merge base already says whether the user's commit contains the tip it was compared with: a commit
  // is an ancestor of another exactly when it is their merge base. Only a tip moved since needs a walk.
  const containsTip =
    tipSeen === tipBefore
      ? mergeBase === tipBefore
      : (await findMergeBase(cache.repo, objects.trees.read, tipSeen, commit)) === tipSeen;
  const parentsSeen = containsTip ? [commit] : [tipSeen, commit];
  const counts: WriteCounts = { create: 0, update: 0, delete: 0, kept: 0 };
  // A delete the server could not do leaves the record there, changed (the forge closes the issue).
  for (const write of writes)
    counts[write.kind === "delete" && cache.db.record(write.key) ? "kept" : write.kind]++;
  const summary = writeSummary(counts, backend.schema.deleteDoes);
  const message = resultMessage(backend, summary);
  // Another working tree's push or fetch may have moved main since tipSeen was read (every writer moves it
  // under this lock): then build on the tip as it is now, or that commit would drop out of main.
  const build = (tip: string) => {
    const written = writeStateCommit(cache, tip === tipSeen ? parentsSeen : [tip, commit], message);
    cache.db.recordPush(commit, written);
    return written;
  };
  const built = cache.db.exclusive(() => {
    const tip = cache.tip() ?? tipBefore;
    return { tip, written: build(tip) };
  });
  crashPoint("noted");
  const result = cache.db.exclusive(() => {
    const tip = cache.tip() ?? tipBefore;
    const written = tip === built.tip ? built.written : build(tip);
    cache.setTip(written, "push", commit);
    crashPoint("moved");
    settleCreates(cache, push.worktree, push.diff);
    return written;
  });
  // gitPid: the git that hears `ok` and then moves the user's refs/svc/<remote>/main (git/ref-locks.ts).
  cache.db.audit({ op: "push-accept", oid: commit, detail: { ...counts, result, gitPid: process.ppid } });
  // Here, not in the sync above: that one runs beside the copy of the user's commits into the cache.
  await cache.consolidateIfDue(log);
  context.trace(`result commit ${result}`);
  log(summaryLine(backend, summary, writes.length > 0));
}

/**
 * `1 created, 2 updated, 0 deleted`. Where a delete keeps the record (`deleteDoes`), those deletes are
 * counted by that word instead (`0 created, 0 updated, 1 closed`), and deleted ones (a record already gone
 * from the server) only when there are some.
 */
function writeSummary(counts: WriteCounts, deleteDoes: string | undefined): string {
  const parts = [`${counts.create} created`, `${counts.update} updated`];
  if (deleteDoes !== undefined || counts.kept > 0) parts.push(`${counts.kept} ${deleteDoes ?? "kept"}`);
  if (deleteDoes === undefined || counts.delete > 0) parts.push(`${counts.delete} deleted`);
  return parts.join(", ");
}

/**
 * After an accepted push: the files whose server-controlled fields the user edited, and how to put the
 * server's values back. `git pull`, not a restore and a commit: the push's result commit (cache `main`)
 * sits on top of the pushed one with the server's values, so the pull fast-forwards to them, while a
 * commit restoring the old values would itself be an edit of those fields in the next push (its base is
 * the pushed commit) and warn again. `--ff-only`: whatever pull.ff or pull.rebase say, no editor opens.
 */
export function reportIgnoredEdits(context: PushContext, ignored: Plan["ignoredEdits"]): void {
  if (ignored.length === 0) return;
  for (const { path, fields } of ignored) {
    const one = fields.length === 1;
    context.log(
      `svc: ${path}: ${fields.join(", ")} ${one ? "is" : "are"} set by the server; your edit of ${one ? "it" : "them"} was not sent`,
    );
  }
  const these = ignored.length === 1 && ignored[0]?.fields.length === 1 ? "value" : "values";
  context.log(
    `  to put the server's ${these} back in ${ignored.length === 1 ? "the file" : "these files"}, run: git pull --ff-only`,
  );
}
