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
import { ProjectCache } from "../cache/cache.js";
import { writeStateCommit } from "../cache/sync.js";
import { fuzzParams } from "../testing/fuzz.js";
import { givenTempDir } from "../testing/sim.js";
import { hashObject } from "./objects.js";
import {
  adler32,
  type FirstState,
  FirstStateBlobs,
  firstState,
  streamFirstState,
  writeBlobPack,
  zlibStored,
} from "./pack.js";

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

/** The bytes `streamFirstState` sends for `state`. */
async function firstStatePack(cache: ProjectCache, state: FirstState): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await streamFirstState(cache, state, async (data) => {
    chunks.push(Buffer.from(data));
  });
  return Buffer.concat(chunks);
}

/** Stores the file `path` holding `text` as a live record of `cache` (the key is the path). */
function rememberFile(cache: ProjectCache, path: string, text: string): void {
  const content = Buffer.from(text);
  const oid = hashObject("blob", content);
  cache.db.rememberBlob(oid, path, content);
  cache.db.upsertRecord({
    key: path,
    path,
    version: 1,
    updated_at: "2026-01-01T00:00:00.000Z",
    rendered_oid: oid,
  });
}

test("the first state's pack is a whole clone: its commit, every tree and every record file, fsck-clean", async (t) => {
  const root = givenTempDir(t, "svc-first-state-");
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  process.env.GIT_CONFIG_GLOBAL = "/dev/null";
  const cache = await ProjectCache.openAt(join(root, "cache"), {
    backend: "sim",
    project: "p",
    agent: "test",
  });
  t.teardown(() => cache.close());
  const file = (path: string, text: string) => rememberFile(cache, path, text);
  // Small files (a 4 KiB window), a large one, and nested folders.
  for (let i = 0; i < 50; i++) file(`issues/${String(i).padStart(4, "0")}.md`, `issue ${i}\n`.repeat(i + 1));
  file("pages/a/b/big.md", "x".repeat(100_000));
  const tip = cache.db.exclusive(() => {
    const commit = writeStateCommit(cache, [], "svc: import\n");
    cache.setTip(commit, "import");
    return commit;
  });
  const state = firstState(cache, tip);
  t.truthy(state);
  t.is(state?.blobCount, 51);
  const pack = await firstStatePack(cache, state as FirstState);
  const repo = givenRepo(t);
  git(repo, ["index-pack", "--stdin"], pack);
  git(repo, ["update-ref", "refs/heads/main", tip]);
  git(repo, ["symbolic-ref", "HEAD", "refs/heads/main"]);
  git(repo, ["fsck", "--strict", "--no-dangling"]);
  const objects = git(repo, ["rev-list", "--objects", "--missing=print", "main"])
    .toString()
    .trim()
    .split("\n");
  t.is(objects.filter((line) => line.startsWith("?")).length, 0, "nothing is missing");
  t.is(
    objects.length,
    1 + 5 + 51,
    "the commit, the trees of /, issues, pages, pages/a, pages/a/b, and 51 files",
  );
  t.true(git(repo, ["cat-file", "blob", "main:pages/a/b/big.md"]).equals(Buffer.from("x".repeat(100_000))));
  // Uncompressed (stored deflate blocks): the files' own bytes are in the pack as they are.
  t.true(pack.includes(Buffer.from("x".repeat(65_535))), "the large file's first block, stored");
  t.true(pack.includes(Buffer.from("issue 49\n".repeat(50))), "a small file, stored");

  // A tip with a parent is not a first state: its history is upload-pack's to send.
  const next = cache.db.exclusive(() => writeStateCommit(cache, [tip], "svc: sync\n"));
  t.is(firstState(cache, next), undefined);
});

test("no first state when the database holds a blob beyond the tip's files, two files share one, or a file changed since", async (t) => {
  const root = givenTempDir(t, "svc-first-state-no-");
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  process.env.GIT_CONFIG_GLOBAL = "/dev/null";
  const given = async (name: string, files: Record<string, string>) => {
    const cache = await ProjectCache.openAt(join(root, name), {
      backend: "sim",
      project: "p",
      agent: "test",
    });
    t.teardown(() => cache.close());
    for (const [path, text] of Object.entries(files)) rememberFile(cache, path, text);
    const tip = cache.db.exclusive(() => {
      const commit = writeStateCommit(cache, [], "svc: import\n");
      cache.setTip(commit, "import");
      return commit;
    });
    return { cache, tip };
  };

  const plain = await given("plain", { "issues/1.md": "one\n", "issues/2.md": "two\n" });
  t.is(firstState(plain.cache, plain.tip)?.blobCount, 2);

  // Two files with the same bytes: one blob, so the live records' blobs are fewer than the records.
  const shared = await given("shared", { "issues/1.md": "same\n", "issues/2.md": "same\n" });
  t.is(firstState(shared.cache, shared.tip), undefined);

  // A record changed after the import commit (what a push cut off before its commit leaves): its new blob
  // is held beside the old one, and its path is noted as changed.
  const changed = await given("changed", { "issues/1.md": "one\n", "issues/2.md": "two\n" });
  changed.cache.db.exclusive(() => rememberFile(changed.cache, "issues/2.md", "two, edited\n"));
  t.is(firstState(changed.cache, changed.tip), undefined);

  // A blob of no live record (an older version kept for history), with the tree unchanged.
  const extra = await given("extra", { "issues/1.md": "one\n" });
  const old = Buffer.from("one, as it was\n");
  extra.cache.db.rememberBlob(hashObject("blob", old), "issues/1.md", old);
  t.is(firstState(extra.cache, extra.tip), undefined);
});

test("the files a build kept make the same pack as the database's; over the budget, for another tip or with a shared blob they are not used", async (t) => {
  const root = givenTempDir(t, "svc-first-state-kept-");
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  process.env.GIT_CONFIG_GLOBAL = "/dev/null";
  /** A cache of `files`, each also added to a FirstStateBlobs of `budget` bytes, sealed as a build seals it. */
  const given = async (name: string, files: Record<string, string>, budget?: number) => {
    const cache = await ProjectCache.openAt(join(root, name), {
      backend: "sim",
      project: "p",
      agent: "test",
    });
    t.teardown(() => cache.close());
    const kept = new FirstStateBlobs(budget);
    for (const [path, text] of Object.entries(files)) {
      rememberFile(cache, path, text);
      kept.add(Buffer.from(text));
    }
    const tip = cache.db.exclusive(() => {
      const commit = writeStateCommit(cache, [], "svc: import\n");
      cache.setTip(commit, "import");
      return commit;
    });
    kept.seal(tip, () => cache.db.storedBlobCount());
    return { cache, tip, kept };
  };
  const files: Record<string, string> = { "pages/a/big.md": "x".repeat(70_000) };
  for (let i = 0; i < 30; i++)
    files[`issues/${String(i).padStart(4, "0")}.md`] = `issue ${i}\n`.repeat(i + 1);

  const built = await given("built", files);
  const fromMemory = firstState(built.cache, built.tip, built.kept);
  t.is(fromMemory?.blobs?.length, 31);
  t.is(fromMemory?.blobCount, 31);
  const fromDatabase = firstState(built.cache, built.tip);
  t.is(fromDatabase?.blobs, undefined);
  const pack = await firstStatePack(built.cache, fromMemory as FirstState);
  t.true(
    pack.equals(await firstStatePack(built.cache, fromDatabase as FirstState)),
    "byte for byte the same pack",
  );
  const repo = givenRepo(t);
  git(repo, ["index-pack", "--stdin"], pack);
  git(repo, ["update-ref", "refs/heads/main", built.tip]);
  git(repo, ["fsck", "--strict", "--no-dangling"]);

  // Another commit (the cache moved on since the build) is not the one the files were kept for.
  const next = built.cache.db.exclusive(() => writeStateCommit(built.cache, [], "svc: import again\n"));
  t.is(built.kept.of(next), undefined);
  built.kept.release();
  t.is(built.kept.of(built.tip), undefined, "let go once the pack is sent");
  t.is(firstState(built.cache, built.tip, built.kept)?.blobs, undefined, "then the database's are read");

  // Over the budget: let go while the build goes on; the pack reads the database.
  const over = await given("over", files, 70_000);
  t.is(over.kept.of(over.tip), undefined);
  const state = firstState(over.cache, over.tip, over.kept);
  t.is(state?.blobs, undefined);
  t.is(state?.blobCount, 31);

  // Two files with the same bytes are one blob: the database holds fewer than were kept, and there is no
  // first state to send (as without kept files).
  const shared = await given("shared", { "issues/1.md": "same\n", "issues/2.md": "same\n" });
  t.is(shared.kept.of(shared.tip), undefined);
  t.is(firstState(shared.cache, shared.tip, shared.kept), undefined);
});
