/**
 * The first state of a new or rebuilt cache as a whole clone: its commit, its trees and its record files,
 * which git/pack.ts streams as one pack (helper/stateless-connect.ts answers the clone's fetch with it).
 * Which objects those are is the cache's knowledge (its database's state trees and blobs); the pack's
 * format is git/'s.
 */
import { type Commit, hashObject, parseCommit, readLooseObject } from "../git/objects.js";
import { streamPack } from "../git/pack.js";
import type { ProjectCache } from "./cache.js";

/** What a first state is made of: a commit without parents, its trees, the live records' blobs. */
export interface FirstState {
  readonly commit: Buffer;
  readonly trees: readonly Buffer[];
  /** The live records' distinct blobs, each once. */
  readonly blobCount: number;
  /** Those blobs when the build kept them (`FirstStateBlobs`); else the pack reads them from the database. */
  readonly blobs: readonly Buffer[] | undefined;
}

/** The most bytes of record files a build keeps in memory for the clone's pack (`FirstStateBlobs`). */
export const FIRST_STATE_BLOBS_BUDGET = 64 * 1024 * 1024;

/**
 * The record files of a new cache's first state as its build rendered them, kept in memory for the clone's
 * pack, which is made in the same process right after the build. Read back from the database instead, the
 * 10,000 files of a 10,000-issue project cost ~30-45 ms of the helper's one thread, with git's index-pack
 * waiting for them (issue 18). They are kept only while they fit in `budget` bytes, and only for the commit
 * `seal` names when each is a blob of its own (the database holds as many as were kept): past either, they
 * are let go at once, and the pack reads the database as for any cache.
 */
export class FirstStateBlobs {
  private contents: Buffer[] | undefined = [];
  private bytes = 0;
  private tip: string | undefined;

  constructor(private readonly budget = FIRST_STATE_BLOBS_BUDGET) {}

  /** A record file the build stored. */
  add(content: Buffer): void {
    if (this.contents === undefined) return;
    this.bytes += content.length;
    if (this.bytes > this.budget) this.release();
    else this.contents.push(content);
  }

  /**
   * The build wrote `tip`, whose tree holds the files added; `stored` counts the blobs the database holds
   * (asked only while the files are kept: at 1,000,000 records the count is not free).
   */
  seal(tip: string, stored: () => number): void {
    if (this.contents !== undefined && this.contents.length === stored()) this.tip = tip;
    else this.release();
  }

  /** The files of `tip`'s tree, each once, if they were all kept for it; else undefined. */
  of(tip: string): readonly Buffer[] | undefined {
    return tip === this.tip ? this.contents : undefined;
  }

  release(): void {
    this.contents = undefined;
    this.tip = undefined;
  }
}

/**
 * The first state of the cache when its `main` is one, else undefined: `tip` is a loose commit without
 * parents (the import of a new or rebuilt cache, before anything else), whose tree is the state tree the
 * database keeps with no change since, no two live records share a blob, and the database holds no
 * other blob (none of an older version, a removed record, or a push cut off before its commit). That
 * commit, its trees and the database's blobs are then the whole of what a clone of `tip` needs; anything
 * else is left to upload-pack. When `kept` holds the files of `tip` (this process built it just now), they
 * are its blobs, and the database's are neither counted nor read.
 */
export function firstState(cache: ProjectCache, tip: string, kept?: FirstStateBlobs): FirstState | undefined {
  const commit = readLooseObject(cache.repo, tip, "commit");
  if (commit === undefined) return undefined;
  let read: Commit;
  try {
    read = parseCommit(commit);
  } catch {
    return undefined;
  }
  if (read.parents.length > 0) return undefined;
  const trees = cache.db.stateTrees();
  const root = trees.get("");
  if (root === undefined || read.tree !== hashObject("tree", root)) return undefined;
  if (cache.db.dirtyPaths().length > 0) return undefined;
  // Two directories with the same entries are one tree object, sent once.
  const distinct = new Map([...trees.values()].map((content) => [hashObject("tree", content), content]));
  const blobs = kept?.of(tip);
  if (blobs !== undefined) return { commit, trees: [...distinct.values()], blobCount: blobs.length, blobs };
  const counts = cache.db.blobCounts();
  if (counts.distinctLive !== counts.live || counts.stored !== counts.live) return undefined;
  return { commit, trees: [...distinct.values()], blobCount: counts.stored, blobs: undefined };
}

/** Streams the pack of `state` (helper/stateless-connect.ts frames it for git). */
export async function streamFirstState(
  cache: ProjectCache,
  state: FirstState,
  write: (data: Buffer) => Promise<void>,
  pieceBytes?: number,
): Promise<void> {
  const objects = function* () {
    yield { type: "commit" as const, content: state.commit };
    for (const content of state.trees) yield { type: "tree" as const, content };
    for (const content of state.blobs ?? cache.db.storedBlobContents())
      yield { type: "blob" as const, content };
  };
  await streamPack(objects(), 1 + state.trees.length + state.blobCount, write, pieceBytes);
}
