/**
 * `copyNewObjects` with real repositories: a bare "cache" and a user's partial clone of it (`--filter=
 * blob:none`, so the user's repository lacks every blob it did not make). What it copies is exactly what git
 * counts as new (`git rev-list --objects <commit> --not <cache's commits>`), the cache's git reads the copy,
 * and nothing of the partial clone is ever fetched: a read of a blob the clone lacks would leave the copy to
 * git, and the tests see that.
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { SCRATCH_GIT_ENV } from "../testing/git.js";
import { givenTempDir } from "../testing/sim.js";
import { copyNewObjects, MAX_COPY } from "./copy.js";
import { ObjectReader } from "./object-store.js";
import { Trees } from "./tree-diff.js";

const GIT_ENV = {
  ...SCRATCH_GIT_ENV,
  // A lazy fetch of the partial clone fails instead of reaching the "server": a test would see it. git 2.45
  // and later; an older git fetches from the local "server" instead, which these tests then do not notice.
  GIT_NO_LAZY_FETCH: "1",
};

function git(cwd: string, args: readonly string[], input?: string): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, input }).toString("utf8").trim();
}

interface Repos {
  readonly cache: string;
  readonly user: string;
  readonly base: string;
}

/** A bare cache whose main has `files` files in issues/, and a partial clone of it without checkout. */
function givenRepos(t: ExecutionContext, files = 200): Repos {
  const root = givenTempDir(t, "svc-push-copy-");
  const cache = join(root, "cache.git");
  git(root, ["init", "-q", "--bare", cache]);
  git(cache, ["config", "uploadpack.allowFilter", "true"]);
  let stream = `commit refs/heads/main\ncommitter t <t@x> 1700000000 +0000\ndata 4\nbase\n`;
  for (let i = 0; i < files; i++) {
    const text = `issue ${i}\n`;
    stream += `M 100644 inline issues/${String(i).padStart(4, "0")}.md\ndata ${text.length}\n${text}\n`;
  }
  git(cache, ["fast-import", "--quiet"], stream);
  const user = join(root, "user");
  git(root, ["clone", "-q", "--filter=blob:none", "--no-checkout", `file://${cache}`, user]);
  return { cache, user, base: git(cache, ["rev-parse", "main"]) };
}

/**
 * A commit in the user's repository on `parents` whose tree is the first parent's with `changes` (path →
 * content, or null to remove), made with plumbing that reads no blob.
 */
function userCommit(
  user: string,
  parents: readonly string[],
  changes: Record<string, string | null>,
): string {
  const index = join(user, ".git", `index-${Math.random().toString(36).slice(2)}`);
  const env = { ...GIT_ENV, GIT_INDEX_FILE: index };
  execFileSync("git", ["read-tree", parents[0] as string], { cwd: user, env });
  for (const [path, content] of Object.entries(changes)) {
    if (content === null) {
      execFileSync("git", ["update-index", "--force-remove", path], { cwd: user, env });
      continue;
    }
    const oid = git(user, ["hash-object", "-w", "--stdin"], content);
    execFileSync("git", ["update-index", "--add", "--cacheinfo", `100644,${oid},${path}`], {
      cwd: user,
      env,
    });
  }
  const tree = execFileSync("git", ["write-tree", "--missing-ok"], { cwd: user, env }).toString().trim();
  return git(user, ["commit-tree", tree, "-m", "edit", ...parents.flatMap((parent) => ["-p", parent])]);
}

function copy(repos: Repos, commit: string, afterFirst?: () => void) {
  const user = new ObjectReader(join(repos.user, ".git", "objects"));
  const cache = new ObjectReader(join(repos.cache, "objects"));
  const trees = new Trees((oid) => cache.read(oid) ?? user.read(oid));
  return copyNewObjects({ user, cache, trees }, repos.cache, commit, afterFirst);
}

/** What git counts as new in `commit` for the cache, in the user's repository. */
function newForGit(repos: Repos, commit: string): string[] {
  return git(repos.user, ["rev-list", "--objects", "--missing=allow-any", commit, "--not", repos.base])
    .split("\n")
    .map((line) => line.split(" ")[0] as string)
    .sort();
}

function looseIn(repo: string): string[] {
  const objects = join(repo, "objects");
  return readdirSync(objects)
    .filter((dir) => /^[0-9a-f]{2}$/.test(dir))
    .flatMap((dir) => readdirSync(join(objects, dir)).map((name) => `${dir}${name}`))
    .sort();
}

test("copies a commit of a partial clone: exactly git's new objects, readable by the cache's git", (t) => {
  const repos = givenRepos(t);
  const commit = userCommit(repos.user, [repos.base], {
    "issues/0007.md": "issue 7, edited\n",
    "issues/new.md": "a new one\n",
    "issues/0009.md": null,
  });
  let calls = 0;
  t.deepEqual(
    copy(repos, commit, () => calls++),
    { copied: 5 }, // the commit, two trees, two blobs
  );
  t.is(calls, 1);
  t.deepEqual(looseIn(repos.cache), newForGit(repos, commit));
  git(repos.cache, ["update-ref", "refs/heads/pushed", commit]);
  t.is(git(repos.cache, ["diff-tree", "-r", "--name-status", repos.base, commit]).split("\n").length, 3);
  // Connected: every object of the pushed commit is in the cache.
  t.is(git(repos.cache, ["rev-list", "--objects", "--missing=print", "pushed"]).includes("\n?"), false);
  // Again: nothing is new any more.
  t.deepEqual(copy(repos, commit), { copied: 0 });
});

test("copies several commits and a merge, leaving out what a merge takes from a parent the cache has", (t) => {
  const repos = givenRepos(t);
  const first = userCommit(repos.user, [repos.base], { "issues/0001.md": "one\n" });
  const second = userCommit(repos.user, [first], { "issues/0002.md": "two\n" });
  // The server's side: a commit the cache has, which the user merges.
  const server = userCommit(repos.user, [repos.base], { "issues/0003.md": "three, on the server\n" });
  t.deepEqual(copy(repos, server), { copied: 4 });
  const merge = userCommit(repos.user, [second, server], { "issues/0003.md": "three, on the server\n" });
  const outcome = copy(repos, merge);
  t.deepEqual(outcome, { copied: newForGit({ ...repos, base: server }, merge).length });
  t.deepEqual(looseIn(repos.cache), [...new Set([...newForGit(repos, merge)])].sort());
});

test("copies a commit whose objects the user's repository holds packed", (t) => {
  const repos = givenRepos(t);
  const commit = userCommit(repos.user, [repos.base], { "issues/0005.md": "five\n" });
  git(repos.user, ["update-ref", "refs/heads/work", commit]);
  git(repos.user, ["repack", "-dq"]);
  t.deepEqual(looseIn(join(repos.user, ".git")), []);
  t.deepEqual(copy(repos, commit), { copied: 4 });
  t.deepEqual(looseIn(repos.cache), newForGit(repos, commit));
});

test("leaves to git what it cannot do: a new blob the clone lacks, too many objects", (t) => {
  const repos = givenRepos(t, 20);
  // A commit naming a blob that is nowhere (as after a partial clone lost it): git must say so.
  const index = join(repos.user, ".git", "index-missing");
  const env = { ...GIT_ENV, GIT_INDEX_FILE: index };
  execFileSync("git", ["read-tree", repos.base], { cwd: repos.user, env });
  execFileSync("git", ["update-index", "--add", "--cacheinfo", `100644,${"5".repeat(40)},issues/x.md`], {
    cwd: repos.user,
    env,
  });
  const tree = execFileSync("git", ["write-tree", "--missing-ok"], { cwd: repos.user, env })
    .toString()
    .trim();
  const missing = git(repos.user, ["commit-tree", tree, "-p", repos.base, "-m", "m"]);
  t.true("leftToGit" in copy(repos, missing));

  const many: Record<string, string> = {};
  for (let i = 0; i < MAX_COPY; i++) many[`issues/many-${i}.md`] = `many ${i}\n`;
  t.true("leftToGit" in copy(repos, userCommit(repos.user, [repos.base], many)));
});
