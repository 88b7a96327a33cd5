/**
 * A cache folder is created only after the backend's first successful answer (issue 11, item 7): a clone
 * or `svc init` of an origin the allowlist denies, or of a project the server does not have, fails with a
 * clear message and leaves `SVC_CACHE_DIR` empty. Real git, a real simulator.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { auditRows, git, gitOk, givenGitEnv, manyIssues, svc, svcUrl } from "../testing/git.js";
import { givenProject, givenSim } from "../testing/sim.js";

const STACK = /^\s+at .+:\d+:\d+\)?$/m;
const DENIED = { SVC_ALLOWED_ORIGINS: "http://localhost:1" };

test("git clone and svc init of a project the server does not have: a clear error and no cache folder", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const env = givenGitEnv(t);

  const clone = await git(env, ["clone", "--filter=blob:none", svcUrl(sim.url, "nope"), "c"]);
  const init = await svc(env, ["init", "sim::nope", "i", "--origin", sim.url]);
  for (const [what, result] of [
    ["git clone", clone],
    ["svc init", init],
  ] as const) {
    t.not(result.code, 0, what);
    t.regex(
      result.stderr,
      /^svc: sim project nope at http:\/\/127\.0\.0\.1:\d+: no such project \(404\)/m,
      what,
    );
    t.notRegex(result.stderr, STACK, what);
  }
  t.deepEqual(readdirSync(env.cacheRoot), []);
  t.false(existsSync(join(env.dir, "c")), "git removes the failed clone");
});

test("git clone and svc init of an origin the allowlist denies: a clear error and no cache folder", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const env = givenGitEnv(t);
  const before = sim.store.auditRows().length;

  const clone = await git(env, ["clone", "--filter=blob:none", svcUrl(sim.url, "demo"), "c"], {
    env: DENIED,
  });
  const init = await svc(env, ["init", "sim::demo", "i", "--origin", sim.url], { env: DENIED });
  for (const [what, result] of [
    ["git clone", clone],
    ["svc init", init],
  ] as const) {
    t.not(result.code, 0, what);
    t.regex(result.stderr, /^svc: origin not allowlisted: http:\/\/127\.0\.0\.1:\d+/m, what);
    t.notRegex(result.stderr, STACK, what);
  }
  t.deepEqual(readdirSync(env.cacheRoot), []);
  t.is(sim.store.auditRows().length, before, "no request reached the server");

  // A clone that has a cache: the refusal of its fetch is recorded there, and nothing else is created.
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", svcUrl(sim.url, "demo"), "d"]);
  const folders = readdirSync(env.cacheRoot);
  const fetch = await git(env, ["fetch"], { cwd: "d", env: DENIED });
  t.not(fetch.code, 0);
  t.regex(fetch.stderr, /^svc: origin not allowlisted: /m);
  t.deepEqual(readdirSync(env.cacheRoot), folders);
  t.is(auditRows(env).filter((row) => row.op === "egress-denied").length, 1);
});
