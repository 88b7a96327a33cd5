/**
 * The writer of helper/import.ts on its own: `quotePath` against real `git fast-import`, which must create
 * exactly the file named, whatever the name (git/commit-headers.test.ts holds the commit reader it uses).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { givenTempDir } from "../testing/sim.js";
import { quotePath } from "./import.js";

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Ann Author",
  GIT_AUTHOR_EMAIL: "ann@example.test",
  GIT_AUTHOR_DATE: "@1700000000 +0100",
  GIT_COMMITTER_NAME: "Cy Committer",
  GIT_COMMITTER_EMAIL: "cy@example.test",
  GIT_COMMITTER_DATE: "@1700000060 -0230",
};

function git(repo: string, args: readonly string[], input?: string | Buffer): Buffer {
  return execFileSync("git", [`--git-dir=${repo}`, ...args], { env: GIT_ENV, input });
}

function givenRepo(t: ExecutionContext): string {
  const repo = join(givenTempDir(t, "svc-import-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  return repo;
}

/** A file name git allows in a tree: no `/` or NUL, not `.`, `..` or `.git`. */
const fileName = fc
  .oneof(
    fc.constantFrom(
      '"quoted',
      'mid"quote',
      "back\\slash",
      "new\nline",
      "tab\there",
      "trailing ",
      " lead",
      "ünï",
      "\\n",
    ),
    fc.string({ unit: "binary", minLength: 1, maxLength: 10 }),
  )
  .filter((name) => !/[/\0]/.test(name) && name !== "." && name !== ".." && name.toLowerCase() !== ".git");

test("property: fast-import creates exactly the files quotePath names, whatever the names", (t) => {
  const repo = givenRepo(t);
  let run = 0;
  fc.assert(
    fc.property(fc.uniqueArray(fileName, { maxLength: 6 }), (names) => {
      const ref = `refs/heads/run-${run++}`;
      const modifies = names.map((name) => `M 100644 inline ${quotePath(name)}\ndata 1\nx\n`).join("");
      const stream = `commit ${ref}\ncommitter C <c@x> 1700000000 +0000\ndata 0\n${modifies}\n`;
      git(repo, ["fast-import", "--quiet"], stream);
      const listed = git(repo, ["ls-tree", "-r", "-z", "--name-only", ref])
        .toString("utf8")
        .split("\0")
        .filter((name) => name !== "");
      return JSON.stringify([...listed].sort()) === JSON.stringify([...names].sort());
    }),
    fuzzParams(40),
  );
  t.pass();
});
