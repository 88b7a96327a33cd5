import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { givenTempDir } from "../testing/sim.js";
import { encodeTree, hashObject, type TreeEntry } from "./objects.js";

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };

/** The tree id git itself gives `entries` (`git mktree --missing`: the ids need not exist). */
function mktree(repo: string, entries: readonly TreeEntry[]): string {
  const lines = entries.map((entry) =>
    entry.mode === "40000"
      ? `040000 tree ${entry.oid}\t${entry.name}\0`
      : `${entry.mode} blob ${entry.oid}\t${entry.name}\0`,
  );
  return execFileSync("git", [`--git-dir=${repo}`, "mktree", "-z", "--missing"], {
    env: GIT_ENV,
    input: Buffer.from(lines.join(""), "utf8"),
  })
    .toString("utf8")
    .trim();
}

/**
 * Names that probe git's order: a prefix against the same name with a suffix, `.`, `-`, ` ` and `0` on
 * either side of `/` (0x2f, the key a directory is sorted by), case, and UTF-8 (bytes above 0x7f, not
 * UTF-16 order: U+FF5E against U+1F600).
 */
const tricky = fc.constantFrom(
  "a",
  "a.b",
  "a-b",
  "a b",
  "a0",
  "a_b",
  "A",
  "a.md",
  "0042.md",
  "ä",
  "é.md",
  "日本",
  "～",
  "😀",
  "name with spaces",
  "tab\there",
);
const anyName = fc
  .string({ unit: "grapheme", minLength: 1, maxLength: 12 })
  .filter((name) => !name.includes("/") && !name.includes("\0") && name !== "." && name !== "..");
const oid = fc.stringMatching(/^[0-9a-f]{40}$/);
const entry: fc.Arbitrary<TreeEntry> = fc.record({
  mode: fc.constantFrom("100644" as const, "40000" as const),
  name: fc.oneof(tricky, anyName),
  oid,
});

test("property: encodeTree's tree id is git mktree's for any entries (names with spaces, UTF-8, a vs a.b vs a/)", (t) => {
  const repo = join(givenTempDir(t, "svc-objects-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  fc.assert(
    fc.property(fc.uniqueArray(entry, { selector: (e) => e.name, maxLength: 20 }), (entries) => {
      assert.equal(hashObject("tree", encodeTree(entries)), mktree(repo, entries));
    }),
    fuzzParams(150),
  );
  t.pass();
});

test("encodeTree sorts a directory as if its name ended with '/': a.b, then a/ (0x2f), then a0", (t) => {
  const repo = join(givenTempDir(t, "svc-objects-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
  for (const entries of [
    [
      { mode: "40000" as const, name: "a", oid: blob },
      { mode: "100644" as const, name: "a.b", oid: blob },
      { mode: "100644" as const, name: "a0", oid: blob },
    ],
    [
      { mode: "100644" as const, name: "a", oid: blob },
      { mode: "100644" as const, name: "a.b", oid: blob },
      { mode: "40000" as const, name: "a0", oid: blob },
    ],
  ]) {
    t.is(hashObject("tree", encodeTree(entries)), mktree(repo, entries));
    t.is(hashObject("tree", encodeTree([...entries].reverse())), mktree(repo, entries));
  }
});
