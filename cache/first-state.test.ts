/**
 * The first state of a cache (cache/first-state.ts) as a clone's pack: the pack `streamFirstState` sends is
 * accepted by git and is a whole clone, fsck-clean; where the cache holds anything beyond its first state
 * there is none; the files a build kept make the same pack as the database's.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { hashObject } from "../git/objects.js";
import { givenTempDir } from "../testing/sim.js";
import { ProjectCache } from "./cache.js";
import { type FirstState, FirstStateBlobs, firstState, streamFirstState } from "./first-state.js";
import { writeStateCommit } from "./sync.js";

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
