/**
 * Local faults are named, never "internal error" (issue 31, item 4): an `SVC_CACHE_DIR` that is a file or a
 * relative path, a full file system (at svc init, at a fetch, at a push before and while it writes), a
 * read-only one, and permission bits. Each failure says the path, what failed, what was written, and a
 * command; the test runs that command as printed. Real git, a real simulator, a real tmpfs (mount(8) and
 * setpriv(1) need root: where they fail, the test logs `SKIP: …` and passes without checking).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { cacheFolderName } from "../cache/cache.js";
import { parseRemoteUrl } from "../core/remote-url.js";
import type { RunningSim } from "../server/sim/server.js";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { printedCommand } from "../testing/faults.js";
import {
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  manyIssues,
  patchIssue,
  type RunResult,
  run,
  svc,
  svcUrl,
} from "../testing/git.js";
import { givenTmpfs, withoutPermissionOverride } from "../testing/mounts.js";
import {
  commitAll,
  editWorkFile,
  lastSimAuditId,
  setField,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

const SLUG = "faults";

/** What `failureReport` prints for a bug: none of these may. */
const CRASH = /internal error|this is a bug|^\s+at .+:\d+:\d+\)?$/m;

/** A simulator with a project of two issues, an environment with `extra`, and its clone `d`. */
async function givenClone(
  t: ExecutionContext,
  extra: Readonly<Record<string, string>> = {},
  origin?: (sim: RunningSim) => Promise<string>,
): Promise<{ sim: RunningSim; env: GitEnv; url: string }> {
  const sim = await givenSim(t);
  await givenProject(sim.url, SLUG, manyIssues(2));
  const url = svcUrl(origin ? await origin(sim) : sim.url, SLUG);
  const env = givenGitEnv(t, { SVC_PROGRESS: "off", ...extra });
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", url, "d"]);
  return { sim, env, url };
}

/** The cache folder of the clone of `url` under `root`. */
function cacheDirOf(root: string, url: string): string {
  return join(root, cacheFolderName(parseRemoteUrl(url)));
}

/** `command` run through `sh -c` as a user pasting it would, from `cwd` (the work folder by default). */
async function runAsPrinted(
  t: ExecutionContext,
  env: GitEnv,
  command: string,
  options: {
    cwd?: string;
    env?: Readonly<Record<string, string | undefined>>;
    prefix?: readonly string[];
  } = {},
): Promise<RunResult> {
  const [program = "sh", ...args] = [...(options.prefix ?? []), "sh", "-c", command];
  const ran = await run(env, program, args, { cwd: options.cwd, env: options.env });
  t.is(ran.code, 0, `${command}\n${ran.stderr}`);
  return ran;
}

test("SVC_CACHE_DIR naming a file: git clone, git fetch (128) and svc sync (2) say so, ask the server nothing and write nothing; the printed command clones", async (t) => {
  const { sim, env, url } = await givenClone(t);
  const file = join(env.home, "notes.txt");
  writeFileSync(file, "mine\n");
  const bad = { SVC_CACHE_DIR: file };
  const fallback = join(env.home, ".cache", "svc");
  const said = `svc: SVC_CACHE_DIR=${file} cannot be used: ${file} is a file, not a folder`;
  const requests = lastSimAuditId(sim);

  const clone = await git(env, ["clone", "--filter=blob:none", url, "c"], { env: bad });
  t.is(clone.code, 128);
  t.is(
    clone.stderr,
    `Cloning into 'c'...\n${said}; nothing was fetched. Move that file away, or to use svc's default folder ${fallback}, run: unset SVC_CACHE_DIR && git clone --filter=blob:none ${url} c\n`,
  );
  const fetch = await git(env, ["fetch"], { cwd: "d", env: bad });
  t.is(fetch.code, 128);
  t.is(
    fetch.stderr,
    `${said}; nothing was fetched. Move that file away, or to use svc's default folder ${fallback}, run: unset SVC_CACHE_DIR && git fetch\n`,
  );
  const sync = await svc(env, ["sync"], { cwd: "d", env: bad });
  t.is(sync.code, 2);
  t.is(
    sync.stderr,
    `${said}; nothing was changed. Move that file away, or to use svc's default folder ${fallback}, run: unset SVC_CACHE_DIR && svc sync\n`,
  );
  t.is(lastSimAuditId(sim), requests, "no request reached the server");
  t.is(readFileSync(file, "utf8"), "mine\n");
  t.false(existsSync(join(env.dir, "c")));

  await runAsPrinted(t, env, printedCommand(t, clone.stderr, /^svc: SVC_CACHE_DIR=/m), { env: bad });
  t.true(existsSync(join(env.dir, "c", "issues", "0001.md")));
  t.true(existsSync(join(cacheDirOf(fallback, url), "cache.db")));
  await runAsPrinted(t, env, printedCommand(t, sync.stderr, /^svc: SVC_CACHE_DIR=/m), { cwd: "d", env: bad });
});

test("a relative SVC_CACHE_DIR is refused by git clone, git fetch (128) and svc sync (2): no cache lands in a working tree; the printed command clones", async (t) => {
  const { env, url } = await givenClone(t);
  const relative = { SVC_CACHE_DIR: ".svc-cache" };
  const fallback = join(env.home, ".cache", "svc");
  const said =
    "svc: SVC_CACHE_DIR=.svc-cache is a relative path, which names another folder for each folder svc runs in " +
    "(git starts it in the folder of a git clone, at the top of the working tree for a fetch or a push), one of " +
    "them inside your working tree, where git add -A would stage the cache's files";
  const then = `Set SVC_CACHE_DIR to an absolute path outside your working trees, or to use svc's default folder ${fallback}, run: unset SVC_CACHE_DIR &&`;

  const clone = await git(env, ["clone", "--filter=blob:none", url, "c"], { env: relative });
  t.is(clone.code, 128);
  t.is(
    clone.stderr,
    `Cloning into 'c'...\n${said}; nothing was fetched. ${then} git clone --filter=blob:none ${url} c\n`,
  );
  const fetch = await git(env, ["fetch"], { cwd: "d", env: relative });
  t.is(fetch.code, 128);
  t.is(fetch.stderr, `${said}; nothing was fetched. ${then} git fetch\n`);
  const sync = await svc(env, ["sync"], { cwd: "d", env: relative });
  t.is(sync.code, 2);
  t.is(sync.stderr, `${said}; nothing was changed. ${then} svc sync\n`);
  t.false(existsSync(join(env.dir, ".svc-cache")));
  t.false(existsSync(join(env.dir, "d", ".svc-cache")));
  t.is(await gitOk(t, env, ["status", "--porcelain", "--ignored"], { cwd: "d" }), "");

  await runAsPrinted(t, env, printedCommand(t, clone.stderr, /^svc: SVC_CACHE_DIR=/m), { env: relative });
  t.true(existsSync(join(env.dir, "c", "issues", "0001.md")));
  t.true(existsSync(join(cacheDirOf(fallback, url), "cache.db")));
});

test("a full file system: svc init (2), git fetch (128), git push (1) and svc sync (2) name it and write nothing; once there is space the printed commands work", async (t) => {
  const fs = givenTmpfs(t);
  if (!fs) {
    t.pass();
    return;
  }
  const sim = await givenSim(t);
  await givenProject(sim.url, SLUG, manyIssues(2));
  const url = svcUrl(sim.url, SLUG);
  const env = givenGitEnv(t, { SVC_CACHE_DIR: fs.dir, SVC_PROGRESS: "off" });
  const folder = cacheFolderName(parseRemoteUrl(url));
  const dir = join(fs.dir, folder);

  fs.fill();
  const init = await svc(env, ["init", `sim::${SLUG}`, "d", "--origin", sim.url]);
  t.is(init.code, 2);
  const clone = `git clone --filter=blob:none --origin origin ${url} d`;
  t.is(
    init.stderr,
    "Cloning into 'd'...\n" +
      `svc: the file system of ${fs.dir} is full: ${dir}.lock: SQLITE_FULL (database or disk is full); nothing was fetched. ` +
      `Free space on it (df -h ${fs.dir} shows how much is left), then run: ${clone}\n` +
      `svc: git clone of ${url} failed (exit 128); the lines above say why\n`,
  );
  t.deepEqual(readdirSync(fs.dir).sort(), ["filler", `${folder}.lock`], "no cache folder, no build folder");
  t.false(existsSync(join(env.dir, "d")));
  fs.free();
  t.is(printedCommand(t, init.stderr, /^svc: the file system/m), clone);
  await runAsPrinted(t, env, clone);

  await patchIssue(sim.url, SLUG, 1, { title: "Changed on the server" });
  editWorkFile(env, "d", "issues/0002.md", (text) => setField(text, "title", "Changed here"));
  await commitAll(t, env, "d", "Retitle 2");
  const tracking = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  const writes = lastSimAuditId(sim);
  fs.fill();
  const full = (outcome: string, command: string) =>
    `svc: the file system of ${dir} is full: ${dir}/cache.db: SQLITE_IOERR_SHMSIZE (disk I/O error); ${outcome}. ` +
    `Free space on it (df -h ${dir} shows how much is left), then run: ${command}\n`;
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 128);
  t.is(fetch.stderr, full("nothing was fetched", "git fetch"));
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1);
  t.is(
    push.stderr,
    `${full("nothing was written to the server", "git push")}error: failed to push some refs to '${url}'\n`,
  );
  const sync = await svc(env, ["sync"], { cwd: "d" });
  t.is(sync.code, 2);
  t.is(sync.stderr, full("nothing was changed", "svc sync"));
  t.deepEqual(simWrites(sim, writes), [], "nothing was written to the server");
  t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), tracking);

  fs.free();
  await runAsPrinted(t, env, printedCommand(t, fetch.stderr, /^svc: the file system/m), { cwd: "d" });
  t.not(
    await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }),
    tracking,
    "the fetch brought the change",
  );
  await runAsPrinted(t, env, printedCommand(t, push.stderr, /^svc: the file system/m), { cwd: "d" });
  t.deepEqual(
    simWrites(sim, writes).map((write) => `${write.method} ${write.path} ${write.status}`),
    [`PATCH /projects/${SLUG}/issues/2 200`],
  );
});

test("a disk that fills while a push writes: it says which writes reached the server; pushing again as printed finishes without creating anything twice", async (t) => {
  const fs = givenTmpfs(t);
  if (!fs) {
    t.pass();
    return;
  }
  let proxy: Awaited<ReturnType<typeof givenFaultProxy>> | undefined;
  const { sim, env, url } = await givenClone(t, { SVC_CACHE_DIR: fs.dir }, async (running) => {
    proxy = await givenFaultProxy(t, running.url);
    return proxy.url;
  });
  const dir = cacheDirOf(fs.dir, url);
  for (const name of ["a", "b", "c"])
    writeWorkFile(env, "d", `issues/new-${name}.md`, `---\ntitle: New ${name}\n---\nBody ${name}.\n`);
  await commitAll(t, env, "d", "Three new issues");
  const writes = lastSimAuditId(sim);
  // The disk fills while the simulator takes the second create: it commits it, and the helper cannot note
  // the answer in its cache.
  proxy?.setFault((request) => {
    if (request.method === "POST" && request.nth === 1) fs.fill();
    return undefined;
  });

  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1);
  t.is(
    push.stderr,
    "svc: created record 3 from issues/new-a.md (it becomes issues/0003.md)\n" +
      `svc: the file system of ${dir} is full: ${dir}/cache.db: SQLITE_FULL (database or disk is full); ` +
      "2 of 3 writes reached the server and are kept (the cache could not note the last, the create from " +
      "issues/new-b.md; the next push finds it on the server and does not send it again). " +
      `Free space on it (df -h ${dir} shows how much is left), then run: git push\n` +
      `To ${url}\n` +
      " ! [remote rejected] main -> main (the cache's file system is full; partial: 2 of 3 writes done)\n" +
      `error: failed to push some refs to '${url}'\n`,
  );
  t.is(sim.store.getProject(SLUG)?.issue_count, 4);
  t.notRegex(push.stderr, CRASH);

  proxy?.setFault(undefined);
  fs.free();
  const again = await runAsPrinted(t, env, printedCommand(t, push.stderr, /^svc: the file system/m), {
    cwd: "d",
  });
  t.regex(
    again.stderr,
    /^svc: issues\/new-b\.md was created as record 4 \(issues\/0004\.md\) by a push that was cut off before the answer arrived; it is not created again$/m,
  );
  t.deepEqual(
    simWrites(sim, writes).map((write) => `${write.method} ${write.path} ${write.status}`),
    [
      `POST /projects/${SLUG}/issues 201`,
      `POST /projects/${SLUG}/issues 201`,
      `POST /projects/${SLUG}/issues 201`,
    ],
    "each create once",
  );
  t.deepEqual(
    sim.store.listIssues(SLUG).map((issue) => issue.frontmatter.title),
    ["Issue 1", "Issue 2", "New a", "New b", "New c"],
  );
});

test("a read-only file system: git fetch (128), git push (1) and svc sync (2) name it and write nothing; both printed ways out work", async (t) => {
  const fs = givenTmpfs(t);
  if (!fs) {
    t.pass();
    return;
  }
  const { sim, env, url } = await givenClone(t, { SVC_CACHE_DIR: fs.dir });
  const dir = cacheDirOf(fs.dir, url);
  const fallback = join(env.home, ".cache", "svc");
  editWorkFile(env, "d", "issues/0002.md", (text) => setField(text, "title", "Changed here"));
  await commitAll(t, env, "d", "Retitle 2");
  const writes = lastSimAuditId(sim);
  fs.readOnly();
  const readOnly = (outcome: string, command: string) =>
    `svc: the file system of ${dir} is read-only: ${dir}/cache.db: SQLITE_CANTOPEN (unable to open database file); ${outcome}. ` +
    `Once it is writable again, run: ${command}\n` +
    "  or keep svc's caches on another file system (a new cache is built there from a full listing; it does not " +
    `know the creates of a push that was cut off before): to use svc's default folder ${fallback}, run: unset SVC_CACHE_DIR && ${command}\n`;

  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 128);
  t.is(fetch.stderr, readOnly("nothing was fetched", "git fetch"));
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1);
  t.is(
    push.stderr,
    `${readOnly("nothing was written to the server", "git push")}error: failed to push some refs to '${url}'\n`,
  );
  const sync = await svc(env, ["sync"], { cwd: "d" });
  t.is(sync.code, 2);
  t.is(sync.stderr, readOnly("nothing was changed", "svc sync"));
  t.deepEqual(simWrites(sim, writes), []);

  // The way out while it stays read-only: a cache in the default folder, which continues this clone's history.
  const elsewhere = /^ {2}or keep svc's caches/m;
  await runAsPrinted(t, env, printedCommand(t, fetch.stderr, elsewhere), { cwd: "d" });
  t.true(existsSync(join(cacheDirOf(fallback, url), "cache.db")));
  // And once it is writable again: the cache there, which was never changed, serves as before.
  fs.writable();
  await runAsPrinted(t, env, printedCommand(t, fetch.stderr, /^svc: the file system/m), { cwd: "d" });
  await runAsPrinted(t, env, printedCommand(t, push.stderr, /^svc: the file system/m), { cwd: "d" });
  t.deepEqual(
    simWrites(sim, writes).map((write) => `${write.method} ${write.path} ${write.status}`),
    [`PATCH /projects/${SLUG}/issues/2 200`],
  );
});

test("permission denied in the cache (its database read-only for its owner): git fetch (128) and git push (1) name the file; the printed chmod and command work", async (t) => {
  const prefix = withoutPermissionOverride(t);
  if (!prefix) {
    t.pass();
    return;
  }
  const { sim, env, url } = await givenClone(t);
  const dir = cacheDirOf(env.cacheRoot, url);
  editWorkFile(env, "d", "issues/0002.md", (text) => setField(text, "title", "Changed here"));
  await commitAll(t, env, "d", "Retitle 2");
  const writes = lastSimAuditId(sim);
  await run(env, "chmod", ["0400", join(dir, "cache.db")]);
  const denied = (path: string, outcome: string, command: string) =>
    `svc: permission denied: svc cannot write ${path}: SQLITE_READONLY (attempt to write a readonly database); ${outcome}. ` +
    `Make it writable again, run: chmod -R u+rwX ${dir} && ${command}\n`;

  const fetch = await run(env, prefix[0] as string, [...prefix.slice(1), "git", "fetch"], { cwd: "d" });
  t.is(fetch.code, 128);
  t.true(
    fetch.stderr.startsWith(denied(join(dir, "cache.db"), "nothing was fetched", "git fetch")),
    fetch.stderr,
  );
  t.notRegex(fetch.stderr, CRASH);
  const push = await run(env, prefix[0] as string, [...prefix.slice(1), "git", "push"], { cwd: "d" });
  t.is(push.code, 1);
  t.is(
    push.stderr,
    `${denied(join(dir, "cache.db"), "nothing was written to the server", "git push")}error: failed to push some refs to '${url}'\n`,
  );
  t.deepEqual(simWrites(sim, writes), []);

  await runAsPrinted(t, env, printedCommand(t, push.stderr, /^svc: permission denied/m), {
    cwd: "d",
    prefix,
  });
  t.deepEqual(
    simWrites(sim, writes).map((write) => `${write.method} ${write.path} ${write.status}`),
    [`PATCH /projects/${SLUG}/issues/2 200`],
  );
});
