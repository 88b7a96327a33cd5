/**
 * Two rules of SECURITY.md that no other test proves on their own (issue 17):
 * - the cache holds other people's records: its folder is 0700 and its database files 0600, even under a
 *   umask of 000, for a new cache and for one rebuilt after it was lost;
 * - a cache folder someone else may change is not used: group- or world-writable, or another user's;
 * - credentials never reach a trace: with `SVC_TRACE`, `GIT_TRACE` and `GIT_TRACE_PACKET` on, neither the
 *   wiki's API token nor the Basic credentials built from it appear in any output.
 */
import { chmodSync, chownSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import { cacheFolder, type GitEnv, git, givenGitEnv, run, svcUrl } from "../testing/git.js";
import { commitAll, editWorkFile, lastSimAuditId } from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";
import { givenWikiEnv } from "../testing/wiki.js";

/** The permission bits of `path`. */
function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

/** The cache folder is 0700 and every SQLite file in it (`cache.db`, its `-wal` and `-shm`) is 0600. */
function assertPrivate(t: ExecutionContext, env: GitEnv): void {
  const dir = cacheFolder(env);
  t.is(modeOf(dir).toString(8), "700", dir);
  const databases = readdirSync(dir).filter((name) => name.startsWith("cache.db"));
  t.true(databases.includes("cache.db"));
  for (const name of databases) t.is(modeOf(join(dir, name)).toString(8), "600", name);
}

test("the cache folder is 0700 and its database files 0600 under umask 000, new and rebuilt", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "private", [{ title: "One" }, { title: "Two" }]);
  const env = givenGitEnv(t);
  const url = svcUrl(sim.url, "private");
  const clone = await run(env, "sh", ["-c", `umask 000 && git clone -q '${url}' d`]);
  t.is(clone.code, 0, clone.stderr);
  assertPrivate(t, env);

  rmSync(cacheFolder(env), { recursive: true, force: true });
  const fetch = await run(env, "sh", ["-c", "umask 000 && git fetch -q"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  t.regex(fetch.stderr, /rebuilt the cache/);
  assertPrivate(t, env);
});

/** The command after `Run: ` in a refusal. */
function printedCommand(t: ExecutionContext, stderr: string): string {
  const command = /Run: (.+)$/m.exec(stderr)?.[1];
  if (command === undefined) t.fail(`no command in: ${stderr}`);
  return command ?? "";
}

test("a cache folder others may write to is refused before anything is read; the printed command fixes it and fetches", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "shared", [{ title: "One" }]);
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  const clone = await git(env, ["clone", "-q", svcUrl(sim.url, "shared"), "d"]);
  t.is(clone.code, 0, clone.stderr);
  const dir = cacheFolder(env);
  await givenProject(sim.url, "shared", [{ title: "Two" }]);
  const requests = lastSimAuditId(sim);

  chmodSync(dir, 0o775);
  const refused = await git(env, ["fetch"], { cwd: "d" });
  t.is(refused.code, 128);
  t.regex(refused.stderr, /can be written by its group \(mode 0775\).*nothing was read from it/s);
  const command = printedCommand(t, refused.stderr);
  t.true(command.startsWith(`chmod 700 ${dir} && git fetch`), command);
  t.is(lastSimAuditId(sim), requests, "the server was not asked either");

  const fixed = await run(env, "sh", ["-c", command], { cwd: "d" });
  t.is(fixed.code, 0, fixed.stderr);
  t.is(modeOf(dir).toString(8), "700");
  const files = await git(env, ["ls-tree", "-r", "--name-only", "origin/main"], { cwd: "d" });
  t.is(files.stdout.trim().split("\n").length, 2, "the fetch after the fix brought the second issue");
});

test("a cache folder of another user is refused, naming a cache folder of your own", async (t) => {
  if (process.getuid?.() !== 0) {
    t.log("needs root to give the folder to another user; the mode test covers the same check");
    t.pass();
    return;
  }
  const sim = await givenSim(t);
  await givenProject(sim.url, "theirs", [{ title: "One" }]);
  const env = givenGitEnv(t);
  const clone = await git(env, ["clone", "-q", svcUrl(sim.url, "theirs"), "d"]);
  t.is(clone.code, 0, clone.stderr);
  chownSync(cacheFolder(env), 4242, 4242);
  const refused = await git(env, ["fetch"], { cwd: "d" });
  t.is(refused.code, 128);
  t.regex(refused.stderr, /belongs to another user \(uid 4242, you are 0\)/);
  const command = printedCommand(t, refused.stderr);
  t.is(command, `export SVC_CACHE_DIR="$HOME/.cache/svc-$(id -u)" && git fetch`);
  const fixed = await run(env, "sh", ["-c", command], { cwd: "d" });
  t.is(fixed.code, 0, fixed.stderr);
  t.regex(fixed.stderr, /rebuilt the cache/);
});

test("no trace carries a credential: SVC_TRACE, GIT_TRACE and GIT_TRACE_PACKET through clone, fetch and push", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki, { SVC_TRACE: "1", GIT_TRACE: "1", GIT_TRACE_PACKET: "1" });
  const { email, token } = wiki.credentials;
  const basic = Buffer.from(`${email}:${token}`).toString("base64");

  const init = await run(env, "svc", ["init", "wiki::SVC", "d"]);
  t.is(init.code, 0, init.stderr);
  const pages = readdirSync(join(env.dir, "d", "pages")).sort();
  editWorkFile(env, "d", `pages/${pages[0]}`, (text) => `${text}<p>traced</p>`);
  await commitAll(t, env, "d", "Edit a page");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);

  for (const result of [init, push, fetch]) {
    t.regex(result.stderr, /svc-trace /, "the trace was on");
    for (const secret of [token, basic]) {
      t.false(result.stdout.includes(secret) || result.stderr.includes(secret));
    }
  }
});
