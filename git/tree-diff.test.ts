/**
 * The in-process reads of git/tree-diff.ts against git itself, on any trees and histories: `treeDiff`
 * against `git diff-tree -r -z --raw --no-renames`, `filesAt` against `git ls-tree`, `mergeBase` against
 * `git merge-base`. And `parseRawDiff` (git/plumbing.ts) on what a push brings: the file names of a pushed
 * commit are the user's (or an agent's), so any name git allows in a tree, in folders too, must come back
 * as exactly one entry with its status and blob ids, from real `git diff-tree -r -z --raw --no-renames
 * <base> <tip>`. The recorded outputs are in raw-diff.test.ts.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import { fuzzParams, gitPathComponent, holds } from "../testing/fuzz.js";
import { SCRATCH_GIT_ENV } from "../testing/git.js";
import { givenTempDir } from "../testing/sim.js";
import { mergeBase } from "./merge-base.js";
import { ObjectReader } from "./object-store.js";
import { hashObject } from "./objects.js";
import type { DiffEntry } from "./plumbing.js";
import { parseRawDiff } from "./plumbing.js";
import { filesAt, NotInProcessError, Trees, treeDiff } from "./tree-diff.js";

const ZERO = "0".repeat(40);
const GIT_ENV = SCRATCH_GIT_ENV;

function git(
  repo: string,
  args: readonly string[],
  input?: string | Buffer,
  env: NodeJS.ProcessEnv = {},
): Buffer {
  return execFileSync("git", [`--git-dir=${repo}`, ...args], { env: { ...GIT_ENV, ...env }, input });
}

/** A commit of `files` (path → content) on `parent`, made with git's plumbing; its id. */
function commitOf(repo: string, files: ReadonlyMap<string, string>, parent?: string): string {
  const index = join(repo, `index-${Math.random().toString(36).slice(2)}`);
  for (const content of new Set(files.values())) git(repo, ["hash-object", "-w", "--stdin"], content);
  const lines = [...files].map(
    ([path, content]) => `100644 blob ${hashObject("blob", Buffer.from(content))}\t${path}\0`,
  );
  git(repo, ["update-index", "-z", "--index-info"], lines.join(""), { GIT_INDEX_FILE: index });
  const tree = git(repo, ["write-tree"], undefined, { GIT_INDEX_FILE: index }).toString().trim();
  return git(repo, ["commit-tree", tree, "-m", "m", ...(parent ? ["-p", parent] : [])])
    .toString()
    .trim();
}

const component = gitPathComponent(8);
const path = fc.array(component, { minLength: 1, maxLength: 2 }).map((parts) => parts.join("/"));

test("property: any pushed file names come back from git's raw diff as one entry each, with status and ids", (t) => {
  const repo = join(givenTempDir(t, "svc-push-diff-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const files = fc
    .dictionary(path, fc.constantFrom("1", "2", "3"), { maxKeys: 5 })
    .map((record) => new Map(Object.entries(record)))
    // A path may not be both a file and a folder of another file.
    .filter((map) => [...map.keys()].every((a) => ![...map.keys()].some((b) => b.startsWith(`${a}/`))));
  fc.assert(
    fc.property(files, files, (before, after) => {
      const base = commitOf(repo, before);
      const tip = commitOf(repo, after, base);
      const parsed = parseRawDiff(git(repo, ["diff-tree", "-r", "-z", "--raw", "--no-renames", base, tip]));
      const blob = (content: string | undefined) =>
        content === undefined ? ZERO : hashObject("blob", Buffer.from(content));
      const expected: DiffEntry[] = [...new Set([...before.keys(), ...after.keys()])]
        .filter((name) => before.get(name) !== after.get(name))
        .map((name) => ({
          status: !before.has(name) ? "A" : !after.has(name) ? "D" : "M",
          path: name,
          oldMode: before.has(name) ? "100644" : "000000",
          newMode: after.has(name) ? "100644" : "000000",
          oldOid: blob(before.get(name)),
          newOid: blob(after.get(name)),
        }));
      const key = (entries: readonly DiffEntry[]) =>
        JSON.stringify([...entries].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path))));
      return key(parsed) === key(expected);
    }),
    fuzzParams(25),
  );
  t.pass();
});

/** A bare repository for a test, and its in-process reader. */
function givenRepo(t: ExecutionContext): {
  repo: string;
  read: (oid: string) => ReturnType<ObjectReader["read"]>;
} {
  const repo = join(givenTempDir(t, "svc-push-diff-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const reader = new ObjectReader(join(repo, "objects"));
  return { repo, read: (oid) => reader.read(oid) };
}

/** A file of a generated tree: its mode and content (for a submodule, any commit id). */
interface TreeFile {
  readonly mode: "100644" | "100755" | "120000" | "160000";
  readonly content: string;
}

/** A commit of `files` (path → mode and content), written with git's plumbing; its id. */
function commitOfModes(repo: string, files: ReadonlyMap<string, TreeFile>, parent?: string): string {
  const index = join(repo, `index-${Math.random().toString(36).slice(2)}`);
  const lines: string[] = [];
  for (const [path, file] of files) {
    const oid =
      file.mode === "160000"
        ? hashObject("commit", Buffer.from(file.content))
        : git(repo, ["hash-object", "-w", "--stdin"], file.content).toString().trim();
    lines.push(`${file.mode} ${oid}\t${path}\0`);
  }
  git(repo, ["update-index", "-z", "--index-info"], lines.join(""), { GIT_INDEX_FILE: index });
  const tree = git(repo, ["write-tree", "--missing-ok"], undefined, { GIT_INDEX_FILE: index })
    .toString()
    .trim();
  return git(repo, ["commit-tree", tree, "-m", "m", ...(parent ? ["-p", parent] : [])])
    .toString()
    .trim();
}

/** Trees of a few folders whose files change content, mode and type, and become folders and back. */
const moded = fc
  .dictionary(
    fc
      .array(fc.oneof(component, fc.constantFrom("a", "a.b", "a-", "issues")), { minLength: 1, maxLength: 3 })
      .map((parts) => parts.join("/")),
    fc.record({
      mode: fc.constantFrom("100644", "100755", "120000", "160000"),
      content: fc.constantFrom("1", "2", "3"),
    }),
    { maxKeys: 8 },
  )
  .map((record) => new Map(Object.entries(record) as [string, TreeFile][]))
  .filter((map) => [...map.keys()].every((a) => ![...map.keys()].some((b) => b.startsWith(`${a}/`))));

test("property: treeDiff lists what git diff-tree -r --raw --no-renames lists, in git's order", (t) => {
  const { repo, read } = givenRepo(t);
  holds(
    t,
    fc.property(moded, moded, (before, after) => {
      const base = commitOfModes(repo, before);
      const tip = commitOfModes(repo, after, base);
      const git_ = parseRawDiff(git(repo, ["diff-tree", "-r", "-z", "--raw", "--no-renames", base, tip]));
      const ours = treeDiff(new Trees(read), base, tip);
      return JSON.stringify(ours) === JSON.stringify(git_);
    }),
    40,
  );
});

/**
 * A folder of many files and a few edits of it (changed, added, removed, turned into a folder): the diff
 * skips what the two trees share at their start and end, which must not change what it finds, whatever the
 * names (names that hold a space, digits and a NUL-free copy of an entry's start are the hard ones).
 */
const crowded = fc
  .tuple(
    fc.uniqueArray(
      fc.oneof(component, fc.constantFrom("x 100644 y", "100644 x", "40000 x", "a", "a b", "a.b")),
      { minLength: 20, maxLength: 60 },
    ),
    fc.array(fc.tuple(fc.nat(), fc.constantFrom("change", "remove", "folder", "add")), {
      minLength: 1,
      maxLength: 4,
    }),
    fc.constantFrom("1", "2"),
  )
  .map(([names, edits, content]) => {
    const before = new Map<string, TreeFile>(names.map((name) => [`f/${name}`, { mode: "100644", content }]));
    const after = new Map(before);
    for (const [at, kind] of edits) {
      const name = names[at % names.length] as string;
      if (kind === "change") after.set(`f/${name}`, { mode: "100644", content: `${content}!` });
      if (kind === "remove") after.delete(`f/${name}`);
      if (kind === "add") after.set(`f/${name}-new`, { mode: "100755", content });
      if (kind === "folder" && after.delete(`f/${name}`))
        after.set(`f/${name}/in`, { mode: "100644", content });
    }
    const clean = (map: Map<string, TreeFile>) =>
      new Map([...map].filter(([a]) => ![...map.keys()].some((b) => b.startsWith(`${a}/`))));
    return [clean(before), clean(after)] as const;
  });

test("property: treeDiff of a large folder with a few edits lists what git diff-tree lists", (t) => {
  const { repo, read } = givenRepo(t);
  holds(
    t,
    fc.property(crowded, ([before, after]) => {
      const base = commitOfModes(repo, before);
      const tip = commitOfModes(repo, after, base);
      const expected = parseRawDiff(git(repo, ["diff-tree", "-r", "-z", "--raw", "--no-renames", base, tip]));
      return JSON.stringify(treeDiff(new Trees(read), base, tip)) === JSON.stringify(expected);
    }),
    40,
  );
});

test("property: filesAt finds the blobs git ls-tree lists as blobs, and nothing else", (t) => {
  const { repo, read } = givenRepo(t);
  holds(
    t,
    fc.property(
      moded,
      fc.array(fc.oneof(component, fc.constantFrom("a", "issues")), { maxLength: 3 }),
      (files, extra) => {
        const commit = commitOfModes(repo, files);
        const paths = [
          ...files.keys(),
          ...extra,
          ...[...files.keys()].map((path) => path.split("/")[0] as string),
        ];
        // ls-tree reads its arguments as pathspecs: names with pathspec magic are left out of the comparison.
        const plain = paths.filter((path) => !path.startsWith(":") && path !== "");
        const listed = new Map<string, string>();
        if (plain.length > 0) {
          for (const line of git(repo, ["ls-tree", "-z", "--full-tree", commit, "--", ...plain])
            .toString("utf8")
            .split("\0")) {
            const tab = line.indexOf("\t");
            const [, type, oid] = line.slice(0, tab).split(" ");
            if (tab !== -1 && type === "blob" && oid) listed.set(line.slice(tab + 1), oid);
          }
        }
        const ours = filesAt(new Trees(read), commit, plain);
        return JSON.stringify([...ours].sort()) === JSON.stringify([...listed].sort());
      },
    ),
    40,
  );
});

/** A history: each commit's parents (indexes of earlier commits) and its committer time. */
const histories = fc
  .array(fc.record({ parents: fc.array(fc.nat(), { maxLength: 3 }), time: fc.integer({ min: 0, max: 4 }) }), {
    minLength: 2,
    maxLength: 12,
  })
  .map((commits) =>
    commits.map((commit, index) => ({
      time: commit.time,
      parents: index === 0 ? [] : [...new Set(commit.parents.map((parent) => parent % index))],
    })),
  );

test("property: mergeBase answers as git merge-base does, or leaves several bases to git", (t) => {
  const { repo, read } = givenRepo(t);
  const tree = git(repo, ["mktree"], "").toString().trim();
  let unique = 0;
  holds(
    t,
    fc.property(histories, fc.nat(), fc.nat(), (history, a, b) => {
      const ids: string[] = [];
      for (const commit of history) {
        const env = { GIT_COMMITTER_DATE: `${1_700_000_000 + commit.time} +0000` };
        const args = [
          "commit-tree",
          tree,
          "-m",
          `c${unique++}`,
          ...commit.parents.flatMap((p) => ["-p", ids[p] as string]),
        ];
        ids.push(git(repo, args, undefined, env).toString().trim());
      }
      const one = ids[a % ids.length] as string;
      const two = ids[b % ids.length] as string;
      let expected: string | undefined;
      try {
        expected = git(repo, ["merge-base", one, two]).toString().trim();
      } catch {
        expected = undefined; // no common history: git exits 1
      }
      try {
        return mergeBase(read, one, two) === expected;
      } catch (error) {
        if (!(error instanceof NotInProcessError)) throw error;
        return git(repo, ["merge-base", "--all", one, two]).toString().trim().split("\n").length > 1;
      }
    }),
    60,
  );
});

test("treeDiff and mergeBase leave a tree out of git's order and a missing commit to git", (t) => {
  const { repo, read } = givenRepo(t);
  const blob = git(repo, ["hash-object", "-w", "--stdin"], "x").toString().trim();
  // Two entries of one name (git fsck: duplicateEntries), written by hand.
  const entry = Buffer.concat([Buffer.from("100644 a.md\0"), Buffer.from(blob, "hex")]);
  const tree = git(
    repo,
    ["hash-object", "-w", "-t", "tree", "--literally", "--stdin"],
    Buffer.concat([entry, entry]).toString("latin1"),
  )
    .toString()
    .trim();
  const crafted = git(repo, ["commit-tree", tree, "-m", "m"]).toString().trim();
  const plain = commitOfModes(repo, new Map([["a.md", { mode: "100644", content: "x" }]]));
  t.throws(() => treeDiff(new Trees(read), plain, crafted), { instanceOf: NotInProcessError });
  t.throws(() => mergeBase(read, plain, "5".repeat(40)), { instanceOf: NotInProcessError });
  t.is(mergeBase(read, plain, crafted), undefined);
});
