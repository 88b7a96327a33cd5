/**
 * `parseCommitObject` (git/objects.ts, the headers helper/import.ts rewrites a commit with) against commit
 * objects git itself wrote (a root commit, a merge, an `encoding` header) and a signed commit's `gpgsig`
 * header in git's documented layout, and against any headers and message bytes a pushed commit may carry.
 */
import test from "ava";
import fc from "fast-check";
import { bareGit as git, givenBareRepo as givenRepo } from "../testing/bare-repo.js";
import { fuzzParams } from "../testing/fuzz.js";
import { parseCommitObject } from "./objects.js";

test("recorded: commits git wrote (root, merge, encoding) parse into parents, identities and the message bytes", (t) => {
  const repo = givenRepo(t);
  const tree = git(repo, ["mktree"], "").toString().trim();
  const root = git(repo, ["commit-tree", tree, "-m", "first\n\nbody line"]).toString().trim();
  const side = git(repo, ["commit-tree", tree, "-m", "side"]).toString().trim();
  const merge = git(repo, ["commit-tree", tree, "-p", root, "-p", side, "-m", "merge"]).toString().trim();
  const latin = git(
    repo,
    ["-c", "i18n.commitEncoding=ISO-8859-1", "commit-tree", tree, "-p", merge],
    Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
  )
    .toString()
    .trim();

  const parsed = (oid: string) => parseCommitObject(git(repo, ["cat-file", "commit", oid]));
  t.deepEqual(parsed(root), {
    parents: [],
    author: "Ann Author <ann@example.test> 1700000000 +0100",
    committer: "Cy Committer <cy@example.test> 1700000060 -0230",
    encoding: undefined,
    unsupportedHeaders: [],
    message: Buffer.from("first\n\nbody line\n"),
  });
  t.deepEqual(parsed(merge).parents, [root, side]);
  t.is(parsed(latin).encoding, "ISO-8859-1");
  t.deepEqual(
    parsed(latin).message,
    Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    "the message's bytes, not decoded",
  );
  t.deepEqual(parsed(latin).unsupportedHeaders, []);
});

test("a gpgsig header (git's layout: continuation lines start with a space) is named as unsupported, once", (t) => {
  const raw = Buffer.from(
    "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n" +
      "parent 0123456789012345678901234567890123456789\n" +
      "author A <a@x> 1700000000 +0000\n" +
      "committer A <a@x> 1700000000 +0000\n" +
      "gpgsig -----BEGIN PGP SIGNATURE-----\n" +
      " \n" +
      " iQEzBAABCAAdFiEE\n" +
      " -----END PGP SIGNATURE-----\n" +
      "\n" +
      "signed\n",
  );
  const commit = parseCommitObject(raw);
  t.deepEqual(commit.unsupportedHeaders, ["gpgsig"]);
  t.deepEqual(commit.parents, ["0123456789012345678901234567890123456789"]);
  t.is(commit.message.toString(), "signed\n");
});

test("a commit without a message, or without the blank line, parses with an empty message", (t) => {
  t.is(parseCommitObject(Buffer.from("tree x\nauthor A <a@x> 1 +0000\n\n")).message.length, 0);
  t.is(parseCommitObject(Buffer.from("tree x\nauthor A <a@x> 1 +0000")).message.length, 0);
  t.is(parseCommitObject(Buffer.alloc(0)).author, "");
});

test("property: any headers and message bytes: parents are the parent lines, the message the bytes after the blank line", (t) => {
  // A header as git writes one: a name, a space, a value; continuation lines start with a space.
  const header = fc.oneof(
    fc
      .tuple(
        fc.constantFrom("tree", "parent", "author", "committer", "encoding", "gpgsig", "mergetag", "x-odd"),
        fc.string({ maxLength: 20 }),
      )
      .map(([name, value]) => `${name} ${value.replace(/\n/g, "")}`),
    fc.string({ maxLength: 20 }).map((value) => ` ${value.replace(/\n/g, "")}`),
  );
  fc.assert(
    fc.property(fc.array(header, { maxLength: 8 }), fc.uint8Array({ maxLength: 60 }), (headers, message) => {
      // git writes `tree` first, always.
      const raw = Buffer.concat([
        Buffer.from(
          `tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n${headers.map((h) => `${h}\n`).join("")}\n`,
        ),
        Buffer.from(message),
      ]);
      const commit = parseCommitObject(raw);
      const lines = headers.filter((line) => !line.startsWith(" "));
      const values = (name: string) =>
        lines.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1));
      return (
        JSON.stringify(commit.parents) === JSON.stringify(values("parent")) &&
        commit.author === (values("author").at(-1) ?? "") &&
        commit.encoding === values("encoding").at(-1) &&
        commit.message.equals(Buffer.from(message)) &&
        JSON.stringify(commit.unsupportedHeaders) ===
          JSON.stringify(
            lines
              .map((line) => line.slice(0, line.indexOf(" ")))
              .filter((name) => !["tree", "parent", "author", "committer", "encoding"].includes(name)),
          )
      );
    }),
    fuzzParams(500),
  );
  t.pass();
});
