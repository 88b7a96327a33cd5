/**
 * The tree of the server state the cache holds: every live record's file, in nested directories. Every
 * sync that changes something and every push writes one, and at 10,000 records building it from all the
 * `records` rows cost 35–75 ms each time. So the encoded tree of each directory is kept in the cache
 * database (`state_trees`), the triggers of the `records` table note each path that changes
 * (`state_dirty`), and a new tree re-encodes only the directories on the way from a changed file to the
 * root.
 *
 * The result is the same tree, byte for byte, as a build from scratch (the commit ids of a state must not
 * depend on the way there: caches that saw the same server states have the same commits); the tests hold
 * the two against each other. A cache that keeps no trees yet (new, or made by an older svc) builds from
 * scratch once.
 */
import type { ProjectCache } from "./cache.js";

/**
 * `content` (an encoded tree) with `edits` applied: key → new blob or tree id, or undefined to remove. A
 * key is a file's name, or a directory's name and `/`, which is also its place in git's tree order. Only
 * the edited entries are touched; the rest is copied as it is (a directory may have 10,000 entries).
 */
export function spliceTree(content: Buffer, edits: ReadonlyMap<string, string | undefined>): Buffer {
  // Where each entry starts and where its name ends: the first NUL after its mode (five bytes at least;
  // neither a mode nor a name holds a NUL). Found in the bytes read as a one-byte string (offsets stay byte
  // offsets), whose indexOf is V8's own: a Buffer's indexOf per entry took ~6 ms of each state commit at
  // 10,000 entries in a new process, this ~1 ms.
  const text = content.toString("latin1");
  // An entry is 28 bytes at the least ("40000 x", a NUL and a 20-byte id): at most this many of them.
  const most = Math.floor(content.length / 28) + 1;
  const starts = new Int32Array(most);
  const nameEnds = new Int32Array(most);
  let count = 0;
  for (let at = 0; at < content.length; ) {
    const nul = text.indexOf("\0", at + 5);
    if (nul === -1 || nul + 21 > content.length || count === most)
      throw new Error(`malformed tree entry at byte ${at}`);
    starts[count] = at;
    nameEnds[count] = nul;
    count++;
    at = nul + 21;
  }
  /** Entry `i`'s key (name, `/` for a directory) against `key`, in byte order. */
  const compare = (i: number, key: Buffer): number => {
    const start = starts[i] as number;
    const space = text.indexOf(" ", start);
    const nameEnd = nameEnds[i] as number;
    if (space === -1 || space >= nameEnd) throw new Error(`malformed tree entry at byte ${start}`);
    const nameStart = space + 1;
    const isDir = nameStart - start === 6; // "40000 "
    const length = nameEnd - nameStart + (isDir ? 1 : 0);
    const shared = Math.min(length, key.length);
    for (let j = 0; j < shared; j++) {
      const ours = nameStart + j < nameEnd ? (content[nameStart + j] as number) : 0x2f;
      const theirs = key[j] as number;
      if (ours !== theirs) return ours - theirs;
    }
    return length - key.length;
  };
  const sorted = [...edits]
    .map(([key, oid]) => ({ key: Buffer.from(key), oid }))
    .sort((a, b) => Buffer.compare(a.key, b.key));
  const parts: Buffer[] = [];
  let copied = 0; // entries before this index are in `parts`
  for (const { key, oid } of sorted) {
    let low = copied;
    let high = count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(middle, key) < 0) low = middle + 1;
      else high = middle;
    }
    const end = low < count ? (starts[low] as number) : content.length;
    parts.push(content.subarray(copied < count ? (starts[copied] as number) : content.length, end));
    copied = low < count && compare(low, key) === 0 ? low + 1 : low;
    if (oid !== undefined) {
      const isDir = key[key.length - 1] === 0x2f;
      const name = isDir ? key.subarray(0, -1) : key;
      parts.push(Buffer.from(isDir ? "40000 " : "100644 "), name, Buffer.from([0]), Buffer.from(oid, "hex"));
    }
  }
  parts.push(content.subarray(copied < count ? (starts[copied] as number) : content.length));
  return Buffer.concat(parts);
}

function parentOf(dir: string): { parent: string; name: string } {
  const slash = dir.lastIndexOf("/");
  return slash === -1
    ? { parent: "", name: dir }
    : { parent: dir.slice(0, slash), name: dir.slice(slash + 1) };
}

function depth(dir: string): number {
  if (dir === "") return 0;
  let n = 1;
  for (const char of dir) if (char === "/") n++;
  return n;
}

/** A file's entry is keyed by its name, a directory's by its name and `/` (git allows neither twice). */
type DirEdits = Map<string, string | undefined>;

/** Writes the state tree's objects and returns the root tree id. Call it inside the cache's write lock. */
export function writeStateTree(cache: ProjectCache): string {
  const stored = cache.db.stateTrees();
  const root = stored.get("");
  if (root === undefined) return rebuildStateTree(cache);

  const edits = new Map<string, DirEdits>();
  const edit = (dir: string, key: string, oid: string | undefined) => {
    let dirEdits = edits.get(dir);
    if (!dirEdits) {
      dirEdits = new Map();
      edits.set(dir, dirEdits);
    }
    dirEdits.set(key, oid);
  };
  for (const path of cache.db.dirtyPaths()) {
    const { parent, name } = parentOf(path);
    edit(parent, name, cache.db.liveOidAt(path));
  }

  const written = new Map<string, Buffer>();
  const removed = new Set<string>();
  // Deepest first: a directory's new id is an edit of its parent.
  while (edits.size > 0) {
    let dir = "";
    let deepest = -1;
    for (const candidate of edits.keys()) {
      const d = depth(candidate);
      if (d > deepest) {
        deepest = d;
        dir = candidate;
      }
    }
    const dirEdits = edits.get(dir) as DirEdits;
    edits.delete(dir);
    const previous = written.get(dir) ?? (removed.has(dir) ? undefined : stored.get(dir));
    const content = spliceTree(previous ?? Buffer.alloc(0), dirEdits);
    if (dir !== "" && content.length === 0) {
      // An empty directory is no tree at all: it leaves its parent (as in a build from scratch).
      written.delete(dir);
      removed.add(dir);
      const { parent, name } = parentOf(dir);
      edit(parent, `${name}/`, undefined);
      continue;
    }
    const oid = cache.writeObject("tree", content);
    written.set(dir, content);
    removed.delete(dir);
    if (dir !== "") {
      const { parent, name } = parentOf(dir);
      edit(parent, `${name}/`, oid);
    }
  }
  // The directories that did not change are referenced by id: make sure their objects are there (a cache
  // repository rebuilt under a kept database would lack them). Idempotent, and there are few of them.
  for (const [dir, content] of stored)
    if (!written.has(dir) && !removed.has(dir)) cache.writeObject("tree", content);
  cache.db.saveStateTrees(written, removed, false);
  return cache.writeObject("tree", written.get("") ?? root);
}

/** An encoded tree being built, one entry after the other in git's order; grows by doubling. */
class TreeBuffer {
  private bytes = Buffer.allocUnsafe(256);
  private length = 0;

  constructor(readonly dir: string) {}

  add(mode: "100644" | "40000", name: string, oid: string): void {
    const need = mode.length + 1 + Buffer.byteLength(name) + 1 + 20;
    if (this.length + need > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + need));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.length += this.bytes.write(`${mode} ${name}\0`, this.length);
    this.length += this.bytes.write(oid, this.length, "hex");
  }

  content(): Buffer {
    return this.bytes.subarray(0, this.length);
  }
}

/**
 * Builds the state tree from every live record, writes it and keeps its directories. One pass over the
 * records in byte order of their paths, which is git's tree order at every level (a directory's files are
 * contiguous, and `/` orders a directory among its siblings as git's `name/` does): only the directories on
 * the current path are open, so memory is the trees' own size, not the number of records.
 */
export function rebuildStateTree(cache: ProjectCache): string {
  const written = new Map<string, Buffer>();
  const open: TreeBuffer[] = [new TreeBuffer("")];
  const top = () => open[open.length - 1] as TreeBuffer;
  const closeTop = (): string => {
    const dir = open.pop() as TreeBuffer;
    const content = Buffer.from(dir.content());
    written.set(dir.dir, content);
    const oid = cache.writeObject("tree", content);
    if (open.length > 0) top().add("40000", parentOf(dir.dir).name, oid);
    return oid;
  };
  for (const file of cache.db.treeEntriesByPath()) {
    const { parent, name } = parentOf(file.path);
    while (top().dir !== "" && parent !== top().dir && !parent.startsWith(`${top().dir}/`)) closeTop();
    while (top().dir !== parent) {
      const from = top().dir === "" ? 0 : top().dir.length + 1;
      const slash = parent.indexOf("/", from);
      open.push(new TreeBuffer(slash === -1 ? parent : parent.slice(0, slash)));
    }
    top().add("100644", name, file.rendered_oid);
  }
  while (open.length > 1) closeTop();
  const oid = closeTop();
  cache.db.saveStateTrees(written, [], true);
  return oid;
}
