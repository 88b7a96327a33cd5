import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import { encodeTree, hashObject, type TreeEntry } from "../git/objects.js";
import { fuzzParams } from "../testing/fuzz.js";
import { isolateWorkerGit } from "../testing/git.js";
import { PACK_AFTER_COMMITS, ProjectCache } from "./cache.js";
import { rebuildStateTree, spliceTree, writeStateTree } from "./state-tree.js";
import { writeStateCommit } from "./sync.js";

async function givenCache(
  t: ExecutionContext,
  name: string,
  root = isolateWorkerGit(t, "svc-state-tree-"),
): Promise<ProjectCache> {
  const cache = await ProjectCache.openAt(join(root, name), { backend: "sim", project: name, agent: "test" });
  t.teardown(() => cache.close());
  return cache;
}

/** The state tree built the plain way, from scratch, without touching the cache: the oracle. */
function expectedRoot(files: readonly { path: string; rendered_oid: string }[]): string {
  interface Dir {
    files: TreeEntry[];
    dirs: Map<string, Dir>;
  }
  const top: Dir = { files: [], dirs: new Map() };
  for (const file of files) {
    const parts = file.path.split("/");
    let dir = top;
    for (const part of parts.slice(0, -1)) {
      const next = dir.dirs.get(part) ?? { files: [], dirs: new Map() };
      dir.dirs.set(part, next);
      dir = next;
    }
    dir.files.push({ mode: "100644", name: parts.at(-1) ?? "", oid: file.rendered_oid });
  }
  const hash = (dir: Dir): string =>
    hashObject(
      "tree",
      encodeTree([
        ...dir.files,
        ...[...dir.dirs].map(([name, sub]) => ({ mode: "40000" as const, name, oid: hash(sub) })),
      ]),
    );
  return hash(top);
}

function lsTree(cache: ProjectCache, tree: string): string[] {
  return execFileSync("git", ["--git-dir", cache.repo, "ls-tree", "-r", "--full-tree", tree], {
    encoding: "utf8",
  })
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [info = "", path] = line.split("\t");
      return `${path} ${info.split(" ")[2]}`;
    })
    .sort();
}

function upsert(
  cache: ProjectCache,
  key: string,
  path: string,
  oid: string,
  updatedAt = "2026-01-01T00:00:00Z",
): void {
  cache.db.upsertRecord({ key, path, version: 1, updated_at: updatedAt, rendered_oid: oid });
}

const oid = (n: number) => n.toString(16).padStart(40, "0");

test("spliceTree edits an encoded tree into what encodeTree writes for the edited entries", (t) => {
  const entries: TreeEntry[] = [
    { mode: "100644", name: "a-b", oid: oid(1) },
    { mode: "100644", name: "a.md", oid: oid(3) },
    { mode: "40000", name: "a", oid: oid(2) },
    { mode: "100644", name: "m.md", oid: oid(4) },
    { mode: "100644", name: "ünï.md", oid: oid(5) },
  ];
  const before = encodeTree(entries);
  const edits = new Map<string, string | undefined>([
    ["0.md", oid(10)], // before everything
    ["a0", oid(11)], // right after the directory "a": its key "a/" has 0x2f where "a0" has 0x30
    ["a/", oid(12)], // the directory gets a new id
    ["m.md", undefined], // removed
    ["n.md", oid(13)], // where m.md was
    ["z.md", oid(14)], // after the last ASCII name, before the non-ASCII one
    ["ÿ.md", oid(15)], // at the very end
  ]);
  const expected = encodeTree([
    { mode: "100644", name: "0.md", oid: oid(10) },
    { mode: "100644", name: "a-b", oid: oid(1) },
    { mode: "100644", name: "a.md", oid: oid(3) },
    { mode: "40000", name: "a", oid: oid(12) },
    { mode: "100644", name: "a0", oid: oid(11) },
    { mode: "100644", name: "n.md", oid: oid(13) },
    { mode: "100644", name: "z.md", oid: oid(14) },
    { mode: "100644", name: "ünï.md", oid: oid(5) },
    { mode: "100644", name: "ÿ.md", oid: oid(15) },
  ]);
  t.deepEqual(spliceTree(before, edits), expected);
  t.deepEqual(
    spliceTree(Buffer.alloc(0), new Map([["x.md", oid(1)]])),
    encodeTree([{ mode: "100644", name: "x.md", oid: oid(1) }]),
  );
  t.is(
    spliceTree(encodeTree([{ mode: "100644", name: "x.md", oid: oid(1) }]), new Map([["x.md", undefined]]))
      .length,
    0,
  );
  t.deepEqual(
    spliceTree(before, new Map([["absent.md", undefined]])),
    before,
    "removing what is not there changes nothing",
  );
  t.throws(() => spliceTree(before.subarray(0, before.length - 3), edits), {
    message: /malformed tree entry/,
  });
  t.throws(() => spliceTree(Buffer.from("no entry here, not a single NUL"), edits), {
    message: /malformed tree entry at byte 0/,
  });
  t.throws(() => spliceTree(Buffer.concat([Buffer.from("100644abc.md\0"), Buffer.alloc(20)]), edits), {
    message: /malformed tree entry at byte 0/,
  });
});

type Op =
  | { kind: "upsert"; key: number; path: number; oid: number }
  | { kind: "delete"; key: number }
  | { kind: "write" };

const PATHS = [
  "issues/0001.md",
  "issues/0002.md",
  "issues/0010.md",
  "issues-old.md",
  "issues.md",
  "pages/a/1.md",
  "pages/a/b/2.md",
  "pages/a-b/3.md",
  "top.md",
];

test("property: the kept tree, after any run of upserts, moves, deletes and writes, is the tree built from scratch", async (t) => {
  const cache = await givenCache(t, "property");
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constant("upsert" as const),
      key: fc.nat(7),
      path: fc.nat(PATHS.length - 1),
      oid: fc.integer({ min: 1, max: 5 }),
    }),
    fc.record({ kind: fc.constant("delete" as const), key: fc.nat(7) }),
    fc.constant({ kind: "write" as const }),
  );
  let run = 0;
  const details = fc.check(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      // Each run starts from an empty project: every record of earlier runs deleted, trees written.
      run++;
      cache.db.db.prepare("UPDATE records SET deleted = 1 WHERE deleted = 0").run();
      writeStateTree(cache);
      for (const step of [...ops, { kind: "write" as const }]) {
        if (step.kind === "upsert")
          upsert(cache, `r${run}-${step.key}`, PATHS[step.path] as string, oid(step.oid));
        else if (step.kind === "delete") cache.db.markDeleted(`r${run}-${step.key}`);
        else {
          const live = liveFiles(cache);
          assert.equal(writeStateTree(cache), expectedRoot(live));
        }
      }
    }),
    fuzzParams(150),
  );
  t.false(details.failed, fc.defaultReportMessage(details));
  // Every tree the kept root names is in the repository (git reads it, recursively).
  upsert(cache, "last", "pages/a/b/9.md", oid(9));
  const root = writeStateTree(cache);
  t.deepEqual(
    lsTree(cache, root),
    liveFiles(cache)
      .map((file) => `${file.path} ${file.rendered_oid}`)
      .sort(),
  );
});

/** Path components whose order in a tree depends on git's `name/` rule: `-`, `.` and `0` sort around `/`. */
const component = fc.constantFrom("a", "a-b", "a.md", "a0", "b", "issues", "issues.md", "ü.md", "0042.md");

test("property: the tree built from scratch in one pass over the paths is the tree the oracle builds", async (t) => {
  const cache = await givenCache(t, "scratch");
  let run = 0;
  const details = fc.check(
    fc.property(
      fc.uniqueArray(fc.array(component, { minLength: 1, maxLength: 4 }), {
        maxLength: 30,
        selector: (parts) => parts.join("/"),
      }),
      (paths) => {
        // A path that is also another's directory cannot be a tree: keep the files no other path is under.
        const files = paths
          .map((parts) => parts.join("/"))
          .filter((path, _, all) => !all.some((other) => other.startsWith(`${path}/`)));
        run++;
        cache.db.db.prepare("UPDATE records SET deleted = 1 WHERE deleted = 0").run();
        const live = files.map((path, i) => ({ path, rendered_oid: oid(i + 1) }));
        for (const file of live) upsert(cache, `r${run}-${file.path}`, file.path, file.rendered_oid);
        const root = rebuildStateTree(cache);
        assert.equal(root, expectedRoot(live));
        assert.equal(writeStateTree(cache), root, "the kept directories are the ones written");
      },
    ),
    fuzzParams(100),
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

/** Live files; two live records on one path cannot be a tree, so the property keeps the newest key's. */
function liveFiles(cache: ProjectCache): { path: string; rendered_oid: string }[] {
  const byPath = new Map<string, string>();
  for (const row of cache.db.treeEntries()) byPath.set(row.path, cache.db.liveOidAt(row.path) ?? "");
  return [...byPath].map(([path, rendered_oid]) => ({ path, rendered_oid }));
}

test("a cache without kept trees builds from scratch once, then changes only what changed; a lost repository gets its trees back", async (t) => {
  const root = isolateWorkerGit(t, "svc-state-tree-");
  let cache = await givenCache(t, "upgrade", root);
  for (let i = 1; i <= 50; i++) upsert(cache, `k${i}`, `issues/${String(i).padStart(4, "0")}.md`, oid(i));
  t.is(cache.db.stateTrees().size, 0);
  t.deepEqual(cache.db.dirtyPaths(), [], "nothing is noted while no tree is kept");
  const first = writeStateTree(cache);
  t.is(first, expectedRoot(liveFiles(cache)));
  t.deepEqual([...cache.db.stateTrees().keys()].sort(), ["", "issues"]);

  upsert(cache, "k7", "issues/0007.md", oid(700));
  cache.db.markDeleted("k8");
  upsert(cache, "k51", "notes/0051.md", oid(51));
  t.deepEqual(cache.db.dirtyPaths().sort(), ["issues/0007.md", "issues/0008.md", "notes/0051.md"]);
  const second = writeStateTree(cache);
  t.is(second, expectedRoot(liveFiles(cache)));
  t.deepEqual(cache.db.dirtyPaths(), []);

  // Unchanged directories are referenced by id: if the repository lost them, they are written again.
  rmSync(cache.repo, { recursive: true, force: true });
  cache.close();
  cache = await givenCache(t, "upgrade", root);
  upsert(cache, "k51", "notes/0051.md", oid(5100));
  const third = writeStateTree(cache);
  t.is(third, expectedRoot(liveFiles(cache)));
  t.is(lsTree(cache, third).length, 50);

  // The last file of a directory going takes the directory with it.
  cache.db.markDeleted("k51");
  t.is(writeStateTree(cache), expectedRoot(liveFiles(cache)));
  t.deepEqual([...cache.db.stateTrees().keys()].sort(), ["", "issues"]);
});

test("an update that changes neither path nor file notes nothing", async (t) => {
  const cache = await givenCache(t, "quiet");
  upsert(cache, "a", "issues/a.md", oid(1));
  writeStateTree(cache);
  upsert(cache, "a", "issues/a.md", oid(1), "2026-02-02T00:00:00Z");
  t.deepEqual(cache.db.dirtyPaths(), []);
  t.deepEqual(cache.db.newestUpdateCandidates(), ["2026-02-02T00:00:00Z"]);
});

test("the newest update is found among canonical times by text order, and among all others one by one", async (t) => {
  const cache = await givenCache(t, "times");
  upsert(cache, "a", "a.md", oid(1), "2026-03-01T10:00:00Z");
  upsert(cache, "b", "b.md", oid(2), "2026-03-01T10:00:00.900Z");
  upsert(cache, "c", "c.md", oid(3), "2026-02-01T10:00:00Z");
  upsert(cache, "d", "d.md", oid(4), "2026-03-01T12:00:00+02:00");
  upsert(cache, "e", "e.md", oid(5), "2027-01-01T00:00:00Z");
  cache.db.markDeleted("e");
  t.deepEqual(cache.db.newestUpdateCandidates(), ["2026-03-01T10:00:00Z", "2026-03-01T12:00:00+02:00"]);
});

test("after PACK_AFTER_COMMITS state commits the loose objects are packed, and every commit still reads", async (t) => {
  const cache = await givenCache(t, "packing");
  const looseCount = () =>
    Number(
      /^count: (\d+)$/m.exec(
        execFileSync("git", ["--git-dir", cache.repo, "count-objects", "-v"], { encoding: "utf8" }),
      )?.[1],
    );
  for (let i = 1; i <= 30; i++) upsert(cache, `k${i}`, `issues/${String(i).padStart(4, "0")}.md`, oid(i));
  let tip: string | undefined;
  for (let n = 1; n <= PACK_AFTER_COMMITS; n++) {
    upsert(
      cache,
      "k1",
      "issues/0001.md",
      oid(1000 + n),
      `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}Z`,
    );
    tip = cache.db.exclusive(() => writeStateCommit(cache, tip ? [tip] : [], `state ${n}\n`));
    if (n < PACK_AFTER_COMMITS) t.false(await cache.consolidateIfDue(), `not yet after ${n}`);
  }
  const before = looseCount();
  t.true(before >= PACK_AFTER_COMMITS * 2, `${before} loose objects`);
  t.true(await cache.consolidateIfDue());
  t.is(looseCount(), 0);
  t.false(await cache.consolidateIfDue(), "the count starts again");
  // History, trees and the newest tree's files all read from the pack.
  const log = execFileSync("git", ["--git-dir", cache.repo, "rev-list", "--count", tip as string], {
    encoding: "utf8",
  });
  t.is(log.trim(), String(PACK_AFTER_COMMITS));
  t.is(lsTree(cache, tip as string).length, 30);
});

test.after.always(() => {
  // The worker's environment was pointed at temp folders; nothing else in this file needs it.
  delete process.env.GIT_CONFIG_GLOBAL;
});
