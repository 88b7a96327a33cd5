/**
 * Two rules of SECURITY.md that no other test proves on their own (issue 17):
 * - the cache holds other people's records: its folder is 0700 and its database files 0600, even under a
 *   umask of 000, for a new cache and for one rebuilt after it was lost;
 * - credentials never reach a trace: with `SVC_TRACE`, `GIT_TRACE` and `GIT_TRACE_PACKET` on, neither the
 *   wiki's API token nor the Basic credentials built from it appear in any output.
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import { cacheFolder, type GitEnv, git, givenGitEnv, run, svcUrl } from "../testing/git.js";
import { commitAll, editWorkFile } from "../testing/push.js";
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
