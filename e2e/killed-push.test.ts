/**
 * What a killed push leaves behind (issue 31 item 5), with real git and real killed process groups:
 * - git killed while it moves `refs/svc/origin/main` after the helper's `ok` leaves
 *   `.git/refs/svc/origin/main.lock`; `svc doctor` names it with a fix that works as printed, and the next
 *   push removes it and says so, instead of git's "cannot lock ref" at every push from then on;
 * - a forge push killed at each step between its last write and git hearing `ok` (among them: after the
 *   cache's main moved and before the database noted the push, which made the next push fail with git's bare
 *   non-fast-forward hint) is finished by the next plain `git push`, which says what was done and exits 0;
 *   every write is on the forge once and `git pull` fast-forwards;
 * - a push whose copy into the cache is git's (more new objects than git/copy.ts takes), killed once git
 *   stored it, leaves its temporary refs: the next push removes them and writes the change once.
 */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { MAX_COPY } from "../git/copy.js";
import { givenFakeForge } from "../testing/fake-forge.js";
import { forgeRemote, forgeWrites, givenForgeEnv } from "../testing/forge.js";
import {
  cacheGit,
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  manyIssues,
  openCacheDb,
  run,
  svc,
} from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  givenClone,
  issueOnServer,
  issuePath,
  lastSimAuditId,
  readWorkFile,
  setField,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

interface DoctorCheck {
  readonly id: string;
  readonly status: string;
  readonly message: string;
  readonly fix: string | null;
}

async function doctorCheck(t: ExecutionContext, env: GitEnv, id: string): Promise<DoctorCheck> {
  const result = await svc(env, ["doctor", "--json", "--offline", "d"]);
  const found = (JSON.parse(result.stdout) as { checks: DoctorCheck[] }).checks.find(
    (item) => item.id === id,
  );
  if (!found) throw new Error(`no check ${id}: ${result.stdout}`);
  t.log(`${found.status} ${found.id}: ${found.message}`);
  return found;
}

/**
 * A reference-transaction hook (git >= 2.28) in `d` that kills its git's whole process group (git push
 * and the helper) when git has locked `refs/svc/origin/main` and written the new value into the lock, and
 * before git renames it: the instant a `kill -9` leaves the lock behind. Returns its path.
 */
function givenKillAtPrivateRefUpdate(env: GitEnv): string {
  const hook = join(env.dir, "d", ".git", "hooks", "reference-transaction");
  writeFileSync(
    hook,
    '#!/bin/sh\n[ "$1" = prepared ] || exit 0\ngrep -q " refs/svc/origin/main$" && kill -9 0\nexit 0\n',
  );
  chmodSync(hook, 0o755);
  return hook;
}

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

/**
 * A clone `d` of a three-issue sim project whose push of an edit of issue 1 was killed while git moved
 * `refs/svc/origin/main` after the helper's `ok`: the push is done on the server, the lock is left.
 */
async function givenLockLeftByKilledPush(t: ExecutionContext) {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const env = givenGitEnv(t);
  await givenClone(t, env, sim.url, "demo", "d");
  const hook = givenKillAtPrivateRefUpdate(env);
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "title", "One, edited"));
  const pushed = await commitAll(t, env, "d", "Edit one");
  const killed = await git(env, ["push"], { cwd: "d" });
  t.is(killed.code, null, `the push was not killed: ${killed.stderr}`);
  rmSync(hook);
  const lock = join(env.dir, "d", ".git", "refs", "svc", "origin", "main.lock");
  t.is(readFileSync(lock, "utf8"), `${pushed}\n`, "git left the lock holding the pushed commit");
  t.is((await issueOnServer(sim.url, "demo", 1)).frontmatter.title, "One, edited", "the push landed");
  return { sim, env, lock };
}

test("a lock git left when a push was killed as it moved refs/svc/origin/main: the next push removes it, says so, and git updates the ref", async (t) => {
  const { sim, env, lock } = await givenLockLeftByKilledPush(t);
  const doctor = await doctorCheck(t, env, "ref-locks");
  t.is(doctor.status, "fail");
  t.is(doctor.fix, "rm -f d/.git/refs/svc/origin/main.lock");

  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", "Two, edited"));
  const pushed = await commitAll(t, env, "d", "Edit two");
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.is(
    push.stderr,
    `svc: sim project demo at ${sim.url}: 0 created, 1 updated, 0 deleted; git pull brings the server's versions and ids\n` +
      `svc: removed ${lock}: a git killed while it updated refs/svc/origin/main left it, and git refuses to update that ref while it is there\n` +
      `To svc::${sim.url}/projects/demo\n` +
      `   ${short(tipBeforeLastPush(env))}..${short(pushed)}  main -> main\n`,
  );
  t.false(existsSync(lock));
  t.is(await gitOk(t, env, ["rev-parse", "refs/svc/origin/main"], { cwd: "d" }), pushed);
  t.deepEqual(
    simWrites(sim, before).map((write) => `${write.method} ${write.path}`),
    ["PATCH /projects/demo/issues/2"],
  );
  t.is((await doctorCheck(t, env, "ref-locks")).status, "ok");

  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.regex(pull.stdout, /Fast-forward/);
  t.regex(readWorkFile(env, "d", issuePath(1)), /^title: "One, edited"$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("svc doctor names the lock a killed push left; its fix, run as printed, removes it, and the next push prints no git error", async (t) => {
  const { sim, env, lock } = await givenLockLeftByKilledPush(t);
  const doctor = await doctorCheck(t, env, "ref-locks");
  t.is(
    doctor.message,
    "a git that was killed left d/.git/refs/svc/origin/main.lock, and no git is updating refs/svc/origin/main: " +
      'git refuses to update that ref while the file is there ("cannot lock ref")',
  );
  const fixed = await run(env, "sh", ["-c", doctor.fix ?? "false"]);
  t.is(fixed.code, 0, fixed.stderr);
  t.false(existsSync(lock));
  t.is((await doctorCheck(t, env, "ref-locks")).status, "ok");

  editWorkFile(env, "d", issuePath(3), (text) => setField(text, "title", "Three, edited"));
  await commitAll(t, env, "d", "Edit three");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, new RegExp(`^svc: sim project demo at ${sim.url}: 0 created, 1 updated, 0 deleted; `));
  t.false(push.stderr.includes("cannot lock ref"), push.stderr);
  t.false(push.stderr.includes("svc: removed"), push.stderr);
});

test('a push whose copy is left to git push (more new objects than the in-process copy takes), killed at "copy" once git stored it: the next push removes its refs and writes the edit once', async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const env = givenGitEnv(t);
  await givenClone(t, env, sim.url, "demo", "d");
  // Each commit brings four new objects (a blob, two trees, itself): more of them than MAX_COPY in all.
  const commits = Math.ceil(MAX_COPY / 4) + 5;
  const edit = `sed -i "s/^title: .*/title: Edit $i/" ${issuePath(1)} && git commit -q -am "Edit $i"`;
  const edits = await run(env, "sh", ["-c", `for i in $(seq ${commits}); do ${edit} || exit 1; done`], {
    cwd: "d",
  });
  t.is(edits.code, 0, edits.stderr);
  const pushed = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d" });
  const before = lastSimAuditId(sim);

  const killed = await git(env, ["push"], { cwd: "d", env: { SVC_TEST_KILL_AT: "copy" } });
  t.is(killed.code, null, `the push was not killed at copy: ${killed.stderr}`);
  t.true(killed.stderr.includes("svc: test crash point copy#1\n"), killed.stderr);
  // git's copy, finished: the killed push's incoming ref holds the pushed commit; nothing was written.
  const incoming = await cacheGit(env, ["for-each-ref", "--format=%(objectname)", "refs/svc/incoming/"]);
  t.is(incoming.stdout.trim(), pushed);
  t.deepEqual(simWrites(sim, before), []);

  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => `${write.method} ${write.path} ${write.status}`),
    ["PATCH /projects/demo/issues/1 200"],
  );
  t.is((await issueOnServer(sim.url, "demo", 1)).frontmatter.title, `Edit ${commits}`);
  const refs = await cacheGit(env, ["for-each-ref", "refs/svc/"]);
  t.is(refs.stdout.trim(), "", "no temporary ref of the killed push is left in the cache");
});

const REPO = "acme/widgets";

/**
 * The crash points (helper/push-crash.ts) from the last write to git hearing `ok`, each with what the next plain
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
    t.true(killed.stderr.includes(`svc: test crash point ${step}#1\n`), killed.stderr);
    const again = await git(env, ["push"], { cwd: "d" });
    t.is(again.code, 0, again.stderr);
    const description = `forge repository ${REPO} at ${forge.url}`;
    t.is(
      again.stderr,
      step === "result" || step === "noted"
        ? `svc: ${description}: 0 created, 0 updated, 0 closed\nTo ${url}\n   ${short(tipBeforeLastPush(env))}..${short(pushed)}  main -> main\n`
        : `svc: ${description}: 2 created, 1 updated, 0 closed by an earlier push of ${pushed.slice(0, 12)}, which was cut off before git heard the answer; git pull brings the server's versions and ids\n` +
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
