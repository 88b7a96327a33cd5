/**
 * The helper's contract with git and with the user's repository (issue 3): stdout carries only protocol;
 * a broken URL is exit 2 with the reason on stderr; an inherited `GIT_DIR` never makes it touch the user's
 * repository when it works on the cache; every sync, connect, request and materialization is audited, and
 * the audit table is append-only.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import Module from "node:module";
import { delimiter, join } from "node:path";
import { Script } from "node:vm";
import test, { type ExecutionContext } from "ava";
import {
  auditRows,
  cacheFolder,
  cacheFolders,
  cacheGit,
  fetchRequests,
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  lastAuditId,
  manyIssues,
  openCacheDb,
  patchIssue,
  remoteHelper,
  run,
  svcUrl,
} from "../testing/git.js";
import { repoRoot } from "../testing/paths.js";
import { givenProject, givenSim, givenTempDir } from "../testing/sim.js";

/** The commands git's packet trace (`GIT_TRACE_PACKET`) shows git sending: `ls-refs`, `fetch`. */
function tracedCommands(traceFile: string): string[] {
  return readFileSync(traceFile, "utf8")
    .split("\n")
    .map((line) => /packet:\s+(\S+)> command=(\S+)/.exec(line))
    .filter((match) => match !== null && match[1] !== "upload-pack")
    .map((match) => match?.[2] ?? "");
}

async function refs(env: GitEnv, args: readonly string[], cwd?: string): Promise<string[]> {
  const result = await git(env, [...args, "for-each-ref", "--format=%(refname) %(objectname)"], { cwd });
  if (result.code !== 0) throw new Error(result.stderr);
  return result.stdout.split("\n").filter((line) => line !== "");
}

test("the helper answers capabilities on stdout with nothing else, and traces only to stderr", async (t) => {
  const sim = await givenSim(t);
  const env = givenGitEnv(t);
  const url = svcUrl(sim.url, "demo");

  for (const trace of [undefined, "1"]) {
    const result = await remoteHelper(env, ["origin", url], {
      input: "capabilities\n\n",
      env: { SVC_TRACE: trace },
    });
    t.is(result.code, 0, result.stderr);
    t.true(result.stdout.endsWith("\n\n"), JSON.stringify(result.stdout));
    const capabilities = result.stdout.slice(0, -2).split("\n");
    for (const capability of capabilities) t.regex(capability, /^\*?[a-z][a-z-]*( \S+)*$/);
    for (const needed of [
      "stateless-connect",
      "import",
      "option",
      "refspec refs/heads/*:refs/svc/origin/*",
    ]) {
      t.true(capabilities.includes(needed), `${needed} in ${JSON.stringify(capabilities)}`);
    }
    if (trace) t.regex(result.stderr, /svc-trace \d+ .*< capabilities/);
    else t.is(result.stderr, "");
  }
  t.deepEqual(cacheFolders(env), [], "answering capabilities opens no cache");
});

test("an invalid URL is exit 2 with the reason on stderr and nothing on stdout", async (t) => {
  const env = givenGitEnv(t);
  for (const url of [
    "svc::not a url",
    "svc::http://127.0.0.1:9/no-projects-here",
    "svc::ftp://127.0.0.1/projects/x",
  ]) {
    const result = await remoteHelper(env, ["origin", url], { input: "list\n\n" });
    t.is(result.code, 2, url);
    t.is(result.stdout, "", url);
    t.regex(
      result.stderr,
      /^svc: remote URL .* (is not a URL|does not name a project|must use http or https)/,
      url,
    );
  }
  const usage = await remoteHelper(env, [], { input: "capabilities\n\n" });
  t.is(usage.code, 2);
  t.is(usage.stdout, "");
  t.regex(usage.stderr, /usage: git-remote-svc <remote> <url>/);

  const viaGit = await git(env, ["ls-remote", "svc::http://127.0.0.1:9/no-projects-here"]);
  t.not(viaGit.code, 0);
  t.regex(viaGit.stderr, /does not name a project; expected svc::http:\/\/127\.0\.0\.1:7878\/projects\/demo/);
  t.deepEqual(cacheFolders(env), [], "a bad URL creates no cache");
});

test("the helper ends quietly when git hangs up on it", async (t) => {
  const env = givenGitEnv(t);
  const result = await remoteHelper(env, ["origin", "svc::http://127.0.0.1:9/projects/demo"], {
    input: "capabilities\n",
    closeStdout: true,
  });
  t.notRegex(result.stderr, /node:events|Unhandled 'error' event|EPIPE/);
  t.is(result.stderr, "");
  t.is(result.code, 0);
});

test("with the user's GIT_DIR (relative) and object directory inherited, the helper reads and writes only the cache", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(5));
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  const url = svcUrl(sim.url, "demo");
  await gitOk(t, env, ["clone", "--filter=blob:none", "--no-checkout", url, "d"]);
  // A local commit the cache must never receive.
  await gitOk(t, env, ["commit", "--allow-empty", "-m", "local only"], { cwd: "d" });
  const local = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d" });
  const userRefsBefore = await refs(env, [], "d");
  const cacheRefsBefore = await refs(env, [`--git-dir=${join(cacheFolder(env), "repo.git")}`]);
  t.deepEqual(
    cacheRefsBefore.map((line) => line.split(" ")[0]),
    ["refs/heads/main"],
  );

  await patchIssue(sim.url, "demo", 2, { title: "Changed while GIT_DIR is set" });
  // What a helper inherits from git (a relative GIT_DIR), plus what a hook's environment adds.
  const userEnv = {
    GIT_DIR: ".git",
    GIT_WORK_TREE: ".",
    GIT_OBJECT_DIRECTORY: join(env.dir, "d", ".git", "objects"),
    GIT_INDEX_FILE: join(env.dir, "d", ".git", "index"),
  };
  const fetch = await git(env, ["fetch", "origin"], { cwd: "d", env: userEnv });
  t.is(fetch.code, 0, fetch.stderr);
  // A lazy fetch (checkout of a --no-checkout clone) with the same environment.
  const checkout = await git(env, ["checkout", "-B", "work", "origin/main"], { cwd: "d", env: userEnv });
  t.is(checkout.code, 0, checkout.stderr);

  const cacheRefsAfter = await cacheGit(env, ["for-each-ref", "--format=%(refname)"]);
  t.is(cacheRefsAfter.stdout, "refs/heads/main\n", "the cache has no refs/remotes or user branches");
  const cacheTip = (await cacheGit(env, ["rev-parse", "main"])).stdout.trim();
  t.not(`refs/heads/main ${cacheTip}`, cacheRefsBefore[0], "the fetch synced a new cache commit");
  t.not(
    (await cacheGit(env, ["cat-file", "-e", local])).code,
    0,
    "the user's local commit stayed out of the cache",
  );

  const userRefsAfter = await refs(env, [], "d");
  const names = (lines: string[]) => lines.map((line) => line.split(" ")[0]);
  t.deepEqual(
    names(userRefsAfter).filter((name) => !names(userRefsBefore).includes(name)),
    ["refs/heads/work"],
    "the only new ref is the branch the user checked out",
  );
  t.true(userRefsAfter.includes(`refs/remotes/origin/main ${cacheTip}`));
  t.true(userRefsAfter.includes(`refs/heads/main ${local}`), "the user's main is untouched");
  t.regex(
    readFileSync(join(env.dir, "d", "issues", "0002.md"), "utf8"),
    /^title: "Changed while GIT_DIR is set"$/m,
  );
  const fsck = await git(env, ["fsck"], { cwd: "d" });
  t.is(fsck.code, 0, fsck.stderr);
});

test("the audit table has a row per sync, connect, request and materialization, and is append-only", async (t) => {
  const sim = await givenSim(t);
  const count = 5;
  await givenProject(sim.url, "demo", manyIssues(count));
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  const trace = join(env.home, "packets");
  await gitOk(t, env, ["clone", "--filter=blob:none", svcUrl(sim.url, "demo"), "d"], {
    env: { GIT_TRACE_PACKET: trace },
  });
  const head = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d" });

  const rows = auditRows(env);
  const commands = tracedCommands(trace);
  t.deepEqual(commands, ["ls-refs", "fetch", "fetch"], "clone: ls-refs + fetch, checkout: one fetch");
  t.deepEqual(
    rows.filter((row) => row.op === "rpc").map((row) => row.detail.command),
    commands,
    "one rpc row per request git sent",
  );
  t.is(rows.filter((row) => row.op === "connect").length, 2, "one connect per helper run");
  const syncs = rows.filter((row) => row.op === "sync");
  t.is(syncs.length, 1);
  t.like(syncs[0]?.detail, { full: true, listed: count, changed: count, deleted: 0, commit: head });
  const materialized = rows.filter((row) => row.op === "materialize");
  t.is(materialized.length, 1);
  t.like(materialized[0]?.detail, { blobs: count, wants: count });
  let bytes = 0;
  for (let id = 1; id <= count; id++) bytes += statSync(join(env.dir, "d", "issues", `000${id}.md`)).size;
  t.is(materialized[0]?.bytes, bytes);
  t.is(fetchRequests(rows).at(-1)?.detail.wants, count);
  for (const row of rows) {
    t.like(row, { backend: "sim", project: "demo" });
    t.regex(row.agent, /^git-remote-svc-\d+$/);
    t.false(Number.isNaN(Date.parse(row.ts)), row.ts);
  }
  t.deepEqual(
    rows.map((row) => row.id),
    [...rows.map((row) => row.id)].sort((a, b) => a - b),
  );

  // A pull after a server change: a sync with a commit, and one blob materialized.
  await patchIssue(sim.url, "demo", 4, { status: "done" });
  const before = lastAuditId(env);
  await gitOk(t, env, ["pull", "--ff-only"], { cwd: "d" });
  const pullRows = auditRows(env, before);
  t.like(pullRows.find((row) => row.op === "sync")?.detail, { changed: 1, full: false });
  t.not(pullRows.find((row) => row.op === "sync")?.detail.commit, null);
  t.deepEqual(
    pullRows.filter((row) => row.op === "materialize").map((row) => row.detail.blobs),
    [1],
  );

  const total = auditRows(env).length;
  const db = openCacheDb(env, { writable: true });
  try {
    for (const sql of [
      "UPDATE audit_events_cache SET op = 'tampered'",
      "DELETE FROM audit_events_cache WHERE id = 1",
      "DELETE FROM audit_events_cache",
    ]) {
      t.throws(() => db.prepare(sql).run(), { any: true, message: /append-only/ }, sql);
    }
  } finally {
    db.close();
  }
  t.is(auditRows(env).length, total);
  t.false(auditRows(env).some((row) => row.op === "tampered"));
});

/**
 * A copy of the built `dist/<folder>` files `names` (and the core/ files the executables load, node_modules
 * linked), so that
 * the code cache files the executable rewrites are the test's own; the bundle's cache is made anew as the
 * build makes it (the checkout's own may have been folded into by other tests). `accepted`: whether V8
 * takes the cache as it is now; `folded`: the commands folded into it so far.
 */
function givenBundleCopy(t: ExecutionContext, folder: "helper" | "cli", names: readonly string[]) {
  const install = givenTempDir(t, "svc-install-");
  const dir = join(install, "dist", folder);
  mkdirSync(dir, { recursive: true });
  for (const name of names) copyFileSync(join(repoRoot, "dist", folder, name), join(dir, name));
  mkdirSync(join(install, "dist", "core"));
  for (const name of ["load-bundle.cjs", "node-version.cjs"])
    copyFileSync(join(repoRoot, "dist", "core", name), join(install, "dist", "core", name));
  const bundle = join(dir, "bundle.cjs");
  const source = Module.wrap(readFileSync(bundle, "utf8"));
  writeFileSync(`${bundle}.cache`, new Script(source, { filename: bundle }).createCachedData());
  symlinkSync(join(repoRoot, "node_modules"), join(install, "node_modules"));
  const accepted = () =>
    new Script(source, { filename: bundle, cachedData: readFileSync(`${bundle}.cache`) })
      .cachedDataRejected === false;
  const folded = () =>
    existsSync(`${bundle}.cache.commands`) ? readFileSync(`${bundle}.cache.commands`, "utf8") : "";
  return { install, folder: dir, bundle, accepted, folded };
}

test("the helper folds each command's code into its code cache once: after the first fetch and the first push, V8 takes the cache", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const {
    install,
    folder: helperDir,
    bundle,
    accepted,
    folded,
  } = givenBundleCopy(t, "helper", ["bin.cjs", "preamble.cjs", "bundle.cjs"]);
  const bin = join(install, "bin");
  mkdirSync(bin);
  symlinkSync(join(helperDir, "bin.cjs"), join(bin, "git-remote-svc"));
  const env = givenGitEnv(t);
  const path = { PATH: [bin, env.env.PATH].join(delimiter) };
  const built = statSync(`${bundle}.cache`).size;
  t.true(accepted(), "the build's cache");

  await gitOk(t, env, ["clone", svcUrl(sim.url, "demo"), "demo"], { env: path });
  t.is(folded(), "stateless-connect\n");
  const afterFetch = statSync(`${bundle}.cache`).size;
  t.true(afterFetch > built, `${afterFetch} bytes after the clone, ${built} from the build`);
  t.true(accepted(), "the cache after the clone");

  const file = join(env.dir, "demo", "issues", "0001.md");
  writeFileSync(file, `${readFileSync(file, "utf8")}One more line.\n`);
  await gitOk(t, env, ["commit", "-qam", "edit"], { cwd: "demo" });
  await gitOk(t, env, ["push", "-q"], { cwd: "demo", env: path });
  t.is(folded(), "stateless-connect\npush\n");
  t.true(accepted(), "the cache after the push");

  // Folded once: a second fetch leaves both files as they are.
  const before = readFileSync(`${bundle}.cache`);
  await gitOk(t, env, ["fetch", "-q"], { cwd: "demo", env: path });
  t.true(readFileSync(`${bundle}.cache`).equals(before));
  t.is(folded(), "stateless-connect\npush\n");
});

test("svc init folds its code into the command line's code cache once; other commands leave it as it is", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const { folder: cliDir, bundle, accepted, folded } = givenBundleCopy(t, "cli", ["bin.cjs", "bundle.cjs"]);
  const env = givenGitEnv(t);
  const svcCopy = (args: readonly string[]) => run(env, process.execPath, [join(cliDir, "bin.cjs"), ...args]);
  const built = readFileSync(`${bundle}.cache`);

  const list = await svcCopy(["--version"]);
  t.is(list.code, 0, list.stderr);
  t.true(readFileSync(`${bundle}.cache`).equals(built), "a command not folded leaves the cache");
  const refused = await svcCopy(["init", "sim::nope", "nope", "--origin", sim.url]);
  t.not(refused.code, 0);
  t.is(folded(), "", "a failed init folds nothing");

  const init = await svcCopy(["init", "sim::demo", "demo", "--origin", sim.url]);
  t.is(init.code, 0, init.stderr);
  t.is(folded(), "init\n");
  const afterInit = readFileSync(`${bundle}.cache`);
  t.true(
    afterInit.length > built.length,
    `${afterInit.length} bytes after the init, ${built.length} from the build`,
  );
  t.true(accepted(), "the cache after the init");

  const again = await svcCopy(["init", "sim::demo", "demo-2", "--origin", sim.url]);
  t.is(again.code, 0, again.stderr);
  t.true(readFileSync(`${bundle}.cache`).equals(afterInit), "folded once");
  t.is(folded(), "init\n");
});
