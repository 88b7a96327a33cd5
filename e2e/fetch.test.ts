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
import { lastSimAuditId } from "../testing/push.js";
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

test("an issue deleted on the server leaves the working tree with a plain git pull: the listing's count of issues tells the delta, at no extra request", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(4));
  const env = givenGitEnv(t);
  const init = await svc(env, ["init", "sim::demo", "d", "--origin", sim.url]);
  t.is(init.code, 0, init.stderr);
  const deleted = join(env.dir, "d", "issues", "0002.md");
  t.true(existsSync(deleted));

  await deleteIssue(sim.url, "demo", 2);
  const before = lastAuditId(env);
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.false(existsSync(deleted), "the plain pull removed the deleted issue");
  t.is(await gitOk(t, env, ["diff", "--name-status", "HEAD@{1}", "HEAD"], { cwd: "d" }), "D\tissues/0002.md");
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  const syncs = auditRows(env, before).filter((row) => row.op === "sync");
  t.like(syncs[0]?.detail, { full: false, serverCount: 3, cacheCount: 4 });
  t.like(syncs[1]?.detail, { full: true, deleted: 1 });
  t.is(syncs.length, 2, JSON.stringify(syncs));

  // Nothing deleted: a fetch is still one request, and says nothing about deletions; the issue listing's
  // X-Svc-Comments-State says the comments are as they were, so they are not listed (issue 34).
  const asked = lastSimAuditId(sim);
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  t.is(fetch.stderr, "");
  t.deepEqual(
    sim.store
      .auditRows()
      .filter((row) => row.id > asked)
      .map((row) => `${row.method} ${row.path.split("?")[0]}`),
    ["GET /projects/demo/issues"],
  );

  // svc sync --reconcile lists everything at any time.
  const reconcile = await svc(env, ["sync", "--reconcile", "d"]);
  t.is(reconcile.code, 0, reconcile.stderr);
  t.regex(reconcile.stderr, /full sync: 0 changed, 0 removed/);
});
