/**
 * `encodeCommit` and `hashObject` (git/objects.ts) against git: the deterministic cache commit (DESIGN.md
 * §3: fixed committer `svc <svc@localhost>`, time = newest `updated_at`) has the id `git commit-tree` gives
 * the same tree, parents, identity, time and message; and for any message, parents and time, git accepts
 * the bytes as a commit under the same id and reads the same parents, identity and time back.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { givenTempDir } from "../testing/sim.js";
import { encodeCommit, hashObject } from "./objects.js";

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

function git(
  repo: string,
  args: readonly string[],
  input?: string | Buffer,
  env: NodeJS.ProcessEnv = {},
): string {
  return execFileSync("git", [`--git-dir=${repo}`, ...args], {
    env: { ...GIT_ENV, ...env },
    input,
  }).toString();
}

function givenRepo(t: ExecutionContext): string {
  const repo = join(givenTempDir(t, "svc-commit-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  git(repo, ["mktree"], "");
  return repo;
}

test("recorded: the cache's commit has the id git commit-tree gives it", (t) => {
  const repo = givenRepo(t);
  const identity = {
    GIT_AUTHOR_NAME: "svc",
    GIT_AUTHOR_EMAIL: "svc@localhost",
    GIT_AUTHOR_DATE: "@1767225600 +0000",
    GIT_COMMITTER_NAME: "svc",
    GIT_COMMITTER_EMAIL: "svc@localhost",
    GIT_COMMITTER_DATE: "@1767225600 +0000",
  };
  const root = git(repo, ["commit-tree", EMPTY_TREE, "-m", "svc: sync"], undefined, identity).trim();
  const child = git(
    repo,
    ["commit-tree", EMPTY_TREE, "-p", root, "-m", "svc: sync 2"],
    undefined,
    identity,
  ).trim();
  const fields = { tree: EMPTY_TREE, identity: "svc <svc@localhost>", time: 1767225600 };
  t.is(hashObject("commit", encodeCommit({ ...fields, parents: [], message: "svc: sync\n" })), root);
  t.is(hashObject("commit", encodeCommit({ ...fields, parents: [root], message: "svc: sync 2\n" })), child);
  t.is(
    encodeCommit({ ...fields, parents: [root], message: "svc: sync 2\n" }).toString(),
    git(repo, ["cat-file", "commit", child]),
  );
});

test("property: for any message, parents and time git stores the commit under hashObject's id and reads it back", (t) => {
  const repo = givenRepo(t);
  // Real commits as parents: git reads a commit's parents when it shows it.
  const pool = ["a", "b", "c"].map((message) =>
    git(repo, ["commit-tree", EMPTY_TREE, "-m", message], undefined, {
      GIT_AUTHOR_NAME: "p",
      GIT_AUTHOR_EMAIL: "p@x",
      GIT_COMMITTER_NAME: "p",
      GIT_COMMITTER_EMAIL: "p@x",
    }).trim(),
  );
  const oid = fc.constantFrom(...pool);
  const name = fc.stringMatching(/^[A-Za-z][A-Za-z .-]{0,10}[A-Za-z]$/);
  fc.assert(
    fc.property(
      fc.array(oid, { maxLength: 3 }),
      name,
      fc.integer({ min: 0, max: 2 ** 33 }),
      fc.string({ maxLength: 60 }),
      (parents, who, time, message) => {
        const commit = {
          tree: EMPTY_TREE,
          parents,
          identity: `${who} <${who.replace(/\W/g, "")}@x>`,
          time,
          message,
        };
        const bytes = encodeCommit(commit);
        const id = git(repo, ["hash-object", "-t", "commit", "-w", "--stdin"], bytes).trim();
        const read = git(repo, ["log", "-1", "--format=%P%n%an <%ae>%n%at", id]).split("\n");
        return (
          id === hashObject("commit", bytes) &&
          read[0] === parents.join(" ") &&
          read[1] === commit.identity &&
          read[2] === String(time)
        );
      },
    ),
    fuzzParams(40),
  );
  t.pass();
});
