/**
 * Exactly once under bad luck (issue 11, DESIGN.md §4): pushes killed with SIGKILL of their whole process
 * group — while a POST's answer is on its way, at 30 steps of a 200-create push drawn from a seed, and at
 * each step of a push — are finished by the next plain `git push`, and the server then holds every change
 * exactly once.
 * Real git, the real simulator (its database a file, so its integrity can be checked), real processes.
 */
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { Database } from "../core/sqlite.js";
import { CRASH_STEPS } from "../helper/push-crash.js";
import type { RunningSim } from "../server/sim/server.js";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { fuzzSeed } from "../testing/fuzz.js";
import { cacheFolder, cacheGit, type GitEnv, git, gitOk, givenGitEnv, manyIssues } from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  givenClone,
  issuePath,
  lastSimAuditId,
  setField,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProject, givenSim, givenTempDir } from "../testing/sim.js";

/** A simulator whose database is a file (so `PRAGMA integrity_check` can read it). */
async function givenFileSim(t: ExecutionContext): Promise<{ sim: RunningSim; db: string }> {
  const db = join(givenTempDir(t, "svc-sim-db-"), "sim.db");
  return { sim: await givenSim(t, { ephemeral: false, db }), db };
}

function integrity(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma("integrity_check", { simple: true }) as string;
  } finally {
    db.close();
  }
}

/** Successful writes (2xx) after audit row `after`, as `METHOD path` → count. */
function successfulWrites(sim: RunningSim, after: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const write of simWrites(sim, after)) {
    if (write.status === null || write.status >= 300) continue;
    const key = `${write.method} ${write.path}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Titles of the project's issues, each with how often it occurs. */
function titleCounts(sim: RunningSim, slug: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const issue of sim.store.listIssues(slug)) {
    counts.set(issue.frontmatter.title, (counts.get(issue.frontmatter.title) ?? 0) + 1);
  }
  return counts;
}

/** After a final push: `git pull` leaves a clean tree equal to the server; fsck and both databases clean. */
async function assertConverged(
  t: ExecutionContext,
  env: GitEnv,
  sim: RunningSim,
  simDb: string,
  expectedFiles: number,
): Promise<void> {
  const pull = await git(env, ["pull", "--no-edit"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  const files = (await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n").filter(Boolean);
  t.is(files.length, expectedFiles);
  t.is(sim.store.listIssues("demo").length, expectedFiles);
  const fsck = await git(env, ["fsck", "--no-progress"], { cwd: "d" });
  t.is(fsck.code, 0, fsck.stderr);
  t.is(integrity(join(cacheFolder(env), "cache.db")), "ok");
  t.is(integrity(simDb), "ok");
}

test("a push killed while the answer to its POST is on its way does not create the issue twice", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const proxy = await givenFaultProxy(t, sim.url);
  const env = givenGitEnv(t);
  await givenClone(t, env, proxy.url, "demo", "d");
  writeWorkFile(env, "d", "issues/new-bug.md", "---\ntitle: Only once\n---\nPlease.\n");
  await commitAll(t, env, "d", "A new bug");

  const before = lastSimAuditId(sim);
  // The simulator commits the POST at once; its answer would reach the helper 1.5 s later, but the push's
  // process group is killed as soon as the simulator has answered the proxy.
  proxy.setFault((request) => (request.method === "POST" ? { kind: "late", ms: 1500 } : undefined));
  const killed = await git(env, ["push"], { cwd: "d", killWhen: proxy.answered("POST") });
  t.is(killed.code, null, killed.stderr);
  t.is(sim.store.getProject("demo")?.issue_count, 3, "the server committed the create");

  proxy.setFault(undefined);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.regex(
    again.stderr,
    /svc: issues\/new-bug\.md was created as record 3 \(issues\/0003\.md\) by a push that was cut off before the answer arrived; it is not created again/,
  );
  t.is(sim.store.getProject("demo")?.issue_count, 3);
  t.deepEqual([...successfulWrites(sim, before)], [["POST /projects/demo/issues", 1]]);

  t.is((await git(env, ["pull"], { cwd: "d" })).code, 0);
  t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n"), [
    issuePath(1),
    issuePath(2),
    issuePath(3),
  ]);
});

/** A small deterministic generator (mulberry32), so a failing run can be repeated from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed of the random kills when `SVC_FUZZ_SEED` does not give one, so every run kills at the same steps:
 * one whose kills hit every kind of step (copy, planned, each kind of write, result, and one after it).
 */
const DEFAULT_KILL_SEED = 28125;

/** The writes a push has left to make, by kind (it makes them in this order). */
interface Work {
  create: number;
  update: number;
  delete: number;
}

/** One kill of the random test: where (`SVC_TEST_KILL_AT`), and what is left to write once it happened. */
interface Kill {
  readonly at: string;
  readonly left: Readonly<Work>;
}

/**
 * `rounds` kills drawn from `next`, each at a step the push reaches given what the kills before it left
 * (helper/push-crash.ts): `copy` while no push got past its copy, `planned`, after the n-th write of this
 * push (`after-create#17`: the push's creates come first, then its updates, then its deletes, and a push
 * makes only the writes an earlier one did not), `result` (after all of them), and last one of the steps
 * after the writes, which leave nothing for a push after them to reach.
 */
function killSchedule(next: () => number, rounds: number, work: Work): Kill[] {
  const left = { ...work };
  const kinds = ["create", "update", "delete"] as const;
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(next() * choices.length)] as T;
  const kills: Kill[] = [];
  let copying = true;
  for (let round = 0; round < rounds; round++) {
    const writes = left.create + left.update + left.delete;
    const roll = next();
    let at: string;
    if (round === rounds - 1) at = pick(["result", "noted", "moved", "done"]);
    else if (copying && roll < 0.3) at = "copy";
    else if (writes === 0 || roll < 0.4) at = pick(writes <= 10 ? ["planned", "result"] : ["planned"]);
    else {
      // About as many writes a round as spreads them over the rounds left, and at least one.
      const most = Math.max(1, Math.min(writes, Math.floor((2 * writes) / (rounds - round - 1))));
      let nth = 1 + Math.floor(next() * most);
      at = "";
      for (const kind of kinds) {
        if (at === "" && nth <= left[kind]) {
          at = `after-${kind}#${nth}`;
          left[kind] -= nth;
        } else if (at === "") {
          nth -= left[kind];
          left[kind] = 0;
        }
      }
    }
    if (at !== "copy") copying = false;
    if (at === "result" || round === rounds - 1) Object.assign(left, { create: 0, update: 0, delete: 0 });
    kills.push({ at, left: { ...left } });
  }
  return kills;
}

test("30 random kill -9s of a push of 200 creates, 5 updates and 3 deletes, each at a step of the push drawn from a seed, then a push: each change exactly once", async (t) => {
  t.timeout(240_000);
  const { sim, db } = await givenFileSim(t);
  await givenProject(sim.url, "demo", manyIssues(10));
  const env = givenGitEnv(t);
  await givenClone(t, env, sim.url, "demo", "d");
  for (let i = 1; i <= 200; i++) {
    writeWorkFile(
      env,
      "d",
      `issues/new-${i}.md`,
      `---\ntitle: New ${i}\nlabels: [batch]\n---\nNumber ${i}.\n`,
    );
  }
  for (let id = 1; id <= 5; id++)
    editWorkFile(env, "d", issuePath(id), (text) => setField(text, "status", "done"));
  for (let id = 8; id <= 10; id++) await gitOk(t, env, ["rm", "-q", issuePath(id)], { cwd: "d" });
  await commitAll(t, env, "d", "200 new, 5 closed, 3 removed");

  const seed = fuzzSeed() ?? DEFAULT_KILL_SEED;
  t.log(`kill seed ${seed} (rerun with SVC_FUZZ_SEED=${seed})`);
  const kills = killSchedule(random(seed), 30, { create: 200, update: 5, delete: 3 });
  t.log(`kills at ${kills.map((kill) => kill.at).join(", ")}`);
  const before = lastSimAuditId(sim);
  for (const [round, { at, left }] of kills.entries()) {
    const killed = await git(env, ["push"], { cwd: "d", env: { SVC_TEST_KILL_AT: at }, timeoutMs: 60_000 });
    const where = `kill ${round + 1} of ${kills.length}, at ${at} (seed ${seed})`;
    t.is(killed.code, null, `${where}: the push was not killed: ${killed.stderr}`);
    t.true(killed.stderr.includes(`svc: test crash point ${at.includes("#") ? at : `${at}#1`}\n`), where);
    // What the server holds is what the kills so far wrote, no more and no less.
    const issues = sim.store.listIssues("demo");
    const created = issues.filter((issue) => issue.frontmatter.title.startsWith("New ")).length;
    t.is(created, 200 - left.create, `${where}: creates`);
    const updated = issues.filter(
      (issue) => issue.frontmatter.id <= 5 && issue.frontmatter.status === "done",
    ).length;
    t.is(updated, 5 - left.update, `${where}: updates`);
    t.is(
      issues.filter((issue) => issue.frontmatter.id >= 8 && issue.frontmatter.id <= 10).length,
      left.delete,
      `${where}: deletes`,
    );
  }
  const final = await git(env, ["push"], { cwd: "d", timeoutMs: 120_000 });
  t.is(final.code, 0, final.stderr);

  const titles = titleCounts(sim, "demo");
  for (let i = 1; i <= 200; i++) t.is(titles.get(`New ${i}`), 1, `New ${i}`);
  const writes = successfulWrites(sim, before);
  t.is(writes.get("POST /projects/demo/issues"), 200);
  for (let id = 1; id <= 5; id++) t.is(writes.get(`PATCH /projects/demo/issues/${id}`), 1, `PATCH ${id}`);
  for (let id = 8; id <= 10; id++) t.is(writes.get(`DELETE /projects/demo/issues/${id}`), 1, `DELETE ${id}`);
  for (let id = 1; id <= 5; id++) t.is(sim.store.getIssue("demo", id)?.frontmatter.status, "done");
  await assertConverged(t, env, sim, db, 207);
});

for (const step of CRASH_STEPS) {
  test(`crash matrix: a push whose process group is killed at "${step}" converges on the next push, each change once`, async (t) => {
    const { sim, db } = await givenFileSim(t);
    await givenProject(sim.url, "demo", manyIssues(8));
    const env = givenGitEnv(t);
    await givenClone(t, env, sim.url, "demo", "d");
    writeWorkFile(env, "d", "issues/first.md", "---\ntitle: First new\n---\nOne.\n");
    writeWorkFile(env, "d", "issues/second.md", "---\ntitle: Second new\n---\nTwo.\n");
    editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
    editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", '"Renamed two"'));
    await gitOk(t, env, ["rm", "-q", issuePath(7), issuePath(8)], { cwd: "d" });
    await commitAll(t, env, "d", "Two new, two edits, two removals");

    const before = lastSimAuditId(sim);
    const killed = await git(env, ["push"], { cwd: "d", env: { SVC_TEST_KILL_AT: step } });
    t.is(killed.code, null, `the push was not killed at ${step}: ${killed.stderr}`);
    t.true(killed.stderr.includes(`svc: test crash point ${step}#1\n`), killed.stderr);
    const again = await git(env, ["push"], { cwd: "d" });
    t.is(again.code, 0, again.stderr);

    const writes = successfulWrites(sim, before);
    t.is(writes.get("POST /projects/demo/issues"), 2);
    t.is(writes.get("PATCH /projects/demo/issues/1"), 1);
    t.is(writes.get("PATCH /projects/demo/issues/2"), 1);
    t.is(writes.get("DELETE /projects/demo/issues/7"), 1);
    t.is(writes.get("DELETE /projects/demo/issues/8"), 1);
    const titles = titleCounts(sim, "demo");
    t.is(titles.get("First new"), 1);
    t.is(titles.get("Second new"), 1);
    t.is(titles.get("Renamed two"), 1);
    t.is(sim.store.getIssue("demo", 1)?.frontmatter.status, "done");
    await assertConverged(t, env, sim, db, 8);
    // Nothing of the killed push is left in the cache: its temporary refs were removed by the next push.
    const refs = await cacheGit(env, ["for-each-ref", "refs/svc/"]);
    t.is(refs.stdout.trim(), "");
  });
}
