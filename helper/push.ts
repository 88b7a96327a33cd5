/**
 * `push` (DESIGN.md §4; notes/push-and-lazy-cache.md C): the user's commits go into the cache byte for byte
 * with a real `git push`, the planner turns the changed record files into REST writes, and the cache's
 * `main` moves to a commit on top of the user's that carries what the server assigned.
 *
 * Nothing decides a conflict from shared cache state: the base is the newest cache commit the pushed
 * history contains (its merge-base with the cache's `main`), or the commit a push of it produced. A record
 * whose server version differs from that base is stale, and the push is rejected with git's own
 * `fetch first` before anything is written (unless `svc.autoMerge` merges it cleanly).
 *
 * The steps, in the order `pushMain` and `integrate` take them, each in a file of its own: copy the user's
 * commits into the cache (push-copy.ts) beside the sync, load what changed (push-changes.ts), plan
 * (push-plan.ts), refuse what must not be written (push-refusals.ts), judge staleness and merge
 * (push-stale.ts), write (push-writes.ts), commit the result (push-result.ts). Creates go through the
 * create journal (create-journal.ts) so that none is ever sent twice; the tests kill a push between the
 * steps (push-crash.ts).
 */

import { rmSync } from "node:fs";
import { syncCache } from "../cache/sync.js";
import { SvcError } from "../core/errors.js";
import { findMergeBase } from "../git/merge-base.js";
import { runGit } from "../git/plumbing.js";
import { staleTemporaryRefs } from "../git/refs.js";
import { userGit, userRefCommit } from "../git/user-git.js";
import { journalLookup, resolveUnfinishedCreates, worktreeId } from "./create-journal.js";
import { loadChanges, settleAbandonedCreates } from "./push-changes.js";
import { withBackendCheck } from "./push-check.js";
import { planWithComments } from "./push-comments.js";
import {
  type PushContext,
  type PushObjects,
  type PushReply,
  type PushRun,
  pushObjects,
} from "./push-context.js";
import { copyIntoCache } from "./push-copy.js";
import { crashPoint } from "./push-crash.js";
import { notReached, refusal, staleRefusal } from "./push-refusals.js";
import { respelledBodies, respelledNotes } from "./push-respelled.js";
import { alreadyOnServer, commitResult, reportIgnoredEdits } from "./push-result.js";
import { judge } from "./push-stale.js";
import { applyWrites, localFaultReply } from "./push-writes.js";

export type { PushContext, PushReply } from "./push-context.js";

/**
 * Pushes the user's `src` to the server: copies it into the cache beside a sync, finds its base, and hands
 * a commit the server's history lacks to `integrate`. Removes its temporary refs, and those a killed push
 * left, whatever happens.
 */
export async function pushMain(pushContext: PushContext, src: string): Promise<PushReply> {
  const context: PushRun = {
    ...pushContext,
    tally: { total: 0, done: 0, answered: undefined },
  };
  const { cache, backend, trace } = context;
  const [commit, tracking] = await Promise.all([
    userCommit(src),
    userCommit(`refs/remotes/${context.remote}/main`).then((oid) => oid ?? ""),
  ]);
  if (commit === undefined) return { ok: false, reason: `cannot resolve ${src} to a commit` };
  cache.db.audit({ op: "push-start", oid: commit });

  const refs = { incomingRef: `refs/svc/incoming/${process.pid}`, baseRef: `refs/svc/base/${process.pid}` };
  const objects = pushObjects(cache);
  // Before the copy below puts it there: a commit the cache lacks is in none of the cache's histories.
  const commitIsNew = !cache.hasObject(commit);
  const stale = staleTemporaryRefs(cache.repo);
  for (const lock of stale.locks) rmSync(lock, { force: true });
  let madeRefs = false;
  try {
    // The newest server state (staleness is judged against it) and the copy of the user's commits into the
    // cache do not depend on each other: both at once (the copy in-process while the listing is under way).
    // Both settle before anything else happens, so a failed sync never leaves a copy running that would
    // recreate the refs deleted below.
    const [synced, refused] = await Promise.allSettled([
      syncCache(cache, backend, { trace }),
      copyIntoCache(context, objects, commit, tracking, refs, () => {
        madeRefs = true;
      }),
    ]);
    if (synced.status === "rejected") return notReached(context, synced.reason);
    if (refused.status === "rejected") throw refused.reason;
    if (refused.value) return refused.value;
    trace(`pushed ${commit} into the cache`);
    const tipBefore = cache.tip();
    if (!tipBefore) return { ok: false, reason: "the cache has no server state yet; run git fetch first" };
    const history = {
      name: "the cache's history",
      noted: (oid: string, tip: string) => cache.db.notedAncestor(oid, tip),
      isNew: commitIsNew,
    };
    const mergeBase =
      (await findMergeBase(cache.repo, objects.trees.read, commit, tipBefore, history, trace)) ?? "";
    // The user's commit is in the server's history already.
    if (mergeBase === commit) return await alreadyOnServer(context, objects, commit, tipBefore, tracking);
    return await integrate(context, objects, commit, tipBefore, mergeBase);
  } catch (error) {
    return localFaultReply(context, error);
  } finally {
    const deletes = [...(madeRefs ? [refs.baseRef, refs.incomingRef] : []), ...stale.refs];
    if (deletes.length > 0) {
      const input = deletes.map((ref) => `delete ${ref}\n`).join("");
      await runGit(cache.repo, ["update-ref", "--stdin"], { input }).catch(() => undefined);
    }
  }
}

/** The commit `ref` of the user's repository names (in-process where it can be), or undefined. */
async function userCommit(ref: string): Promise<string | undefined> {
  const known = userRefCommit(ref, { env: process.env, cwd: process.cwd() });
  if (known !== undefined) return known ?? undefined;
  const resolved = await userGit(["rev-parse", "--verify", "-q", `${ref}^{commit}`]);
  const oid = resolved.stdout.trim();
  return resolved.code === 0 && /^[0-9a-f]{40}$/.test(oid) ? oid : undefined;
}

/**
 * The steps of a push after the copy, for a commit that is new to the server's history: plan, refuse,
 * judge staleness, write, commit the result, and report.
 */
async function integrate(
  context: PushRun,
  objects: PushObjects,
  commit: string,
  tipBefore: string,
  mergeBase: string,
): Promise<PushReply> {
  const { cache, backend, log } = context;
  if (!mergeBase) {
    log(
      "svc: your history shares no commit with the server's; start from a clone (svc init) and copy your files over",
    );
    return { ok: false, reason: "unrelated history" };
  }
  const worktree = worktreeId();
  context.trace(`working tree ${worktree}`);
  // Before anything is planned: a create a killed push sent is found on the server, or proven unwritten.
  resolveUnfinishedCreates(cache, backend, worktree, log);
  const open = await settleAbandonedCreates(cache, objects, worktree, commit);
  const changes = await loadChanges(context, objects, commit, mergeBase, worktree, open);
  const planned = await planWithComments(
    context,
    {
      schema: backend.schema,
      entries: changes.diff,
      read: (oid) => {
        const content = changes.contents.get(oid);
        if (!content)
          throw new SvcError("SVC_STORE", `blob ${oid} of the pushed commits is missing from the cache`);
        return content;
      },
      baseToken: changes.tokenOf,
      journal: journalLookup(cache, backend, worktree, open, changes.tokenOf),
      maxBodyBytes: backend.maxRecordBytes,
    },
    mergeBase,
  );
  if (!("plan" in planned)) return planned;
  // The backend's own rules (the tracker's edit screen, the forge's milestones), asked before any write.
  const plan = await withBackendCheck(context, planned.plan, mergeBase);
  if (!("writes" in plan)) return plan;
  // Who pushes, for the comment writes (push-comments.ts).
  const run: PushRun = { ...context, ...planned.context, tally: context.tally };
  context.trace(`planned ${plan.writes.length} writes, ${plan.problems.length} problems`);
  crashPoint("planned");
  const refused = await refusal(run, plan, commit, mergeBase);
  if (refused) return refused;

  const judged = judge(run, plan.writes);
  if (judged.stale.length > 0) return await staleRefusal(run, judged.stale, commit);
  const failure = await applyWrites(run, judged.writes, commit, worktree);
  if (failure) return failure;
  context.trace(`wrote ${judged.writes.length}`);
  crashPoint("result");
  await commitResult(run, objects, {
    commit,
    tipBefore,
    mergeBase,
    worktree,
    diff: changes.diff,
    writes: judged.writes,
  });
  reportIgnoredEdits(context, plan.ignoredEdits);
  const respelled = respelledBodies(backend.schema, judged.writes);
  for (const note of respelledNotes(respelled, backend.schema.kind)) context.log(note);
  crashPoint("done");
  return { ok: true, oldOid: tipBefore };
}
