/**
 * The mirror (cli/mirror/; issue 16; DESIGN.md §8; Document 3 wiki-adapter.md "Rules for test fixtures"
 * 6), run as a user runs it through its launcher: the shim `scripts/mirror-refresh`, with node's folder on
 * PATH (e2e/mirror-command.test.ts shows `svc mirror` behaving the same). Real git, bare mirrors made with
 * `git init --bare`, the real simulator and the fake wiki.
 *
 * What it shows: a project's records folder lands in a plain git repository, byte for byte what `svc init`
 * checks out; later runs fast-forward or say "up to date" with the same commit id; other files of the
 * mirror survive; a mirror that moves between the script's read and its push is refused, not overwritten
 * (git's own fetch-first check), and the next run builds on it; a mirror changed after the push fails the
 * byte-for-byte verification, naming the files; `--dry-run` lists and pushes nothing; bad arguments and an
 * unreachable mirror exit 2; the wiki test space is refused without its labelled durable pages. Nothing is
 * ever written to the backend.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import test, { type ExecutionContext } from "ava";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import {
  cacheFolders,
  deleteIssue,
  expectedIssueFile,
  type GitEnv,
  gitOk,
  givenGitEnv,
  patchIssue,
  type RunOptions,
  type RunResult,
  run,
  svc,
  svcUrl,
  withCacheRoot,
} from "../testing/git.js";
import { repoRoot } from "../testing/paths.js";
import { lastSimAuditId, simWrites } from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";
import { givenWikiEnv, pageFileBody, wikiRemote, wikiWrites } from "../testing/wiki.js";

const SHIM = join(repoRoot, "scripts", "mirror-refresh");
const IDENTITY = "svc mirror <svc@localhost>";

/** `scripts/mirror-refresh <args>`, started as an executable (its `#!/usr/bin/env node` finds node on PATH). */
function mirrorRefresh(env: GitEnv, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return run(env, SHIM, args, options);
}

/** Runs a command line the script printed, through `sh`, as a user who copies it would. */
function runPrinted(env: GitEnv, command: string, options: RunOptions = {}): Promise<RunResult> {
  return run(env, "sh", ["-c", command], options);
}

/** The command after `prefix` on the line that has it. */
function printedCommand(t: ExecutionContext, stderr: string, prefix: string): string {
  const at = stderr.indexOf(prefix);
  if (at === -1) t.fail(`no ${JSON.stringify(prefix)} in:\n${stderr}`);
  return (stderr.slice(at + prefix.length).split("\n")[0] as string).trim();
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A new bare repository `<work>/<name>`: the mirror. */
async function givenMirror(t: ExecutionContext, env: GitEnv, name = "mirror.git"): Promise<string> {
  const path = join(env.dir, name);
  await gitOk(t, env, ["init", "--quiet", "--bare", path]);
  return path;
}

/** `git <args>` in the bare mirror. */
function inMirror(
  t: ExecutionContext,
  env: GitEnv,
  mirror: string,
  args: readonly string[],
): Promise<string> {
  return gitOk(t, env, [`--git-dir=${mirror}`, ...args]);
}

/** Every ref of the mirror, as `for-each-ref` prints them ("" when it has none). */
function mirrorRefs(t: ExecutionContext, env: GitEnv, mirror: string): Promise<string> {
  return inMirror(t, env, mirror, ["for-each-ref"]);
}

function mirrorTip(t: ExecutionContext, env: GitEnv, mirror: string): Promise<string> {
  return inMirror(t, env, mirror, ["rev-parse", "--verify", "refs/heads/main"]);
}

/** Every file under `folder/` of the working tree `root`, by path relative to it. */
function filesUnder(root: string, folder: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(root, path), readFileSync(path));
    }
  };
  if (existsSync(join(root, folder))) walk(join(root, folder));
  return files;
}

/** `git clone <mirror> <dir>` with plain git; the files under `folder/`. */
async function clonedFiles(
  t: ExecutionContext,
  env: GitEnv,
  mirror: string,
  dir: string,
  folder: string,
): Promise<Map<string, Buffer>> {
  await gitOk(t, env, ["clone", "--quiet", mirror, dir]);
  return filesUnder(join(env.dir, dir), folder);
}

/** The two folders hold the same set of files with the same bytes. */
function assertSameFiles(
  t: ExecutionContext,
  mirrored: Map<string, Buffer>,
  checkedOut: Map<string, Buffer>,
): void {
  t.deepEqual([...mirrored.keys()].sort(), [...checkedOut.keys()].sort());
  for (const [path, bytes] of checkedOut) t.true(mirrored.get(path)?.equals(bytes), `${path} byte for byte`);
}

/** An executable shell script in the environment's HOME. */
function givenScript(env: GitEnv, name: string, body: string): string {
  const path = join(env.home, name);
  writeFileSync(path, `#!/bin/sh\n${body}`);
  chmodSync(path, 0o755);
  return path;
}

test("a simulator project is mirrored, fast-forwarded after server edits, then up to date with the same id; a clone equals svc init byte for byte", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [
    { title: "First", body: "one\n" },
    { title: "Second", labels: ["bug"] },
    { title: "Third", body: "ünïcödé\r\nline without end" },
  ]);
  const env = givenGitEnv(t);
  const mirror = await givenMirror(t, env);
  const remote = svcUrl(sim.url, "demo");

  const first = await mirrorRefresh(env, [remote, mirror]);
  t.is(first.code, 0, first.stderr);
  t.regex(first.stderr, /^svc: full sync: 3 changed, 0 removed \(cache commit [0-9a-f]{12}\)$/m);
  t.regex(
    first.stderr,
    new RegExp(
      `^svc: ${escaped(mirror)} main: created at [0-9a-f]{12} \\(3 added, 0 changed, 0 removed\\)$`,
      "m",
    ),
  );
  t.regex(
    first.stderr,
    new RegExp(
      `^svc: verified: 3 files in issues/ of ${escaped(mirror)} match the cache byte for byte$`,
      "m",
    ),
  );
  const created = await mirrorTip(t, env, mirror);
  t.is(
    await inMirror(t, env, mirror, ["log", "-1", "--format=%an <%ae>|%cn <%ce>|%P", created]),
    `${IDENTITY}|${IDENTITY}|`,
  );

  await patchIssue(sim.url, "demo", 1, { status: "done" });
  await deleteIssue(sim.url, "demo", 2);
  await givenProject(sim.url, "demo", [{ title: "Fourth", body: "four\n" }]);
  const beforeRuns = lastSimAuditId(sim);
  const second = await mirrorRefresh(env, [remote, mirror]);
  t.is(second.code, 0, second.stderr);
  const forwarded = await mirrorTip(t, env, mirror);
  t.regex(
    second.stderr,
    new RegExp(
      `^svc: ${escaped(mirror)} main: ${created.slice(0, 12)}\\.\\.${forwarded.slice(0, 12)} fast-forwarded \\(1 added, 1 changed, 1 removed\\)$`,
      "m",
    ),
  );
  t.regex(second.stderr, /^svc: verified: 3 files in issues\/ of .+ match the cache byte for byte$/m);
  t.is(await inMirror(t, env, mirror, ["rev-parse", `${forwarded}^`]), created, "built on the tip it read");

  const third = await mirrorRefresh(env, [remote, mirror]);
  t.is(third.code, 0, third.stderr);
  t.regex(
    third.stderr,
    new RegExp(`^svc: ${escaped(mirror)} main is up to date \\(${forwarded.slice(0, 12)}\\)$`, "m"),
  );
  t.regex(third.stderr, /^svc: verified: 3 files in issues\//m);
  t.is(await mirrorTip(t, env, mirror), forwarded, "no new commit");
  t.deepEqual(simWrites(sim, beforeRuns), [], "nothing was written to the simulator");

  // Another mirror at the same tip, refreshed from the same records, gets the same commit.
  const twin = await givenMirror(t, env, "twin.git");
  await inMirror(t, env, mirror, ["push", "--quiet", twin, `${created}:refs/heads/main`]);
  const twinRun = await mirrorRefresh(env, [remote, twin]);
  t.is(twinRun.code, 0, twinRun.stderr);
  t.is(await mirrorTip(t, env, twin), forwarded, "the same records on the same tip give the same commit id");

  // A plain clone of the mirror against svc init of the project, with a cache of its own.
  const own = withCacheRoot(env, join(dirname(env.dir), "init-cache"));
  const init = await svc(own, ["init", "sim::demo", "d", "--origin", sim.url]);
  t.is(init.code, 0, init.stderr);
  const checkedOut = filesUnder(join(env.dir, "d"), "issues");
  t.deepEqual([...checkedOut.keys()].sort(), ["issues/0001.md", "issues/0003.md", "issues/0004.md"]);
  const mirrored = await clonedFiles(t, env, mirror, "c", "issues");
  assertSameFiles(t, mirrored, checkedOut);
  for (const id of [1, 3, 4]) {
    const path = `issues/000${id}.md`;
    t.is(mirrored.get(path)?.toString("utf8"), await expectedIssueFile(sim.url, "demo", id), path);
  }
});

test("a wiki space is mirrored into pages/, byte for byte what svc init checks out, with no write to the wiki", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 6);
  const env = givenWikiEnv(t, wiki);
  const mirror = await givenMirror(t, env);
  const remote = wikiRemote(wiki.url, "SVC");

  const first = await mirrorRefresh(env, [remote, mirror]);
  t.is(first.code, 0, first.stderr);
  t.regex(first.stderr, /main: created at [0-9a-f]{12} \(6 added, 0 changed, 0 removed\)$/m);
  t.regex(first.stderr, /^svc: verified: 6 files in pages\/ of .+ match the cache byte for byte$/m);

  wiki.editPage(ids[0] as string);
  wiki.trashPage(ids[1] as string);
  const added = wiki.createPage("SVC", { title: "Added later", body: "<p>late</p>\r\n<p>é</p>" });
  const second = await mirrorRefresh(env, [remote, mirror]);
  t.is(second.code, 0, second.stderr);
  t.regex(second.stderr, /fast-forwarded \(1 added, 1 changed, 1 removed\)$/m);
  t.regex(second.stderr, /^svc: verified: 6 files in pages\//m);
  t.deepEqual(wikiWrites(wiki), [], "only GETs reached the wiki");

  const own = withCacheRoot(env, join(dirname(env.dir), "init-cache"));
  const init = await svc(own, ["init", "wiki::SVC", "d"]);
  t.is(init.code, 0, init.stderr);
  const checkedOut = filesUnder(join(env.dir, "d"), "pages");
  const mirrored = await clonedFiles(t, env, mirror, "c", "pages");
  assertSameFiles(t, mirrored, checkedOut);
  const live = [...ids.filter((id) => id !== ids[1]), added.id];
  t.deepEqual([...mirrored.keys()].sort(), live.map((id) => `pages/${id}.md`).sort());
  for (const id of live) {
    const bytes = mirrored.get(`pages/${id}.md`) as Buffer;
    t.true(pageFileBody(bytes).equals(Buffer.from(wiki.page(id)?.body ?? "", "utf8")), `pages/${id}.md body`);
  }
});

test("files others committed to the mirror survive, and each refresh builds on their commits", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }, { title: "Second" }]);
  const env = givenGitEnv(t);
  const mirror = await givenMirror(t, env);
  const remote = svcUrl(sim.url, "demo");
  // Someone sets the mirror up with plain git: a README and a CI file.
  await gitOk(t, env, ["clone", "--quiet", mirror, "human"]);
  writeFileSync(join(env.dir, "human", "README.md"), "# Mirror of demo\n");
  await gitOk(t, env, ["-C", "human", "add", "README.md"]);
  writeFileSync(join(env.dir, "human", "ci.yml"), "on: push\n");
  await gitOk(t, env, ["-C", "human", "add", "ci.yml"]);
  await gitOk(t, env, ["-C", "human", "commit", "--quiet", "-m", "README and CI"]);
  await gitOk(t, env, ["-C", "human", "push", "--quiet", "origin", "HEAD:main"]);
  const theirs = await mirrorTip(t, env, mirror);

  const first = await mirrorRefresh(env, [remote, mirror]);
  t.is(first.code, 0, first.stderr);
  t.regex(
    first.stderr,
    new RegExp(
      `main: ${theirs.slice(0, 12)}\\.\\.[0-9a-f]{12} fast-forwarded \\(2 added, 0 changed, 0 removed\\)$`,
      "m",
    ),
  );
  t.is(await inMirror(t, env, mirror, ["rev-parse", "main^"]), theirs);

  // They change the README again on top of the mirror's commit; the server changes a record.
  await gitOk(t, env, ["-C", "human", "pull", "--quiet", "--ff-only"]);
  writeFileSync(join(env.dir, "human", "README.md"), "# Mirror of demo\n\nRefreshed by svc.\n");
  await gitOk(t, env, ["-C", "human", "commit", "--quiet", "-am", "README: say who refreshes it"]);
  await gitOk(t, env, ["-C", "human", "push", "--quiet", "origin", "HEAD:main"]);
  const theirsAgain = await mirrorTip(t, env, mirror);
  await patchIssue(sim.url, "demo", 2, { title: "Second, renamed" });

  const second = await mirrorRefresh(env, [remote, mirror]);
  t.is(second.code, 0, second.stderr);
  t.regex(
    second.stderr,
    new RegExp(
      `main: ${theirsAgain.slice(0, 12)}\\.\\.[0-9a-f]{12} fast-forwarded \\(0 added, 1 changed, 0 removed\\)$`,
      "m",
    ),
  );
  t.is(
    await inMirror(t, env, mirror, ["log", "--format=%an", "main"]),
    ["svc mirror", "Test Author", "svc mirror", "Test Author"].join("\n"),
    "a straight line: nothing of theirs was rewritten",
  );
  await gitOk(t, env, ["clone", "--quiet", mirror, "c"]);
  t.is(readFileSync(join(env.dir, "c", "README.md"), "utf8"), "# Mirror of demo\n\nRefreshed by svc.\n");
  t.is(readFileSync(join(env.dir, "c", "ci.yml"), "utf8"), "on: push\n");
  t.regex(readFileSync(join(env.dir, "c", "issues", "0002.md"), "utf8"), /^title: "Second, renamed"$/m);
});

test("a mirror that moves between the read and the push is refused, not overwritten; the printed command builds on its new tip", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }, { title: "Second" }]);
  const env = givenGitEnv(t);
  const mirror = await givenMirror(t, env);
  const remote = svcUrl(sim.url, "demo");
  t.is((await mirrorRefresh(env, [remote, mirror])).code, 0);
  const read = await mirrorTip(t, env, mirror);
  await patchIssue(sim.url, "demo", 1, { status: "done" });

  // git runs uploadpack.packObjectsHook (honoured in the global config) for the mirror's upload-pack, that
  // is while the script fetches the tip. After serving the pack, the first time only, it commits OTHER.md on
  // the branch: someone else pushed between the script's read and its push.
  const marker = join(env.home, "moved");
  const hook = givenScript(
    env,
    "move-mirror.sh",
    `"$@" || exit $?
exec >/dev/null
[ -e '${marker}' ] && exit 0
: > '${marker}'
export GIT_INDEX_FILE='${marker}.index'
git read-tree refs/heads/main
blob=$(printf 'someone else\\n' | git hash-object -w --stdin)
git update-index --add --cacheinfo "100644,$blob,OTHER.md"
commit=$(git commit-tree "$(git write-tree)" -p refs/heads/main -m "someone else")
git update-ref refs/heads/main "$commit"
`,
  );
  // A home of its own whose .gitconfig it is: gits older than 2.32 read $HOME/.gitconfig, not GIT_CONFIG_GLOBAL.
  const movingHome = join(env.home, "moving");
  mkdirSync(movingHome);
  const movingConfig = join(movingHome, ".gitconfig");
  writeFileSync(
    movingConfig,
    `${readFileSync(env.env.GIT_CONFIG_GLOBAL as string, "utf8")}[uploadpack]\n\tpackObjectsHook = ${hook}\n`,
  );

  const refused = await mirrorRefresh(env, [remote, mirror], {
    env: { GIT_CONFIG_GLOBAL: movingConfig, HOME: movingHome },
  });
  t.is(refused.code, 1, refused.stderr);
  t.true(existsSync(marker), "the hook moved the mirror");
  t.regex(
    refused.stderr,
    new RegExp(
      `^svc: ${escaped(mirror)} main moved since it was read \\(it was at ${read.slice(0, 12)}\\); git refused the push \\(fetch first\\) and nothing was overwritten\\. Run the same command again to build on its new tip: `,
      "m",
    ),
  );
  t.notRegex(refused.stderr, /verified/);
  const other = await mirrorTip(t, env, mirror);
  t.not(other, read);
  t.is(
    await inMirror(t, env, mirror, ["log", "-1", "--format=%s", other]),
    "someone else",
    "their commit is still the tip",
  );
  t.is(await inMirror(t, env, mirror, ["rev-parse", `${other}^`]), read);

  const command = printedCommand(t, refused.stderr, "Run the same command again to build on its new tip: ");
  t.is(command, [SHIM, remote, mirror].join(" "));
  const again = await runPrinted(env, command);
  t.is(again.code, 0, again.stderr);
  t.regex(
    again.stderr,
    new RegExp(
      `main: ${other.slice(0, 12)}\\.\\.[0-9a-f]{12} fast-forwarded \\(0 added, 1 changed, 0 removed\\)$`,
      "m",
    ),
  );
  t.regex(again.stderr, /^svc: verified: 2 files in issues\//m);
  t.is(await inMirror(t, env, mirror, ["rev-parse", "main^"]), other, "built on the commit that moved it");
  t.is(await inMirror(t, env, mirror, ["show", "main:OTHER.md"]), "someone else");
});

test("a mirror changed after the push fails the byte-for-byte verification, naming each file; the next run repairs it", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }, { title: "Second" }, { title: "Third" }]);
  const env = givenGitEnv(t);
  const mirror = await givenMirror(t, env);
  const remote = svcUrl(sim.url, "demo");
  t.is((await mirrorRefresh(env, [remote, mirror])).code, 0);

  // The first push after this: the branch is replaced with a commit whose issues/ differ from what was pushed.
  const marker = join(env.home, "corrupted");
  writeFileSync(
    join(mirror, "hooks", "post-receive"),
    `#!/bin/sh
set -e
[ -e '${marker}' ] && exit 0
: > '${marker}'
read old new ref
export GIT_INDEX_FILE='${marker}.index'
git read-tree "$new"
blob=$(printf 'corrupted\\n' | git hash-object -w --stdin)
git update-index --cacheinfo "100644,$blob,issues/0001.md"
printf '0 %040d\\tissues/0002.md\\n' 0 | git update-index --index-info
git update-index --add --cacheinfo "100644,$blob,issues/9999.md"
commit=$(git commit-tree "$(git write-tree)" -p "$new" -m corrupted)
git update-ref "$ref" "$commit"
`,
  );
  chmodSync(join(mirror, "hooks", "post-receive"), 0o755);
  await patchIssue(sim.url, "demo", 3, { status: "done" });

  const failed = await mirrorRefresh(env, [remote, mirror]);
  t.is(failed.code, 1, failed.stderr);
  t.regex(
    failed.stderr,
    /fast-forwarded \(0 added, 1 changed, 0 removed\)$/m,
    "the push itself went through",
  );
  const corrupted = await mirrorTip(t, env, mirror);
  t.regex(
    failed.stderr,
    new RegExp(
      `^svc: verification failed: issues/ of ${escaped(mirror)} main \\(${corrupted.slice(0, 12)}\\) does not match the cache \\([0-9a-f]{12}\\): ` +
        "1 with other bytes: issues/0001\\.md; 1 missing: issues/0002\\.md; 1 not in the cache: issues/9999\\.md\\. ",
      "m",
    ),
  );
  t.notRegex(failed.stderr, /^svc: verified/m);

  const command = printedCommand(
    t,
    failed.stderr,
    "run the same command again to overlay the cache's records on its tip: ",
  );
  const repaired = await runPrinted(env, command);
  t.is(repaired.code, 0, repaired.stderr);
  t.regex(
    repaired.stderr,
    new RegExp(
      `main: ${corrupted.slice(0, 12)}\\.\\.[0-9a-f]{12} fast-forwarded \\(1 added, 1 changed, 1 removed\\)$`,
      "m",
    ),
  );
  t.regex(repaired.stderr, /^svc: verified: 3 files in issues\//m);
});

test("a push the mirror's own hook declines exits 1 with git's reason, and nothing is overwritten", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }]);
  const env = givenGitEnv(t);
  const mirror = await givenMirror(t, env);
  const remote = svcUrl(sim.url, "demo");
  t.is((await mirrorRefresh(env, [remote, mirror])).code, 0);
  const before = await mirrorTip(t, env, mirror);
  writeFileSync(
    join(mirror, "hooks", "pre-receive"),
    "#!/bin/sh\necho 'this mirror is frozen' >&2\nexit 1\n",
  );
  chmodSync(join(mirror, "hooks", "pre-receive"), 0o755);
  await patchIssue(sim.url, "demo", 1, { status: "done" });

  const refused = await mirrorRefresh(env, [remote, mirror]);
  t.is(refused.code, 1, refused.stderr);
  t.regex(
    refused.stderr,
    new RegExp(
      `^svc: ${escaped(mirror)} main refused the push of [0-9a-f]{12} \\(\\[remote rejected\\] \\(pre-receive hook declined\\)\\): .*this mirror is frozen.*; nothing was overwritten\\. Fix what git says, then run: ${escaped(SHIM)} `,
      "m",
    ),
  );
  t.notRegex(refused.stderr, /verified/);
  t.is(await mirrorTip(t, env, mirror), before);
});

test("--dry-run lists what would change on stdout and leaves the mirror untouched; it still syncs the cache", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }, { title: "Second" }]);
  const env = givenGitEnv(t);
  const mirror = await givenMirror(t, env);
  const remote = svcUrl(sim.url, "demo");

  const empty = await mirrorRefresh(env, [remote, mirror, "--dry-run"]);
  t.is(empty.code, 0, empty.stderr);
  t.is(empty.stdout, "A\tissues/0001.md\nA\tissues/0002.md\n");
  t.regex(empty.stderr, /^svc: full sync: 2 changed, 0 removed/m);
  t.regex(
    empty.stderr,
    /^svc: dry run: .+ main would get its first commit \(2 added, 0 changed, 0 removed\); nothing was pushed$/m,
  );
  t.is(await mirrorRefs(t, env, mirror), "", "no branch was made");
  t.is(cacheFolders(env).length, 1, "the cache was synced");

  t.is((await mirrorRefresh(env, [remote, mirror])).code, 0);
  const before = await mirrorTip(t, env, mirror);
  await patchIssue(sim.url, "demo", 1, { status: "done" });
  await deleteIssue(sim.url, "demo", 2);
  await givenProject(sim.url, "demo", [{ title: "Third" }]);
  const dry = await mirrorRefresh(env, [remote, mirror, "--dry-run"]);
  t.is(dry.code, 0, dry.stderr);
  t.is(dry.stdout, "M\tissues/0001.md\nD\tissues/0002.md\nA\tissues/0003.md\n");
  t.regex(
    dry.stderr,
    new RegExp(
      `^svc: dry run: .+ main would be fast-forwarded from ${before.slice(0, 12)} \\(1 added, 1 changed, 1 removed\\); nothing was pushed$`,
      "m",
    ),
  );
  t.notRegex(dry.stderr, /verified/);
  t.is(await mirrorTip(t, env, mirror), before, "the mirror is untouched");
});

test("bad arguments, a bad URL, missing credentials and an unreachable mirror exit 2 and push nothing", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }]);
  const env = givenGitEnv(t);
  const mirror = await givenMirror(t, env);
  const remote = svcUrl(sim.url, "demo");

  const help = await mirrorRefresh(env, ["--help"]);
  t.is(help.code, 0);
  t.regex(
    help.stdout,
    /^usage: scripts\/mirror-refresh <svc-remote-url> <mirror-git-url> \[--branch main\] \[--dry-run\]$/m,
  );
  t.regex(help.stdout, /^Exit codes: 0 /m);

  const refusals: [readonly string[], RegExp][] = [
    [[], /needs two arguments/],
    [[remote, mirror, "--force"], /Unknown option '--force'/],
    [[remote, mirror, "--branch", "bad..name"], /--branch "bad\.\.name" is not a valid branch name/],
    [["not a url", mirror], /remote URL "not a url" is not a URL/],
    [[remote, `svc::${sim.url}/projects/demo`], /is an svc remote; a push there would write to the backend/],
  ];
  for (const [args, message] of refusals) {
    const refused = await mirrorRefresh(env, args);
    t.is(refused.code, 2, `${args.join(" ")}: ${refused.stderr}`);
    t.regex(refused.stderr, message);
    t.notRegex(refused.stderr, /^\s+at /m, "no stack trace");
  }
  const usage = await mirrorRefresh(env, [remote]);
  t.regex(usage.stderr, /^usage: scripts\/mirror-refresh /m);

  const credentials = await mirrorRefresh(env, [wikiRemote("https://acme.atlassian.net", "DOCS"), mirror]);
  t.is(credentials.code, 2, credentials.stderr);
  t.regex(credentials.stderr, /VENDOR_API_KEY/);

  const missing = join(env.dir, "missing.git");
  const unreachable = await mirrorRefresh(env, [remote, missing]);
  t.is(unreachable.code, 2, unreachable.stderr);
  t.regex(unreachable.stderr, /^svc: cannot read the mirror .+missing\.git: git ls-remote exited 128/m);
  t.is(cacheFolders(env).length, 0, "refused before the listing");
  t.is(await mirrorRefs(t, env, mirror), "", "nothing was pushed anywhere");

  // What the message says to do, done as it says.
  await gitOk(t, env, ["init", "--quiet", "--bare", missing]);
  const fixed = await runPrinted(env, printedCommand(t, unreachable.stderr, "then run: "));
  t.is(fixed.code, 0, fixed.stderr);
  t.regex(fixed.stderr, /missing\.git main: created at /m);
});

test("the wiki test space is refused without its durable pages, found by key or alias, and mirrored once both are labelled", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "SVC", alias: "svc-docs" }, { key: "OTHER" }] });
  const parent = wiki.createPage("SVC", { title: "Durable parent", body: "<p>parent</p>" });
  const child = wiki.createPage("SVC", { title: "Durable child", body: "<p>child</p>", parentId: parent.id });
  wiki.createPage("SVC", { title: "Ordinary", body: "<p>ordinary</p>" });
  wiki.createPage("OTHER", { title: "Elsewhere", body: "<p>elsewhere</p>" });
  // The test space by its alias: the remote names it by its key.
  const env = givenWikiEnv(t, wiki, { SVC_WIKI_TEST_SPACE: "svc-docs" });
  const mirror = await givenMirror(t, env);
  const remote = wikiRemote(wiki.url, "SVC");
  const where = "SVC is the wiki test space \\(SVC_WIKI_TEST_SPACE=svc-docs\\)";
  const ids = (parentId: string, childId: string) => ({
    env: { SVC_WIKI_DURABLE_PARENT_ID: parentId, SVC_WIKI_DURABLE_CHILD_ID: childId },
  });

  const unset = await mirrorRefresh(env, [remote, mirror]);
  t.is(unset.code, 2, unset.stderr);
  t.regex(
    unset.stderr,
    new RegExp(
      `^svc: ${where}, .+SVC_WIKI_DURABLE_PARENT_ID and SVC_WIKI_DURABLE_CHILD_ID are not set; nothing was pushed\\. Export both`,
      "m",
    ),
  );

  const gone = await mirrorRefresh(env, [remote, mirror], ids("999999", child.id));
  t.is(gone.code, 2, gone.stderr);
  t.regex(
    gone.stderr,
    new RegExp(
      `${where}, and its durable fixture page 999999 \\(SVC_WIKI_DURABLE_PARENT_ID\\) is not in the listing`,
    ),
  );

  const unlabelled = await mirrorRefresh(env, [remote, mirror], ids(parent.id, child.id));
  t.is(unlabelled.code, 2, unlabelled.stderr);
  t.regex(
    unlabelled.stderr,
    new RegExp(
      `page ${parent.id} \\(SVC_WIKI_DURABLE_PARENT_ID\\) is not labelled svc-durable-fixture \\(its labels: none\\)`,
    ),
  );
  wiki.labelPage(parent.id, "svc-durable-fixture");
  wiki.labelPage(child.id, "other-label");
  const half = await mirrorRefresh(env, [remote, mirror], ids(parent.id, child.id));
  t.is(half.code, 2, half.stderr);
  t.regex(
    half.stderr,
    new RegExp(
      `page ${child.id} \\(SVC_WIKI_DURABLE_CHILD_ID\\) is not labelled svc-durable-fixture \\(its labels: other-label\\)`,
    ),
  );
  t.is(await mirrorRefs(t, env, mirror), "", "no refusal pushed anything");

  // Labelled as the message says; then its command, as printed.
  wiki.labelPage(child.id, "svc-durable-fixture");
  const labelled = await runPrinted(
    env,
    printedCommand(t, half.stderr, "Then run: "),
    ids(parent.id, child.id),
  );
  t.is(labelled.code, 0, labelled.stderr);
  t.regex(labelled.stderr, /^svc: verified: 3 files in pages\//m);
  t.true(
    wiki.requests.some((request) => request.path.startsWith(`/wiki/api/v2/pages/${child.id}/labels`)),
    "the labels were read with the v2 API",
  );

  // Another space is not the test space: no durable pages needed.
  const other = await givenMirror(t, env, "other.git");
  const elsewhere = await mirrorRefresh(env, [wikiRemote(wiki.url, "OTHER"), other]);
  t.is(elsewhere.code, 0, elsewhere.stderr);
  t.deepEqual(wikiWrites(wiki), [], "only GETs reached the wiki");
});
