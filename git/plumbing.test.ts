/**
 * The readers of git's output in git/plumbing.ts: `parseDiffTree` against recorded `git diff-tree --stdin -z`
 * output (git 2.39.5: a delete, a modify and an add of paths with a space, a leading `:` and a newline, and
 * a root commit) and against real git for any file names a pushed commit may carry; `readObjects` (one `git
 * cat-file --batch`) against a real repository for any blob bytes, with missing and malformed ids among them;
 * `parseLsTree` against recorded `git ls-tree -z` output (git 2.39).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import { fuzzParams, gitPathComponent } from "../testing/fuzz.js";
import { givenTempDir } from "../testing/sim.js";
import { hashObject } from "./objects.js";
import { parseDiffTree, parseLsTree, readObjects, type TreeChange } from "./plumbing.js";

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.test",
  GIT_AUTHOR_DATE: "@1700000000 +0000",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.test",
  GIT_COMMITTER_DATE: "@1700000000 +0000",
};

function git(
  repo: string,
  args: readonly string[],
  input?: string | Buffer,
  env: NodeJS.ProcessEnv = {},
): Buffer {
  return execFileSync("git", [`--git-dir=${repo}`, ...args], { env: { ...GIT_ENV, ...env }, input });
}

function givenRepo(t: ExecutionContext): string {
  const repo = join(givenTempDir(t, "svc-git-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  return repo;
}

const ZERO = "0".repeat(40);

/**
 * `printf '<second>\n<first>\n' | git diff-tree --stdin -z -r --root --always --no-renames` in a repository
 * whose first commit added `:odd` and `a b`, and whose second deleted `:odd`, changed `a b` and added
 * `new\nline` (git 2.39.5).
 */
const RECORDED =
  "0d4238209ad204d13d35c86a49ca9ded2c8c3bbb\0" +
  ":100644 000000 c1b0730e0133447badcfd47fd144e254807b06e1 0000000000000000000000000000000000000000 D\0:odd\0" +
  ":100644 100644 2e65efe2a145dda7ee51d1741299f848e5bf752e 63d8dbd40c23542e740659a7168a0ce3138ea748 M\0a b\0" +
  ":000000 100644 0000000000000000000000000000000000000000 ef073cc45ccc66c921adc7ccc6221e38aa54ae17 A\0new\nline\0" +
  "a82c99021831de57ea6f0b234ce384c0dc756390\0" +
  ":000000 100644 0000000000000000000000000000000000000000 c1b0730e0133447badcfd47fd144e254807b06e1 A\0:odd\0" +
  ":000000 100644 0000000000000000000000000000000000000000 2e65efe2a145dda7ee51d1741299f848e5bf752e A\0a b\0";

test("recorded: parseDiffTree reads each commit's changes, paths with a space, a leading ':' and a newline", (t) => {
  const changes = parseDiffTree(Buffer.from(RECORDED, "utf8"));
  t.deepEqual(
    [...changes.keys()],
    ["0d4238209ad204d13d35c86a49ca9ded2c8c3bbb", "a82c99021831de57ea6f0b234ce384c0dc756390"],
  );
  t.deepEqual(changes.get("0d4238209ad204d13d35c86a49ca9ded2c8c3bbb"), [
    {
      mode: "000000",
      oldOid: "c1b0730e0133447badcfd47fd144e254807b06e1",
      oid: ZERO,
      status: "D",
      path: ":odd",
    },
    {
      mode: "100644",
      oldOid: "2e65efe2a145dda7ee51d1741299f848e5bf752e",
      oid: "63d8dbd40c23542e740659a7168a0ce3138ea748",
      status: "M",
      path: "a b",
    },
    {
      mode: "100644",
      oldOid: ZERO,
      oid: "ef073cc45ccc66c921adc7ccc6221e38aa54ae17",
      status: "A",
      path: "new\nline",
    },
  ]);
  t.is(changes.get("a82c99021831de57ea6f0b234ce384c0dc756390")?.length, 2);
  t.deepEqual(parseDiffTree(Buffer.alloc(0)), new Map());
});

test("parseDiffTree: a path of 40 hex digits is a path, not a commit; a status with a score keeps its letter", (t) => {
  const hex = "a".repeat(40);
  const output = `${"b".repeat(40)}\0:000000 100644 ${ZERO} ${"c".repeat(40)} A\0${hex}\0:100644 100644 ${"c".repeat(40)} ${"d".repeat(40)} M100\0x\0`;
  const changes = parseDiffTree(Buffer.from(output));
  t.deepEqual([...changes.keys()], ["b".repeat(40)]);
  t.deepEqual(
    changes.get("b".repeat(40))?.map((change) => [change.status, change.path]),
    [
      ["A", hex],
      ["M", "x"],
    ],
  );
});

const OID_A = "a".repeat(40);
const OID_B = "b".repeat(40);

test("parseLsTree reads -z output, including names with tabs, newlines and non-ASCII bytes", (t) => {
  const output = Buffer.from(
    [
      `040000 tree ${OID_A}\tissues`,
      `100644 blob ${OID_B}\tissues/we\tird\nname é.md`,
      `160000 commit ${OID_A}\tsub`,
      "",
    ].join("\0"),
  );
  t.deepEqual(parseLsTree(output), [
    { mode: "040000", type: "tree", oid: OID_A, path: "issues" },
    { mode: "100644", type: "blob", oid: OID_B, path: "issues/we\tird\nname é.md" },
    { mode: "160000", type: "commit", oid: OID_A, path: "sub" },
  ]);
  t.deepEqual(parseLsTree(Buffer.alloc(0)), []);
  t.throws(() => parseLsTree(Buffer.from("garbage\0")), { message: /git ls-tree printed a line/ });
});

/** A file name a pushed commit may hold: any characters git allows in one path component. */
const fileName = gitPathComponent(12);

/** A commit of `files` (name → content) on `parent`, made with git's plumbing; its id. */
function commitOf(repo: string, files: ReadonlyMap<string, string>, parent?: string): string {
  const index = join(repo, `index-${Math.random().toString(36).slice(2)}`);
  for (const content of new Set(files.values())) git(repo, ["hash-object", "-w", "--stdin"], content);
  const lines = [...files].map(([name, content]) => `100644 blob ${blobId(content)}\t${name}\0`);
  git(repo, ["update-index", "-z", "--index-info"], lines.join(""), { GIT_INDEX_FILE: index });
  const tree = git(repo, ["write-tree"], undefined, { GIT_INDEX_FILE: index }).toString().trim();
  const args = ["commit-tree", tree, "-m", "m", ...(parent ? ["-p", parent] : [])];
  return git(repo, args).toString().trim();
}

/** The id of a blob holding `content`, or zeros for none. */
function blobId(content: string | undefined): string {
  return content === undefined ? ZERO : hashObject("blob", Buffer.from(content));
}

const tree = fc
  .dictionary(fileName, fc.constantFrom("1", "2", "3"), { maxKeys: 5 })
  .map((record) => new Map(Object.entries(record)));

test("property: parseDiffTree reads git's own diff-tree output for any file names, each change once", (t) => {
  const repo = givenRepo(t);
  fc.assert(
    fc.property(tree, tree, (before, after) => {
      const first = commitOf(repo, before);
      const second = commitOf(repo, after, first);
      const output = git(
        repo,
        ["diff-tree", "--stdin", "-z", "-r", "--root", "--always", "--no-renames"],
        `${second}\n`,
      );
      const expected: TreeChange[] = [...new Set([...before.keys(), ...after.keys()])]
        .filter((name) => before.get(name) !== after.get(name))
        .map((name) => ({
          mode: after.has(name) ? "100644" : "000000",
          oldOid: blobId(before.get(name)),
          oid: blobId(after.get(name)),
          status: !before.has(name) ? "A" : !after.has(name) ? "D" : "M",
          path: name,
        }))
        .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
      const parsed = parseDiffTree(output).get(second) ?? [];
      return JSON.stringify(parsed) === JSON.stringify(expected);
    }),
    fuzzParams(25),
  );
  t.pass();
});

test("recorded: readObjects returns blobs, trees and commits byte for byte and leaves out what is missing", async (t) => {
  const repo = givenRepo(t);
  const contents = ["", "one line\n", "no newline", "x missing\n", "\n\n\0binary\n"];
  const blobs = contents.map((text) => git(repo, ["hash-object", "-w", "--stdin"], text).toString().trim());
  const commit = commitOf(repo, new Map([["a b", "1"]]));
  const treeId = git(repo, ["rev-parse", `${commit}^{tree}`])
    .toString()
    .trim();
  const missing = "1".repeat(40);
  const objects = await readObjects(repo, [
    blobs[0] as string,
    missing,
    ...blobs.slice(1),
    "not-an-id",
    commit,
    treeId,
  ]);
  t.deepEqual([...objects.keys()], [...blobs, commit, treeId]);
  for (const [i, text] of contents.entries()) t.is(objects.get(blobs[i] as string)?.toString("latin1"), text);
  t.true(objects.get(commit)?.equals(git(repo, ["cat-file", "commit", commit])));
  t.true(objects.get(treeId)?.equals(git(repo, ["cat-file", "tree", treeId])));
  t.deepEqual(await readObjects(repo, []), new Map());
});

test("property: readObjects gives any blobs back byte for byte, with missing ids anywhere among them", async (t) => {
  const repo = givenRepo(t);
  const entry = fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ bytes: Buffer.from(bytes) })),
    fc.constantFrom({ missing: "2".repeat(40) }, { missing: "3".repeat(40) }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(entry, { maxLength: 8 }), async (entries) => {
      const ids = entries.map((e) =>
        "bytes" in e ? git(repo, ["hash-object", "-w", "--stdin"], e.bytes).toString().trim() : e.missing,
      );
      const objects = await readObjects(repo, ids);
      return entries.every((e, i) =>
        "bytes" in e
          ? objects.get(ids[i] as string)?.equals(e.bytes) === true
          : !objects.has(ids[i] as string),
      );
    }),
    fuzzParams(25),
  );
  t.pass();
});
