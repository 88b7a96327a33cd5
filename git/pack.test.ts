/**
 * The pack writer (git/pack.ts) against git and node's zlib: `adler32` is the checksum zlib writes,
 * `zlibStored` inflates back to its input across the 65,535-byte block boundaries, and the pack
 * `writeBlobPack` streams is accepted by `git index-pack --stdin` and `git verify-pack`, holding exactly the
 * blobs given, under the ids `git hash-object` gives them, their bytes intact (sizes chosen to cross each
 * width of the entry header's size varint).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { deflateSync, inflateSync } from "node:zlib";
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { givenTempDir } from "../testing/sim.js";
import { hashObject } from "./objects.js";
import { adler32, writeBlobPack, zlibStored } from "./pack.js";

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };

function git(repo: string, args: readonly string[], input?: Buffer): Buffer {
  return execFileSync("git", [`--git-dir=${repo}`, ...args], {
    env: GIT_ENV,
    input,
    maxBuffer: 64 * 1024 * 1024,
  });
}

function givenRepo(t: ExecutionContext): string {
  const repo = join(givenTempDir(t, "svc-pack-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  return repo;
}

/** The bytes `writeBlobPack` streams for `blobs`. */
async function packOf(blobs: readonly Buffer[]): Promise<Buffer> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => sink.on("end", resolve));
  await writeBlobPack(blobs, blobs.length, sink);
  await ended;
  return Buffer.concat(chunks);
}

/** Feeds `pack` to `git index-pack --stdin`; returns the ids `git verify-pack -v` lists, sorted. */
function indexPack(repo: string, pack: Buffer): string[] {
  const name = git(repo, ["index-pack", "--stdin"], pack)
    .toString()
    .trim()
    .replace(/^pack\t/, "");
  const listing = git(repo, [
    "verify-pack",
    "-v",
    join(repo, "objects", "pack", `pack-${name}.idx`),
  ]).toString();
  return listing
    .split("\n")
    .filter((line) => /^[0-9a-f]{40} blob /.test(line))
    .map((line) => line.slice(0, 40))
    .sort();
}

test("recorded: adler32 of known inputs (RFC 1950's start value 1; Wikipedia's 'Wikipedia' example)", (t) => {
  t.is(adler32(Buffer.alloc(0)), 1);
  t.is(adler32(Buffer.from("Wikipedia")), 0x11e60398);
  t.is(adler32(Buffer.from("a")), 0x00620062);
});

test("adler32 is the checksum zlib ends its streams with, for sizes around the 5552-byte run and 65521", (t) => {
  for (const size of [1, 5551, 5552, 5553, 65520, 65521, 65522, 200_000]) {
    const data = Buffer.alloc(size, 0xff);
    const deflated = deflateSync(data);
    t.is(adler32(data), deflated.readUInt32BE(deflated.length - 4), `${size} bytes of 0xff`);
  }
});

test("zlibStored: empty, one block, exactly one full block, and across block boundaries inflate back", (t) => {
  for (const size of [0, 1, 65534, 65535, 65536, 131070, 131071, 200_000]) {
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; i++) data[i] = (i * 7) & 0xff;
    const stored = zlibStored(data);
    t.true(inflateSync(stored).equals(data), `${size} bytes`);
    t.is(
      stored.length,
      2 + Math.max(1, Math.ceil(size / 65535)) * 5 + size + 4,
      `${size} bytes: stored, not compressed`,
    );
  }
});

test("recorded: a pack of the empty blob, hello and a 70,000-byte blob is accepted by git under git's own ids", async (t) => {
  const repo = givenRepo(t);
  const blobs = [Buffer.alloc(0), Buffer.from("hello\n"), Buffer.alloc(70_000, "x")];
  const ids = indexPack(repo, await packOf(blobs));
  t.deepEqual(
    ids,
    [
      "ce013625030ba8dba906f756967f9e9ca394464a", // git hash-object of "hello\n"
      "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", // the empty blob
      git(repo, ["hash-object", "--stdin"], blobs[2]).toString().trim(),
    ].sort(),
  );
  t.true(
    git(repo, ["cat-file", "blob", "ce013625030ba8dba906f756967f9e9ca394464a"]).equals(blobs[1] as Buffer),
  );
  t.true(
    git(repo, [
      "cat-file",
      "blob",
      ids.find((id) => !["ce01", "e69d"].includes(id.slice(0, 4))) as string,
    ]).equals(blobs[2] as Buffer),
  );
});

test("property: any blobs make a pack git accepts, holding each under git's id (so with its bytes)", async (t) => {
  const repo = givenRepo(t);
  // Sizes that need one, two, three and four bytes of the size varint (4, 11, 18, 25 bits).
  const size = fc.oneof(
    fc.nat(15),
    fc.integer({ min: 16, max: 2047 }),
    fc.integer({ min: 2048, max: 262_143 }),
    fc.constant(262_144),
  );
  const blob = fc.tuple(size, fc.uint8Array({ maxLength: 64 })).map(([n, seed]) => {
    const bytes = Buffer.alloc(n);
    for (let i = 0; i < n; i++)
      bytes[i] = seed.length === 0 ? i & 0xff : (seed[i % seed.length] as number) ^ (i >> 8);
    return bytes;
  });
  await fc.assert(
    // Each blob once: git refuses a pack holding one object twice (writeBlobs passes distinct ids).
    fc.asyncProperty(
      fc.uniqueArray(blob, { maxLength: 6, selector: (b) => hashObject("blob", b) }),
      async (blobs) => {
        const ids = indexPack(repo, await packOf(blobs));
        // index-pack names each object by the SHA-1 of the bytes it inflated: equal ids are equal bytes.
        const expected = blobs.map((b) => hashObject("blob", b)).sort();
        return JSON.stringify(ids) === JSON.stringify(expected);
      },
    ),
    fuzzParams(25),
  );
  t.pass();
});

test("property: adler32 matches zlib's trailer and zlibStored inflates back, for any bytes", (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 70_000, size: "max" }), (bytes) => {
      const data = Buffer.from(bytes);
      const deflated = deflateSync(data, { level: 1 });
      return (
        adler32(data) === deflated.readUInt32BE(deflated.length - 4) &&
        inflateSync(zlibStored(data)).equals(data)
      );
    }),
    fuzzParams(100),
  );
  t.pass();
});
