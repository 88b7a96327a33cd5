/**
 * What a killed push leaves behind (issue 31 item 5), with real git and real killed process groups:
 * - a forge push killed at each step between its last write and git hearing `ok` (among them: after the
 *   cache's main moved and before the database noted the push, which made the next push fail with git's bare
 *   non-fast-forward hint) is finished by the next plain `git push`, which says what was done and exits 0;
 *   every write is on the forge once and `git pull` fast-forwards.
 */
import test from "ava";
import { givenFakeForge } from "../testing/fake-forge.js";
import { forgeRemote, forgeWrites, givenForgeEnv } from "../testing/forge.js";
import { cacheGit, type GitEnv, git, gitOk, openCacheDb } from "../testing/git.js";
import { commitAll, editWorkFile, issuePath, setField, writeWorkFile } from "../testing/push.js";

/**
 * The cache's main the last push built on, which git shows as `old..` (`option old-oid`): the move of main
 * noted before that push's own. (A push's sync may move main first, so it cannot be read before the push.)
 */
function tipBeforeLastPush(env: GitEnv): string {
  const db = openCacheDb(env);
  try {
    const [, before] = db
      .prepare("SELECT commit_oid FROM tip_history ORDER BY id DESC LIMIT 2")
      .pluck()
      .all();
    return String(before);
  } finally {
    db.close();
  }
}

/** The abbreviation git prints for `oid` in `old..new` (7 characters in these small repositories). */
function short(oid: string): string {
  return oid.slice(0, 7);
}

const REPO = "acme/widgets";

/**
 * The crash points of helper/push.ts from the last write to git hearing `ok`, each with what the next plain
 * `git push` prints: before the result commit, and with it noted but main not moved, the push plans again,
 * finds every write done and makes the result; once main has moved, the commit is carried, and the push
 * says what the cut-off one wrote.
 */
const AFTER_THE_WRITES = ["result", "noted", "moved", "done"] as const;

for (const step of AFTER_THE_WRITES) {
  test(`forge: a push killed at "${step}", after its last create, is finished by the next plain git push: exit 0, each write once, pull fast-forwards`, async (t) => {
    const forge = await givenFakeForge(t);
    for (const title of ["First", "Second", "Third"])
      forge.addIssue(REPO, { title, body: `${title} body\n` });
    const env = givenForgeEnv(t, forge);
    const url = forgeRemote(forge.url, REPO);
    await gitOk(t, env, ["clone", "-q", url, "d"]);
    await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
    writeWorkFile(env, "d", "issues/new-a.md", "---\ntitle: New A\n---\nA.\n");
    writeWorkFile(env, "d", "issues/new-b.md", "---\ntitle: New B\nstatus: done\n---\nB.\n");
    editWorkFile(env, "d", issuePath(1), (text) => setField(text, "title", "First, renamed"));
    const pushed = await commitAll(t, env, "d", "Two new, one renamed");

    const from = forge.requests.length;
    const killed = await git(env, ["push"], { cwd: "d", env: { SVC_TEST_KILL_AT: step } });
    t.is(killed.code, null, `the push was not killed at ${step}: ${killed.stderr}`);
    const again = await git(env, ["push"], { cwd: "d" });
    t.is(again.code, 0, again.stderr);
    const description = `forge repository ${REPO} at ${forge.url}`;
    t.is(
      again.stderr,
      step === "result" || step === "noted"
        ? `svc: ${description}: 0 created, 0 updated, 0 deleted\nTo ${url}\n   ${short(tipBeforeLastPush(env))}..${short(pushed)}  main -> main\n`
        : `svc: ${description}: 2 created, 1 updated, 0 deleted by an earlier push of ${pushed.slice(0, 12)}, which was cut off before git heard the answer; git pull brings the server's versions and ids\n` +
            "Everything up-to-date\n",
    );

    t.deepEqual(
      forgeWrites(forge, from).map((write) => `${write.method} ${write.path} ${write.status}`),
      [
        `POST /repos/${REPO}/issues 201`,
        `POST /repos/${REPO}/issues 201`,
        `PATCH /repos/${REPO}/issues/5 200`, // New B is closed as done
        `PATCH /repos/${REPO}/issues/1 200`,
      ],
    );
    t.deepEqual(
      forge.issues(REPO).map((issue) => `${issue.number} ${issue.title} ${issue.state}`),
      ["1 First, renamed open", "2 Second open", "3 Third open", "4 New A open", "5 New B closed"],
    );

    const pull = await git(env, ["pull"], { cwd: "d" });
    t.is(pull.code, 0, pull.stderr);
    t.regex(pull.stdout, /Fast-forward/);
    t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n"), [
      issuePath(1),
      issuePath(2),
      issuePath(3),
      issuePath(4),
      issuePath(5),
    ]);
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
    const nothing = await git(env, ["push"], { cwd: "d" });
    t.is(nothing.code, 0, nothing.stderr);
    t.is(nothing.stderr, "Everything up-to-date\n");
    const refs = await cacheGit(env, ["for-each-ref", "refs/svc/"]);
    t.is(refs.stdout.trim(), "", "no temporary ref of the killed push is left in the cache");
  });
}
