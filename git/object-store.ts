/**
 * Objects of a git repository, found and read in-process: the helper checks the cache's tip on every start
 * (git starts it once per fetch and once per lazy blob batch), and a push reads a few commits, trees and
 * blobs of the cache and of the user's repository, where each `git cat-file` or `git diff-tree` would be
 * one more process (4–8 ms each).
 *
 * A loose object is the file `objects/xx/yyyy…`: zlib of `<type> <size>\0<content>`. A packed one is named
 * in a pack's `.idx`: version 2 is `\377tOc`, version 2, a 256-entry fanout (entry `b` = how many names
 * start with a byte ≤ b), the sorted 20-byte names, their CRCs, their 4-byte offsets (high bit set: an index
 * into the 8-byte offsets that follow); version 1 has no header, and each name follows its 4-byte offset.
 * Only the fanout and the names the binary search visits are read. In the `.pack`, an object is a header
 * (type, size) and zlib data; a delta (gitformat-pack(5): `OFS_DELTA` by offset, `REF_DELTA` by name) is
 * applied to its base. Loose first, then packs: git packs an object before it prunes the loose copy, so a
 * lookup racing `git maintenance` finds one of them.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { inflate } from "./objects.js";

const IDX_V2_MAGIC = 0xff744f63;

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = readSync(fd, buffer, 0, length, position);
  if (read !== length) throw new Error(`short read at byte ${position}`);
  return buffer;
}

/**
 * Where the pack index whose bytes `read(position, length)` returns names `name` (20 bytes), and the offset
 * of that object in its pack; undefined when it does not. The fanout narrows the range, a binary search over
 * the sorted names does the rest.
 */
function indexFind(
  read: (position: number, length: number) => Buffer,
  name: Buffer,
): { offset: () => number } | undefined {
  const header = read(0, 8);
  const v2 = header.readUInt32BE(0) === IDX_V2_MAGIC;
  if (v2 && header.readUInt32BE(4) !== 2) return undefined;
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
    if (order === 0) {
      return {
        offset: () => {
          if (!v2) return read(names + 24 * middle, 4).readUInt32BE(0);
          const count = read(fanout + 4 * 255, 4).readUInt32BE(0);
          const offsets = names + 24 * count;
          const small = read(offsets + 4 * middle, 4).readUInt32BE(0);
          if (small < 0x80000000) return small;
          const large = read(offsets + 4 * count + 8 * (small & 0x7fffffff), 8);
          return large.readUInt32BE(0) * 2 ** 32 + large.readUInt32BE(4);
        },
      };
    }
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return undefined;
}

/** Whether the pack index whose bytes `read(position, length)` returns names `name` (20 bytes). */
function indexNames(read: (position: number, length: number) => Buffer, name: Buffer): boolean {
  return indexFind(read, name) !== undefined;
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

export type StoredType = "commit" | "tree" | "blob" | "tag";

export interface StoredObject {
  readonly type: StoredType;
  readonly content: Buffer;
  /** The loose object file's bytes, when the object was read from one (a copy of it is the same object). */
  readonly loose?: Buffer;
}

/** An object the repository has but that cannot be read as git writes objects: damaged, or cut short. */
export class UnreadableObjectError extends Error {}

const PACK_TYPES: readonly (StoredType | undefined)[] = [undefined, "commit", "tree", "blob", "tag"];
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** Far deeper than git writes (`pack.depth` 50, `--aggressive` 250); a bound against crafted cycles. */
const MAX_DELTA_DEPTH = 10_000;

/** At most `length` bytes at `position` of `fd` (fewer at the end of the file). */
function readUpTo(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, read);
}

/** A git delta (gitformat-pack(5) "Deltified representation") applied to `base`. */
export function applyDelta(base: Buffer, delta: Buffer): Buffer {
  let at = 0;
  const byte = () => {
    if (at >= delta.length) throw new UnreadableObjectError("a delta ends early");
    return delta[at++] as number;
  };
  const size = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const next = byte();
      value += (next & 0x7f) * scale;
      scale *= 128;
      if ((next & 0x80) === 0) return value;
    }
  };
  if (size() !== base.length) throw new UnreadableObjectError("a delta names a base of another size");
  const out = Buffer.allocUnsafe(size());
  let written = 0;
  while (at < delta.length) {
    const op = byte();
    if (op & 0x80) {
      let offset = 0;
      let length = 0;
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) offset += byte() * 2 ** (8 * bit);
      for (let bit = 0; bit < 3; bit++) if (op & (0x10 << bit)) length += byte() * 2 ** (8 * bit);
      if (length === 0) length = 0x10000;
      if (offset + length > base.length || written + length > out.length)
        throw new UnreadableObjectError("a delta copies from outside its base");
      written += base.copy(out, written, offset, offset + length);
    } else if (op !== 0) {
      if (at + op > delta.length || written + op > out.length)
        throw new UnreadableObjectError("a delta inserts more than it holds");
      written += delta.copy(out, written, at, at + op);
      at += op;
    } else {
      throw new UnreadableObjectError("a delta has the reserved instruction 0");
    }
  }
  if (written !== out.length) throw new UnreadableObjectError("a delta makes an object of another size");
  return out;
}

/** zlib data of `size` bytes once inflated, at `position` of the pack `fd`. */
function inflateAt(fd: number, position: number, size: number): Buffer {
  // zlib's worst case is a few bytes per 16 KB block over the raw size; the pack's next bytes are ignored.
  const data = inflate(readUpTo(fd, position, size + (size >>> 3) + 64));
  if (data.length !== size)
    throw new UnreadableObjectError(`packed data of ${data.length} bytes, not ${size}`);
  return data;
}

/**
 * Reads the objects of one objects folder (`<git dir>/objects`), loose or packed, in-process. Objects of
 * alternates are not seen: `read` says undefined, and callers that must have the object ask git.
 */
export class ObjectReader {
  private indexes: string[] | undefined;

  constructor(readonly objects: string) {}

  private packIndexes(refresh = false): string[] {
    if (this.indexes === undefined || refresh) {
      const packs = join(this.objects, "pack");
      try {
        this.indexes = readdirSync(packs)
          .filter((file) => file.endsWith(".idx"))
          .map((file) => join(packs, file));
      } catch {
        this.indexes = [];
      }
    }
    return this.indexes;
  }

  has(oid: string): boolean {
    if (!/^[0-9a-f]{40}$/.test(oid)) return false;
    if (existsSync(join(this.objects, oid.slice(0, 2), oid.slice(2)))) return true;
    const name = Buffer.from(oid, "hex");
    const found = (indexes: string[]) => indexes.some((index) => packIndexHas(index, name));
    return found(this.packIndexes()) || found(this.packIndexes(true));
  }

  /**
   * The object `oid`, or undefined when this folder does not have it. Throws UnreadableObjectError when it
   * has it but its bytes are not what git writes.
   */
  read(oid: string, depth = 0): StoredObject | undefined {
    if (!/^[0-9a-f]{40}$/.test(oid)) return undefined;
    const loose = this.readLoose(oid);
    if (loose) return loose;
    const name = Buffer.from(oid, "hex");
    return (
      this.readPacked(name, this.packIndexes(), depth) ?? this.readPacked(name, this.packIndexes(true), depth)
    );
  }

  private readLoose(oid: string): StoredObject | undefined {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(this.objects, oid.slice(0, 2), oid.slice(2)));
    } catch {
      return undefined; // not loose (or pruned since: then it is in a pack)
    }
    let raw: Buffer;
    try {
      raw = inflate(bytes);
    } catch (error) {
      throw new UnreadableObjectError(`loose object ${oid}: ${(error as Error).message}`);
    }
    const nul = raw.indexOf(0);
    const [type, size] = raw.toString("latin1", 0, nul === -1 ? 0 : nul).split(" ");
    const content = raw.subarray(nul + 1);
    if (!PACK_TYPES.includes(type as StoredType) || Number(size) !== content.length)
      throw new UnreadableObjectError(`loose object ${oid} has a malformed header`);
    return { type: type as StoredType, content, loose: bytes };
  }

  private readPacked(name: Buffer, indexes: readonly string[], depth: number): StoredObject | undefined {
    for (const index of indexes) {
      let offset: number | undefined;
      const fd = openOrUndefined(index);
      if (fd === undefined) continue;
      try {
        offset = indexFind((position, length) => readAt(fd, position, length), name)?.offset();
      } catch {
        offset = undefined; // an index cut short: as git, look elsewhere
      } finally {
        closeSync(fd);
      }
      if (offset === undefined) continue;
      const pack = openOrUndefined(`${index.slice(0, -".idx".length)}.pack`);
      if (pack === undefined) continue; // removed by a repack since the folder was listed
      try {
        return this.readAtOffset(pack, offset, depth);
      } finally {
        closeSync(pack);
      }
    }
    return undefined;
  }

  private readAtOffset(pack: number, offset: number, depth: number): StoredObject {
    if (depth > MAX_DELTA_DEPTH) throw new UnreadableObjectError("a delta chain longer than git makes");
    const head = readUpTo(pack, offset, 32);
    let at = 0;
    const byte = () => {
      if (at >= head.length) throw new UnreadableObjectError(`a pack entry header at ${offset} is cut short`);
      return head[at++] as number;
    };
    let next = byte();
    const kind = (next >> 4) & 7;
    let size = next & 15;
    for (let scale = 16; next & 0x80; scale *= 128) {
      next = byte();
      size += (next & 0x7f) * scale;
    }
    const type = PACK_TYPES[kind];
    if (type) return { type, content: inflateAt(pack, offset + at, size) };
    if (kind === OFS_DELTA) {
      next = byte();
      let back = next & 0x7f;
      while (next & 0x80) {
        next = byte();
        back = (back + 1) * 128 + (next & 0x7f);
      }
      if (back <= 0 || back > offset) throw new UnreadableObjectError(`a delta at ${offset} has no base`);
      const delta = inflateAt(pack, offset + at, size);
      const base = this.readAtOffset(pack, offset - back, depth + 1);
      return { type: base.type, content: applyDelta(base.content, delta) };
    }
    if (kind === REF_DELTA) {
      if (at + 20 > head.length) throw new UnreadableObjectError(`a delta at ${offset} is cut short`);
      const baseName = head.toString("hex", at, at + 20);
      const delta = inflateAt(pack, offset + at + 20, size);
      const base = this.read(baseName, depth + 1);
      if (!base) throw new UnreadableObjectError(`the base ${baseName} of a delta is missing`);
      return { type: base.type, content: applyDelta(base.content, delta) };
    }
    throw new UnreadableObjectError(`a pack entry at ${offset} has the unknown type ${kind}`);
  }
}

function openOrUndefined(path: string): number | undefined {
  try {
    return openSync(path, "r");
  } catch {
    return undefined;
  }
}
