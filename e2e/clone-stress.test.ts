/**
 * Fresh-cache clones end cleanly on the Node running the tests (issue 36): with better-sqlite3 12 on Node
 * 24.19 and later, 9 of 12 `git clone --filter=blob:none svc::…` into a new cache aborted at exit (a native
 * assertion while the garbage collector finalized a SQLite statement). Each clone here builds a new cache in
 * a new process, the path that aborted. `SVC_CLONE_STRESS` sets how many (`npm run test:matrix` asks 100 of
 * the main Node); 3 otherwise.
 */
import { join } from "node:path";
import test from "ava";
import { git, givenGitEnv, manyIssues, svcUrl, withCacheRoot } from "../testing/git.js";
import { givenProject, givenSim } from "../testing/sim.js";

const CLONES = Number(process.env.SVC_CLONE_STRESS ?? "3");

test(`${CLONES} clones, each into a new cache, all exit 0 and none aborts`, async (t) => {
  t.timeout(60_000 + CLONES * 10_000);
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(30));
  const env = givenGitEnv(t);
  const failures: string[] = [];
  let aborts = 0;
  for (let i = 0; i < CLONES; i++) {
    const fresh = withCacheRoot(env, join(env.dir, `cache-${i}`));
    const result = await git(fresh, ["clone", "--filter=blob:none", svcUrl(sim.url, "demo"), `d${i}`]);
    const aborted = /Assertion failed|Aborted|core dumped|died of signal/.test(result.stderr);
    if (aborted) aborts++;
    if (result.code !== 0 || aborted) failures.push(`clone ${i}: exit ${result.code}\n${result.stderr}`);
  }
  t.log(
    `${CLONES} fresh-cache clones on Node ${process.versions.node}: ${aborts} aborted, ${failures.length} failed`,
  );
  t.deepEqual(failures, []);
  t.is(aborts, 0);
});
