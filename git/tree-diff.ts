/**
 * What a push changed, read in-process from the objects of the cache (git/object-store.ts): the files that
 * differ between two commits (`git diff-tree -r --raw --no-renames`) and the blobs of some paths in a commit
 * (`git ls-tree`); git/merge-base.ts walks the commits read here (`git merge-base`).
 * Each of those is one git process (4–8 ms) on the push's path, and each reads only what it needs here too:
 * a diff descends only into folders whose tree ids differ, a lookup only along its path.
 *
 * The answers are git's own, byte for byte (the tests hold them against git). Where that is not certain, a
 * function throws NotInProcessError and the caller asks git: a tree whose entries are not in git's order (a
 * crafted tree: git's own walk then does what it does), several merge bases (git picks one by its own
 * order), an object this reader cannot find or read, a walk longer than MAX_WALK commits.
 */

import type { StoredObject } from "./object-store.js";
import { MalformedCommitError, parseCommit } from "./objects.js";
import type { DiffEntry } from "./plumbing.js";

/** An object by id, from whichever repository holds it; undefined when none does. */
export type ReadObject = (oid: string) => StoredObject | undefined;

/** The question needs git itself (see the module comment); nothing is wrong with the push. */
export class NotInProcessError extends Error {}

/** Commits a merge-base walk reads before it leaves the question to git. */
export const MAX_WALK = 10_000;

const ZERO = "0".repeat(40);

function readAs(read: ReadObject, oid: string, type: StoredObject["type"]): Buffer {
  let object: StoredObject | undefined;
  try {
    object = read(oid);
  } catch (error) {
    throw new NotInProcessError(`${oid} cannot be read: ${(error as Error).message}`);
  }
  if (object?.type !== type)
    throw new NotInProcessError(`${oid} is ${object ? `a ${object.type}` : "missing"}`);
  return object.content;
}

export interface Commit {
  readonly tree: string;
  readonly parents: readonly string[];
  /** The committer time (seconds), git's order of a walk. */
  readonly time: number;
}

/** The commit `oid`, as git reads it; NotInProcessError where git would read it its own way. */
export function readCommit(read: ReadObject, oid: string): Commit {
  let commit: ReturnType<typeof parseCommit>;
  try {
    commit = parseCommit(readAs(read, oid, "commit"));
  } catch (error) {
    if (!(error instanceof MalformedCommitError)) throw error;
    throw new NotInProcessError(`commit ${oid}: ${error.message}`);
  }
  if (commit.time === undefined)
    throw new NotInProcessError(`commit ${oid} has a committer time git reads its own way`);
  return { tree: commit.tree, parents: commit.parents, time: commit.time };
}

/** The tree a commit names. */
export function commitTree(read: ReadObject, commit: string): string {
  return readCommit(read, commit).tree;
}

/** The parents a commit names, in order. */
export function commitParents(read: ReadObject, commit: string): readonly string[] {
  return readCommit(read, commit).parents;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
/** A submodule's commit: an object of another repository. */
export const S_IFGITLINK = 0o160000;
const SLASH = 0x2f;

/** git's canon_mode: a regular file is 644 or 755, anything not a file, link or folder a submodule. */
function canonicalMode(mode: number): number {
  const type = mode & S_IFMT;
  if (type === S_IFREG) return S_IFREG | (mode & 0o100 ? 0o755 : 0o644);
  if (type === S_IFLNK || type === S_IFDIR) return type;
  return S_IFGITLINK;
}

function modeText(mode: number): string {
  return mode.toString(8).padStart(6, "0");
}

/**
 * A tree object's entries, found where they lie in its bytes, as far as they are looked at: a state tree has
 * 10,000 entries of which a push touches one, and where two trees share their first and last bytes, a diff
 * finds nothing there to look at (git's walk pairs such entries one by one and finds them equal).
 */
export class RawTree {
  /** Where each entry found so far starts, where its name starts (after the space), and its NUL. */
  private readonly starts: number[] = [];
  private readonly nameStarts: number[] = [];
  private readonly nameEnds: number[] = [];
  /** Where the next entry to find starts. */
  private scanned = 0;
  /**
   * The bytes as a one-byte string (offsets stay byte offsets), made at the first look: V8's own indexOf
   * finds each entry's NUL faster than a Buffer's in a new process (spliceTree in cache/state-tree.ts says
   * how much).
   */
  private text: string | undefined;

  constructor(
    readonly id: string,
    readonly bytes: Buffer,
  ) {}

  /** Whether entry `i` exists (finding the entries up to it). */
  has(i: number): boolean {
    const { bytes } = this;
    while (this.starts.length <= i && this.scanned < bytes.length) {
      this.text ??= bytes.toString("latin1");
      const at = this.scanned;
      const nul = this.text.indexOf("\0", at);
      // git dies on such an entry ("malformed tree"), wherever it is.
      const space = bytes[at + 5] === 0x20 ? at + 5 : bytes[at + 6] === 0x20 ? at + 6 : -1;
      if (space === -1 || nul <= space + 1 || nul + 21 > bytes.length)
        throw new NotInProcessError(`tree ${this.id} has a malformed entry at byte ${at}`);
      this.starts.push(at);
      this.nameStarts.push(space + 1);
      this.nameEnds.push(nul);
      this.scanned = nul + 21;
    }
    return i < this.starts.length;
  }

  /**
   * Takes the places of `other`'s first `count` entries as its own, without looking for them again: the
   * caller knows the two trees have the same bytes up to there.
   */
  adopt(other: RawTree, count: number): void {
    if (this.starts.length > 0 || !other.has(count - 1)) return;
    this.starts.push(...other.starts.slice(0, count));
    this.nameStarts.push(...other.nameStarts.slice(0, count));
    this.nameEnds.push(...other.nameEnds.slice(0, count));
    this.scanned = (this.nameEnds[count - 1] as number) + 21;
  }

  /** Where entry `i` starts; the tree's length when there is no entry `i`. */
  start(i: number): number {
    return this.has(i) ? (this.starts[i] as number) : this.bytes.length;
  }

  /** The entry that holds byte `at` (the count of entries, for the tree's end). */
  entryOver(at: number): number {
    let i = 0;
    while (this.has(i) && (this.nameEnds[i] as number) + 21 <= at) i++;
    return i;
  }

  /** Entry `i`'s mode, canonical; throws for digits git does not read as a mode. */
  mode(i: number): number {
    let mode = 0;
    for (let at = this.starts[i] as number; at < (this.nameStarts[i] as number) - 1; at++) {
      const digit = (this.bytes[at] as number) - 0x30;
      if (digit < 0 || digit > 7) throw new NotInProcessError(`tree ${this.id} has a malformed mode`);
      mode = mode * 8 + digit;
    }
    return canonicalMode(mode);
  }

  isFolder(i: number): boolean {
    return this.mode(i) === S_IFDIR;
  }

  name(i: number): Buffer {
    return this.bytes.subarray(this.nameStarts[i], this.nameEnds[i]);
  }

  oid(i: number): string {
    const nul = this.nameEnds[i] as number;
    return this.bytes.toString("hex", nul + 1, nul + 21);
  }

  /** Entry `i` against entry `j` of `other` in git's order (a folder's name compared as if it ended in `/`). */
  compare(i: number, other: RawTree, j: number): number {
    const a = this.nameStarts[i] as number;
    const aEnd = this.nameEnds[i] as number;
    const b = other.nameStarts[j] as number;
    const bEnd = other.nameEnds[j] as number;
    const shared = Math.min(aEnd - a, bEnd - b);
    const order = other.bytes.compare(this.bytes, a, a + shared, b, b + shared);
    if (order !== 0) return -order;
    const next = (tree: RawTree, index: number, at: number, end: number) =>
      at < end ? (tree.bytes[at] as number) : tree.isFolder(index) ? SLASH : -1;
    return next(this, i, a + shared, aEnd) - next(other, j, b + shared, bEnd);
  }

  /** Throws unless entry `i` comes after entry `i - 1` in git's order (no name twice). */
  checkAfterPrevious(i: number): void {
    if (i > 0 && this.compare(i - 1, this, i) >= 0)
      throw new NotInProcessError(`tree ${this.id} is not in git's order`);
  }

  /**
   * The entry named `name` that is a folder (`folder`) or not, or -1 when there is none; found by name as
   * git's ls-tree finds it, whatever the order (two such entries: NotInProcessError).
   */
  find(name: Buffer, folder: boolean): number {
    const pattern = Buffer.concat([Buffer.from(" "), name, Buffer.from([0])]);
    let found = -1;
    let i = 0;
    for (let at = this.bytes.indexOf(pattern); at !== -1; at = this.bytes.indexOf(pattern, at + 1)) {
      // A match is an entry's name only where an entry's name starts (a name may hold the bytes ` x\0`).
      while (this.has(i) && (this.nameStarts[i] as number) < at + 1) i++;
      if (!this.has(i) || this.nameStarts[i] !== at + 1 || this.isFolder(i) !== folder) continue;
      if (found !== -1) throw new NotInProcessError(`tree ${this.id} has an entry twice`);
      found = i;
    }
    return found;
  }
}

/** How many bytes `a` and `b` share at their start (or, `fromEnd`, at their end). */
function sharedBytes(a: Buffer, b: Buffer, fromEnd: boolean): number {
  const length = Math.min(a.length, b.length);
  const same = (from: number, count: number) =>
    fromEnd
      ? a.compare(b, b.length - from - count, b.length - from, a.length - from - count, a.length - from) === 0
      : a.compare(b, from, from + count, from, from + count) === 0;
  let shared = 0;
  let chunk = 4096;
  while (shared + chunk <= length && same(shared, chunk)) shared += chunk;
  // Within the chunk that differs: halve it.
  for (chunk = Math.min(chunk, length - shared); chunk > 0; chunk >>>= 1)
    if (shared + chunk <= length && same(shared, chunk)) shared += chunk;
  return shared;
}

/**
 * Tree objects read once each (a push compares the same trees when it copies, diffs and looks up tokens).
 * Throws NotInProcessError for a tree that cannot be read or is malformed.
 */
export class Trees {
  private readonly trees = new Map<string, RawTree>();

  constructor(readonly read: ReadObject) {}

  get(oid: string): RawTree {
    let tree = this.trees.get(oid);
    if (!tree) {
      tree = new RawTree(oid, readAs(this.read, oid, "tree"));
      this.trees.set(oid, tree);
    }
    return tree;
  }
}

/** What a tree diff reports: each file that differs, and each tree of the new side that differs. */
export interface DiffSink {
  file(entry: DiffEntry): void;
  /** A tree of the new side (the root included) that the old side does not have at its path. */
  tree?(oid: string, path: string): void;
}

/**
 * The files that differ between the trees of commits `from` and `to`, as `git diff-tree -r -z --raw
 * --no-renames <from> <to>` lists them (and parseRawDiff reads them): in git's order, each with git's
 * status letter (A, D, M, or T for a change of file type), canonical modes and blob ids.
 */
export function treeDiff(trees: Trees, from: string, to: string): DiffEntry[] {
  const out: DiffEntry[] = [];
  diffTrees(trees, commitTree(trees.read, from), commitTree(trees.read, to), {
    file: (entry) => out.push(entry),
  });
  return out;
}

/**
 * Reports to `sink` what differs between trees `from` and `to` (either undefined: the empty tree), as git's
 * tree diff walks them; `prefix` is their folder. The entries the two trees share at their start are not
 * looked at, and the walk stops once both have reached, at the same distance from their ends, the bytes
 * they share at their end: the entries there are the same in both.
 */
export function diffTrees(
  trees: Trees,
  from: string | undefined,
  to: string | undefined,
  sink: DiffSink,
  prefix: readonly Buffer[] = [],
): void {
  if (from === to) return;
  const before = from === undefined ? undefined : trees.get(from);
  const after = to === undefined ? undefined : trees.get(to);
  if (to !== undefined) sink.tree?.(to, pathOf(prefix, Buffer.alloc(0)));
  let first = 0;
  let tail = { before: 0, after: 0 };
  if (before && after) {
    // The entry holding the first byte that differs starts at the same place in both.
    first = before.entryOver(sharedBytes(before.bytes, after.bytes, false));
    if (first > 0) after.adopt(before, first);
    const shared = sharedBytes(before.bytes, after.bytes, true);
    tail = { before: before.bytes.length - shared, after: after.bytes.length - shared };
  }
  // Each entry the walk reaches must come after the one before it (git's order), or git's walk would
  // pair other entries than this one.
  const ended = (tree: RawTree | undefined, index: number) => {
    if (!tree?.has(index)) return true;
    if (index > first) tree.checkAfterPrevious(index);
    return false;
  };
  let i = first;
  let j = first;
  for (;;) {
    const oldDone = ended(before, i);
    const newDone = ended(after, j);
    if (oldDone && newDone) return;
    if (before && after && !oldDone && !newDone) {
      const [a, b] = [before.start(i), after.start(j)];
      if (a >= tail.before && b >= tail.after && before.bytes.length - a === after.bytes.length - b) return;
    }
    const order = oldDone ? 1 : newDone ? -1 : (before as RawTree).compare(i, after as RawTree, j);
    if (order < 0) {
      one(trees, before as RawTree, i++, "D", prefix, sink);
    } else if (order > 0) {
      one(trees, after as RawTree, j++, "A", prefix, sink);
    } else {
      const old = before as RawTree;
      const now = after as RawTree;
      const [oldMode, newMode, oldOid, newOid] = [old.mode(i), now.mode(j), old.oid(i), now.oid(j)];
      const name = now.name(j);
      i++;
      j++;
      if (oldOid === newOid && oldMode === newMode) continue;
      if (oldMode === S_IFDIR) {
        diffTrees(trees, oldOid, newOid, sink, [...prefix, name]);
        continue;
      }
      sink.file({
        status: (oldMode & S_IFMT) === (newMode & S_IFMT) ? "M" : "T",
        path: pathOf(prefix, name),
        oldMode: modeText(oldMode),
        newMode: modeText(newMode),
        oldOid,
        newOid,
      });
    }
  }
}

/** Entry `i` of `tree`, which only one side has: a file added or deleted, or every file of a folder. */
function one(
  trees: Trees,
  tree: RawTree,
  i: number,
  status: "A" | "D",
  prefix: readonly Buffer[],
  sink: DiffSink,
): void {
  const oid = tree.oid(i);
  const mode = tree.mode(i);
  if (mode === S_IFDIR) {
    const inside = [...prefix, tree.name(i)];
    if (status === "A") diffTrees(trees, undefined, oid, sink, inside);
    else diffTrees(trees, oid, undefined, sink, inside);
    return;
  }
  const text = modeText(mode);
  sink.file({
    status,
    path: pathOf(prefix, tree.name(i)),
    oldMode: status === "D" ? text : "000000",
    newMode: status === "A" ? text : "000000",
    oldOid: status === "D" ? oid : ZERO,
    newOid: status === "A" ? oid : ZERO,
  });
}

/** `prefix/name` as git prints it; `prefix/` for an empty name (a folder's own path). */
function pathOf(prefix: readonly Buffer[], name: Buffer): string {
  const parts: Buffer[] = [];
  for (const part of prefix) parts.push(part, Buffer.from("/"));
  parts.push(name);
  return Buffer.concat(parts).toString("utf8");
}

/**
 * path → blob id of those of `paths` that are files (regular or links) in the tree of `commit`, as `git
 * ls-tree -z --full-tree <commit> -- <paths>` lists them with type `blob`.
 */
export function filesAt(trees: Trees, commit: string, paths: readonly string[]): Map<string, string> {
  const files = new Map<string, string>();
  if (paths.length === 0) return files;
  const root = commitTree(trees.read, commit);
  for (const path of paths) {
    const parts = path.split("/");
    let tree: string | undefined = root;
    for (const [index, part] of parts.entries()) {
      if (tree === undefined || part === "") break;
      const last = index === parts.length - 1;
      const raw: RawTree = trees.get(tree);
      const found = raw.find(Buffer.from(part), !last);
      tree = undefined;
      if (found === -1) break;
      if (!last) tree = raw.oid(found);
      else if ((raw.mode(found) & S_IFMT) === S_IFREG || raw.mode(found) === S_IFLNK)
        files.set(path, raw.oid(found));
    }
  }
  return files;
}
