/**
 * The cache is a cache (issue 11, item 4; DESIGN.md §3): a lost folder, a lost `repo.git`, a `cache.db`
 * that is not a database, or a lost tip object is rebuilt by the next fetch or push from a full listing,
 * continuing the history of the user's repository: one stderr line says so and why, `git pull`
 * fast-forwards, and pushes land once. Real git, a real simulator.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import {
  cacheFolder,
  cacheGit,
  deleteIssue,
  expectedIssueFile,
  type GitEnv,
  git,
  gitOk,
  manyIssues,
  missingObjects,
  patchIssue,
  type RunResult,
  SPARSE_SET,
  svc,
} from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  givenSimClone,
  issuePath,
  lastSimAuditId,
  readWorkFile,
  setField,
  simWrites,
} from "../testing/push.js";
import { givenProject, type givenSim } from "../testing/sim.js";

/** A Node stack trace: never shown for a broken cache. */
const STACK = /^\s+at .+:\d+:\d+\)?$/m;

interface Breakage {
  readonly name: string;
  /** Breaks the one cache of `env`. */
  readonly apply: (env: GitEnv) => void;
  /** The reason the rebuild line must give. */
  readonly why: RegExp;
}

const BREAKAGES: readonly Breakage[] = [
  {
    name: "the cache folder deleted",
    apply: (env) => rmSync(cacheFolder(env), { recursive: true, force: true }),
    why: /its folder is missing/,
  },
  {
    name: "repo.git deleted",
    apply: (env) => rmSync(join(cacheFolder(env), "repo.git"), { recursive: true, force: true }),
    why: /its repository repo\.git is missing/,
  },
  {
    name: "cache.db overwritten with garbage",
    apply: (env) => {
      const folder = cacheFolder(env);
      for (const name of ["cache.db-wal", "cache.db-shm"]) rmSync(join(folder, name), { force: true });
      writeFileSync(join(folder, "cache.db"), Buffer.alloc(8192, "garbage\n"));
    },
    why: /its database cache\.db is corrupt \(file is not a database\)/,
  },
  {
    name: "the tip object deleted from repo.git/objects",
    apply: (env) => {
      const repo = join(cacheFolder(env), "repo.git");
      const tip = readFileSync(join(repo, "refs", "heads", "main"), "utf8").trim();
      // A few state commits in, the tip is a loose object (packing starts after 50).
      rmSync(join(repo, "objects", tip.slice(0, 2), tip.slice(2)));
    },
    why: /its tip commit [0-9a-f]{12} is missing from repo\.git/,
  },
];

/** The stderr lines that say the cache was rebuilt. */
function rebuildLines(result: RunResult): string[] {
  return result.stderr.split("\n").filter((line) => /rebuilt/.test(line));
}

/** A project of four issues, a clone of it in `d`, and issue 2 changed on the server since. */
async function givenCloneBehindServer(t: ExecutionContext) {
  const { sim, env } = await givenSimClone(t, manyIssues(4), { env: { SVC_SYNC_INTERVAL: "0" } });
  const oldTip = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  await patchIssue(sim.url, "demo", 2, { status: "done", body: "Fixed on the server.\n" });
  return { sim, env, oldTip };
}

/** Edits the title of issue `id`, commits, pushes: the push must be one PATCH of that issue. */
async function pushTitleEdit(
  t: ExecutionContext,
  env: GitEnv,
  sim: Awaited<ReturnType<typeof givenSim>>,
  id: number,
): Promise<RunResult> {
  const before = lastSimAuditId(sim);
  editWorkFile(env, "d", issuePath(id), (text) => setField(text, "title", `"Issue ${id}, edited"`));
  await commitAll(t, env, "d", `Edit issue ${id}`);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.notRegex(push.stderr, /rejected|fetch first/);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path, write.status]),
    [["PATCH", `/projects/demo/issues/${id}`, 200]],
    "the edit is written exactly once",
  );
  return push;
}

/** `git pull` fast-forwards past `oldTip` and brings the server's change of issue 2. */
async function pullFastForwards(
  t: ExecutionContext,
  env: GitEnv,
  sim: Awaited<ReturnType<typeof givenSim>>,
  oldTip: string,
): Promise<RunResult> {
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.regex(pull.stdout, /Fast-forward/);
  t.notRegex(pull.stderr, /unrelated histories|forced update/);
  const head = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d" });
  t.not(head, oldTip);
  t.is((await git(env, ["merge-base", "--is-ancestor", oldTip, head], { cwd: "d" })).code, 0);
  t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), head);
  t.is(readWorkFile(env, "d", issuePath(2)), await expectedIssueFile(sim.url, "demo", 2));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  return pull;
}

for (const breakage of BREAKAGES) {
  test(`${breakage.name}: git pull rebuilds the cache, says why in one line, fast-forwards; a push lands once`, async (t) => {
    const { sim, env, oldTip } = await givenCloneBehindServer(t);
    breakage.apply(env);

    const pull = await pullFastForwards(t, env, sim, oldTip);
    const lines = rebuildLines(pull);
    t.is(lines.length, 1, pull.stderr);
    t.regex(lines[0] ?? "", /^svc: rebuilt the cache /);
    t.regex(lines[0] ?? "", breakage.why);
    t.regex(lines[0] ?? "", new RegExp(`continues your origin/main \\(${oldTip.slice(0, 7)}\\)`));
    t.notRegex(pull.stderr, STACK);

    const push = await pushTitleEdit(t, env, sim, 3);
    t.deepEqual(rebuildLines(push), []);
    const again = await git(env, ["pull"], { cwd: "d" });
    t.is(again.code, 0, again.stderr);
    t.regex(again.stdout, /Fast-forward/);
    t.deepEqual(rebuildLines(again), []);
    t.is(readWorkFile(env, "d", issuePath(3)), await expectedIssueFile(sim.url, "demo", 3));
  });

  test(`${breakage.name}: git push of a local edit rebuilds the cache, says why in one line, lands once; pull fast-forwards`, async (t) => {
    const { sim, env, oldTip } = await givenCloneBehindServer(t);
    breakage.apply(env);

    const push = await pushTitleEdit(t, env, sim, 3);
    const lines = rebuildLines(push);
    t.is(lines.length, 1, push.stderr);
    t.regex(lines[0] ?? "", /^svc: rebuilt the cache /);
    t.regex(lines[0] ?? "", breakage.why);
    t.notRegex(push.stderr, STACK);

    const pull = await pullFastForwards(t, env, sim, oldTip);
    t.deepEqual(rebuildLines(pull), []);
    t.is(readWorkFile(env, "d", issuePath(3)), await expectedIssueFile(sim.url, "demo", 3));
    const second = await pushTitleEdit(t, env, sim, 4);
    t.deepEqual(rebuildLines(second), []);
  });
}

test("a sparse clone's history is copied into the rebuilt cache without fetching the blobs it lacks", async (t) => {
  const { sim, env, oldTip } = await givenCloneBehindServer(t);
  const url = `svc::${sim.url}/projects/demo`;
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", "--sparse", url, "s"]);
  // Without prefetch, which would bring the other files' blobs with the first one.
  await gitOk(t, env, ["config", "svc.prefetchBytes", "0"], { cwd: "s" });
  await gitOk(t, env, [...SPARSE_SET, "issues/0001.md"], { cwd: "s" });
  const lacking = await missingObjects(env, "s");
  t.true(lacking.length >= 3, "the sparse clone lacks the other files' blobs");
  rmSync(cacheFolder(env), { recursive: true, force: true });

  const pull = await git(env, ["pull"], { cwd: "s" });
  t.is(pull.code, 0, pull.stderr);
  t.is(rebuildLines(pull).length, 1, pull.stderr);
  const stillLacking = new Set(await missingObjects(env, "s"));
  t.deepEqual(
    lacking.filter((oid) => !stillLacking.has(oid)),
    [],
    "copying the history fetched none of the blobs the clone lacked",
  );
  // The other working tree's history continues in the cache this one rebuilt.
  await pullFastForwards(t, env, sim, oldTip);
});

test("two working trees pull at the same time after the cache folder is deleted: one rebuild, both fast-forward", async (t) => {
  const { sim, env, oldTip } = await givenCloneBehindServer(t);
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", `svc::${sim.url}/projects/demo`, "e"]);
  await gitOk(t, env, ["reset", "-q", "--hard", oldTip], { cwd: "e" });
  await gitOk(t, env, ["update-ref", "refs/remotes/origin/main", oldTip], { cwd: "e" });
  rmSync(cacheFolder(env), { recursive: true, force: true });

  const [one, two] = await Promise.all([git(env, ["pull"], { cwd: "d" }), git(env, ["pull"], { cwd: "e" })]);
  t.is(one.code, 0, one.stderr);
  t.is(two.code, 0, two.stderr);
  t.is([...rebuildLines(one), ...rebuildLines(two)].length, 1, `${one.stderr}\n${two.stderr}`);
  const head = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d" });
  t.is(await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "e" }), head);
  t.is((await cacheGit(env, ["rev-parse", "main"])).stdout.trim(), head);
  for (const dir of ["d", "e"]) {
    t.regex((dir === "d" ? one : two).stdout, /Fast-forward/);
    t.is((await git(env, ["merge-base", "--is-ancestor", oldTip, "HEAD"], { cwd: dir })).code, 0);
  }
});

test("a working tree whose origin/main the rebuilt cache lacks continues in it too: its pull fast-forwards, its push lands once", async (t) => {
  const { sim, env, oldTip } = await givenCloneBehindServer(t);
  // `e` is cloned after the server change: its origin/main is newer than d's and unknown to d.
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", `svc::${sim.url}/projects/demo`, "e"]);
  const newer = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "e" });
  await patchIssue(sim.url, "demo", 4, { status: "in_review" });
  rmSync(cacheFolder(env), { recursive: true, force: true });
  await pullFastForwards(t, env, sim, oldTip); // d rebuilds from its origin/main, which lacks `newer`

  const pull = await git(env, ["pull"], { cwd: "e" });
  t.is(pull.code, 0, pull.stderr);
  t.regex(pull.stdout, /Fast-forward/);
  const lines = rebuildLines(pull);
  t.is(lines.length, 1, pull.stderr);
  t.regex(lines[0] ?? "", /was rebuilt since your last fetch; the server state continues your origin\/main/);
  t.is((await git(env, ["merge-base", "--is-ancestor", newer, "HEAD"], { cwd: "e" })).code, 0);
  t.is(readWorkFile(env, "e", issuePath(4)), await expectedIssueFile(sim.url, "demo", 4));

  const before = lastSimAuditId(sim);
  editWorkFile(env, "e", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "e", "Close issue 1");
  const push = await git(env, ["push"], { cwd: "e" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path]),
    [["PATCH", "/projects/demo/issues/1"]],
  );
  t.deepEqual(rebuildLines(push), []);
});

test("a cache deleted and then made anew by a new clone: an older working tree's pull fast-forwards instead of refusing unrelated histories, and its push lands once", async (t) => {
  const { sim, env, oldTip } = await givenCloneBehindServer(t);
  rmSync(cacheFolder(env), { recursive: true, force: true });
  // `e` knows no server commit: its clone makes the cache as new, with a history of its own.
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", `svc::${sim.url}/projects/demo`, "e"]);
  const fresh = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "e" });
  t.not((await git(env, ["merge-base", "--is-ancestor", oldTip, fresh], { cwd: "e" })).code, 0);

  const pull = await pullFastForwards(t, env, sim, oldTip);
  t.regex(
    pull.stderr,
    /svc: the cache .* did not hold your origin\/main \(it was made anew since your last fetch, or your working tree was cloned through another cache\); the server state continues your origin\/main \([0-9a-f]{7}\), so git pull fast-forwards/,
  );
  t.deepEqual(rebuildLines(pull), [], "nothing was rebuilt");
  // The new clone's history is in the cache's too: its pull fast-forwards to the same commit.
  const head = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d" });
  const other = await git(env, ["pull"], { cwd: "e" });
  t.is(other.code, 0, other.stderr);
  t.is(await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "e" }), head);

  await pushTitleEdit(t, env, sim, 3);
  const again = await git(env, ["pull"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.notRegex(again.stderr, /did not hold/, "the history is continued once");
});

test("svc sync rebuilds a lost cache the same way: git pull then fast-forwards", async (t) => {
  const { sim, env, oldTip } = await givenCloneBehindServer(t);
  rmSync(cacheFolder(env), { recursive: true, force: true });
  const sync = await svc(env, ["sync", "d"]);
  t.is(sync.code, 0, sync.stderr);
  t.is(rebuildLines(sync).length, 1, sync.stderr);
  t.regex(sync.stderr, /its folder is missing/);
  t.notRegex(sync.stderr, /forced update/);
  const pull = await pullFastForwards(t, env, sim, oldTip);
  t.deepEqual(rebuildLines(pull), []);
});

test("svc log after a rebuild: the rebuilt first listing lists what changed since the origin/main it continues", async (t) => {
  const { sim, env, oldTip } = await givenCloneBehindServer(t);
  // Beside issue 2's change: issue 4 deleted and issue 5 created on the server while the cache is gone.
  await deleteIssue(sim.url, "demo", 4);
  await givenProject(sim.url, "demo", [{ title: "Created while the cache was gone" }]);
  rmSync(cacheFolder(env), { recursive: true, force: true });
  const sync = await svc(env, ["sync", "d"]);
  t.is(sync.code, 0, sync.stderr);

  const log = await svc(env, ["log", "d"]);
  t.is(log.code, 0, log.stderr);
  const state = (await cacheGit(env, ["rev-parse", "main"])).stdout.trim();
  const updated = (id: number) => sim.store.getIssue("demo", id)?.frontmatter.updated_at;
  const [, seen = ""] = /seen (\S+)/.exec(log.stdout) ?? [];
  t.is(
    log.stdout,
    `state ${state.slice(0, 12)}  seen ${seen}  first listing of a rebuilt cache, continuing state ${oldTip.slice(0, 12)}  4 records
  changed  issues/0002.md  status, body  at ${updated(2)}
  deleted  issues/0004.md
  created  issues/0005.md  at ${updated(5)}
`,
  );
  t.regex(
    log.stderr,
    /^svc log: 1 state of sim project demo as this machine's cache saw it; last synced \S+; svc sync d brings what changed since\n$/,
  );
  const json = JSON.parse((await svc(env, ["log", "--json", "d"])).stdout) as {
    states: { op: string; continues: string | null; changes: { path: string; change: string }[] }[];
  };
  t.deepEqual(
    json.states.map((entry) => [
      entry.op,
      entry.continues,
      entry.changes.map((c) => `${c.change} ${c.path}`),
    ]),
    [["import", oldTip, ["changed issues/0002.md", "deleted issues/0004.md", "created issues/0005.md"]]],
  );
});

test("a version only the lost cache held cannot be served: the error says to git pull, and after it the checkout works", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(4), {
    env: { SVC_SYNC_INTERVAL: "0" },
    dir: "s",
    cloneArgs: ["--sparse"],
  });
  // Without prefetch, which would bring issue 2's file with issue 1's.
  await gitOk(t, env, ["config", "svc.prefetchBytes", "0"], { cwd: "s" });
  await gitOk(t, env, [...SPARSE_SET, "/issues/0001.md"], { cwd: "s" });
  // Issue 2's file at the clone's commit was never fetched; the server has moved on from it.
  await patchIssue(sim.url, "demo", 2, { status: "done" });
  rmSync(cacheFolder(env), { recursive: true, force: true });

  const add = ["sparse-checkout", "add", "/issues/0002.md"];
  const refused = await git(env, add, { cwd: "s" });
  t.not(refused.code, 0);
  t.is(rebuildLines(refused).filter((line) => line.startsWith("svc: rebuilt the cache")).length, 1);
  t.regex(
    refused.stderr,
    /versions of files that only the lost cache held cannot be served: run git pull to get the server's current versions, then try again/,
  );
  t.notRegex(refused.stderr, STACK);

  // Following the message: git pull fast-forwards. Its diffstat still wants the old version of issue 2 (the
  // clone never had it), so that first pull ends with the same refusal after moving the branch; the next
  // one says it is up to date.
  const pull = await git(env, ["pull"], { cwd: "s" });
  t.is(
    await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "s" }),
    await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "s" }),
    pull.stderr,
  );
  if (pull.code !== 0) t.regex(pull.stderr, /run git pull to get the server's current versions/);
  const pullAgain = await git(env, ["pull"], { cwd: "s" });
  t.is(pullAgain.code, 0, pullAgain.stderr);
  t.regex(pullAgain.stdout, /Already up to date/);
  const again = await git(env, add, { cwd: "s" });
  t.is(again.code, 0, again.stderr);
  t.is(readWorkFile(env, "s", issuePath(2)), await expectedIssueFile(sim.url, "demo", 2));
});
