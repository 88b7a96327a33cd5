/**
 * The working-tree checks (cli/doctor/worktree.ts) against real git in temp folders: sparse-checkout
 * patterns matched by git itself, in non-cone and cone mode, negations kept; pull settings by the level that
 * set them. git runs with this process's environment, so its global and system config are isolated here.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { givenTempDir } from "../../testing/sim.js";
import { checkPullConfig, checkSparseCheckout } from "./worktree.js";

function isolateGit(t: ExecutionContext): string {
  const home = givenTempDir(t, "svc-doctor-home-");
  writeFileSync(join(home, ".gitconfig"), "");
  Object.assign(process.env, {
    HOME: home,
    GIT_CONFIG_GLOBAL: join(home, ".gitconfig"), // gits before 2.32 read $HOME/.gitconfig
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "a",
    GIT_AUTHOR_EMAIL: "a@example.test",
    GIT_COMMITTER_NAME: "a",
    GIT_COMMITTER_EMAIL: "a@example.test",
  });
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"])
    delete process.env[name];
  return home;
}

function gitIn(dir: string, args: readonly string[]): string {
  return execFileSync("git", ["-C", dir, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** A repository with `issues/0001.md`, `issues/0002.md`, `issues/0120.md`, committed, in `<temp>/r`. */
function givenRecords(t: ExecutionContext): { dir: string; place: { dir: string; remote: string } } {
  const root = givenTempDir(t, "svc-doctor-tree-");
  const dir = join(root, "r");
  mkdirSync(join(dir, "issues"), { recursive: true });
  for (const id of ["0001", "0002", "0120"]) writeFileSync(join(dir, "issues", `${id}.md`), `${id}\n`);
  gitIn(root, ["init", "-q", dir]);
  gitIn(dir, ["add", "."]);
  gitIn(dir, ["commit", "-qm", "records"]);
  return { dir, place: { dir, remote: "origin" } };
}

test.serial("no sparse checkout, and patterns that each match: ok", async (t) => {
  isolateGit(t);
  const { dir, place } = givenRecords(t);
  t.like(await checkSparseCheckout(place), { status: "ok" });
  gitIn(dir, ["sparse-checkout", "set", "--no-cone", "issues/00*", "!issues/0002.md", "/issues/0120.md"]);
  t.like(await checkSparseCheckout(place), { status: "ok" });
});

test.serial("non-cone: unmatched patterns found by git's matching; negations kept in the fix", async (t) => {
  isolateGit(t);
  const { dir, place } = givenRecords(t);
  gitIn(dir, ["sparse-checkout", "set", "--no-cone", "issues/01*", "!issues/0120.md", "pages/*", "0003.md"]);
  const finding = await checkSparseCheckout(place);
  t.deepEqual(finding.details?.unmatched, ["pages/*", "0003.md"]);
  t.is(finding.fix, `git -C ${dir} sparse-checkout set --no-cone 'issues/01*' '!issues/0120.md'`);
  execFileSync("sh", ["-c", finding.fix as string]);
  t.like(await checkSparseCheckout(place), { status: "ok" });
});

test.serial(
  "cone: a folder without files is unmatched; with none left the fix disables the sparse checkout",
  async (t) => {
    isolateGit(t);
    const { dir, place } = givenRecords(t);
    gitIn(dir, ["sparse-checkout", "set", "--cone", "issues", "pages"]);
    const finding = await checkSparseCheckout(place);
    t.deepEqual(finding.details?.unmatched, ["pages"]);
    t.is(finding.fix, `git -C ${dir} sparse-checkout set --cone issues`);
    gitIn(dir, ["sparse-checkout", "set", "--cone", "pages"]);
    const none = await checkSparseCheckout(place);
    t.is(none.fix, `git -C ${dir} sparse-checkout disable`);
    execFileSync("sh", ["-c", none.fix as string]);
    t.like(await checkSparseCheckout(place), {
      status: "ok",
      message: "no sparse checkout: every record file is checked out",
    });
  },
);

test.serial("pull: unset fails, rebase and ff=only fail with the local fix, merges pass", async (t) => {
  const home = isolateGit(t);
  const { dir, place } = givenRecords(t);
  t.like(await checkPullConfig(place), { status: "fail", fix: `git -C ${dir} config pull.rebase false` });
  gitIn(dir, ["config", "pull.rebase", "false"]);
  t.like(await checkPullConfig(place), { status: "ok" });
  gitIn(dir, ["config", "pull.rebase", "merges"]);
  t.like(await checkPullConfig(place), { status: "fail", fix: `git -C ${dir} config pull.rebase false` });
  gitIn(dir, ["config", "--unset", "pull.rebase"]);
  gitIn(home, ["config", "--global", "pull.ff", "only"]);
  const ff = await checkPullConfig(place);
  t.like(ff, { status: "fail", fix: `git -C ${dir} config pull.ff true`, details: { scope: "global" } });
  execFileSync("sh", ["-c", ff.fix as string]);
  t.like(await checkPullConfig(place), { status: "ok" });
  gitIn(dir, ["config", "--add", "pull.ff", "only"]);
  const twice = await checkPullConfig(place);
  t.is(twice.fix, `git -C ${dir} config --replace-all pull.ff true`);
  execFileSync("sh", ["-c", twice.fix as string]);
  t.like(await checkPullConfig(place), { status: "ok" });
});

test.serial("pull: a setting from the environment names the variables instead of a command", async (t) => {
  isolateGit(t);
  const { place } = givenRecords(t);
  Object.assign(process.env, {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "pull.rebase",
    GIT_CONFIG_VALUE_0: "true",
  });
  t.teardown(() => {
    for (const name of ["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"])
      delete process.env[name];
  });
  const finding = await checkPullConfig(place);
  t.like(finding, { status: "fail", fix: null });
  t.regex(finding.advice ?? "", /GIT_CONFIG_PARAMETERS or GIT_CONFIG_COUNT/);
});
