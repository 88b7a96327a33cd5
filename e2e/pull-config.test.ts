/**
 * A plain `git clone svc::…` gets `pull.rebase=false` when nothing chose a pull strategy, so the documented
 * flow works with plain commands: a rejected push, then `git pull` gives an ordinary merge conflict (git
 * 2.39 would otherwise stop with "Need to specify how to reconcile divergent branches"). A user's own
 * choice, at any level, is left alone.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { git, gitOk, givenGitEnv, svc, svcUrl } from "../testing/git.js";
import { givenProject, givenSim } from "../testing/sim.js";

test("plain git pull after a rejected push gives conflict markers in the record file", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "Shared", body: "the original line\n" }]);
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  const url = svcUrl(sim.url, "demo");
  await gitOk(t, env, ["clone", "-q", url, "a"]);
  await gitOk(t, env, ["clone", "-q", url, "b"]);
  t.is(await gitOk(t, env, ["config", "--local", "--get", "pull.rebase"], { cwd: "a" }), "false");
  for (const [dir, line] of [
    ["a", "edited in a"],
    ["b", "edited in b"],
  ] as const) {
    const file = join(env.dir, dir, "issues", "0001.md");
    writeFileSync(file, readFileSync(file, "utf8").replace("the original line", line));
    await gitOk(t, env, ["commit", "-qam", `edit in ${dir}`], { cwd: dir });
  }
  await gitOk(t, env, ["push", "-q"], { cwd: "a" });
  const rejected = await git(env, ["push"], { cwd: "b" });
  t.is(rejected.code, 1);
  t.regex(rejected.stderr, /! \[rejected\] +main -> main \(fetch first\)/);
  const pull = await git(env, ["pull"], { cwd: "b" });
  t.is(pull.code, 1, pull.stderr);
  t.regex(pull.stdout + pull.stderr, /CONFLICT \(content\): Merge conflict in issues\/0001\.md/);
  const merged = readFileSync(join(env.dir, "b", "issues", "0001.md"), "utf8");
  t.regex(merged, /<<<<<<< HEAD\nedited in b\n=======\nedited in a\n>>>>>>> /);
});

test("a pull strategy the user chose is kept", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "Only" }]);
  const env = givenGitEnv(t);
  await gitOk(t, env, ["config", "--global", "pull.rebase", "true"]);
  await gitOk(t, env, ["clone", "-q", svcUrl(sim.url, "demo"), "c"]);
  const local = await git(env, ["config", "--local", "--get", "pull.rebase"], { cwd: "c" });
  t.is(local.code, 1, "no local pull.rebase was written");
  t.is(await gitOk(t, env, ["config", "--get", "pull.rebase"], { cwd: "c" }), "true");
});

test("svc init leaves one pull.rebase=false in the clone's own config, with or without a user's global pull.rebase=true", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "Only" }]);
  const env = givenGitEnv(t);
  const plain = await svc(env, ["init", "sim::demo", "plain", "--origin", sim.url]);
  t.is(plain.code, 0, plain.stderr);
  t.deepEqual(
    (await gitOk(t, env, ["config", "--local", "--get-all", "pull.rebase"], { cwd: "plain" })).split("\n"),
    ["false"],
  );
  await gitOk(t, env, ["config", "--global", "pull.rebase", "true"]);
  const chosen = await svc(env, ["init", "sim::demo", "chosen", "--origin", sim.url]);
  t.is(chosen.code, 0, chosen.stderr);
  t.is(await gitOk(t, env, ["config", "--local", "--get-all", "pull.rebase"], { cwd: "chosen" }), "false");
  t.is(await gitOk(t, env, ["config", "--get", "pull.rebase"], { cwd: "chosen" }), "false");
});
