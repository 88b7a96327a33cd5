/**
 * What a push says when it does not write, or stops: the server not reached before any write, a plan with
 * problems or too many deletes, stale records, a record changed under a write. Each message says what
 * happened, that nothing (or how much) was written, and the command to run from where the user stands
 * (`GIT_PREFIX`); the reply is what git prints on its `[remote rejected]` line.
 */

import { commentIdOf, isCommentKey } from "../backends/comment.js";
import { SvcError } from "../core/errors.js";
import { BackendUnreachableError, isServerFault, RedirectError, RetryLaterError } from "../core/http.js";
import { runGit } from "../git/plumbing.js";
import { userGit } from "../git/user-git.js";
import type { PushContext, PushReply } from "./push-context.js";
import {
  type NextCommand,
  nextCommand,
  type Plan,
  type PlannedWrite,
  pathFrom,
  problemSummary,
} from "./push-plan.js";
import type { Stale } from "./push-stale.js";
import { whenAgain } from "./server-fault.js";

export const ALLOW_BULK_DELETE = "[allow-bulk-delete]";

/** A redirect's message with the command for the user's remote (a push to a URL has no name to set). */
export function redirectMessage(error: RedirectError, remote: string): string {
  if (!error.remoteUrl || remote === "origin") return error.message;
  const advice = RedirectError.advice(error.remoteUrl, "origin");
  const mine = /^[A-Za-z0-9._-]+$/.test(remote) ? RedirectError.advice(error.remoteUrl, remote) : "";
  return error.message.replace(advice, mine);
}

/**
 * The server could not be reached, failed, or redirected, before any write: nothing was written, and the
 * user is told what to run. Any other failure is thrown on.
 */
export function notReached(context: PushContext, error: unknown): PushReply {
  if (error instanceof RedirectError) {
    context.log(`svc: ${redirectMessage(error, context.remote)}\n  nothing was written`);
    return { ok: false, reason: "the server answered with a redirect; nothing was written" };
  }
  if (!(error instanceof SvcError) || !isServerFault(error)) throw error;
  context.log(`svc: ${error.message}\n  nothing was written${againWhen(error)}`);
  if (error instanceof BackendUnreachableError)
    return { ok: false, reason: "the server cannot be reached; nothing was written" };
  if (error instanceof RetryLaterError)
    return {
      ok: false,
      reason: `the server asked svc to wait; nothing was written; ${error.after}, push again`,
    };
  return { ok: false, reason: "the server failed (see above); nothing was written" };
}

/** When to push again after `error`, and the command. */
export function againWhen(error: SvcError): string {
  if (error instanceof RedirectError) return "; once the remote URL is right, run: git push";
  if (isServerFault(error)) return `; ${whenAgain(error)}, run: git push`;
  return ": git push";
}

/** The refusal of a plan with problems or too many deletes (nothing written), if it must be refused. */
export async function refusal(
  context: PushContext,
  plan: Plan,
  commit: string,
  mergeBase: string,
): Promise<PushReply | undefined> {
  const { cache, log } = context;
  if (plan.problems.length > 0) {
    log("svc: push rejected, nothing was written:");
    for (const problem of plan.problems)
      log(`  ${problem.path}: ${problem.message.replace(/\n/g, "\n    ")}`);
    // The commit the command makes must not fail on a merge of the user's still under way (`git commit`
    // refuses while files hold conflicts): those files are resolved and added as well.
    const unmerged = ((await mergeInProgress())?.unmerged ?? []).map((path) => ({
      path,
      message: "",
      remedy: { kind: "resolve", file: path } as const,
    }));
    if (unmerged.length > 0)
      log(`  your merge under way has conflicts in ${unmerged.map((file) => file.path).join(", ")} too`);
    const next = nextCommand([...plan.problems, ...unmerged], userPrefix());
    if (next) log(describeNext(next));
    cache.db.audit({ op: "push-reject", oid: commit, detail: { problems: plan.problems.length } });
    return { ok: false, reason: problemSummary(plan.problems) };
  }
  const deleted = plan.writes.filter((write) => write.kind === "delete");
  const deletes = deleted.length;
  if (context.bulkDeleteLimit === 0 || deletes <= context.bulkDeleteLimit) return undefined;
  const messages = (
    await runGit(cache.repo, ["log", "--format=%B", `${mergeBase}..${commit}`])
  ).stdout.toString("utf8");
  if (messages.includes(ALLOW_BULK_DELETE)) return undefined;
  // A new (empty) commit carries the permission: any message of the pushed commits counts, and an amend
  // would open an editor or drop the user's own message.
  const what = deletedWhat(deleted.filter((write) => isCommentKey(write.key)).length, deletes);
  log(
    `svc: this push deletes ${what}, more than SVC_BULK_DELETE_LIMIT=${context.bulkDeleteLimit}; nothing was written.\n` +
      `  If you mean it, say so in a commit message and push again:\n` +
      `  git commit --allow-empty -m "Delete ${what} ${ALLOW_BULK_DELETE}" && git push`,
  );
  cache.db.audit({ op: "push-reject", oid: commit, detail: { deletes } });
  return { ok: false, reason: `${deletes} deletes; add ${ALLOW_BULK_DELETE} to the commit message to allow` };
}

/** What a push deletes, in words: `3 records and 12 comments`, `1 record`, `2 comments`. */
function deletedWhat(comments: number, deletes: number): string {
  const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
  const records = deletes - comments;
  if (comments === 0) return counted(records, "record");
  if (records === 0) return counted(comments, "comment");
  return `${counted(records, "record")} and ${counted(comments, "comment")}`;
}

/** The user's folder inside the working tree (`sub/`; empty at the top), where printed commands run. */
function userPrefix(): string {
  return process.env.GIT_PREFIX ?? "";
}

/** The lines that tell the user what to fix and the command to run then. */
function describeNext(next: NextCommand): string {
  const fix = next.fix.length === 0 ? "" : `fix ${next.fix.join(", ")} as said above, then `;
  const kept =
    next.untracked.length === 0
      ? ""
      : ` (${next.untracked.join(", ")} ${next.untracked.length === 1 ? "stays" : "stay"} on disk, untracked)`;
  return `  ${fix === "" ? "run" : `${fix}run`}${kept}:\n  ${next.command}`;
}

export async function staleRefusal(
  context: PushContext,
  stale: readonly Stale[],
  commit: string,
): Promise<PushReply> {
  const { log } = context;
  log(
    "svc: these records changed on the server since the state your commits are based on; nothing was written:",
  );
  for (const item of stale) log(`  ${item.path} (record ${item.key}): ${item.why}`);
  log(
    await pullAdvice(
      stale.map((item) => item.path),
      userPrefix(),
    ),
  );
  // svc merges field by field where git merges lines: edits of two adjacent lines conflict in git only.
  if (!context.autoMerge && stale.every((item) => item.mergeable)) {
    log(
      "  these edits merge field by field; to let svc merge them for you from now on: git config svc.autoMerge true && git push",
    );
  }
  context.cache.db.audit({ op: "push-reject", oid: commit, detail: { stale: stale.length } });
  return { ok: false, reason: "fetch first" };
}

/**
 * How to bring the server's changes to `paths` into the user's branch and push again, from where the
 * user stands: `git pull` (a merge: `--no-rebase` whatever pull.rebase says, `--no-edit` so no editor
 * opens for its message), and what to do when it stops at conflicts. A user in the middle of such a merge
 * already (`git push` pushes the commit before it) is told how to finish it: `git commit --no-edit`.
 */
async function pullAdvice(paths: readonly string[], prefix: string): Promise<string> {
  const merging = await mergeInProgress();
  if (merging) {
    const files = merging.unmerged.map((path) => pathFrom(prefix, path)).join(" ");
    const add = files === "" ? "" : `git add ${files} && `;
    const edit =
      files === ""
        ? ""
        : ` with conflicts in ${merging.unmerged.join(", ")}: edit them to keep one version of each conflicting part`;
    return `  you are in the middle of a merge${edit}; to finish it and push: ${add}git commit --no-edit && git push`;
  }
  const files = paths.map((path) => pathFrom(prefix, path)).join(" ");
  return (
    "  to merge the server's changes into yours and push: git pull --no-rebase --no-edit && git push\n" +
    `  if git pull stops at conflicts, edit ${paths.join(", ")} to keep one version of each conflicting part, then: ` +
    `git add ${files} && git commit --no-edit && git push`
  );
}

/** The user's merge under way (`MERGE_HEAD` is there), with the files that still hold conflicts. */
async function mergeInProgress(): Promise<{ unmerged: string[] } | undefined> {
  const head = await userGit(["rev-parse", "-q", "--verify", "MERGE_HEAD"]);
  if (head.code !== 0) return undefined;
  // Paths from the top of the working tree, where git started the helper.
  const diff = await userGit(["diff", "--name-only", "--diff-filter=U", "-z"]);
  return { unmerged: [...new Set(diff.stdout.split("\0").filter((path) => path !== ""))] };
}

export function describeWrite(write: PlannedWrite): string {
  if (write.kind === "create") return `create from ${write.path}`;
  const what = isCommentKey(write.key) ? `comment ${commentIdOf(write.key)}` : `record ${write.key}`;
  return `${write.kind === "update" ? "update" : "delete"} of ${what} (${write.path})`;
}

export async function conflictAt(
  context: PushContext,
  write: PlannedWrite,
  done: number,
  current: string,
): Promise<PushReply> {
  context.log(
    `svc: ${write.path} changed on the server while this push was writing (${current}); ` +
      `${done} earlier writes were done and are kept.\n${await pullAdvice([write.path], userPrefix())}`,
  );
  context.cache.db.audit({ op: "push-reject", detail: { conflict: write.path, done } });
  return { ok: false, reason: "fetch first" };
}
