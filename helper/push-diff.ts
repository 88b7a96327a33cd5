/**
 * What a push changed, read in-process from the objects of the cache (cache/object-store.ts): the merge
 * base of the pushed commit and the cache's main (`git merge-base`), the files that differ between two
 * commits (`git diff-tree -r --raw --no-renames`), and the blobs of some paths in a commit (`git ls-tree`).
 * Each of those is one git process (4–8 ms) on the push's path, and each reads only what it needs here too:
 * a diff descends only into folders whose tree ids differ, a lookup only along its path.
 *
 * The answers are git's own, byte for byte (the tests hold them against git). Where that is not certain, a
 * function throws NotInProcessError and the caller asks git: a tree whose entries are not in git's order (a
 * crafted tree: git's own walk then does what it does), several merge bases (git picks one by its own
 * order), an object this reader cannot find or read, a walk longer than MAX_WALK commits.
 */
import type { StoredObject } from "../cache/object-store.js";
import { parseTree } from "../cache/objects.js";
import type { DiffEntry } from "./push-plan.js";

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

interface Commit {
  readonly tree: string;
  readonly parents: readonly string[];
  /** The committer time (seconds), git's order of a walk. */
  readonly time: number;
}

function readCommit(read: ReadObject, oid: string): Commit {
  const content = readAs(read, oid, "commit");
  const end = content.indexOf("\n\n");
  const lines = content.toString("latin1", 0, end === -1 ? content.length : end).split("\n");
  const tree = /^tree ([0-9a-f]{40})$/.exec(lines[0] ?? "")?.[1];
  if (!tree) throw new NotInProcessError(`commit ${oid} names no tree`);
  let at = 1;
  const parents: string[] = [];
  for (; lines[at]?.startsWith("parent "); at++) {
    const parent = /^parent ([0-9a-f]{40})$/.exec(lines[at] as string)?.[1];
    if (!parent) throw new NotInProcessError(`commit ${oid} has a malformed parent`);
    parents.push(parent);
  }
  return { tree, parents, time: commitTime(lines[at], lines[at + 1], oid) };
}

/**
 * git's parse_commit_date: the committer line right after the author line, the number after its last `>`;
 * 0 when the lines are not there.
 */
function commitTime(author: string | undefined, committer: string | undefined, oid: string): number {
  if (!author?.startsWith("author") || !committer?.startsWith("committer")) return 0;
  const close = committer.lastIndexOf(">");
  if (close === -1) return 0;
  const digits = /^[ \t\v\f\r]*(\+|-)?(\d*)/.exec(committer.slice(close + 1));
  const time = Number(digits?.[2] || "0");
  if (digits?.[1] === "-" || !Number.isSafeInteger(time))
    throw new NotInProcessError(`commit ${oid} has a committer time git reads its own way`);
  return time;
}

/** The tree a commit names. */
export function commitTree(read: ReadObject, commit: string): string {
  return readCommit(read, commit).tree;
}

/** One entry of a tree, with git's mode (canonical, as git's tree walk reads it) and its sort key. */
interface Entry {
  readonly name: Buffer;
  /** The name, and `/` for a folder: git's order of a tree's entries. */
  readonly key: Buffer;
  readonly mode: number;
  readonly oid: string;
  readonly folder: boolean;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFGITLINK = 0o160000;

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

/** The entries of tree `oid`, checked to be in git's order with no name twice. */
function readTree(read: ReadObject, oid: string): Entry[] {
  let stored: ReturnType<typeof parseTree>;
  try {
    stored = parseTree(readAs(read, oid, "tree"));
  } catch (error) {
    if (error instanceof NotInProcessError) throw error;
    throw new NotInProcessError(`tree ${oid}: ${(error as Error).message}`);
  }
  const entries: Entry[] = [];
  for (const { mode: digits, name, oid: id } of stored) {
    const mode = canonicalMode(Number.parseInt(digits, 8));
    const folder = mode === S_IFDIR;
    const key = folder ? Buffer.concat([name, Buffer.from("/")]) : name;
    const previous = entries.at(-1);
    if (previous && Buffer.compare(previous.key, key) >= 0)
      throw new NotInProcessError(`tree ${oid} is not in git's order`);
    entries.push({ name, key, mode, oid: id, folder });
  }
  return entries;
}

/**
 * The files that differ between the trees of commits `from` and `to`, as `git diff-tree -r -z --raw
 * --no-renames <from> <to>` lists them (and parseRawDiff reads them): in git's order, each with git's
 * status letter (A, D, M, or T for a change of file type), canonical modes and blob ids.
 */
export function treeDiff(read: ReadObject, from: string, to: string): DiffEntry[] {
  const out: DiffEntry[] = [];
  diffTrees(read, commitTree(read, from), commitTree(read, to), [], out);
  return out;
}

function diffTrees(
  read: ReadObject,
  from: string | undefined,
  to: string | undefined,
  prefix: readonly Buffer[],
  out: DiffEntry[],
): void {
  const before = from === undefined ? [] : readTree(read, from);
  const after = to === undefined ? [] : readTree(read, to);
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const old = before[i];
    const now = after[j];
    const order = !old ? 1 : !now ? -1 : Buffer.compare(old.key, now.key);
    if (order < 0 && old) {
      one(read, old, "D", prefix, out);
      i++;
    } else if (order > 0 && now) {
      one(read, now, "A", prefix, out);
      j++;
    } else if (old && now) {
      i++;
      j++;
      if (old.oid === now.oid && old.mode === now.mode) continue;
      if (old.folder) {
        diffTrees(read, old.oid, now.oid, [...prefix, old.name], out);
        continue;
      }
      out.push({
        status: (old.mode & S_IFMT) === (now.mode & S_IFMT) ? "M" : "T",
        path: pathOf(prefix, now.name),
        oldMode: modeText(old.mode),
        newMode: modeText(now.mode),
        oldOid: old.oid,
        newOid: now.oid,
      });
    }
  }
}

/** An entry only one side has: a file added or deleted, or every file of a folder. */
function one(
  read: ReadObject,
  entry: Entry,
  status: "A" | "D",
  prefix: readonly Buffer[],
  out: DiffEntry[],
): void {
  if (entry.folder) {
    const inside = [...prefix, entry.name];
    if (status === "A") diffTrees(read, undefined, entry.oid, inside, out);
    else diffTrees(read, entry.oid, undefined, inside, out);
    return;
  }
  const mode = modeText(entry.mode);
  out.push({
    status,
    path: pathOf(prefix, entry.name),
    oldMode: status === "D" ? mode : "000000",
    newMode: status === "A" ? mode : "000000",
    oldOid: status === "D" ? entry.oid : ZERO,
    newOid: status === "A" ? entry.oid : ZERO,
  });
}

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
export function filesAt(read: ReadObject, commit: string, paths: readonly string[]): Map<string, string> {
  const files = new Map<string, string>();
  if (paths.length === 0) return files;
  const root = commitTree(read, commit);
  const trees = new Map<string, Entry[]>();
  const entries = (oid: string) => {
    let found = trees.get(oid);
    if (!found) {
      found = readTree(read, oid);
      trees.set(oid, found);
    }
    return found;
  };
  for (const path of paths) {
    const parts = path.split("/");
    let tree: string | undefined = root;
    for (const [index, part] of parts.entries()) {
      if (tree === undefined) break;
      const last = index === parts.length - 1;
      const key = Buffer.from(last ? part : `${part}/`);
      const entry: Entry | undefined = entries(tree).find((candidate) => candidate.key.equals(key));
      tree = undefined;
      if (!entry) break;
      if (!last) tree = entry.oid;
      else if ((entry.mode & S_IFMT) === S_IFREG || entry.mode === S_IFLNK) files.set(path, entry.oid);
    }
  }
  return files;
}

const PARENT1 = 1;
const PARENT2 = 2;
const STALE = 4;
const RESULT = 8;

/**
 * The merge base of commits `one` and `two` as `git merge-base <one> <two>` prints it, or undefined when
 * they share no history. git's paint_down_to_common (commit-reach.c): walk both histories newest commit
 * first (ties in the order they were queued), mark each commit with the sides that reach it, and a commit
 * both reach is a result whose ancestors are stale. One result is git's answer; several need git's own
 * choice among them (NotInProcessError).
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
  const best = results.filter((oid) => ((flags.get(oid) ?? 0) & STALE) === 0);
  if (best.length > 1) throw new NotInProcessError(`${best.length} merge bases`);
  return best[0];
}
