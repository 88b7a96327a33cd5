/**
 * History you can travel in (issue 16): `svc log` and `svc init --at` on a simulator project with five
 * server-side changes at known times, each brought by a `git fetch` (a sync that writes a state commit).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import {
  deleteIssue,
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  manyIssues,
  patchIssue,
  run,
  svc,
} from "../testing/git.js";
import { givenProject, givenSim } from "../testing/sim.js";
import { givenWikiEnv, wikiRemote } from "../testing/wiki.js";

interface ServerIssue {
  readonly frontmatter: { readonly id: number; readonly updated_at: string };
}

/** Every file of the working tree's `issues/`, name → contents. */
function issueFiles(env: GitEnv, dir: string): Map<string, string> {
  const folder = join(env.dir, dir, "issues");
  return new Map(readdirSync(folder).map((name) => [name, readFileSync(join(folder, name), "utf8")]));
}

interface LogJson {
  readonly lastSyncAt: string | null;
  readonly states: {
    readonly commit: string;
    readonly op: string;
    readonly seenAt: string;
    readonly pushedBy: string | null;
    readonly records: number | null;
    readonly changes: {
      readonly path: string;
      readonly change: string;
      readonly fields: string[] | null;
      readonly bodyChanged: boolean | null;
      readonly updatedAt: string | null;
    }[];
  }[];
}

async function logJson(t: ExecutionContext, env: GitEnv, args: readonly string[]): Promise<LogJson> {
  const result = await svc(env, ["log", "--json", ...args]);
  t.is(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as LogJson;
}

/** A project of three issues cloned into `d`, then five server changes, each followed by a fetch. */
async function givenFiveChanges(t: ExecutionContext) {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const env = givenGitEnv(t);
  const init = await svc(env, ["init", "sim::demo", "d", "--origin", sim.url]);
  t.is(init.code, 0, init.stderr);
  const changes: (() => Promise<string | undefined>)[] = [
    async () =>
      ((await patchIssue(sim.url, "demo", 1, { status: "done" })) as ServerIssue).frontmatter.updated_at,
    async () =>
      ((await patchIssue(sim.url, "demo", 2, { title: "Renamed on the server" })) as ServerIssue).frontmatter
        .updated_at,
    async () =>
      ((await givenProject(sim.url, "demo", [{ title: "Added on the server" }]))[0] as ServerIssue)
        .frontmatter.updated_at,
    async () =>
      ((await patchIssue(sim.url, "demo", 1, { body: "Rewritten on the server.\n" })) as ServerIssue)
        .frontmatter.updated_at,
    async () => {
      await deleteIssue(sim.url, "demo", 3);
      return undefined;
    },
  ];
  /** The server's update time of each change (none for the deletion). */
  const serverTimes: (string | undefined)[] = [];
  /** A time after each change was fetched and before the next one was made. */
  const after: string[] = [];
  /** The working tree's files after each change was pulled. */
  const snapshots: Map<string, string>[] = [];
  for (const change of changes) {
    serverTimes.push(await change());
    // A deletion is found by a full listing only (svc sync --reconcile); the others by a fetch's delta sync.
    const sync = await svc(env, ["sync", "--reconcile", "d"]);
    t.is(sync.code, 0, sync.stderr);
    await gitOk(t, env, ["merge", "--ff-only", "-q", "origin/main"], { cwd: "d" });
    snapshots.push(issueFiles(env, "d"));
    after.push(new Date().toISOString());
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { sim, env, serverTimes, after, snapshots };
}

test("svc log: each of five server changes, newest first, with its record, fields and server time", async (t) => {
  const { env, serverTimes } = await givenFiveChanges(t);
  const log = await logJson(t, env, ["d"]);
  t.is(log.states.length, 6, "five changes and the first listing");
  const [five, four, three, two, one, first] = log.states;
  t.is(first?.op, "import");
  t.is(first?.records, 3);
  t.deepEqual(first?.changes, []);
  t.deepEqual(
    one?.changes.map((c) => [c.path, c.change, c.fields, c.bodyChanged, c.updatedAt]),
    [["issues/0001.md", "changed", ["status"], false, serverTimes[0]]],
  );
  t.deepEqual(
    two?.changes.map((c) => [c.path, c.change, c.fields, c.updatedAt]),
    [["issues/0002.md", "changed", ["title"], serverTimes[1]]],
  );
  t.deepEqual(
    three?.changes.map((c) => [c.path, c.change, c.updatedAt]),
    [["issues/0004.md", "created", serverTimes[2]]],
  );
  t.deepEqual(
    four?.changes.map((c) => [c.path, c.change, c.fields, c.bodyChanged, c.updatedAt]),
    [["issues/0001.md", "changed", [], true, serverTimes[3]]],
  );
  t.deepEqual(
    five?.changes.map((c) => [c.path, c.change, c.updatedAt]),
    [["issues/0003.md", "deleted", null]],
  );
  for (const [newer, older] of [
    [five, four],
    [four, three],
    [three, two],
    [two, one],
    [one, first],
  ]) {
    t.true((newer?.seenAt ?? "") >= (older?.seenAt ?? ""), "newest first");
  }
  t.is(five?.commit, await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }));

  const text = await svc(env, ["log", "d"]);
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, new RegExp(`changed  issues/0001\\.md  status  at ${serverTimes[0]}`));
  t.regex(text.stdout, /created {2}issues\/0004\.md {2}at /);
  t.regex(text.stdout, /deleted {2}issues\/0003\.md\n/);
  t.regex(text.stdout, /first listing {2}3 records/);
  t.regex(
    text.stderr,
    /6 states of sim project demo as this machine's cache saw them; last synced .*; svc sync d brings/,
  );
});

test("svc log --since and -- <file> keep the changes asked for", async (t) => {
  const { env, after } = await givenFiveChanges(t);
  const since = await logJson(t, env, ["d", "--since", after[2] ?? ""]);
  t.deepEqual(
    since.states.flatMap((state) => state.changes.map((c) => `${c.change} ${c.path}`)),
    ["deleted issues/0003.md", "changed issues/0001.md"],
  );
  const one = await logJson(t, env, ["d", "--", "issues/0001.md"]);
  t.deepEqual(
    one.states.flatMap((state) => state.changes.map((c) => `${c.change} ${c.path}`)),
    ["changed issues/0001.md", "changed issues/0001.md"],
  );
  // From inside the tree, a path is read relative to the current folder, as git reads it.
  const inside = await svc(env, ["log", "--json", "--", "0002.md"], { cwd: "d/issues" });
  t.is(inside.code, 0, inside.stderr);
  t.deepEqual(
    (JSON.parse(inside.stdout) as LogJson).states.flatMap((s) => s.changes.map((c) => c.path)),
    ["issues/0002.md"],
  );
  const bad = await svc(env, ["log", "d", "--since", "last tuesday"]);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--since "last tuesday" is not a time svc can read; use one of: 2026-11-23T14:30:00Z/);
});

test("svc init --at checks out the state the cache held then, read-only; its push names a command that works", async (t) => {
  const { env, after, snapshots } = await givenFiveChanges(t);
  const origin = await gitOk(t, env, ["config", "remote.origin.url"], { cwd: "d" });
  const simOrigin = new URL(origin.slice(5)).origin;
  const init = await svc(env, ["init", "sim::demo", "then", "--origin", simOrigin, "--at", after[2] ?? ""]);
  t.is(init.code, 0, init.stderr);
  t.regex(init.stderr, /then shows .* as this machine's cache saw it at .*; it is read-only/);
  t.deepEqual(
    issueFiles(env, "then"),
    snapshots[2],
    "every file as it was after the third change, byte for byte",
  );
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "then" }), "");
  t.is(await gitOk(t, env, ["config", "svc.at"], { cwd: "then" }), after[2]);

  writeAndCommit(env, "then");
  await gitOk(t, env, ["commit", "-qam", "Edit the old state"], { cwd: "then" });
  const push = await git(env, ["push"], { cwd: "then" });
  t.not(push.code, 0);
  t.regex(push.stderr, /it is read-only, and nothing was written/);
  t.regex(push.stderr, /\[remote rejected\] main -> main \(read-only/);
  const command = /make a working tree of the current state and edit there:\n {2}(svc init .*)\n/.exec(
    push.stderr,
  )?.[1];
  t.truthy(command, push.stderr);
  const now = await run(env, "sh", ["-c", command ?? "false"], { cwd: "then" });
  t.is(now.code, 0, now.stderr);
  t.deepEqual(issueFiles(env, "then-now"), snapshots[4], "the new tree is the current state");

  // Before the first state the cache saw: refused, naming a time that works.
  const early = await svc(env, [
    "init",
    "sim::demo",
    "early",
    "--origin",
    simOrigin,
    "--at",
    "2001-01-01T00:00:00Z",
  ]);
  t.is(early.code, 2);
  const suggested = /e\.g\. --at (\S+)/.exec(early.stderr)?.[1];
  t.truthy(suggested, early.stderr);
  const retry = await svc(env, [
    "init",
    "sim::demo",
    "early",
    "--origin",
    simOrigin,
    "--at",
    suggested ?? "",
  ]);
  t.is(retry.code, 0, retry.stderr);
  t.is(issueFiles(env, "early").size, 3, "the first listing's three issues");
});

/** Changes the title line of the first issue file in `dir`. */
function writeAndCommit(env: GitEnv, dir: string): void {
  const path = join(env.dir, dir, "issues", "0001.md");
  const text = readFileSync(path, "utf8");
  writeFileSync(path, text.replace(/^title: .*$/m, "title: Edited in the past"));
}

test("a push from this machine is a state of its own, with the pushed commit's author", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const env = givenGitEnv(t);
  t.is((await svc(env, ["init", "sim::demo", "d", "--origin", sim.url])).code, 0);
  writeAndCommit(env, "d");
  await gitOk(t, env, ["commit", "-qam", "Edit"], { cwd: "d" });
  const author = await gitOk(t, env, ["log", "-1", "--format=%an <%ae>"], { cwd: "d" });
  await gitOk(t, env, ["push", "-q"], { cwd: "d" });
  const log = await logJson(t, env, ["d"]);
  const push = log.states[0];
  t.is(push?.op, "push");
  t.is(push?.pushedBy, author);
  t.deepEqual(
    push?.changes.map((c) => [c.path, c.fields]),
    [["issues/0001.md", ["title"]]],
  );
});

test("svc log without a cache says which command makes one", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(1));
  const env = givenGitEnv(t);
  t.is((await svc(env, ["init", "sim::demo", "d", "--origin", sim.url])).code, 0);
  const other = givenGitEnv(t);
  // The same working tree seen with another (empty) cache folder.
  const log = await svc(other, ["log", join(env.dir, "d")]);
  t.is(log.code, 2);
  t.regex(log.stderr, /this machine has no cache of sim project demo .*; svc sync \S+ makes one/);
  const fix = /; (svc sync \S+) makes one/.exec(log.stderr)?.[1] ?? "false";
  t.is((await run(other, "sh", ["-c", fix])).code, 0);
  t.is((await svc(other, ["log", join(env.dir, "d")])).code, 0);
});

test("svc log names who made each wiki page version, as the wiki says", async (t) => {
  const wiki = await givenFakeWiki(t);
  const [id] = wiki.seedPages("SVC", 2);
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);
  const edited = wiki.editPage(id ?? "", { title: "Retitled on the server" });
  await gitOk(t, env, ["fetch", "-q"], { cwd: "d" });
  const log = await logJson(t, env, ["d"]);
  const change = log.states[0]?.changes[0] as unknown as {
    path: string;
    fields: string[];
    changedBy: string;
  };
  t.is(change.path, `pages/${id}.md`);
  t.deepEqual(change.fields, ["title"]);
  t.is(change.changedBy, edited.version.authorId);
  t.regex((await svc(env, ["log", "d"])).stdout, new RegExp(`by ${edited.version.authorId}\\n`));
});
