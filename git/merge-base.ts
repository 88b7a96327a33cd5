/**
 * The merge base of two commits, as `git merge-base <one> <two>` names it: from what the caller's noted
 * history settles without a walk, else from a walk in-process (git's own algorithm, on the objects
 * git/tree-diff.ts reads), else from git itself where the walk cannot decide (NotInProcessError: several
 * bases, an object it cannot read, a walk longer than MAX_WALK commits).
 */
import { runGit } from "./plumbing.js";
import {
  type Commit,
  commitParents,
  MAX_WALK,
  NotInProcessError,
  type ReadObject,
  readCommit,
} from "./tree-diff.js";

/** What the caller has noted of a history, which settles the usual push without a walk. */
export interface NotedHistory {
  /** What the history is, as a trace says it (`the cache's history`). */
  readonly name: string;
  /** Whether `commit` is noted in the history up to `tip` (so is `tip` or one of its ancestors). */
  readonly noted: (commit: string, tip: string) => boolean;
  /** Whether the first commit asked about is new to the repository (so no ancestor of `tip`). */
  readonly isNew: boolean;
}

/**
 * `git merge-base <commit> <tip>` in the repository `repo` (`read` reads its objects): undefined when the two
 * share no history (or git cannot say). Each way it is found gives git's answer; `trace` hears when the noted
 * history gave it.
 */
export async function findMergeBase(
  repo: string,
  read: ReadObject,
  commit: string,
  tip: string,
  history?: NotedHistory,
  trace: (message: string) => void = () => {},
): Promise<string | undefined> {
  const found = history === undefined ? undefined : fromNotedHistory(read, commit, tip, history);
  if (history !== undefined && found !== undefined) {
    trace(`merge base ${found} from ${history.name}`);
    return found;
  }
  try {
    return mergeBase(read, commit, tip);
  } catch (error) {
    if (!(error instanceof NotInProcessError)) throw error;
  }
  return runGit(repo, ["merge-base", commit, tip]).then(
    (result) => result.stdout.toString("utf8").trim() || undefined,
    () => undefined,
  );
}

/**
 * `git merge-base <commit> <tip>` read off the noted history (the cache's), where that settles it without a
 * walk; undefined where it does not. A walk reads every commit since the user's last pull (a clone that
 * pushes again and again without pulling makes the cache's history a ladder of push results, each a merge of
 * the one before and the user's commit), and each push grew slower with their number: 103 -> 175 ms over
 * 130 pushes at 10,000 records (`SVC_TRACE` exit, medians of the first and the last ten; 96 -> 113 ms with
 * this). The usual push answers here:
 * - `commit` is noted in the history up to `tip` (CacheDb.notedAncestor): it is an ancestor of `tip`, so it
 *   is the merge base;
 * - else, when `commit` is new to the repository (so no ancestor of `tip`) and has one parent noted there:
 *   the common ancestors of `commit` and `tip` are exactly that parent's ancestors, whose newest is the
 *   parent, so it is the merge base, the one git names.
 */
function fromNotedHistory(
  read: ReadObject,
  commit: string,
  tip: string,
  history: NotedHistory,
): string | undefined {
  if (history.noted(commit, tip)) return commit;
  if (!history.isNew) return undefined;
  let parents: readonly string[] = [];
  try {
    parents = commitParents(read, commit);
  } catch (error) {
    if (!(error instanceof NotInProcessError)) throw error;
  }
  const [parent] = parents;
  return parents.length === 1 && parent !== undefined && history.noted(parent, tip) ? parent : undefined;
}

const PARENT1 = 1;
const PARENT2 = 2;
const STALE = 4;
const RESULT = 8;

/**
 * The merge base of commits `one` and `two` as `git merge-base <one> <two>` prints it, or undefined when
 * they share no history. git's paint_down_to_common (commit-reach.c): walk both histories newest commit
 * first (ties in the order they were queued), mark each commit with the sides that reach it, and a commit
 * both reach is a result whose ancestors are stale; of the results, those another result reaches are
 * dropped. One left is git's answer; several need git's own choice among them (NotInProcessError).
 */
export function mergeBase(read: ReadObject, one: string, two: string): string | undefined {
  if (one === two) return one;
  const commits = new Map<string, Commit>();
  const flags = new Map<string, number>();
  const load = (oid: string) => {
    let commit = commits.get(oid);
    if (!commit) {
      if (commits.size >= MAX_WALK) throw new NotInProcessError(`more than ${MAX_WALK} commits to walk`);
      commit = readCommit(read, oid);
      commits.set(oid, commit);
    }
    return commit;
  };
  // git's prio_queue: newest first, and among commits of the same time the one queued first.
  const queue: { oid: string; time: number; order: number }[] = [];
  let queued = 0;
  const put = (oid: string) => {
    const entry = { oid, time: load(oid).time, order: queued++ };
    let at = queue.length;
    while (at > 0) {
      const before = queue[at - 1] as (typeof queue)[number];
      if (before.time > entry.time || (before.time === entry.time && before.order < entry.order)) break;
      at--;
    }
    queue.splice(at, 0, entry);
  };
  flags.set(one, PARENT1);
  flags.set(two, PARENT2);
  put(one);
  put(two);
  const results: string[] = [];
  while (queue.some((entry) => ((flags.get(entry.oid) ?? 0) & STALE) === 0)) {
    const { oid } = queue.shift() as (typeof queue)[number];
    let mark = (flags.get(oid) ?? 0) & (PARENT1 | PARENT2 | STALE);
    if (mark === (PARENT1 | PARENT2)) {
      const own = flags.get(oid) ?? 0;
      if ((own & RESULT) === 0) {
        flags.set(oid, own | RESULT);
        results.push(oid);
      }
      mark |= STALE;
    }
    for (const parent of load(oid).parents) {
      const theirs = flags.get(parent) ?? 0;
      if ((theirs & mark) === mark) continue;
      flags.set(parent, theirs | mark);
      put(parent);
    }
  }
  const found = results.filter((oid) => ((flags.get(oid) ?? 0) & STALE) === 0);
  // Commits of the same time can make the walk find a base and one of its ancestors; git then drops those
  // reachable from another (remove_redundant).
  const best = found.filter((oid) => !found.some((other) => other !== oid && reaches(other, oid)));
  if (best.length > 1) throw new NotInProcessError(`${best.length} merge bases`);
  return best[0];

  function reaches(from: string, target: string): boolean {
    const seen = new Set<string>();
    for (const pending = [from]; pending.length > 0; ) {
      const oid = pending.pop() as string;
      if (oid === target) return true;
      if (seen.has(oid)) continue;
      seen.add(oid);
      pending.push(...load(oid).parents);
    }
    return false;
  }
}
