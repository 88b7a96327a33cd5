/**
 * The mirror commit, built in the run's work repository (a temporary bare repository whose alternates are
 * the cache's objects, so no record tree or blob is copied): the mirror's branch tip read with
 * `git fetch --depth=1`, its tree with the records folder replaced by the cache tip's (every other entry, a
 * README or CI files, kept), and a commit on the tip with a fixed identity and time, so that the same
 * records on the same tip give the same commit id.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spliceTree } from "../../cache/state-tree.js";
import { SvcError, shellWord, UserFacingError } from "../../core/errors.js";
import { encodeCommit, writeLooseObject } from "../../git/objects.js";
import { readObjects, runGit } from "../../git/plumbing.js";
import { type ChangeCounts, type FolderChange, mirrorCommitMessage, parseTreeDiff } from "./changes.js";
import { commitFacts, fetchTip, remoteTip } from "./mirror-git.js";
import type { Refresh } from "./run-context.js";

/** Author and committer of every mirror commit. */
export const MIRROR_IDENTITY = "svc mirror <svc@localhost>";

/** Git's empty tree: `git diff-tree` knows it without the object. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** The mirror's branch tip as read into the work repository. */
export interface MirrorTip {
  readonly commit: string;
  readonly tree: string;
  /** Committer time, seconds. */
  readonly time: number;
  /** The tree object's raw content. */
  readonly treeContent: Buffer;
}

/**
 * Makes `work` see the cache's objects (alternates) and writes the records' blobs there: the cache's trees
 * name blobs it writes only when git asks for them, and the push needs exactly those.
 */
export async function shareCacheObjects(refresh: Refresh, work: string): Promise<void> {
  const { cache, records } = refresh;
  const materialized = await cache.materialize(records.files.map((file) => file.oid));
  if (materialized.written > 0) {
    cache.db.audit({
      op: "materialize",
      bytes: materialized.bytes,
      detail: { blobs: materialized.written, wants: records.files.length, mirror: true },
    });
  }
  mkdirSync(join(work, "objects", "info"), { recursive: true });
  writeFileSync(join(work, "objects", "info", "alternates"), `${join(cache.repo, "objects")}\n`);
}

/** Reads the branch tip (the commit and its tree only) into `work`; undefined when the branch is absent. */
export async function readMirrorTip(
  refresh: Refresh,
  work: string,
  ref: string,
): Promise<MirrorTip | undefined> {
  const { args, io } = refresh;
  if ((await remoteTip(work, args.mirror, ref, io.rerun)) === undefined) return undefined;
  let commit: string;
  try {
    commit = await fetchTip(work, args.mirror, ref, "refs/mirror/base");
  } catch (error) {
    throw new UserFacingError(
      "SVC_USAGE",
      `cannot fetch ${args.branch} of the mirror ${args.mirror} (${(error as Error).message}); nothing was pushed. ` +
        `Check that \`git fetch --depth=1 ${shellWord(args.mirror)} ${ref}\` works from here, then run: ${io.rerun}`,
      { cause: error },
    );
  }
  const facts = commitFacts((await readObjects(work, [commit])).get(commit), commit);
  const treeContent = (await readObjects(work, [facts.tree])).get(facts.tree);
  if (treeContent === undefined) throw new SvcError("SVC_STORE", `the tree of ${commit} was not fetched`);
  return { commit, ...facts, treeContent };
}

/**
 * The tip's tree with the records folder replaced by the cache's (removed when the cache has no records),
 * written into `work`, and the files that differ. A file (or link) named like the folder goes too: a tree
 * cannot hold both.
 */
export async function overlayRecords(
  refresh: Refresh,
  work: string,
  tip: MirrorTip | undefined,
): Promise<{ tree: string; changes: FolderChange[] }> {
  const edits = new Map([
    [refresh.folder, undefined],
    [`${refresh.folder}/`, refresh.records.tree],
  ]);
  const tree = writeLooseObject(work, "tree", spliceTree(tip?.treeContent ?? Buffer.alloc(0), edits));
  const diff = await runGit(work, ["diff-tree", "-r", "-z", "--no-renames", tip?.tree ?? EMPTY_TREE, tree]);
  return { tree, changes: parseTreeDiff(diff.stdout) };
}

/** The mirror commit: fixed identity, time the later of the cache tip's and the mirror tip's, parent the tip. */
export async function writeMirrorCommit(
  refresh: Refresh,
  work: string,
  tree: string,
  tip: MirrorTip | undefined,
  counts: ChangeCounts,
): Promise<string> {
  const { cache, cacheTip, remote } = refresh;
  const cacheFacts = commitFacts((await readObjects(cache.repo, [cacheTip])).get(cacheTip), cacheTip);
  return writeLooseObject(
    work,
    "commit",
    encodeCommit({
      tree,
      parents: tip === undefined ? [] : [tip.commit],
      identity: MIRROR_IDENTITY,
      time: Math.max(cacheFacts.time, tip?.time ?? 0),
      message: mirrorCommitMessage(remote.kind, remote.project, counts, cacheTip),
    }),
  );
}
