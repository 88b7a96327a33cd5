/**
 * Two questions a push asks of the cache's commits, answered in-process where tree-diff.ts can (no git
 * process on the push's path) and by git where it leaves them to git (NotInProcessError: a crafted tree,
 * an object it cannot read): the files two commits differ in (`git diff-tree -r --raw --no-renames`) and
 * the blobs at some paths of a commit (`git ls-tree`). Either way the answer is git's own.
 */

import { type DiffEntry, parseLsTree, parseRawDiff, runGit } from "./plumbing.js";
import { filesAt, NotInProcessError, type Trees, treeDiff } from "./tree-diff.js";

/** The files that differ between commits `from` and `to` of `repo` (`git diff-tree -r --raw`). */
export async function diffCommits(
  repo: string,
  trees: Trees,
  from: string,
  to: string,
): Promise<DiffEntry[]> {
  try {
    return treeDiff(trees, from, to);
  } catch (error) {
    if (!(error instanceof NotInProcessError)) throw error;
  }
  return parseRawDiff(
    (await runGit(repo, ["diff-tree", "-r", "-z", "--raw", "--no-renames", from, to])).stdout,
  );
}

/** path → blob oid of the files `paths` in `commit` of `repo` (only those: a tree may have 10,000 entries). */
export async function blobsAt(
  repo: string,
  trees: Trees,
  commit: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  if (paths.length === 0) return new Map();
  try {
    return filesAt(trees, commit, paths);
  } catch (error) {
    if (!(error instanceof NotInProcessError)) throw error;
  }
  const { stdout } = await runGit(repo, ["ls-tree", "-z", "--full-tree", commit, "--", ...paths]);
  return new Map(
    parseLsTree(stdout).flatMap(({ type, oid, path }) => (type === "blob" ? [[path, oid]] : [])),
  );
}
