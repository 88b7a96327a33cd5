/**
 * The readers of git/remote-output.ts against real git (a bare "remote" and two bare "local" repositories in
 * a temp folder, no user config): `git push --porcelain` for a new branch, a fast-forward, a non-fast-forward,
 * a tip the pusher lacks (fetch first) and a hook that declines; `git ls-remote` for a branch, an absent one
 * and a peeled tag. Then recorded lines for what real git cannot be made to print here (another ref's line).
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { SCRATCH_GIT_ENV } from "../testing/git.js";
import { givenTempDir } from "../testing/sim.js";
import { gitOutcome } from "./plumbing.js";
import { parseLsRemote, parsePushPorcelain } from "./remote-output.js";

const ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  HOME: SCRATCH_GIT_ENV.HOME as string,
  XDG_CONFIG_HOME: SCRATCH_GIT_ENV.XDG_CONFIG_HOME as string,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@x",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@x",
  GIT_AUTHOR_DATE: "@1700000000 +0000",
  GIT_COMMITTER_DATE: "@1700000000 +0000",
};

/** `git --git-dir=<repo> <args>` with no user config; its outcome, whatever the exit code. */
async function git(repo: string, args: readonly string[]) {
  const outcome = await gitOutcome(repo, args, { env: ENV });
  return { ...outcome, stdout: outcome.stdout.toString("utf8") };
}

async function givenRepos(t: ExecutionContext) {
  const dir = givenTempDir(t, "svc-remote-output-");
  const [remote, ours, theirs] = ["remote.git", "ours.git", "theirs.git"].map((name) => join(dir, name));
  for (const repo of [remote, ours, theirs] as string[]) await git(repo, ["init", "--quiet", "--bare", repo]);
  return { remote: remote as string, ours: ours as string, theirs: theirs as string };
}

/** A commit on `parents` with an empty tree and `message`, in `repo`. */
async function commit(repo: string, message: string, ...parents: string[]): Promise<string> {
  const tree = (await git(repo, ["mktree"])).stdout.trim();
  const args = ["commit-tree", tree, "-m", message, ...parents.flatMap((parent) => ["-p", parent])];
  return (await git(repo, args)).stdout.trim();
}

const MAIN = "refs/heads/main";

test("parsePushPorcelain reads real git: new branch and fast-forward pushed, non-fast-forward and fetch first moved, a declining hook refused", async (t) => {
  const { remote, ours, theirs } = await givenRepos(t);
  const push = async (repo: string, oid: string) =>
    parsePushPorcelain((await git(repo, ["push", "--porcelain", remote, `${oid}:${MAIN}`])).stdout, MAIN);

  const first = await commit(ours, "first");
  t.deepEqual(await push(ours, first), { kind: "pushed" }, "a new branch");
  const second = await commit(ours, "second", first);
  t.deepEqual(await push(ours, second), { kind: "pushed" }, "a fast-forward");
  const sideways = await commit(ours, "sideways", first);
  t.deepEqual(await push(ours, sideways), { kind: "moved", reason: "non-fast-forward" });

  // Another writer moves the branch to a commit `ours` has never seen.
  await git(theirs, ["fetch", "--quiet", remote, `${MAIN}:${MAIN}`]);
  t.deepEqual(await push(theirs, await commit(theirs, "theirs", second)), { kind: "pushed" });
  t.deepEqual(await push(ours, await commit(ours, "third", second)), {
    kind: "moved",
    reason: "fetch first",
  });

  writeFileSync(join(remote, "hooks", "pre-receive"), "#!/bin/sh\necho frozen >&2\nexit 1\n");
  chmodSync(join(remote, "hooks", "pre-receive"), 0o755);
  const tip = (await git(remote, ["rev-parse", MAIN])).stdout.trim();
  t.deepEqual(await push(theirs, await commit(theirs, "declined", tip)), {
    kind: "refused",
    reason: "[remote rejected] (pre-receive hook declined)",
  });
});

test("parseLsRemote reads real git: a branch, an absent branch, a tag and its peeled commit", async (t) => {
  const { remote, ours } = await givenRepos(t);
  const first = await commit(ours, "first");
  await git(ours, ["tag", "-a", "v1", "-m", "v1", first]);
  await git(ours, ["push", "--quiet", remote, `${first}:${MAIN}`, "refs/tags/v1"]);
  const tag = (await git(ours, ["rev-parse", "refs/tags/v1"])).stdout.trim();

  const branch = parseLsRemote((await git(ours, ["ls-remote", remote, MAIN])).stdout);
  t.deepEqual([...branch], [[MAIN, first]]);
  t.deepEqual(parseLsRemote((await git(ours, ["ls-remote", remote, "refs/heads/absent"])).stdout), new Map());
  const all = parseLsRemote((await git(ours, ["ls-remote", remote])).stdout);
  t.is(all.get("refs/tags/v1"), tag);
  t.is(all.get("refs/tags/v1^{}"), first);
  t.is(all.get(MAIN), first);
});

test("recorded: another ref's line is not this one's, no line is a refusal with no reason, a SHA-256 id is left out", (t) => {
  const oid = "a".repeat(40);
  t.deepEqual(parsePushPorcelain(`!\tHEAD:refs/heads/xmain\t[rejected] (fetch first)\n`, MAIN), {
    kind: "refused",
    reason: "",
  });
  t.deepEqual(parsePushPorcelain("", MAIN), { kind: "refused", reason: "" });
  t.deepEqual(parsePushPorcelain(`To ../m.git\n!\tHEAD:${MAIN}\t[rejected] (stale info)\nDone\n`, MAIN), {
    kind: "moved",
    reason: "stale info",
  });
  t.deepEqual(
    parseLsRemote(`${"b".repeat(64)}\t${MAIN}\n${oid}\trefs/heads/x\n`),
    new Map([["refs/heads/x", oid]]),
  );
});
