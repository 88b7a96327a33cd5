import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { givenTempDir } from "../testing/sim.js";
import { applyDelta, hasObject, ObjectLookup, ObjectReader, UnreadableObjectError } from "./object-store.js";

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };

function git(repo: string, args: readonly string[], input?: string): string {
  return execFileSync("git", [`--git-dir=${repo}`, ...args], { env: GIT_ENV, input }).toString("utf8");
}

/** Packs `oids` (with git's own index, version 2 unless told) and removes their loose copies. */
function pack(repo: string, oids: readonly string[], indexVersion = 2): void {
  git(
    repo,
    ["pack-objects", "-q", `--index-version=${indexVersion}`, join(repo, "objects", "pack", "p")],
    `${oids.join("\n")}\n`,
  );
  git(repo, ["prune-packed"]);
}

/** A bare repo holding `count` blobs (hashed with git itself); returns their ids. */
function givenBlobs(repo: string, count: number, salt: string): string[] {
  const oids: string[] = [];
  for (let i = 0; i < count; i++)
    oids.push(git(repo, ["hash-object", "-w", "--stdin"], `${salt} ${i}\n`).trim());
  return oids;
}

/** Ids that are not in any repository here (random-looking, spread over every first byte). */
function absentIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    `${(i % 256).toString(16).padStart(2, "0")}${"5a".repeat(19)}`.slice(0, 40),
  );
}

test("hasObject finds loose objects and objects in v2 and v1 pack indexes, and nothing else", (t) => {
  const repo = join(givenTempDir(t, "svc-object-store-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const packedV2 = givenBlobs(repo, 300, "v2");
  pack(repo, packedV2);
  const packedV1 = givenBlobs(repo, 40, "v1");
  pack(repo, packedV1, 1);
  const loose = givenBlobs(repo, 5, "loose");

  const idx = readdirSync(join(repo, "objects", "pack")).filter((name) => name.endsWith(".idx"));
  t.is(idx.length, 2);
  t.is(git(repo, ["count-objects"]).trim().split(" ")[0], "5", "only the last five are loose");
  for (const oid of [...packedV2, ...packedV1, ...loose]) t.true(hasObject(repo, oid), oid);
  for (const oid of absentIds(512)) t.false(hasObject(repo, oid), oid);
  // The first and last names of the v2 index: the bounds of the search.
  const sorted = [...packedV2].sort();
  t.true(hasObject(repo, sorted[0] as string));
  t.true(hasObject(repo, sorted.at(-1) as string));
  t.false(hasObject(repo, "not an id"));

  const lookup = new ObjectLookup(join(repo, "objects"));
  for (const oid of [...packedV2, ...packedV1, ...loose]) t.true(lookup.has(oid), oid);
  for (const oid of absentIds(512)) t.false(lookup.has(oid), oid);
  t.true(lookup.has(sorted[0] as string));
  t.true(lookup.has(sorted.at(-1) as string));
  t.false(lookup.has("not an id"));
});

test("hasObject is false for a repository without objects and for an unreadable index", (t) => {
  const repo = join(givenTempDir(t, "svc-object-store-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const [oid] = givenBlobs(repo, 1, "x");
  pack(repo, [oid as string]);
  t.false(existsSync(join(repo, "objects", (oid as string).slice(0, 2), (oid as string).slice(2))));
  t.true(hasObject(repo, oid as string));
  const [idx] = readdirSync(join(repo, "objects", "pack")).filter((name) => name.endsWith(".idx"));
  writeFileSync(join(repo, "objects", "pack", idx as string), "garbage");
  t.false(hasObject(repo, oid as string));
  t.false(new ObjectLookup(join(repo, "objects")).has(oid as string));
  t.false(hasObject(join(repo, "missing"), oid as string));
  t.false(new ObjectLookup(join(repo, "missing", "objects")).has(oid as string));
});

/** Every object of `repo` as `git cat-file --batch-all-objects --batch` prints it: id → type and content. */
function catAll(repo: string): Map<string, { type: string; content: Buffer }> {
  const out = execFileSync("git", [`--git-dir=${repo}`, "cat-file", "--batch-all-objects", "--batch"], {
    env: GIT_ENV,
    maxBuffer: 1 << 30,
  });
  const objects = new Map<string, { type: string; content: Buffer }>();
  for (let at = 0; at < out.length; ) {
    const newline = out.indexOf(0x0a, at);
    const [oid = "", type = "", size = ""] = out.toString("latin1", at, newline).split(" ");
    const start = newline + 1;
    objects.set(oid, { type, content: out.subarray(start, start + Number(size)) });
    at = start + Number(size) + 1;
  }
  return objects;
}

/**
 * A repository with a history whose blobs and trees change a little each commit, so that a repack stores
 * many of them as deltas: 40 commits (one `git fast-import`) of a folder of 150 files, one changed each
 * time, and a large file with one line changed each time.
 */
function givenHistory(repo: string): void {
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const big = Array.from({ length: 400 }, (_, i) => `line ${i} of a file that deltas compress well\n`);
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let stream = "";
  for (let round = 0; round < 40; round++) {
    big[round * 7] = `line changed in round ${round}\n`;
    stream += `commit refs/heads/main\ncommitter t <t@x> ${1_700_000_000 + round} +0000\n${data(`round ${round}`)}`;
    if (round === 0) {
      for (let i = 0; i < 150; i++)
        stream += `M 100644 inline issues/${String(i).padStart(4, "0")}.md\n${data(`file ${i}\n`)}`;
    }
    stream += `M 100644 inline issues/${String(round).padStart(4, "0")}.md\n${data(`file ${round}, round ${round}\n`)}`;
    stream += `M 100644 inline docs/big.txt\n${data(big.join(""))}`;
    stream += `M 100644 inline docs/round-${round}.txt\n${data(`round ${round}\n`)}\n`;
  }
  execFileSync("git", [`--git-dir=${repo}`, "fast-import", "--quiet"], { env: GIT_ENV, input: stream });
  // fast-import leaves one pack: explode it into loose objects.
  const packs = join(repo, "objects", "pack");
  for (const file of readdirSync(packs).filter((name) => name.endsWith(".pack"))) {
    const bytes = readFileSync(join(packs, file));
    for (const name of readdirSync(packs)) rmSync(join(packs, name), { force: true });
    execFileSync("git", [`--git-dir=${repo}`, "unpack-objects", "-q"], { env: GIT_ENV, input: bytes });
  }
}

/** How many objects of the packs of `repo` are stored as deltas (`git verify-pack -v`: a chain length column). */
function deltaCount(repo: string): number {
  const packs = readdirSync(join(repo, "objects", "pack")).filter((name) => name.endsWith(".idx"));
  let count = 0;
  for (const idx of packs) {
    const out = git(repo, ["verify-pack", "-v", join(repo, "objects", "pack", idx)]);
    count += out
      .split("\n")
      .filter((line) => /^[0-9a-f]{40} \w+ +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(line)).length;
  }
  return count;
}

function assertReadsAll(t: ExecutionContext, repo: string): void {
  const reader = new ObjectReader(join(repo, "objects"));
  const all = catAll(repo);
  t.true(all.size > 300);
  for (const [oid, expected] of all) {
    const object = reader.read(oid);
    if (object?.type !== expected.type || !object.content.equals(expected.content)) {
      t.fail(`${oid} (${expected.type}) read as ${object?.type}`);
      return;
    }
    t.true(reader.has(oid));
  }
  for (const oid of absentIds(64)) {
    t.is(reader.read(oid), undefined);
    t.false(reader.has(oid));
  }
}

test("ObjectReader reads every loose object as git cat-file does, with the loose file's bytes", (t) => {
  const repo = join(givenTempDir(t, "svc-object-store-"), "repo.git");
  givenHistory(repo);
  assertReadsAll(t, repo);
  const [oid] = givenBlobs(repo, 1, "loose");
  const object = new ObjectReader(join(repo, "objects")).read(oid as string);
  t.deepEqual(
    object?.loose,
    readFileSync(join(repo, "objects", (oid as string).slice(0, 2), (oid as string).slice(2))),
  );
});

test("ObjectReader reads packed objects and offset deltas (git repack, index v2) as git cat-file does", (t) => {
  const repo = join(givenTempDir(t, "svc-object-store-"), "repo.git");
  givenHistory(repo);
  git(repo, ["repack", "-adq", "--depth=50", "--window=50"]);
  t.true(Number(/in-pack: (\d+)/.exec(git(repo, ["count-objects", "-v"]))?.[1]) > 300);
  t.true(deltaCount(repo) > 60, "many objects are deltas");
  assertReadsAll(t, repo);
});

test("ObjectReader reads reference deltas (pack-objects without --delta-base-offset, index v1)", (t) => {
  const repo = join(givenTempDir(t, "svc-object-store-"), "repo.git");
  givenHistory(repo);
  execFileSync(
    "git",
    [
      `--git-dir=${repo}`,
      "pack-objects",
      "-q",
      "--revs",
      "--all",
      "--index-version=1",
      join(repo, "objects", "pack", "p"),
    ],
    { env: GIT_ENV, input: "" },
  );
  git(repo, ["prune-packed"]);
  t.true(deltaCount(repo) > 60, "many objects are deltas");
  assertReadsAll(t, repo);
});

test("ObjectReader says a damaged object is unreadable, never returns wrong bytes", (t) => {
  const repo = join(givenTempDir(t, "svc-object-store-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const [oid] = givenBlobs(repo, 1, "damaged") as [string];
  const path = join(repo, "objects", oid.slice(0, 2), oid.slice(2));
  const bytes = readFileSync(path);
  chmodSync(path, 0o644);
  writeFileSync(path, bytes.subarray(0, bytes.length - 4));
  t.throws(() => new ObjectReader(join(repo, "objects")).read(oid), { instanceOf: UnreadableObjectError });
  pack(repo, givenBlobs(repo, 20, "packed"));
  const [packFile] = readdirSync(join(repo, "objects", "pack")).filter((name) => name.endsWith(".pack"));
  const packPath = join(repo, "objects", "pack", packFile as string);
  const packBytes = readFileSync(packPath);
  chmodSync(packPath, 0o644);
  packBytes.fill(0x55, 12, packBytes.length - 20);
  writeFileSync(packPath, packBytes);
  const reader = new ObjectReader(join(repo, "objects"));
  const packed = givenBlobs(repo, 20, "packed");
  // hash-object wrote them loose again: read the packed copies only.
  git(repo, ["prune-packed"]);
  for (const id of packed) t.throws(() => reader.read(id), { instanceOf: UnreadableObjectError });
});

test("applyDelta copies and inserts as git's delta format says, a copy of size 0 being 65,536 bytes", (t) => {
  const base = Buffer.alloc(0x10000 + 10, 7);
  base.write("head", 0);
  // source size 65546, target size 65536 + 3: copy offset 0 size 0x10000 (no size bytes), insert "xyz".
  const varint = (n: number) => {
    const out: number[] = [];
    do {
      out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      n = Math.floor(n / 128);
    } while (n > 0);
    return out;
  };
  const delta = Buffer.from([...varint(base.length), ...varint(0x10003), 0x80, 3, 0x78, 0x79, 0x7a]);
  const out = applyDelta(base, delta);
  t.is(out.length, 0x10003);
  t.true(out.subarray(0, 0x10000).equals(base.subarray(0, 0x10000)));
  t.is(out.toString("latin1", 0x10000), "xyz");
  // A copy past the base's end, a wrong base size, a short result: refused.
  t.throws(() => applyDelta(base, Buffer.from([...varint(base.length), ...varint(0xff), 0x94, 0x01, 0xff])), {
    instanceOf: UnreadableObjectError,
  });
  t.throws(() => applyDelta(base, Buffer.from([...varint(3), 1, 1, 0x61])), {
    instanceOf: UnreadableObjectError,
  });
  t.throws(() => applyDelta(base, Buffer.from([...varint(base.length), 2, 1, 0x61])), {
    instanceOf: UnreadableObjectError,
  });
});
