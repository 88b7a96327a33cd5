/**
 * git on the mirror and on the run's temporary repositories, through git/plumbing.ts (the scrubbed
 * environment). The temporary repositories are made without templates and with `core.hooksPath` pointing
 * at an empty folder: no hook of the user's runs in them. Reading git's output is git/'s
 * (git/remote-output.ts, git/objects.ts).
 */
import { join } from "node:path";
import { SvcError, shellWord, UserFacingError } from "../../core/errors.js";
import { type Commit, parseCommit, parseCommitObject } from "../../git/objects.js";
import { gitOutcome, runGit } from "../../git/plumbing.js";
import { parseLsRemote } from "../../git/remote-output.js";

/** `git <args>` on `repo` (scrubbed environment); resolves with its exit code and output, never rejects on a non-zero exit. */
export async function gitRun(
  repo: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await gitOutcome(repo, args);
  return { code, stdout: stdout.toString("utf8"), stderr };
}

/** git's own lines, shortened, for a message. */
export function gitSaid(stderr: string): string {
  const text = stderr
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("hint:"))
    .join(" / ");
  return text === "" ? "git printed nothing" : text.slice(0, 1000);
}

/** A bare repository in `dir` with no template (no hooks) and hooks looked up in an empty folder. */
export async function makeScratchRepo(dir: string): Promise<void> {
  await runGit(dir, ["init", "--quiet", "--bare", "--template=", dir]);
  await runGit(dir, ["config", "core.hooksPath", join(dir, "no-hooks")]);
  await runGit(dir, ["config", "gc.auto", "0"]);
}

/** The commit's tree and committer time (seconds), from its raw object. */
export function commitFacts(raw: Buffer | undefined, oid: string): { tree: string; time: number } {
  let commit: Commit | undefined;
  try {
    commit = raw === undefined ? undefined : parseCommit(raw);
  } catch {
    commit = undefined;
  }
  // A commit without a committer line has no time to take (git would read 0).
  if (commit?.time === undefined || !parseCommitObject(raw as Buffer).committer)
    throw new SvcError("SVC_STORE", `commit ${oid} could not be read`);
  return { tree: commit.tree, time: commit.time };
}

/** The branch tip `git ls-remote` reports, or undefined when the mirror has no such branch. */
export async function remoteTip(
  repo: string,
  mirror: string,
  ref: string,
  rerun: string,
): Promise<string | undefined> {
  const listed = await gitRun(repo, ["ls-remote", mirror, ref]);
  if (listed.code !== 0) {
    throw new UserFacingError(
      "SVC_USAGE",
      `cannot read the mirror ${mirror}: git ls-remote exited ${listed.code} (${gitSaid(listed.stderr)}). ` +
        `Check the URL and your access until \`git ls-remote ${shellWord(mirror)}\` works from here ` +
        `(a new mirror on disk: git init --bare <path>), then run: ${rerun}`,
    );
  }
  return parseLsRemote(listed.stdout).get(ref);
}

/** Fetches `ref` of the mirror (its tip commit and tree only) into `repo` as `into`; returns the commit. */
export async function fetchTip(repo: string, mirror: string, ref: string, into: string): Promise<string> {
  await runGit(repo, ["fetch", "--quiet", "--no-tags", "--depth=1", mirror, `${ref}:${into}`]);
  return (await runGit(repo, ["rev-parse", "--verify", `${into}^{commit}`])).stdout.toString("utf8").trim();
}
