/**
 * `userRefCommit` against `git rev-parse --verify -q <ref>^{commit}` in a real repository: loose, packed
 * and symbolic refs, a linked worktree's view, refs that do not exist; and what it leaves to git.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { SCRATCH_GIT_ENV } from "../testing/git.js";
import { givenTempDir } from "../testing/sim.js";
import { userRefCommit } from "./user-git.js";

const GIT_ENV = SCRATCH_GIT_ENV;

function git(cwd: string, args: readonly string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV }).toString("utf8").trim();
}

/** What git says, as userRefCommit says it: the commit, or null when the ref names none. */
function gitAnswer(cwd: string, gitDir: string, ref: string): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--verify", "-q", `${ref}^{commit}`], {
      cwd,
      env: { ...GIT_ENV, GIT_DIR: gitDir },
    })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

test("userRefCommit reads loose, packed and symbolic refs as git rev-parse does, in a worktree too", (t) => {
  const root = givenTempDir(t, "svc-user-ref-");
  const work = join(root, "work");
  git(root, ["init", "-q", "-b", "main", work]);
  git(work, ["commit", "-q", "--allow-empty", "-m", "one"]);
  git(work, ["update-ref", "refs/remotes/origin/main", "HEAD"]);
  git(work, ["commit", "-q", "--allow-empty", "-m", "two"]);
  git(work, ["pack-refs", "--all"]);
  git(work, ["commit", "-q", "--allow-empty", "-m", "three"]);
  git(work, ["branch", "side", "HEAD~1"]);
  writeFileSync(join(work, ".git", "refs", "heads", "alias"), "ref: refs/heads/side\n");
  git(work, ["worktree", "add", "-q", join(root, "linked"), "side"]);
  const place = { env: { GIT_DIR: ".git" }, cwd: work };
  const linked = { env: { GIT_DIR: join(work, ".git", "worktrees", "linked") }, cwd: join(root, "linked") };
  const refs = ["refs/heads/main", "refs/remotes/origin/main", "refs/heads/side", "refs/heads/alias"];
  for (const ref of [...refs, "refs/heads/none", "refs/remotes/other/main"]) {
    const expected = gitAnswer(work, join(work, ".git"), ref);
    t.is(userRefCommit(ref, place), expected, ref);
    t.is(
      userRefCommit(ref, linked),
      gitAnswer(linked.cwd, linked.env.GIT_DIR, ref),
      `${ref} in the worktree`,
    );
    if (refs.includes(ref)) t.regex(expected ?? "", /^[0-9a-f]{40}$/, ref);
    else t.is(expected, null, ref);
  }
  // main is loose (moved after pack-refs), origin/main only packed.
  t.not(userRefCommit("refs/heads/main", place), userRefCommit("refs/remotes/origin/main", place));
});

test("userRefCommit leaves to git what git reads its own way: a tag to peel, odd names, no GIT_DIR", (t) => {
  const work = join(givenTempDir(t, "svc-user-ref-"), "work");
  git(join(work, ".."), ["init", "-q", "-b", "main", work]);
  git(work, ["commit", "-q", "--allow-empty", "-m", "one"]);
  git(work, ["tag", "-a", "-m", "annotated", "v1"]);
  const place = { env: { GIT_DIR: ".git" }, cwd: work };
  t.is(userRefCommit("refs/tags/v1", place), undefined);
  t.is(userRefCommit("HEAD", place), undefined);
  t.is(userRefCommit("refs/heads/../main", place), undefined);
  t.is(userRefCommit("refs/heads/main", { env: {}, cwd: work }), undefined);
  t.is(
    userRefCommit("refs/heads/main", { env: { GIT_DIR: ".git", GIT_NAMESPACE: "x" }, cwd: work }),
    undefined,
  );
  t.is(userRefCommit("refs/heads/main", place), git(work, ["rev-parse", "main"]));
});
