/**
 * The user's pushed commits into the cache, byte for byte, in-process (DESIGN.md §4 "Push"): the objects
 * the cache lacks are read from the user's repository and stored as loose objects of the cache. A `git push`
 * into the cache (send-pack, receive-pack, index-pack, three processes and a pack) took ~60 ms of a push
 * that changed one record; this takes a few.
 *
 * What is new is what `git push` with the cache's commits as "haves" sends: the commits the cache does not
 * have, and in each the trees and blobs that differ from the same path in every parent. What a commit shares
 * with its parents is not read, so a partial clone, which lacks most blobs, is never asked for one (nothing
 * is fetched lazily). A loose object is copied as its file once its bytes are checked against its id; a
 * packed one is written loose. The objects are written before the commits that name them, and no ref points
 * at them: a push killed half way leaves only objects, which the cache (never `gc`'d) keeps harmlessly.
 *
 * Left to git (the caller then runs `git push`): a new object this reader does not find in the user's
 * objects folder (an alternate, a missing blob of a partial clone that no parent shares), a damaged object,
 * a tree not in git's order, or more than MAX_COPY objects (git's pack is faster then).
 */
import type { ObjectReader, StoredObject } from "./object-store.js";
import { hashObject, type ObjectType, parseCommit, writeLooseFile, writeLooseObject } from "./objects.js";
import { diffTrees, type Trees } from "./tree-diff.js";

/** More new objects than this are left to `git push`. */
export const MAX_COPY = 500;

interface Found {
  readonly oid: string;
  readonly type: ObjectType;
  readonly object: StoredObject;
}

/** Stops the walk: git does the copy. */
class LeaveToGit extends Error {}

export type CopyOutcome = { readonly copied: number } | { readonly leftToGit: string };

class NewObjects {
  readonly commits: Found[] = [];
  readonly others: Found[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly user: ObjectReader,
    private readonly cache: ObjectReader,
    private readonly trees: Trees,
  ) {}

  /** Whether `oid` is to be copied: not seen yet in this walk, and not in the cache. */
  private isNew(oid: string): boolean {
    if (this.seen.has(oid)) return false;
    this.seen.add(oid);
    return !this.cache.has(oid);
  }

  private take(oid: string, type: ObjectType, into: Found[]): StoredObject {
    const object = this.user.read(oid);
    if (object?.type !== type)
      throw new LeaveToGit(`${type} ${oid} is not in your repository's objects folder`);
    if (this.commits.length + this.others.length >= MAX_COPY)
      throw new LeaveToGit(`more than ${MAX_COPY} new objects`);
    into.push({ oid, type, object });
    return object;
  }

  walk(commit: string): void {
    const pending = [commit];
    const trees: { tree: string; parents: readonly string[] }[] = [];
    for (let oid = pending.pop(); oid !== undefined; oid = pending.pop()) {
      if (!this.isNew(oid)) continue;
      const { tree, parents } = parseCommit(this.take(oid, "commit", this.commits).content);
      trees.push({ tree, parents });
      pending.push(...parents);
    }
    for (const { tree, parents } of trees) {
      const theirs: (string | undefined)[] = [];
      for (const parent of parents) {
        const object = this.trees.read(parent);
        theirs.push(object?.type === "commit" ? parseCommit(object.content).tree : undefined);
      }
      this.commitTree(tree, theirs.length === 0 ? [undefined] : theirs);
    }
  }

  /**
   * The trees and blobs of `tree` that differ from every tree of `theirs` (the parents' trees; undefined
   * for a root commit or a parent whose tree cannot be read) at the same path: git's own tree diff finds
   * them, against each parent.
   */
  private commitTree(tree: string, theirs: readonly (string | undefined)[]): void {
    let common: Map<string, { oid: string; type: "tree" | "blob" }> | undefined;
    for (const parent of theirs) {
      const differs = new Map<string, { oid: string; type: "tree" | "blob" }>();
      diffTrees(this.trees, parent, tree, {
        file: (entry) => {
          if (entry.newMode !== "000000" && entry.newMode !== "160000")
            differs.set(`${entry.path}\0${entry.newOid}`, { oid: entry.newOid, type: "blob" });
        },
        tree: (oid, path) => differs.set(`${path}\0${oid}`, { oid, type: "tree" }),
      });
      common = common === undefined ? differs : new Map([...common].filter(([key]) => differs.has(key)));
    }
    for (const { oid, type } of common?.values() ?? [])
      if (this.isNew(oid)) this.take(oid, type, this.others);
  }
}

/**
 * Copies into the cache repository `cacheRepo` the objects of `commit` it lacks, read with `user` (the
 * user's objects) and `cache` (the cache's); `trees` reads from either. `afterFirst` runs once the first
 * object is stored. Says how many were copied, or why git must do it (nothing is wrong with the push then;
 * some objects may be stored).
 */
export function copyNewObjects(
  objects: { user: ObjectReader; cache: ObjectReader; trees: Trees },
  cacheRepo: string,
  commit: string,
  afterFirst: () => void = () => {},
): CopyOutcome {
  const walk = new NewObjects(objects.user, objects.cache, objects.trees);
  try {
    walk.walk(commit);
  } catch (error) {
    // Anything unreadable or malformed (UnreadableObjectError, NotInProcessError, a parse error): git then
    // copies, or says what is wrong in its own words.
    return { leftToGit: (error as Error).message };
  }
  // Trees and blobs first, then the commits, parents before children: nothing names an object not stored.
  const found = [...walk.others, ...walk.commits.reverse()];
  for (const [index, { oid, type, object }] of found.entries()) {
    if (object.loose && hashObject(type, object.content) === oid)
      writeLooseFile(cacheRepo, oid, object.loose);
    else if (writeLooseObject(cacheRepo, type, object.content) !== oid)
      return { leftToGit: `${type} ${oid} of your repository does not match its id` };
    if (index === 0) afterFirst();
  }
  return { copied: found.length };
}
