/**
 * Concurrent writers (issue 4, DESIGN.md §4): a push based on a stale version of a record is rejected with
 * git's own `fetch first` and writes nothing; `git pull` turns it into an ordinary merge (a conflict in that
 * file when the same lines changed); staleness is judged per record, so a clone behind on other records
 * still pushes; with `svc.autoMerge` edits of different fields merge without a pull.
 */
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import {
  cacheGit,
  expectedIssueFile,
  git,
  gitOk,
  givenGitEnv,
  manyIssues,
  patchIssue,
  withCacheRoot,
} from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  givenClone,
  givenSimClone,
  issueOnServer,
  issuePath,
  lastSimAuditId,
  readWorkFile,
  setField,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

/** git's line for a push the helper answered `error refs/heads/main fetch first`, spaces and all. */
const FETCH_FIRST = "! [rejected]        main -> main (fetch first)";

/** A simulator project "demo" of `count` issues, and two clones of it, "a" and "b", each with its own cache. */
async function givenTwoClones(t: ExecutionContext, count: number) {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(count));
  const envA = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  const envB = withCacheRoot(envA, join(envA.home, "cache-b"));
  await givenClone(t, envA, sim.url, "demo", "a");
  await givenClone(t, envB, sim.url, "demo", "b");
  return { sim, envA, envB };
}
test("the second of two clones editing the same lines is rejected (fetch first); pull conflicts; the resolution is pushed", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(3), { env: { SVC_SYNC_INTERVAL: "0" }, dir: "a" });
  await givenClone(t, env, sim.url, "demo", "b");
  const path = issuePath(2);

  editWorkFile(env, "a", path, (text) => setField(text, "status", "done"));
  await commitAll(t, env, "a", "Done in a");
  await gitOk(t, env, ["push"], { cwd: "a" });
  const serverAfterA = await issueOnServer(sim.url, "demo", 2);
  t.is(serverAfterA.frontmatter.version, 2);

  const before = lastSimAuditId(sim);
  editWorkFile(env, "b", path, (text) => setField(text, "status", "wont_fix"));
  await commitAll(t, env, "b", "Won't fix in b");
  const rejected = await git(env, ["push"], { cwd: "b" });
  t.is(rejected.code, 1, rejected.stderr);
  t.true(rejected.stderr.includes(FETCH_FIRST), rejected.stderr);
  t.regex(rejected.stderr, /issues\/0002\.md \(record 2\): version 2 on the server, your base has 1/);
  t.deepEqual(simWrites(sim, before), []);
  t.deepEqual(await issueOnServer(sim.url, "demo", 2), serverAfterA);

  const pull = await git(env, ["pull", "--no-rebase"], { cwd: "b" });
  t.not(pull.code, 0);
  t.regex(pull.stdout, /CONFLICT \(content\): Merge conflict in issues\/0002\.md/);
  const conflicted = readWorkFile(env, "b", path);
  t.regex(conflicted, /^<<<<<<< HEAD\nstatus: wont_fix\n=======\nstatus: done\n>>>>>>> [0-9a-f]+$/m);

  const resolved = (await expectedIssueFile(sim.url, "demo", 2))
    .replace("status: done", "status: in_review")
    .replace("Body 2\n", "Body 2\n\nBoth clones looked at it.\n");
  writeWorkFile(env, "b", path, resolved);
  await gitOk(t, env, ["add", path], { cwd: "b" });
  await gitOk(t, env, ["commit", "-q", "--no-edit"], { cwd: "b" });
  const push = await git(env, ["push"], { cwd: "b" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path, write.body]),
    [
      [
        "PATCH",
        "/projects/demo/issues/2",
        { status: "in_review", body: "Body 2\n\nBoth clones looked at it.\n" },
      ],
    ],
  );
  const server = await issueOnServer(sim.url, "demo", 2);
  t.is(server.frontmatter.status, "in_review");
  t.is(server.body, "Body 2\n\nBoth clones looked at it.\n");
  t.is(server.frontmatter.version, 3);

  for (const dir of ["a", "b"]) {
    const after = await git(env, ["pull", "--ff-only"], { cwd: dir });
    t.is(after.code, 0, after.stderr);
    t.is(readWorkFile(env, dir, path), await expectedIssueFile(sim.url, "demo", 2), dir);
  }
});

test("two clones (two caches) editing different lines: pull merges cleanly and the push carries both", async (t) => {
  const { sim, envA, envB } = await givenTwoClones(t, 3);
  const path = issuePath(3);

  editWorkFile(envA, "a", path, (text) => setField(text, "title", '"Title from a"'));
  await commitAll(t, envA, "a", "Retitle in a");
  await gitOk(t, envA, ["push"], { cwd: "a" });

  const before = lastSimAuditId(sim);
  editWorkFile(envB, "b", path, (text) => text.replace("Body 3\n", "Body 3, rewritten in b.\n"));
  await commitAll(t, envB, "b", "Rewrite in b");
  const rejected = await git(envB, ["push"], { cwd: "b" });
  t.is(rejected.code, 1, rejected.stderr);
  t.true(rejected.stderr.includes(FETCH_FIRST), rejected.stderr);
  t.deepEqual(simWrites(sim, before), []);

  const pull = await git(envB, ["pull", "--no-rebase"], { cwd: "b" });
  t.is(pull.code, 0, pull.stdout + pull.stderr);
  t.notRegex(readWorkFile(envB, "b", path), /<<<<<<<|>>>>>>>/);
  const push = await git(envB, ["push"], { cwd: "b" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path, write.body]),
    [["PATCH", "/projects/demo/issues/3", { body: "Body 3, rewritten in b.\n" }]],
  );
  const server = await issueOnServer(sim.url, "demo", 3);
  t.is(server.frontmatter.title, "Title from a");
  t.is(server.body, "Body 3, rewritten in b.\n");
  t.is(server.frontmatter.version, 3);
  await gitOk(t, envB, ["pull", "--ff-only"], { cwd: "b" });
  t.is(readWorkFile(envB, "b", path), await expectedIssueFile(sim.url, "demo", 3));
});

test("a delete based on a stale version is rejected; an edit of an issue deleted on the server is refused before any write", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(3), { env: { SVC_SYNC_INTERVAL: "0" } });
  await patchIssue(sim.url, "demo", 1, { status: "done" });
  await fetch(`${sim.url}/projects/demo/issues/2`, { method: "DELETE" });

  const before = lastSimAuditId(sim);
  await gitOk(t, env, ["rm", "-q", issuePath(1)], { cwd: "d" });
  await commitAll(t, env, "d", "Remove 1");
  const staleDelete = await git(env, ["push"], { cwd: "d" });
  t.is(staleDelete.code, 1, staleDelete.stderr);
  t.true(staleDelete.stderr.includes(FETCH_FIRST), staleDelete.stderr);
  t.regex(staleDelete.stderr, /issues\/0001\.md \(record 1\): version 2 on the server, your base has 1/);
  t.deepEqual(simWrites(sim, before), []);
  t.is((await issueOnServer(sim.url, "demo", 1)).frontmatter.status, "done");

  await gitOk(t, env, ["reset", "-q", "--hard", "origin/main"], { cwd: "d" });
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Edit 2");
  const gone = await git(env, ["push"], { cwd: "d" });
  t.is(gone.code, 1, gone.stderr);
  t.true(gone.stderr.includes(FETCH_FIRST), gone.stderr);
  // The simulator's listing says how many issues it holds, so the push's sync sees the deletion before any
  // write (issue 31): nothing is sent.
  t.regex(gone.stderr, /^ {2}issues\/0002\.md \(record 2\): deleted on the server$/m);
  t.deepEqual(simWrites(sim, before), []);
});

test("a clone behind the server on other issues pushes its own edit; pull then fast-forwards to both", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(4), { env: { SVC_SYNC_INTERVAL: "0" } });
  await patchIssue(sim.url, "demo", 3, { title: "Changed on the server" });

  const before = lastSimAuditId(sim);
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "status", "done"));
  const mine = await commitAll(t, env, "d", "Done");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(simWrites(sim, before), [
    { method: "PATCH", path: "/projects/demo/issues/2", status: 200, body: { status: "done" } },
  ]);
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.regex(pull.stdout, /Fast-forward/);
  t.is((await git(env, ["merge-base", "--is-ancestor", mine, "HEAD"], { cwd: "d" })).code, 0);
  for (const id of [2, 3]) {
    t.is(readWorkFile(env, "d", issuePath(id)), await expectedIssueFile(sim.url, "demo", id));
  }
  t.regex(readWorkFile(env, "d", issuePath(3)), /^title: "Changed on the server"$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("with svc.autoMerge, concurrent edits of different fields both reach the server without a pull", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(3), { env: { SVC_SYNC_INTERVAL: "0" }, dir: "a" });
  await givenClone(t, env, sim.url, "demo", "b");
  await gitOk(t, env, ["config", "svc.autoMerge", "true"], { cwd: "b" });
  const path = issuePath(2);

  editWorkFile(env, "a", path, (text) => setField(text, "title", '"Title from a"'));
  await commitAll(t, env, "a", "Retitle");
  await gitOk(t, env, ["push"], { cwd: "a" });

  const before = lastSimAuditId(sim);
  editWorkFile(env, "b", path, (text) => setField(text, "status", "in_progress"));
  await commitAll(t, env, "b", "Start");
  const push = await git(env, ["push"], { cwd: "b" });
  t.is(push.code, 0, push.stderr);
  t.regex(
    push.stderr,
    /issues\/0002\.md changed on the server too; the edits merge cleanly \(svc\.autoMerge\)/,
  );
  t.deepEqual(simWrites(sim, before), [
    { method: "PATCH", path: "/projects/demo/issues/2", status: 200, body: { status: "in_progress" } },
  ]);
  const server = await issueOnServer(sim.url, "demo", 2);
  t.is(server.frontmatter.title, "Title from a");
  t.is(server.frontmatter.status, "in_progress");
  t.is(server.frontmatter.version, 3);

  const pull = await git(env, ["pull"], { cwd: "b" });
  t.is(pull.code, 0, pull.stderr);
  t.regex(pull.stdout, /Fast-forward/);
  t.is(readWorkFile(env, "b", path), await expectedIssueFile(sim.url, "demo", 2));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "b" }), "");
});

test("with svc.autoMerge, edits of the same field still conflict: fetch first, nothing written", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { env: { SVC_SYNC_INTERVAL: "0" }, dir: "b" });
  await gitOk(t, env, ["config", "svc.autoMerge", "true"], { cwd: "b" });
  await patchIssue(sim.url, "demo", 2, { status: "done", body: "Server body.\n" });

  const before = lastSimAuditId(sim);
  editWorkFile(env, "b", issuePath(2), (text) => setField(text, "status", "wont_fix"));
  await commitAll(t, env, "b", "Won't fix");
  const push = await git(env, ["push"], { cwd: "b" });
  t.is(push.code, 1, push.stderr);
  t.true(push.stderr.includes(FETCH_FIRST), push.stderr);
  t.notRegex(push.stderr, /merge cleanly/);
  t.deepEqual(simWrites(sim, before), []);
  t.is((await issueOnServer(sim.url, "demo", 2)).frontmatter.status, "done");
});

test("working trees sharing one cache push at the same time: every pushed commit stays in main, every pull fast-forwards", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  const dirs = ["w1", "w2", "w3"];
  for (const dir of dirs) await givenClone(t, env, sim.url, "demo", dir);

  // The window is a few milliseconds wide, so a few rounds.
  for (let round = 1; round <= 4; round++) {
    const heads = await Promise.all(
      dirs.map(async (dir, i) => {
        editWorkFile(env, dir, issuePath(i + 1), (text) => setField(text, "title", `"Round ${round}"`));
        const head = await commitAll(t, env, dir, `Round ${round} in ${dir}`);
        const push = await git(env, ["push"], { cwd: dir });
        t.is(push.code, 0, `${dir}, round ${round}: ${push.stderr}`);
        return head;
      }),
    );
    for (const head of heads) {
      const contained = await cacheGit(env, ["merge-base", "--is-ancestor", head, "main"]);
      t.is(contained.code, 0, `round ${round}: the pushed ${head} is not in the cache's main`);
    }
    for (const dir of dirs) {
      const pull = await git(env, ["pull", "--ff-only"], { cwd: dir });
      t.is(pull.code, 0, `${dir}, round ${round}: ${pull.stderr}`);
    }
  }
  for (const [i, dir] of dirs.entries()) {
    const issue = await issueOnServer(sim.url, "demo", i + 1);
    t.is(issue.frontmatter.title, "Round 4");
    t.is(issue.frontmatter.version, 5);
    t.is(readWorkFile(env, dir, issuePath(i + 1)), await expectedIssueFile(sim.url, "demo", i + 1));
  }
});

// Found by the swarm (scripts/swarm): a push's result commit holds the versions its sync brought of records
// the push did not write; the next push, based on that commit, took its tokens from there and wrote the
// user's older copy over the newer version with a matching If-Match.
test("a record whose newer version a push of another record brought is refused fetch first when edited without a pull", async (t) => {
  const { sim, envA, envB } = await givenTwoClones(t, 2);

  editWorkFile(envB, "b", issuePath(1), (text) => `${text}Line from b.\n`);
  await commitAll(t, envB, "b", "Edit 1 in b");
  await gitOk(t, envB, ["push"], { cwd: "b" });
  editWorkFile(envA, "a", issuePath(2), (text) => `${text}Line from a.\n`);
  await commitAll(t, envA, "a", "Edit 2 in a");
  await gitOk(t, envA, ["push"], { cwd: "a" });

  const before = lastSimAuditId(sim);
  editWorkFile(envA, "a", issuePath(1), (text) => setField(text, "title", '"Retitled in a"'));
  await commitAll(t, envA, "a", "Edit 1 in a, without a pull");
  const rejected = await git(envA, ["push"], { cwd: "a" });
  t.is(rejected.code, 1, rejected.stderr);
  t.true(rejected.stderr.includes(FETCH_FIRST), rejected.stderr);
  t.regex(rejected.stderr, /issues\/0001\.md \(record 1\): version 2 on the server, your base has 1/);
  t.deepEqual(simWrites(sim, before), []);
  t.is((await issueOnServer(sim.url, "demo", 1)).body, "Body 1\nLine from b.\n");

  await gitOk(t, envA, ["pull", "--no-rebase", "--no-edit"], { cwd: "a" });
  await gitOk(t, envA, ["push"], { cwd: "a" });
  const merged = await issueOnServer(sim.url, "demo", 1);
  t.is(merged.frontmatter.title, "Retitled in a");
  t.is(merged.body, "Body 1\nLine from b.\n");
});

test("after a push, the same record is edited and pushed again without a pull", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { env: { SVC_SYNC_INTERVAL: "0" } });
  await patchIssue(sim.url, "demo", 2, { title: "Changed on the server" });
  for (const line of ["First line.", "Second line."]) {
    editWorkFile(env, "d", issuePath(1), (text) => `${text}${line}\n`);
    await commitAll(t, env, "d", line);
    const push = await git(env, ["push"], { cwd: "d" });
    t.is(push.code, 0, push.stderr);
  }
  t.is((await issueOnServer(sim.url, "demo", 1)).body, "Body 1\nFirst line.\nSecond line.\n");
  t.is((await issueOnServer(sim.url, "demo", 1)).frontmatter.version, 3);
});

// Found by the swarm: the same push result also lacks records its sync saw deleted; a delete of one based on
// it was refused as "not in the server state this push is based on", with no command to run.
test("a record deleted on the server, still in the clone after a push of another record: an edit is fetch first, a delete is done", async (t) => {
  const { sim, envA, envB } = await givenTwoClones(t, 3);
  await gitOk(t, envB, ["rm", "-q", issuePath(3)], { cwd: "b" });
  await commitAll(t, envB, "b", "Remove 3 in b");
  await gitOk(t, envB, ["push"], { cwd: "b" });
  // a's cache finds the deletion (a full listing); a's next push, of issue 2, holds the state without 3.
  await gitOk(t, envA, ["-c", "svc.reconcileInterval=0", "fetch"], { cwd: "a" });
  editWorkFile(envA, "a", issuePath(2), (text) => setField(text, "status", "done"));
  await commitAll(t, envA, "a", "Done 2");
  await gitOk(t, envA, ["push"], { cwd: "a" });

  const before = lastSimAuditId(sim);
  editWorkFile(envA, "a", issuePath(3), (text) => setField(text, "status", "done"));
  await commitAll(t, envA, "a", "Done 3");
  const edit = await git(envA, ["push"], { cwd: "a" });
  t.is(edit.code, 1, edit.stderr);
  t.true(edit.stderr.includes(FETCH_FIRST), edit.stderr);
  t.regex(edit.stderr, /issues\/0003\.md \(record 3\): deleted on the server/);

  await gitOk(t, envA, ["reset", "-q", "--hard", "HEAD~1"], { cwd: "a" });
  await gitOk(t, envA, ["rm", "-q", issuePath(3)], { cwd: "a" });
  await commitAll(t, envA, "a", "Remove 3 in a");
  const remove = await git(envA, ["push"], { cwd: "a" });
  t.is(remove.code, 0, remove.stderr);
  t.deepEqual(simWrites(sim, before), []);
  await gitOk(t, envA, ["pull", "--no-rebase", "--no-edit"], { cwd: "a" });
  t.deepEqual((await gitOk(t, envA, ["ls-files"], { cwd: "a" })).split("\n"), [issuePath(1), issuePath(2)]);
});
