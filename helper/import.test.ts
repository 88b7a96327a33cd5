/**
 * The writer of helper/import.ts on its own: `quotePath` against real `git fast-import`, which must create
 * exactly the file named, whatever the name (git/commit-headers.test.ts holds the commit reader it uses).
 */
import test from "ava";
import fc from "fast-check";
import { bareGit as git, givenBareRepo as givenRepo } from "../testing/bare-repo.js";
import { fuzzParams } from "../testing/fuzz.js";
import { quotePath } from "./import.js";

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
