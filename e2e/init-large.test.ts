/**
 * `svc init` and `git clone` of projects of any size (issue 12 item 3): the blob limit is off by default,
 * so both give a complete checkout. With an opt-in `SVC_BLOB_LIMIT` a checkout over it is refused: the new
 * folder's `git status` is clean (a sparse checkout of no files, not thousands of staged deletions), and
 * the two commands the refusal prints work as printed from the folder the user ran the command in: a
 * sparse checkout that fits the limit, and fetching every file. Every example keeps the user's options.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import {
  auditRows,
  fetchRequests,
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  manyIssues,
  missingObjects,
  run,
  SPARSE_SET,
  svc,
  svcUrl,
  testWithBlobLimit,
} from "../testing/git.js";
import { givenSeedFile } from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

function files(env: GitEnv, dir: string): string[] {
  try {
    return readdirSync(join(env.dir, dir, "issues")).sort();
  } catch {
    return [];
  }
}

/** The two commands a refusal prints (its indented lines): the sparse checkout, then fetching everything. */
function printedCommands(stderr: string): [string, string] {
  const lines = stderr
    .split("\n")
    .filter((line) => line.startsWith("  "))
    .map((line) => line.trim());
  if (lines.length !== 2) throw new Error(`expected two commands in:\n${stderr}`);
  return lines as [string, string];
}

const withoutOids = (text: string) => text.replace(/\b[0-9a-f]{40}\b/g, "<oid>");

test("svc init of 10,000 issues with default settings checks out every file with a clean status", async (t) => {
  t.timeout(180_000);
  const sim = await givenSim(t, { seedFile: givenSeedFile(t, "big", manyIssues(10_000)) });
  const env = givenGitEnv(t);
  const started = performance.now();
  const init = await svc(env, ["init", "sim::big", "big", "--origin", sim.url], { timeoutMs: 120_000 });
  const seconds = (performance.now() - started) / 1000;
  t.log(`svc init of 10,000 issues: ${seconds.toFixed(1)} s`);
  t.is(init.code, 0, init.stderr);
  t.is(files(env, "big").length, 10_000);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "big" }), "");
  t.deepEqual(await missingObjects(env, "big"), []);
  t.is(fetchRequests(auditRows(env)).length, 1, "the files came with the clone's one fetch");

  const clone = await git(env, ["clone", "-q", "--filter=blob:none", svcUrl(sim.url, "big"), "plain"], {
    timeoutMs: 120_000,
  });
  t.is(clone.code, 0, clone.stderr);
  t.is(files(env, "plain").length, 10_000);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "plain" }), "");
});

testWithBlobLimit(
  "svc init over an opt-in SVC_BLOB_LIMIT leaves a clean status and prints two commands that work as printed",
  async (t) => {
    const sim = await givenSim(t);
    await givenProject(sim.url, "demo", manyIssues(12));
    const env = givenGitEnv(t, { SVC_BLOB_LIMIT: "5" });

    const init = await svc(env, ["init", "sim::demo", "big", "--origin", sim.url]);
    t.is(init.code, 2);
    t.is(
      withoutOids(init.stderr),
      "Cloning into 'big'...\n" +
        "svc: this fetch wants 12 record files, more than SVC_BLOB_LIMIT=5, so none was fetched; big is a sparse checkout of no files until then. Check out at most 5 of them, e.g.:\n" +
        "  cd big && git sparse-checkout set --no-cone 'issues/000[1-5]*' && git checkout main\n" +
        "or fetch every file:\n" +
        "  cd big && SVC_BLOB_LIMIT=0 git sparse-checkout disable\n" +
        "fatal: remote error: 12 record files wanted, more than SVC_BLOB_LIMIT=5; the svc: lines above say what to run\n" +
        "fatal: could not fetch <oid> from promisor remote\n" +
        "svc: the clone in big is made, but its checkout was refused by SVC_BLOB_LIMIT; run one of the two commands above\n",
    );
    t.deepEqual(files(env, "big"), []);
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "big" }), "", "no staged deletions");
    t.is(
      await gitOk(t, env, ["rev-parse", "--abbrev-ref", "main@{upstream}"], { cwd: "big" }),
      "origin/main",
    );

    // Run again, svc init names a new folder and keeps --origin; that command works as printed too.
    const again = await svc(env, ["init", "sim::demo", "big", "--origin", sim.url]);
    t.is(again.code, 2);
    t.is(
      again.stderr,
      `svc: big exists and is not empty; pick a new folder, e.g. svc init sim::demo big-2 --origin ${sim.url}\n`,
    );
    const second = await run(env, "sh", ["-c", again.stderr.replace(/^.*e\.g\. /, "").trim()]);
    t.is(second.code, 2, "the same refusal in big-2");
    t.regex(second.stderr, /^ {2}cd big-2 && git sparse-checkout set/m);

    // The sparse checkout, as printed, from the folder svc init ran in (SVC_BLOB_LIMIT=5 still set).
    const [sparse, everything] = printedCommands(init.stderr);
    const chosen = await run(env, "sh", ["-c", sparse]);
    t.is(chosen.code, 0, chosen.stderr);
    t.deepEqual(files(env, "big"), ["0001.md", "0002.md", "0003.md", "0004.md", "0005.md"]);
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "big" }), "");

    // Fetching every file, as printed.
    const [, everythingThere] = printedCommands(second.stderr);
    t.is(everythingThere, everything.replace("cd big ", "cd big-2 "));
    const all = await run(env, "sh", ["-c", everythingThere]);
    t.is(all.code, 0, all.stderr);
    t.is(files(env, "big-2").length, 12);
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "big-2" }), "");
    t.deepEqual(await missingObjects(env, "big-2"), []);
  },
);

testWithBlobLimit(
  "git clone over an opt-in SVC_BLOB_LIMIT leaves a clean status and prints commands that work from anywhere",
  async (t) => {
    const sim = await givenSim(t);
    await givenProject(sim.url, "demo", manyIssues(12));
    const env = givenGitEnv(t, { SVC_BLOB_LIMIT: "5" });
    const url = svcUrl(sim.url, "demo");

    const clone = await git(env, ["clone", "--filter=blob:none", url, "plain"]);
    t.is(clone.code, 128);
    const where = join(env.dir, "plain");
    t.is(
      withoutOids(clone.stderr),
      "Cloning into 'plain'...\n" +
        "svc: this fetch wants 12 record files, more than SVC_BLOB_LIMIT=5, so none was fetched; plain is a sparse checkout of no files until then. Check out at most 5 of them, e.g.:\n" +
        `  cd ${where} && git sparse-checkout set --no-cone 'issues/000[1-5]*' && git checkout main\n` +
        "or fetch every file:\n" +
        `  cd ${where} && SVC_BLOB_LIMIT=0 git sparse-checkout disable\n` +
        "fatal: remote error: 12 record files wanted, more than SVC_BLOB_LIMIT=5; the svc: lines above say what to run\n" +
        "fatal: could not fetch <oid> from promisor remote\n" +
        "warning: Clone succeeded, but checkout failed.\n" +
        "You can inspect what was checked out with 'git status'\n" +
        "and retry with 'git restore --source=HEAD :/'\n\n",
    );
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "plain" }), "", "no staged deletions");
    t.deepEqual(files(env, "plain"), []);

    // The helper cannot know where a git clone's user stands, so the commands cd to the absolute path.
    const [sparse, everything] = printedCommands(clone.stderr);
    const chosen = await run(env, "sh", ["-c", sparse], { cwd: ".." });
    t.is(chosen.code, 0, chosen.stderr);
    t.deepEqual(files(env, "plain"), ["0001.md", "0002.md", "0003.md", "0004.md", "0005.md"]);
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "plain" }), "");
    const all = await run(env, "sh", ["-c", everything]);
    t.is(all.code, 0, all.stderr);
    t.is(files(env, "plain").length, 12);
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "plain" }), "");
  },
);

testWithBlobLimit(
  "a refusal inside a working tree offers the user's own command again with the limit lifted",
  async (t) => {
    const sim = await givenSim(t);
    await givenProject(sim.url, "demo", manyIssues(12));
    const env = givenGitEnv(t, { SVC_BLOB_LIMIT: "5" });
    await gitOk(t, env, ["clone", "-q", "--filter=blob:none", "--sparse", svcUrl(sim.url, "demo"), "s"]);
    await gitOk(t, env, [...SPARSE_SET, "issues/0001.md"], { cwd: "s" });

    const refused = await git(env, [...SPARSE_SET, "issues/*"], { cwd: "s" });
    t.not(refused.code, 0);
    t.is(
      withoutOids(refused.stderr),
      // The first sparse checkout brought 0001.md and four more (prefetch, within the limit): 7 are wanted.
      "svc: this fetch wants 7 record files, more than SVC_BLOB_LIMIT=5, so none was fetched. Check out at most 5 of them, e.g.:\n" +
        "  git sparse-checkout set --no-cone 'issues/000[1-5]*' && git checkout main\n" +
        "or fetch every file:\n" +
        "  SVC_BLOB_LIMIT=0 git sparse-checkout set --no-cone 'issues/*'\n" +
        "fatal: remote error: 7 record files wanted, more than SVC_BLOB_LIMIT=5; the svc: lines above say what to run\n" +
        "fatal: could not fetch <oid> from promisor remote\n",
    );
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "s" }), "");
    const [, everything] = printedCommands(refused.stderr);
    const all = await run(env, "sh", ["-c", everything], { cwd: "s" });
    t.is(all.code, 0, all.stderr);
    t.is(files(env, "s").length, 12);
  },
);

testWithBlobLimit(
  "a clone without a blob filter over SVC_BLOB_LIMIT is told to clone partially, or to lift the limit",
  async (t) => {
    const sim = await givenSim(t);
    await givenProject(sim.url, "demo", manyIssues(12));
    const env = givenGitEnv(t, { SVC_BLOB_LIMIT: "5" });
    const url = svcUrl(sim.url, "demo");

    const clone = await git(env, ["clone", url, "full"]);
    t.is(clone.code, 128);
    t.is(
      clone.stderr,
      "Cloning into 'full'...\n" +
        "svc: this fetch wants 12 record files, more than SVC_BLOB_LIMIT=5, so none was fetched. Clone partially and check out at most 5 of them, e.g.:\n" +
        `  git clone --filter=blob:none --sparse ${url} full && cd full && git sparse-checkout set --no-cone 'issues/000[1-5]*'\n` +
        "or fetch every file:\n" +
        `  SVC_BLOB_LIMIT=0 git clone ${url} full\n` +
        "fatal: remote error: 12 record files wanted, more than SVC_BLOB_LIMIT=5; the svc: lines above say what to run\n",
    );
    const [partial, everything] = printedCommands(clone.stderr);
    const sparse = await run(env, "sh", ["-c", partial]);
    t.is(sparse.code, 0, sparse.stderr);
    t.deepEqual(files(env, "full"), ["0001.md", "0002.md", "0003.md", "0004.md", "0005.md"]);
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "full" }), "");

    await run(env, "rm", ["-rf", "full"]);
    const all = await run(env, "sh", ["-c", everything]);
    t.is(all.code, 0, all.stderr);
    t.is(files(env, "full").length, 12);
    t.deepEqual(await missingObjects(env, "full"), []);
  },
);
