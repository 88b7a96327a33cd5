/**
 * A bare repository in a temp folder and `git` on it with fixed identities and dates and no user config:
 * for tests that build commit objects with git's plumbing (`mktree`, `commit-tree`, `fast-import`).
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import { givenTempDir } from "./sim.js";

export const BARE_GIT_ENV = {
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

/** `git --git-dir=<repo> <args>`, its stdout. */
export function bareGit(repo: string, args: readonly string[], input?: string | Buffer): Buffer {
  return execFileSync("git", [`--git-dir=${repo}`, ...args], { env: BARE_GIT_ENV, input });
}

/** A new, empty bare repository, removed after the test. */
export function givenBareRepo(t: ExecutionContext): string {
  const repo = join(givenTempDir(t, "svc-import-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: BARE_GIT_ENV });
  return repo;
}
