/**
 * Server faults against the simulator (issue 17, "Server faults"): a fault-injecting proxy in front of
 * the simulator puts each fault of testing/faults.ts (500, 502, a body that is not JSON, a truncated body,
 * a reset before or after the server saw the request, a hang past the timeout, a Retry-After of an hour)
 * at each step of clone (the issue listing; the simulator's is one page), fetch (the delta listing) and
 * push (the sync before any write; the POST, PATCH and DELETE). For each case:
 *
 * 1. git exits as the README's table says (clone 128, fetch 0 serving the cache, push 1), stderr is the
 *    message naming the server and the next command, and that command, run as printed once the fault is
 *    gone, succeeds;
 * 2. nothing is half-written: no cache after a failed clone; else the cache's database passes
 *    `PRAGMA integrity_check`, and the next fetch gives exactly the server's files;
 * 3. exactly once: the simulator's audit table holds one accepted write per change, one issue per create.
 *
 * One more case kills a push (kill -9) after two of its writes: the next fetch brings them too; and one
 * runs `svc init` against a listing that drips a byte every 100 ms forever: it ends at SVC_HTTP_TIMEOUT_MS.
 * One simulator serves every case (a project each); real git, real helper processes. The same faults meet
 * the other backends in e2e/wiki-faults.test.ts (the fake wiki) and e2e/vendor-faults.test.ts (the fake
 * forge and the fake tracker), all four through the same REST reading of answers (backends/rest.ts).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { excerpt } from "../core/errors.js";
import { hashObject } from "../git/objects.js";
import { type RunningSim, startSimServer } from "../server/sim/server.js";
import { GARBAGE_BODY, givenFaultProxy, type ProxiedRequest } from "../testing/fault-proxy.js";
import {
  cacheIntegrity,
  concurrency,
  FAULTS,
  type FaultCase,
  faultEnv,
  fetchFailedPattern,
  literal,
  printedCommand,
  runPrinted,
  transportPattern,
  treeOf,
  WHEN_AGAIN_LINE,
  whenPattern,
} from "../testing/faults.js";
import {
  cacheFolders,
  expectedIssueFile,
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  manyIssues,
  patchIssue,
  svc,
  svcUrl,
} from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  issuePath,
  lastSimAuditId,
  setField,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProject } from "../testing/sim.js";

type Step = "clone" | "fetch" | "push-read" | "POST" | "PATCH" | "DELETE";

/** Each step: the request the fault meets (method, path without query) and how the simulator backend names it. */
const STEPS: Readonly<
  Record<Step, { label: string; method: string; path: string; what: string; write?: string }>
> = {
  clone: { label: "clone (the issue listing)", method: "GET", path: "/issues", what: "listing issues" },
  fetch: { label: "fetch (the delta listing)", method: "GET", path: "/issues", what: "listing issues" },
  "push-read": {
    label: "push (the sync before any write)",
    method: "GET",
    path: "/issues",
    what: "listing issues",
  },
  POST: {
    label: "push (POST, a create)",
    method: "POST",
    path: "/issues",
    what: "creating an issue",
    write: "create from issues/new.md",
  },
  PATCH: {
    label: "push (PATCH)",
    method: "PATCH",
    path: "/issues/1",
    what: "updating issue 1",
    write: "update of record 1 (issues/0001.md)",
  },
  DELETE: {
    label: "push (DELETE)",
    method: "DELETE",
    path: "/issues/3",
    what: "deleting issue 3",
    write: "delete of record 3 (issues/0003.md)",
  },
};

/** The writes of the push: creates go first, then updates, then deletes; how many were done before each. */
const DONE_BEFORE: Readonly<Record<"POST" | "PATCH" | "DELETE", number>> = { POST: 0, PATCH: 1, DELETE: 2 };

let shared: Promise<RunningSim> | undefined;
/** The one simulator of this file, started by the first case and stopped after the last. */
function sharedSim(): Promise<RunningSim> {
  shared ??= startSimServer({
    bind: "127.0.0.1:0",
    db: ":memory:",
    ephemeral: true,
    noSeed: true,
    rateLimit: 0,
    logError: (message) => process.stderr.write(`${message}\n`),
  });
  return shared;
}
test.after.always(async () => {
  await (await shared)?.close();
});

const slot = concurrency(3);
let projects = 0;

/** Whether the proxy's request is the one the step's fault meets. */
function meets(step: Step, project: string, request: ProxiedRequest): boolean {
  const { method, path } = STEPS[step];
  const [pathname = "", query] = request.path.split("?");
  if (request.method !== method || pathname !== `/projects/${project}${path}`) return false;
  // The clone's listing is the full one; a fetch's and a push's sync ask for the changes since the last.
  return step === "clone" ? query === undefined : method !== "GET" || query?.startsWith("since=") === true;
}

/** What the message says the server did at `step`, as a pattern. */
function faultPattern(fault: FaultCase, step: Step, origin: string, project: string): string {
  const { method, path, what } = STEPS[step];
  const transport = transportPattern(fault, method, `${origin}/projects/${project}${path}`);
  if (transport !== undefined) return transport;
  const server = literal(`sim project ${project} at ${origin}: ${what}`);
  if (fault.fault.kind === "answer")
    return `${server} answered ${fault.fault.status}: ${literal(excerpt(JSON.stringify(fault.fault.body), 300))}`;
  // A listing and an update parse the answer; a create wants a 201 and a delete a 204 first.
  if (step === "POST" || step === "DELETE")
    return `${server} answered 200: ${literal(excerpt(GARBAGE_BODY, 300))}`;
  return (
    `${server} answered 200 with a body that is not JSON: ${literal(excerpt(GARBAGE_BODY))} ` +
    "\\(a proxy or sign-in page between svc and the server may have answered in its place\\)"
  );
}

/** path → blob id of the files the server's issues of `project` make. */
async function serverTree(sim: RunningSim, project: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const issue of sim.store.listIssues(project)) {
    const id = issue.frontmatter.id;
    const content = Buffer.from(await expectedIssueFile(sim.url, project, id));
    files.set(issuePath(id), hashObject("blob", content));
  }
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

/** The clone's `origin/main` holds exactly the server's files, and the cache's database is intact. */
async function assertServerState(
  t: ExecutionContext,
  env: GitEnv,
  sim: RunningSim,
  project: string,
): Promise<void> {
  t.deepEqual(await treeOf(t, env, "d", "origin/main"), await serverTree(sim, project));
  t.is(cacheIntegrity(env), "ok");
}

/** The writes to `project` the simulator accepted (2xx) after audit row `after`, as `METHOD path` → count. */
function acceptedWrites(sim: RunningSim, project: string, after: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const write of simWrites(sim, after)) {
    if (!write.path.startsWith(`/projects/${project}/`)) continue;
    if (write.status === null || write.status < 200 || write.status >= 300) continue;
    const key = `${write.method} ${write.path}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

interface Case {
  readonly sim: RunningSim;
  readonly env: GitEnv;
  readonly project: string;
  readonly origin: string;
  readonly remote: string;
  readonly fault: FaultCase;
  readonly setFault: (on: boolean) => void;
}

async function cloneCase(t: ExecutionContext, c: Case): Promise<void> {
  const { env, fault, project, origin, remote } = c;
  const before = lastSimAuditId(c.sim);
  c.setFault(true);
  const clone = await git(env, ["clone", "-q", "--filter=blob:none", remote, "d"], { env: faultEnv(fault) });
  t.is(clone.code, 128, clone.stderr);
  t.regex(
    clone.stderr,
    new RegExp(
      `^svc: ${faultPattern(fault, "clone", origin, project)}\n` +
        `no cached copy of ${literal(`sim project ${project} at ${origin}`)} is there to serve instead; ` +
        `${whenPattern(fault)}, run: ${literal(`git clone -q --filter=blob:none ${remote} d`)}\n$`,
    ),
  );
  t.deepEqual(cacheFolders(env), [], "no cache is made before a listing succeeded");
  t.false(existsSync(join(env.dir, "d")), "git removes the failed clone");

  c.setFault(false);
  await runPrinted(t, env, printedCommand(t, clone.stderr, /^no cached copy .*run: /m));
  await assertServerState(t, env, c.sim, project);
  t.deepEqual(acceptedWrites(c.sim, project, before), {});
}

async function fetchCase(t: ExecutionContext, c: Case): Promise<void> {
  const { env, fault, project, origin } = c;
  await gitOk(t, env, ["clone", "-q", c.remote, "d"]);
  await patchIssue(c.sim.url, project, 2, { title: "Changed on the server" });
  const tip = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  const before = lastSimAuditId(c.sim);
  c.setFault(true);
  const fetch = await git(env, ["fetch"], { cwd: "d", env: faultEnv(fault) });
  t.is(fetch.code, 128, fetch.stderr);
  t.regex(
    fetch.stderr,
    fetchFailedPattern(
      `sim project ${project} at ${origin}`,
      faultPattern(fault, "fetch", origin, project),
      fault,
    ),
  );
  t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), tip, "the cached state, unchanged");
  t.is(cacheIntegrity(env), "ok");

  c.setFault(false);
  await runPrinted(t, env, printedCommand(t, fetch.stderr, WHEN_AGAIN_LINE), "d");
  await assertServerState(t, env, c.sim, project);
  t.deepEqual(acceptedWrites(c.sim, project, before), {});
}

/** The refusal's reason on git's `[remote rejected]` line. */
function rejectedReason(fault: FaultCase, step: Step): string {
  if (step === "push-read") {
    if (fault.when === "back") return "the server cannot be reached; nothing was written";
    if (fault.when === "after")
      return `the server asked svc to wait; nothing was written; ${whenPattern(fault)}, push again`;
    return "the server failed \\(see above\\); nothing was written";
  }
  if (step === "POST" && fault.when === "after") return "nothing was written; push again \\(see above\\)";
  return `partial: ${DONE_BEFORE[step as keyof typeof DONE_BEFORE]} of 3 writes done; push again to finish`;
}

async function pushCase(t: ExecutionContext, c: Case, step: Exclude<Step, "clone" | "fetch">): Promise<void> {
  const { env, fault, project, origin, remote } = c;
  const title = `New in ${project}`;
  await gitOk(t, env, ["clone", "-q", remote, "d"]);
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  writeWorkFile(env, "d", "issues/new.md", `---\ntitle: ${title}\n---\nNew.\n`);
  await gitOk(t, env, ["rm", "-q", issuePath(3)], { cwd: "d" });
  await commitAll(t, env, "d", "One of each: create, update, delete");
  const before = lastSimAuditId(c.sim);

  c.setFault(true);
  const push = await git(env, ["push"], { cwd: "d", env: faultEnv(fault) });
  t.is(push.code, 1, push.stderr);
  const when = `${whenPattern(fault)}, run: git push`;
  const write = STEPS[step].write;
  const done = write === undefined ? 0 : DONE_BEFORE[step as keyof typeof DONE_BEFORE];
  const message =
    write === undefined
      ? `svc: ${faultPattern(fault, step, origin, project)}\n  nothing was written; ${when}\n`
      : `${done > 0 ? literal("svc: created record 4 from issues/new.md (it becomes issues/0004.md)\n") : ""}` +
        `svc: the ${literal(write)} failed: ${faultPattern(fault, step, origin, project)}\n` +
        (done === 0 && fault.when === "after"
          ? `  nothing was written; ${when}\n`
          : `  ${done} of 3 writes were done and are kept; push again to finish the rest \\(nothing is written twice\\); ${when}\n`);
  t.regex(
    push.stderr,
    new RegExp(
      `^${message}To ${literal(remote)}\n ! \\[remote rejected\\] main -> main \\(${rejectedReason(fault, step)}\\)\n` +
        `error: failed to push some refs to '${literal(remote)}'\n$`,
    ),
  );
  t.is(cacheIntegrity(env), "ok");
  if (write !== undefined) {
    const faulted = `${STEPS[step].method} /projects/${project}${STEPS[step].path}`;
    t.is(
      acceptedWrites(c.sim, project, before)[faulted] ?? 0,
      fault.committed ? 1 : 0,
      "the server acted on it",
    );
  }

  c.setFault(false);
  // Nothing half-written: whatever was done, the next fetch brings exactly the server's state.
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  await assertServerState(t, env, c.sim, project);

  await runPrinted(t, env, printedCommand(t, push.stderr, /run: git push$/m), "d");
  t.deepEqual(acceptedWrites(c.sim, project, before), {
    [`POST /projects/${project}/issues`]: 1,
    [`PATCH /projects/${project}/issues/1`]: 1,
    [`DELETE /projects/${project}/issues/3`]: 1,
  });
  const issues = c.sim.store.listIssues(project);
  t.is(issues.filter((issue) => issue.frontmatter.title === title).length, 1);
  t.deepEqual(
    issues.map((issue) => [issue.frontmatter.id, issue.frontmatter.status]),
    [
      [1, "done"],
      [2, "open"],
      [4, "open"],
    ],
  );
}

for (const step of Object.keys(STEPS) as Step[]) {
  const isWrite = STEPS[step].write !== undefined;
  for (const fault of FAULTS) {
    if (fault.writesOnly && !isWrite) continue;
    // The simulator's 204 has no body to cut short: that is the reset after forwarding.
    if (step === "DELETE" && fault.fault.kind === "truncated") continue;
    test(`${fault.name} at ${STEPS[step].label}`, async (t) => {
      t.teardown(await slot());
      const sim = await sharedSim();
      const project = `p${++projects}`;
      await givenProject(sim.url, project, manyIssues(3));
      const proxy = await givenFaultProxy(t, sim.url);
      let on = false;
      proxy.setFault((request) => (on && meets(step, project, request) ? fault.fault : undefined));
      const c: Case = {
        sim,
        env: givenGitEnv(t, { SVC_PROGRESS: "off" }),
        project,
        origin: proxy.url,
        remote: svcUrl(proxy.url, project),
        fault,
        setFault: (value) => {
          on = value;
        },
      };
      if (step === "clone") await cloneCase(t, c);
      else if (step === "fetch") await fetchCase(t, c);
      else await pushCase(t, c, step);
      t.true(
        proxy.requests.some((request) => meets(step, project, request)),
        "the fault met its request",
      );
    });
  }
}

test("a push killed (kill -9) after its create and update: the next fetch brings both, the next push finishes, each change once", async (t) => {
  t.teardown(await slot());
  const sim = await sharedSim();
  const project = `p${++projects}`;
  await givenProject(sim.url, project, manyIssues(3));
  const env = givenGitEnv(t, { SVC_PROGRESS: "off" });
  await gitOk(t, env, ["clone", "-q", svcUrl(sim.url, project), "d"]);
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  writeWorkFile(env, "d", "issues/new.md", `---\ntitle: New in ${project}\n---\nNew.\n`);
  await gitOk(t, env, ["rm", "-q", issuePath(3)], { cwd: "d" });
  await commitAll(t, env, "d", "One of each: create, update, delete");
  const before = lastSimAuditId(sim);

  const killed = await git(env, ["push"], { cwd: "d", env: { SVC_TEST_KILL_AT: "after-update" } });
  t.is(killed.code, null, `the push was not killed: ${killed.stderr}`);
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  await assertServerState(t, env, sim, project);
  t.true((await treeOf(t, env, "d", "origin/main")).has("issues/0004.md"));

  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(acceptedWrites(sim, project, before), {
    [`POST /projects/${project}/issues`]: 1,
    [`PATCH /projects/${project}/issues/1`]: 1,
    [`DELETE /projects/${project}/issues/3`]: 1,
  });
});

test("svc init of a project whose listing drips a byte every 100 ms forever ends at SVC_HTTP_TIMEOUT_MS, naming the setting and the server; no folder, no cache; the printed command works once the drip stops", async (t) => {
  t.teardown(await slot());
  const sim = await sharedSim();
  const project = `p${++projects}`;
  await givenProject(sim.url, project, manyIssues(3));
  const proxy = await givenFaultProxy(t, sim.url);
  let on = true;
  proxy.setFault((request) => (on && meets("clone", project, request) ? { kind: "drip" } : undefined));
  const env = givenGitEnv(t, { SVC_PROGRESS: "off" });
  const remote = svcUrl(proxy.url, project);

  const init = await svc(env, ["init", `sim::${project}`, "e", "--origin", proxy.url], {
    env: { SVC_HTTP_TIMEOUT_MS: "1000" },
    timeoutMs: 60_000,
  });
  t.false(init.timedOut, "svc init ended by itself");
  t.is(init.code, 2, init.stderr);
  // The helper names the command to run again: the git clone svc init ran, as the helper's ancestors show it.
  const rerun = / run: (git .*clone .*)$/m.exec(init.stderr);
  t.truthy(rerun, init.stderr);
  const lines = (text: string) => text.split("\n").sort();
  t.deepEqual(
    lines(
      init.stderr
        .replace(/ run: git .*clone .*$/m, " run: <the clone>")
        .replace(/: \d+ bytes /, ": <n> bytes "),
    ),
    lines(
      `Cloning into 'e'...\n` +
        `svc: cannot reach the backend: GET ${proxy.url}/projects/${project}/issues failed: the answer came too ` +
        `slowly: <n> bytes of its body in 1000 ms (SVC_HTTP_TIMEOUT_MS); is ${proxy.url} overloaded or stuck?\n` +
        `no cached copy of sim project ${project} at ${proxy.url} is there to serve instead; when the server is ` +
        "back, run: <the clone>\n" +
        `svc: git clone of ${remote} failed (exit 128); the lines above say why\n`,
    ),
  );
  t.deepEqual(cacheFolders(env), [], "no cache is made before a listing succeeded");
  t.false(existsSync(join(env.dir, "e")), "no folder is left");
  t.true(
    proxy.requests.some((request) => meets("clone", project, request)),
    "the drip met the listing",
  );

  on = false;
  await runPrinted(t, env, rerun?.[1] ?? "false");
  t.deepEqual(await treeOf(t, env, "e", "origin/main"), await serverTree(sim, project));
});
