/**
 * A bad setting is the user's mistake, not a bug in svc (issue 11, item 6): `SVC_HTTP_TIMEOUT_MS=30s`, a bad
 * `git config svc.syncInterval` or `svc.reconcileInterval`, a bad `SVC_SYNC_INTERVAL` or `SVC_BLOB_LIMIT`
 * each end `git fetch` (128, the helper's 2) and the `svc` bin (2) with one line naming the setting, the
 * value and the form expected, with the server up or stopped; with the server stopped and good settings
 * nothing crashes either. Real git and the real `svc` bin against the simulator.
 */
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import {
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  manyIssues,
  type RunResult,
  svc,
  svcUrl,
  withCacheRoot,
} from "../testing/git.js";
import { givenProject, givenSim } from "../testing/sim.js";

/** A Node stack trace, crash report or bug report: what a user must never see for a bad setting. */
const CRASH = /node:events|Unhandled 'error' event|internal error|^\s+at .+:\d+:\d+\)?$/m;

/**
 * The lines of `stderr`, sorted: git and the helper share the stream, so the order of their lines
 * varies between runs; what each says does not.
 */
function stderrLines(stderr: string): string[] {
  return stderr.split("\n").sort();
}

const TIMEOUT =
  'SVC_HTTP_TIMEOUT_MS="30s" is not a whole number of milliseconds from 1 up to 2147483647; use e.g. SVC_HTTP_TIMEOUT_MS=30000';

async function givenClone(t: ExecutionContext): Promise<{
  env: GitEnv;
  simUrl: string;
  stop: () => Promise<void>;
}> {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  await gitOk(t, env, ["clone", "--filter=blob:none", svcUrl(sim.url, "demo"), "d"]);
  return { env, simUrl: sim.url, stop: () => sim.close() };
}

/** git fetch in the clone, svc list, svc sync in the clone, svc init of a new folder: with `vars` set. */
async function everyEntryPoint(
  env: GitEnv,
  simUrl: string,
  vars: Readonly<Record<string, string>>,
  folder: string,
): Promise<Record<string, RunResult>> {
  const options = { env: vars };
  return {
    fetch: await git(env, ["fetch"], { ...options, cwd: "d" }),
    list: await svc(env, ["list", "--backend", "sim", "--project", "demo", "--origin", simUrl], options),
    sync: await svc(env, ["sync"], { ...options, cwd: "d" }),
    init: await svc(env, ["init", "sim::demo", folder, "--origin", simUrl], options),
  };
}

function checkTimeoutRefused(
  t: ExecutionContext,
  runs: Record<string, RunResult>,
  simUrl: string,
  folder: string,
): void {
  t.is(runs.fetch?.code, 128, "git fetch: the helper exited 2");
  t.is(runs.fetch?.stderr, `svc: ${TIMEOUT}\n`);
  t.is(runs.list?.code, 2);
  t.is(runs.list?.stderr, `svc: ${TIMEOUT}\n`);
  t.is(runs.sync?.code, 2);
  t.is(runs.sync?.stderr, `svc: ${TIMEOUT}\n`);
  t.is(runs.init?.code, 2);
  t.deepEqual(
    stderrLines(runs.init?.stderr ?? ""),
    stderrLines(
      `Cloning into '${folder}'...\nsvc: ${TIMEOUT}\n` +
        `svc: git clone of ${svcUrl(simUrl, "demo")} failed (exit 128); the lines above say why\n`,
    ),
  );
}

/**
 * With the server stopped and good settings: git fetch fails saying nothing was fetched (and how to work from
 * the cache on purpose); svc list, svc sync and svc init (without a cache) exit 2 saying the server cannot
 * be reached.
 */
async function checkServerDown(t: ExecutionContext, env: GitEnv, simUrl: string): Promise<void> {
  const unreachable = `cannot reach the backend: GET ${simUrl}/projects/demo/issues failed: nothing is listening at ${simUrl} (ECONNREFUSED); is the server running?`;
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 128);
  t.is(
    fetch.stderr.replace(/from \d+\.\d s ago/, "from <age> ago"),
    `svc: cannot sync with sim project demo at ${simUrl} (${unreachable}); nothing was fetched\n` +
      "When the server is back, run: git fetch\n" +
      "To work from the cache's state from <age> ago on purpose, run: git -c svc.offline=true fetch\n" +
      `fatal: remote error: cannot sync with sim project demo at ${simUrl} (${unreachable}); nothing was fetched; the svc: lines above say what to run\n`,
  );
  const list = await svc(env, ["list", "--backend", "sim", "--project", "demo", "--origin", simUrl]);
  t.is(list.code, 2);
  t.is(list.stderr, `svc: ${unreachable}\n`);
  const sync = await svc(env, ["sync"], { cwd: "d" });
  t.is(sync.code, 2);
  t.is(sync.stderr, `svc: ${unreachable}\n`);
  const fresh = withCacheRoot(env, join(env.home, "empty-cache"));
  const init = await svc(fresh, ["init", "sim::demo", "e", "--origin", simUrl]);
  t.is(init.code, 2);
  // The helper names the command to run again: the git clone svc init ran, as the helper's ancestors show it.
  const rerun = / then run: (git .*clone .*)$/m.exec(init.stderr);
  t.truthy(rerun, init.stderr);
  t.deepEqual(
    stderrLines(init.stderr.replace(/, then run: git .*clone .*$/m, "")),
    stderrLines(
      `Cloning into 'e'...\nsvc: ${unreachable}\n` +
        `no cached copy of sim project demo at ${simUrl} is there to serve instead; start the ` +
        `server or check the URL ${simUrl}/projects/demo\n` +
        `svc: git clone of ${svcUrl(simUrl, "demo")} failed (exit 128); the lines above say why\n`,
    ),
  );
  t.true(rerun?.[1]?.includes(`${svcUrl(simUrl, "demo")}`), rerun?.[1]);
  for (const run of [fetch, list, sync, init]) t.notRegex(run.stderr, CRASH);
}

test("SVC_HTTP_TIMEOUT_MS=30s is named with its expected form by git fetch, svc list, svc sync and svc init, server up or down; a good value with the server down says it is unreachable", async (t) => {
  const { env, simUrl, stop } = await givenClone(t);
  checkTimeoutRefused(
    t,
    await everyEntryPoint(env, simUrl, { SVC_HTTP_TIMEOUT_MS: "30s" }, "up"),
    simUrl,
    "up",
  );
  await stop();
  // Before the fix, the request's socket failed with nobody listening: "Unhandled 'error' event".
  checkTimeoutRefused(
    t,
    await everyEntryPoint(env, simUrl, { SVC_HTTP_TIMEOUT_MS: "30s" }, "down"),
    simUrl,
    "down",
  );
  await checkServerDown(t, env, simUrl);
});

test("a bad git config svc.syncInterval or svc.reconcileInterval, or SVC_SYNC_INTERVAL, is named by git fetch and svc sync", async (t) => {
  const { env } = await givenClone(t);
  const cases: [string[] | undefined, Record<string, string>, string][] = [
    [
      ["svc.syncInterval", "2m"],
      {},
      'git config svc.syncInterval "2m" is not a number of seconds; use e.g. git config svc.syncInterval 0',
    ],
    [
      ["svc.reconcileInterval", "-5"],
      {},
      'git config svc.reconcileInterval "-5" is not a number of seconds; use e.g. git config svc.reconcileInterval 600',
    ],
    [
      undefined,
      { SVC_SYNC_INTERVAL: "soon" },
      'SVC_SYNC_INTERVAL="soon" is not a number of seconds; use e.g. SVC_SYNC_INTERVAL=0',
    ],
  ];
  for (const [config, vars, message] of cases) {
    if (config) await gitOk(t, env, ["config", ...config], { cwd: "d" });
    const fetch = await git(env, ["fetch"], { cwd: "d", env: vars });
    t.is(fetch.code, 128, message);
    t.deepEqual(
      stderrLines(fetch.stderr),
      stderrLines(`fatal: remote error: ${message}; the svc: lines above say what to run\nsvc: ${message}\n`),
    );
    const sync = await svc(env, ["sync"], { cwd: "d", env: vars });
    t.is(sync.code, 2, message);
    // svc sync reads svc.reconcileInterval itself (a full listing when the last is older), before syncing.
    if (config?.[0] === "svc.reconcileInterval") {
      t.is(sync.stderr, `svc: ${message}\n`);
      if (config) await gitOk(t, env, ["config", "--unset", config[0] as string], { cwd: "d" });
      continue;
    }
    t.deepEqual(
      stderrLines(sync.stderr),
      stderrLines(
        "svc: delta sync: 0 changed, 0 removed, nothing new\n" +
          `fatal: remote error: ${message}; the svc: lines above say what to run\nsvc: ${message}\n` +
          "svc: git fetch origin failed (exit 128); the lines above say why\n",
      ),
    );
    t.notRegex(`${fetch.stderr}${sync.stderr}`, CRASH);
    if (config) await gitOk(t, env, ["config", "--unset", config[0] as string], { cwd: "d" });
  }
  const fixed = await git(env, ["fetch"], { cwd: "d" });
  t.is(fixed.code, 0, fixed.stderr);
});

test("a bad SVC_BLOB_LIMIT is named by git fetch, without a stack", async (t) => {
  const { env } = await givenClone(t);
  const fetch = await git(env, ["fetch"], { cwd: "d", env: { SVC_BLOB_LIMIT: "lots" } });
  t.is(fetch.code, 128);
  t.true(
    fetch.stderr.startsWith(
      'svc: SVC_BLOB_LIMIT="lots" is not a whole number (0 for no limit); use e.g. SVC_BLOB_LIMIT=0\n',
    ),
    fetch.stderr,
  );
  t.notRegex(fetch.stderr, CRASH);
});
