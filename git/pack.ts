/**
 * Undeltified packs (gitformat-pack(5)), streamed: of blobs for the cache, fed to `git index-pack --stdin`
 * (one spawn writes any number of blobs, never one process per blob), and of a whole first state for a
 * clone (cache/first-state.ts chooses its objects; helper/stateless-connect.ts answers the clone's fetch
 * with it).
 *
 * Every entry is a zlib stream of *stored* (uncompressed) deflate blocks, built here without zlib: Node's
 * `deflateSync` costs ~20-35 µs a call whatever the level (measured: 789 ms for 20,000 record files,
 * against ~60 ms for stored blocks with our Adler-32). The cache's packs are therefore uncompressed; what git
 * fetches from it later is compressed again by `pack-objects --no-reuse-object` (see `UPLOAD_PACK_CONFIG` in
 * helper/stateless-connect.ts).
 *
 * The clone's pack is uncompressed as well (issue 18): deflating its 10,000 record files took the answer
 * from ~120 ms to ~330 ms (`SVC_TRACE`, "clone: answering" to "answered fetch", three runs each), with git's
 * index-pack inflating them beside it on the same two cores, about a fifth of a whole `svc init`. The price
 * is disk: the user's first pack holds the record files as they are, ~3× their deflated size (5.4 MB
 * against ~1.6 MB for 10,000 files of ~540 bytes); git reads either the same way.
 */
import { once } from "node:events";
import type { Writable } from "node:stream";
import { sha1 } from "./objects.js";

const OBJ_COMMIT = 1;
const OBJ_TREE = 2;
const OBJ_BLOB = 3;

/** Adler-32 (RFC 1950), summed in runs short enough that the 32-bit sums cannot overflow. */
export function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  let i = 0;
  while (i < data.length) {
    const end = Math.min(i + 5552, data.length);
    for (; i < end; i++) {
      a += data[i] as number;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** The length of the zlib stream of `zlibStored` for `size` bytes: a 2-byte header, blocks, Adler-32. */
function storedBytes(size: number): number {
  return 2 + Math.max(1, Math.ceil(size / 65535)) * 5 + size + 4;
}

/** Writes the stream of `zlibStored(data)` into `out` at `at` (room for its `storedBytes`); returns where it ends. */
function writeStored(out: Buffer, at: number, data: Buffer): number {
  out[at++] = 0x78;
  out[at++] = 0x01;
  const blocks = Math.max(1, Math.ceil(data.length / 65535));
  for (let block = 0; block < blocks; block++) {
    const start = block * 65535;
    const length = Math.min(65535, data.length - start);
    out[at] = block === blocks - 1 ? 1 : 0;
    out.writeUInt16LE(length, at + 1);
    out.writeUInt16LE(length ^ 0xffff, at + 3);
    data.copy(out, at + 5, start, start + length);
    at += 5 + length;
  }
  return out.writeUInt32BE(adler32(data), at);
}

/** A zlib stream holding `data` in stored deflate blocks (at most 65,535 bytes each). */
export function zlibStored(data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(storedBytes(data.length));
  writeStored(out, 0, data);
  return out;
}

/** Pack bytes are written in pieces of about this size (many entries each, not one write per entry). */
const WRITE_BYTES = 64 * 1024;

export type PackObjectType = "commit" | "tree" | "blob";

const TYPE_CODES: Record<PackObjectType, number> = { commit: OBJ_COMMIT, tree: OBJ_TREE, blob: OBJ_BLOB };

/** The bytes of the pack entry of `content`: its header, then its zlib stream of stored blocks. */
function entryBytes(content: Buffer): number {
  let header = 1;
  for (let rest = Math.floor(content.length / 16); rest > 0; rest = Math.floor(rest / 128)) header++;
  return header + storedBytes(content.length);
}

/**
 * Writes the pack entry of `content` into `out` at `at` (room for its `entryBytes`): the type-and-size
 * header (type in bits 4–6 of the first byte, the size as a little-endian varint), then the stream of
 * `zlibStored`. Returns where it ends.
 */
function writeEntry(out: Buffer, at: number, type: number, content: Buffer): number {
  let byte = (type << 4) | (content.length & 0x0f);
  for (let rest = Math.floor(content.length / 16); rest > 0; rest = Math.floor(rest / 128)) {
    out[at++] = byte | 0x80;
    byte = rest & 0x7f;
  }
  out[at++] = byte;
  return writeStored(out, at, content);
}

/**
 * Streams the pack of `count` `objects` to `write`, in pieces of about 64 KiB, with the pack's SHA-1 at the
 * end; `write` resolves when it may take more (backpressure), so memory stays flat whatever the count.
 * Entries are written straight into each piece (an entry larger than a piece goes alone), and the stream
 * waits only when a piece is handed over.
 */
export async function streamPack(
  objects: Iterable<{ readonly type: PackObjectType; readonly content: Buffer }>,
  count: number,
  write: (data: Buffer) => Promise<void>,
  pieceBytes = WRITE_BYTES,
): Promise<void> {
  const hash = sha1();
  // A piece handed to `write` may still be queued there: each flush starts a new one.
  let piece = Buffer.allocUnsafe(pieceBytes);
  let at = 0;
  const flush = async () => {
    if (at === 0) return;
    const data = piece.subarray(0, at);
    piece = Buffer.allocUnsafe(pieceBytes);
    at = 0;
    hash.update(data);
    await write(data);
  };
  piece.write("PACK", 0, "latin1");
  piece.writeUInt32BE(2, 4);
  piece.writeUInt32BE(count, 8);
  at = 12;
  let written = 0;
  for (const { type, content } of objects) {
    const code = TYPE_CODES[type];
    const bytes = entryBytes(content);
    if (at + bytes > piece.length) await flush();
    if (bytes > piece.length) {
      const entry = Buffer.allocUnsafe(bytes);
      writeEntry(entry, 0, code, content);
      hash.update(entry);
      await write(entry);
    } else {
      at = writeEntry(piece, at, code, content);
    }
    written++;
  }
  if (written !== count) throw new Error(`a pack of ${count} objects was given ${written}`);
  await flush();
  await write(hash.digest());
}

/** Streams the pack of `blobs` into `sink` (index-pack's stdin), hashing as it goes; memory stays flat. */
export async function writeBlobPack(blobs: Iterable<Buffer>, count: number, sink: Writable): Promise<void> {
  const objects = function* () {
    for (const content of blobs) yield { type: "blob" as const, content };
  };
  await streamPack(objects(), count, async (data) => {
    if (!sink.write(data)) await once(sink, "drain");
  });
  sink.end();
}
