/**
 * `parseRawDiff` (helper/push.ts) on what a push brings: the file names of a pushed commit are the user's
 * (or an agent's), so any name git allows in a tree, in folders too, must come back as exactly one entry
 * with its status and blob ids, from real `git diff-tree -r -z --raw --no-renames <base> <tip>`. The
 * recorded outputs are in push.test.ts.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import test from "ava";
import fc from "fast-check";
import { hashObject } from "../cache/objects.js";
import { fuzzParams, gitPathComponent } from "../testing/fuzz.js";
import { givenTempDir } from "../testing/sim.js";
import { parseRawDiff } from "./push.js";
import type { DiffEntry } from "./push-plan.js";

const ZERO = "0".repeat(40);
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@x",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@x",
};

function git(repo: string, args: readonly string[], input?: string, env: NodeJS.ProcessEnv = {}): Buffer {
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
