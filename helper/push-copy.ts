/**
 * The first step of a push: the user's commits go into the cache byte for byte, so the cache holds what
 * the user pushed and the planner reads it there. In-process where git/copy.ts can; else `git push` into
 * the cache, through temporary refs the caller deletes (and the next push removes, if this one is killed:
 * git/refs.ts `staleTemporaryRefs`).
 */

import { copyNewObjects } from "../git/copy.js";
import { runGit } from "../git/plumbing.js";
import { userGit } from "../git/user-git.js";
import type { PushContext, PushObjects, PushReply } from "./push-context.js";
import { crashPoint } from "./push-crash.js";

/** The cache's temporary refs of one push: the copied commit, and what the user last fetched. */
export interface CopyRefs {
  readonly incomingRef: string;
  readonly baseRef: string;
}

/**
 * Copies the user's commits into the cache byte for byte: in-process (git/copy.ts), or, where
 * that leaves it to git, with `git push` to `incomingRef`. The base ref (the user's remote-tracking commit,
 * when the cache has it) tells send-pack what the cache already has, so only new objects travel, and nothing
 * is fetched lazily in a partial clone. `madeRefs` is called before the refs are made; the caller deletes
 * them. Returns the refusal when the copy failed, else nothing.
 */
export async function copyIntoCache(
  context: PushContext,
  objects: PushObjects,
  commit: string,
  tracking: string,
  refs: CopyRefs,
  madeRefs: () => void,
): Promise<PushReply | undefined> {
  const { cache, log, trace } = context;
  const { user } = objects;
  if (user !== undefined) {
    const outcome = copyNewObjects({ ...objects, user }, cache.repo, commit, () => crashPoint("copy"));
    if ("copied" in outcome) {
      trace(`copied ${outcome.copied} objects into the cache`);
      return undefined;
    }
    trace(`copying with git push: ${outcome.leftToGit}`);
  }
  madeRefs();
  // git refuses a ref to an object the cache does not have: then there is no base, and that is all.
  if (tracking) await runGit(cache.repo, ["update-ref", refs.baseRef, tracking]).catch(() => undefined);
  // --no-thin: a thin pack may hold deltas against blobs the user has and the cache never wrote (the
  // clone's own pack sends every blob without writing it into the cache), which receive-pack cannot resolve.
  const pushed = await userGit([
    "push",
    "--porcelain",
    "--no-verify",
    "--quiet",
    "--no-thin",
    cache.repo,
    `${commit}:${refs.incomingRef}`,
  ]);
  if (pushed.code !== 0) {
    log(`svc: could not copy your commits into the cache ${cache.repo}:\n${pushed.stderr.trim()}`);
    return { ok: false, reason: "svc could not store your commits in its cache (see above)" };
  }
  crashPoint("copy");
  return undefined;
}
