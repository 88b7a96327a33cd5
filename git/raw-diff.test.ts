/**
 * `parseRawDiff` (git/plumbing.ts) against recorded `git diff-tree -r -z --raw --no-renames` output (git
 * 2.39.5): every status the push planner acts on, mode changes, and paths that a line-based parser would
 * break on.
 */
import test from "ava";
import { parseRawDiff } from "./plumbing.js";

const ZERO = "0".repeat(40);

/** Recorded from a repository with a modify, a delete, a symlink turned file, an add and a chmod. */
const RECORDED =
  ":100644 100644 78981922613b2afb6025042ff6bd878ac1994e85 e61ef7b965e17c62ca23b6ff5f0aaf09586e10e9 M\0issues/0001.md\0" +
  ":100644 000000 61780798228d17af2d34fce4cfbdf35556832472 0000000000000000000000000000000000000000 D\0issues/0002.md\0" +
  ":120000 100644 17dd18a06364d61e868ab771501c62ae0f7a2b76 587be6b4c3f93f93c489c0111bba5596147a26cb T\0issues/link.md\0" +
  ":000000 100644 0000000000000000000000000000000000000000 8ba3a16384aacc37d01564b28401755ce8053f51 A\0issues/new.md\0" +
  ":100644 100755 f2ad6c76f0115a6ba5b00456a849810e7ec0af20 f2ad6c76f0115a6ba5b00456a849810e7ec0af20 M\0issues/we ird\tname.md\0";

test("parseRawDiff reads every entry of recorded diff-tree output", (t) => {
  t.deepEqual(parseRawDiff(Buffer.from(RECORDED, "utf8")), [
    {
      status: "M",
      path: "issues/0001.md",
      oldMode: "100644",
      newMode: "100644",
      oldOid: "78981922613b2afb6025042ff6bd878ac1994e85",
      newOid: "e61ef7b965e17c62ca23b6ff5f0aaf09586e10e9",
    },
    {
      status: "D",
      path: "issues/0002.md",
      oldMode: "100644",
      newMode: "000000",
      oldOid: "61780798228d17af2d34fce4cfbdf35556832472",
      newOid: ZERO,
    },
    {
      status: "T",
      path: "issues/link.md",
      oldMode: "120000",
      newMode: "100644",
      oldOid: "17dd18a06364d61e868ab771501c62ae0f7a2b76",
      newOid: "587be6b4c3f93f93c489c0111bba5596147a26cb",
    },
    {
      status: "A",
      path: "issues/new.md",
      oldMode: "000000",
      newMode: "100644",
      oldOid: ZERO,
      newOid: "8ba3a16384aacc37d01564b28401755ce8053f51",
    },
    {
      status: "M",
      path: "issues/we ird\tname.md",
      oldMode: "100644",
      newMode: "100755",
      oldOid: "f2ad6c76f0115a6ba5b00456a849810e7ec0af20",
      newOid: "f2ad6c76f0115a6ba5b00456a849810e7ec0af20",
    },
  ]);
});

test("parseRawDiff: no output is no entries", (t) => {
  t.deepEqual(parseRawDiff(Buffer.alloc(0)), []);
});

test("parseRawDiff: a path that starts with ':' or holds spaces, newlines or UTF-8 is one path", (t) => {
  const header = (status: string) => `:000000 100644 ${ZERO} ${"a".repeat(40)} ${status}`;
  const output = `${header("A")}\0:odd.md\0${header("A")}\0issues/line\nbreak é.md\0${header("A")}\0x.md\0`;
  t.deepEqual(
    parseRawDiff(Buffer.from(output, "utf8")).map((entry) => entry.path),
    [":odd.md", "issues/line\nbreak é.md", "x.md"],
  );
});

test("parseRawDiff keeps only the letter of a status with a score", (t) => {
  const output = `:100644 100644 ${"a".repeat(40)} ${"b".repeat(40)} M099\0issues/0001.md\0`;
  t.is(parseRawDiff(Buffer.from(output))[0]?.status, "M");
});
