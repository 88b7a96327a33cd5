/**
 * Whether a git repository holds an object, found in-process: the helper checks the cache's tip on every
 * start (git starts it once per fetch and once per lazy blob batch), and a `git cat-file -e` there would be
 * one more process each time.
 *
 * A loose object is the file `objects/xx/yyyy…`. A packed one is named in a pack's `.idx`: version 2 is
 * `\377tOc`, version 2, a 256-entry fanout (entry `b` = how many names start with a byte ≤ b), then the
 * sorted 20-byte names; version 1 has no header, and each name follows its 4-byte offset. Only the fanout
 * and the names the binary search visits are read. Loose first, then packs: git packs an object before it
 * prunes the loose copy, so a lookup racing `git maintenance` finds one of them.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";

const IDX_V2_MAGIC = 0xff744f63;

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = readSync(fd, buffer, 0, length, position);
  if (read !== length) throw new Error(`short read at byte ${position}`);
  return buffer;
}

/**
 * Whether the pack index whose bytes `read(position, length)` returns names `name` (20 bytes): the
 * fanout narrows the range, a binary search over the sorted names does the rest.
 */
function indexNames(read: (position: number, length: number) => Buffer, name: Buffer): boolean {
  const header = read(0, 8);
  const v2 = header.readUInt32BE(0) === IDX_V2_MAGIC;
  if (v2 && header.readUInt32BE(4) !== 2) return false;
  const fanout = v2 ? 8 : 0;
  const first = name[0] as number;
  const bounds = read(fanout + (first === 0 ? 0 : 4 * (first - 1)), first === 0 ? 4 : 8);
  let low = first === 0 ? 0 : bounds.readUInt32BE(0);
  let high = bounds.readUInt32BE(first === 0 ? 0 : 4);
  const names = fanout + 1024;
  const nameAt = (index: number) => (v2 ? read(names + 20 * index, 20) : read(names + 24 * index + 4, 20));
  while (low < high) {
    const middle = (low + high) >>> 1;
    const order = Buffer.compare(nameAt(middle), name);
    if (order === 0) return true;
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return false;
}

/** Whether the pack index at `path` names `name` (20 bytes); false when the file cannot be read. */
export function packIndexHas(path: string, name: Buffer): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false; // removed since the folder was listed
  }
  try {
    return indexNames((position, length) => readAt(fd, position, length), name);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** A pack index held in memory: where its sorted names start, how far apart they are, how many. */
interface LoadedIndex {
  readonly bytes: Buffer;
  readonly names: number;
  readonly stride: number;
  readonly v2: boolean;
}

function loadIndex(bytes: Buffer): LoadedIndex | undefined {
  if (bytes.length < 1032) return undefined;
  const v2 = bytes.readUInt32BE(0) === IDX_V2_MAGIC;
  if (v2 && bytes.readUInt32BE(4) !== 2) return undefined;
  const fanout = v2 ? 8 : 0;
  return { bytes, names: fanout + 1024 + (v2 ? 0 : 4), stride: v2 ? 20 : 24, v2 };
}

/** `indexNames` over an index in memory, comparing in place (no allocation per step). */
function loadedIndexHas(index: LoadedIndex, name: Buffer): boolean {
  const { bytes, names, stride, v2 } = index;
  const fanout = v2 ? 8 : 0;
  const first = name[0] as number;
  let low = first === 0 ? 0 : bytes.readUInt32BE(fanout + 4 * (first - 1));
  let high = bytes.readUInt32BE(fanout + 4 * first);
  if (names + stride * high > bytes.length) return false;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const at = names + stride * middle;
    const order = bytes.compare(name, 0, 20, at, at + 20);
    if (order === 0) return true;
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return false;
}

/**
 * Which objects an objects folder has, for many lookups: each pack index is read once, whole (a pack of
 * 10,000 objects has a 280 KB index), and each loose-object folder listed once, where `hasObject` reads a
 * few bytes per lookup. Objects of alternates are not seen (the caller then does more than needed, never
 * less).
 */
export class ObjectLookup {
  private readonly indexes: LoadedIndex[] = [];
  private readonly loose = new Map<string, Set<string>>();

  constructor(private readonly objects: string) {
    const packs = join(objects, "pack");
    let names: string[] = [];
    try {
      names = readdirSync(packs);
    } catch {
      // no packs
    }
    for (const file of names) {
      if (!file.endsWith(".idx")) continue;
      try {
        const index = loadIndex(readFileSync(join(packs, file)));
        if (index) this.indexes.push(index);
      } catch {
        // removed since the folder was listed
      }
    }
    // The largest pack (the clone's) holds most objects: searched first.
    this.indexes.sort((a, b) => b.bytes.length - a.bytes.length);
  }

  private looseIn(prefix: string): Set<string> {
    let names = this.loose.get(prefix);
    if (names === undefined) {
      try {
        names = new Set(readdirSync(join(this.objects, prefix)));
      } catch {
        names = new Set();
      }
      this.loose.set(prefix, names);
    }
    return names;
  }

  has(oid: string): boolean {
    if (!/^[0-9a-f]{40}$/.test(oid)) return false;
    const name = Buffer.from(oid, "hex");
    if (this.indexes.some((index) => loadedIndexHas(index, name))) return true;
    return this.looseIn(oid.slice(0, 2)).has(oid.slice(2));
  }
}

/** Whether the repository (a git dir) at `repo` has the object `oid`, loose or in one of its packs. */
export function hasObject(repo: string, oid: string): boolean {
  if (!/^[0-9a-f]{40}$/.test(oid)) return false;
  const objects = join(repo, "objects");
  if (existsSync(join(objects, oid.slice(0, 2), oid.slice(2)))) return true;
  const packs = join(objects, "pack");
  let names: string[];
  try {
    names = readdirSync(packs);
  } catch {
    return false;
  }
  const name = Buffer.from(oid, "hex");
  return names.some((file) => file.endsWith(".idx") && packIndexHas(join(packs, file), name));
}
