/**
 * Later fetches (issue 3): a server-side change arrives with `git pull` as a change of exactly that file, a
 * fetch with nothing new writes no cache commit, commit ids are the same in two caches, two working trees of
 * one cache fetch at the same time, and `svc sync [--reconcile]` brings deletions only with a full listing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import {
  auditRows,
  cacheGit,
  deleteIssue,
  expectedIssueFile,
  git,
  gitOk,
  givenGitEnv,
  lastAuditId,
  manyIssues,
  patchIssue,
  svc,
  svcUrl,
  withCacheRoot,
} from "../testing/git.js";
import { givenProject, givenSim } from "../testing/sim.js";

async function cacheCommitCount(env: Parameters<typeof cacheGit>[0]): Promise<number> {
  const result = await cacheGit(env, ["rev-list", "--count", "main"]);
  if (result.code !== 0) throw new Error(result.stderr);
  return Number(result.stdout.trim());
}

test("git pull after a PATCH brings exactly that file; a fetch with nothing new writes no cache commit", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(6));
  const env = givenGitEnv(t);
  await gitOk(t, env, ["clone", "--filter=blob:none", svcUrl(sim.url, "demo"), "d"]);
  // An opt-in svc.syncInterval would let fetches skip the server; 0 (the default) syncs on every fetch.
  await gitOk(t, env, ["config", "svc.syncInterval", "0"], { cwd: "d" });
  t.is(await cacheCommitCount(env), 1);

  await patchIssue(sim.url, "demo", 3, { status: "done", body: "Fixed on the server.\n" });
  const pull = await git(env, ["pull", "--ff-only"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.is(await gitOk(t, env, ["diff", "--name-only", "HEAD@{1}", "HEAD"], { cwd: "d" }), "issues/0003.md");
  t.regex(await gitOk(t, env, ["diff", "--stat", "HEAD@{1}", "HEAD"], { cwd: "d" }), /1 file changed/);
  t.is(
    readFileSync(join(env.dir, "d", "issues", "0003.md"), "utf8"),
    await expectedIssueFile(sim.url, "demo", 3),
  );
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  t.is(await cacheCommitCount(env), 2);
  const head = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d" });
  t.is((await cacheGit(env, ["rev-parse", "main"])).stdout.trim(), head);

  const before = lastAuditId(env);
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  t.is(await cacheCommitCount(env), 2, "a sync that changes nothing writes no commit");
  const syncs = auditRows(env, before).filter((row) => row.op === "sync");
  t.is(syncs.length, 1, "the fetch did sync (svc.syncInterval 0)");
  t.is(syncs[0]?.detail.commit, null);
  t.is(syncs[0]?.detail.changed, 0);
  t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), head);
});

test("two caches built from the same server states have the same commit ids", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(5));
  const first = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  const second = withCacheRoot(first, join(first.home, "other-cache"));
  const url = svcUrl(sim.url, "demo");

  await gitOk(t, first, ["clone", "--filter=blob:none", url, "a"]);
  await gitOk(t, second, ["clone", "--filter=blob:none", url, "b"]);
  t.not(first.cacheRoot, second.cacheRoot);
  const tipA = await gitOk(t, first, ["rev-parse", "origin/main"], { cwd: "a" });
  t.is(await gitOk(t, second, ["rev-parse", "origin/main"], { cwd: "b" }), tipA);

  await patchIssue(sim.url, "demo", 2, { title: "Renamed on the server" });
  await givenProject(sim.url, "demo", [{ title: "Added on the server" }]);
  await gitOk(t, first, ["fetch"], { cwd: "a" });
  await gitOk(t, second, ["fetch"], { cwd: "b" });
  const nextA = await gitOk(t, first, ["rev-parse", "origin/main"], { cwd: "a" });
  t.not(nextA, tipA);
  t.is(await gitOk(t, second, ["rev-parse", "origin/main"], { cwd: "b" }), nextA);
  t.is(await gitOk(t, first, ["rev-parse", "origin/main^"], { cwd: "a" }), tipA);
  const lsRemote = await git(second, ["ls-remote", url, "refs/heads/main"], { cwd: "b" });
  t.is(lsRemote.code, 0, lsRemote.stderr);
  t.is(lsRemote.stdout, `${nextA}\trefs/heads/main\n`);
});

test("two working trees of one cache pull at the same time and end at the same commit", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(8));
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  const url = svcUrl(sim.url, "demo");
  await gitOk(t, env, ["clone", "--filter=blob:none", url, "w1"]);
  await gitOk(t, env, ["clone", "--filter=blob:none", url, "w2"]);

  await patchIssue(sim.url, "demo", 4, { status: "in_review", labels: ["concurrent"] });
  await patchIssue(sim.url, "demo", 7, { body: "Changed body.\n" });
  const [one, two] = await Promise.all([
    git(env, ["pull", "--ff-only"], { cwd: "w1" }),
    git(env, ["pull", "--ff-only"], { cwd: "w2" }),
  ]);
  t.is(one.code, 0, one.stderr);
  t.is(two.code, 0, two.stderr);
  const head1 = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "w1" });
  t.is(await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "w2" }), head1);
  t.is((await cacheGit(env, ["rev-parse", "main"])).stdout.trim(), head1);
  t.is(await cacheCommitCount(env), 2, "one sync commit for one server change, not one per working tree");
  for (const dir of ["w1", "w2"]) {
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: dir }), "");
    t.is(
      await gitOk(t, env, ["diff", "--name-only", "HEAD@{1}", "HEAD"], { cwd: dir }),
      "issues/0004.md\nissues/0007.md",
    );
    t.is(
      readFileSync(join(env.dir, dir, "issues", "0007.md"), "utf8"),
      await expectedIssueFile(sim.url, "demo", 7),
    );
  }
});

test("a server-side delete reaches the working tree with svc sync --reconcile, not with a delta sync", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(4));
  const env = givenGitEnv(t);
  const init = await svc(env, ["init", "sim::demo", "d", "--origin", sim.url]);
  t.is(init.code, 0, init.stderr);
  const deleted = join(env.dir, "d", "issues", "0002.md");
  t.true(existsSync(deleted));

  await deleteIssue(sim.url, "demo", 2);
  const delta = await svc(env, ["sync", "d"]);
  t.is(delta.code, 0, delta.stderr);
  t.regex(delta.stderr, /delta sync: 0 changed, 0 removed/);
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.true(existsSync(deleted), "a delta listing cannot tell a deleted issue from an unchanged one");

  const before = lastAuditId(env);
  const reconcile = await svc(env, ["sync", "--reconcile", "d"]);
  t.is(reconcile.code, 0, reconcile.stderr);
  t.regex(reconcile.stderr, /full sync: 0 changed, 1 removed/);
  const syncs = auditRows(env, before).filter((row) => row.op === "sync");
  t.true(
    syncs.some((row) => row.detail.full === true && row.detail.deleted === 1),
    JSON.stringify(syncs),
  );
  t.is(await gitOk(t, env, ["rev-parse", "--abbrev-ref", "@{upstream}"], { cwd: "d" }), "origin/main");
  const pullAgain = await git(env, ["pull"], { cwd: "d" });
  t.is(pullAgain.code, 0, pullAgain.stderr);
  t.false(existsSync(deleted));
  t.is(await gitOk(t, env, ["diff", "--name-status", "HEAD@{1}", "HEAD"], { cwd: "d" }), "D\tissues/0002.md");
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});
