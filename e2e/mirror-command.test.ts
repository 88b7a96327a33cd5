/**
 * The mirror's two front ends side by side: `svc mirror` through the built bin (bin/svc) and the
 * `scripts/mirror-refresh` launcher, each on its own twin mirror of the same simulator project with real
 * git. What it shows: the same arguments give the same exit codes (0, 1, 2), the same stdout, the same
 * stderr once each mirror's path and each front end's own command are made neutral, and the same commit
 * ids; each names itself in its usage line and in the command it prints to run again, and that command,
 * run as printed, works. The mirror's behaviour in depth is e2e/mirror-refresh.test.ts.
 */
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import {
  type GitEnv,
  gitOk,
  givenGitEnv,
  patchIssue,
  type RunOptions,
  type RunResult,
  run,
  svc,
  svcUrl,
} from "../testing/git.js";
import { repoRoot } from "../testing/paths.js";
import { givenProject, givenSim } from "../testing/sim.js";
import { wikiRemote } from "../testing/wiki.js";

interface FrontEnd {
  readonly name: string;
  readonly run: (env: GitEnv, args: readonly string[], options?: RunOptions) => Promise<RunResult>;
  /** How the commands it prints to run again begin. */
  readonly command: string;
  /** How its usage line begins. */
  readonly usage: string;
}

const SHIM = join(repoRoot, "scripts", "mirror-refresh");

const LAUNCHER: FrontEnd = {
  name: "scripts/mirror-refresh",
  run: (env, args, options) => run(env, SHIM, args, options),
  command: SHIM,
  usage: "usage: scripts/mirror-refresh <svc-remote-url> <mirror-git-url> [--branch main] [--dry-run]",
};

const SVC_MIRROR: FrontEnd = {
  name: "svc mirror",
  run: (env, args, options) => svc(env, ["mirror", ...args], options),
  command: "svc mirror",
  usage: "usage: svc mirror <svc-remote-url> <mirror-git-url> [--branch <name>] [--dry-run]",
};

const FRONT_ENDS = [LAUNCHER, SVC_MIRROR] as const;

/** `text` with `mirror` and the front end's own usage line, command and name made neutral. */
function neutral(text: string, mirror: string, frontEnd: FrontEnd): string {
  return text
    .split(mirror)
    .join("<mirror>")
    .split(frontEnd.usage)
    .join("<usage>")
    .split(`${frontEnd.command} `)
    .join("<command> ")
    .split(`${frontEnd.name} `)
    .join("<command> ");
}

/** A new bare repository `<work>/<name>`. */
async function givenMirror(t: ExecutionContext, env: GitEnv, name: string): Promise<string> {
  const path = join(env.dir, name);
  await gitOk(t, env, ["init", "--quiet", "--bare", path]);
  return path;
}

/** The command after `prefix` on the line that has it. */
function printedCommand(t: ExecutionContext, stderr: string, prefix: string): string {
  const at = stderr.indexOf(prefix);
  if (at === -1) t.fail(`no ${JSON.stringify(prefix)} in:\n${stderr}`);
  return (stderr.slice(at + prefix.length).split("\n")[0] as string).trim();
}

/**
 * Runs each front end with `args(its mirror)`; asserts the same exit code, stdout and stderr (made neutral)
 * from both and that each printed its own command where it printed one; returns both results.
 */
async function sameFromBoth(
  t: ExecutionContext,
  mirrors: readonly [string, string],
  runOne: (frontEnd: FrontEnd, mirror: string) => Promise<RunResult>,
): Promise<[RunResult, RunResult]> {
  const launcher = await runOne(LAUNCHER, mirrors[0]);
  const command = await runOne(SVC_MIRROR, mirrors[1]);
  t.is(command.code, launcher.code, `${launcher.stderr}\n---\n${command.stderr}`);
  t.is(neutral(command.stdout, mirrors[1], SVC_MIRROR), neutral(launcher.stdout, mirrors[0], LAUNCHER));
  t.is(neutral(command.stderr, mirrors[1], SVC_MIRROR), neutral(launcher.stderr, mirrors[0], LAUNCHER));
  t.false(command.stderr.includes(SHIM), "svc mirror never names the launcher");
  return [launcher, command];
}

function mirrorTip(t: ExecutionContext, env: GitEnv, mirror: string): Promise<string> {
  return gitOk(t, env, [`--git-dir=${mirror}`, "rev-parse", "--verify", "refs/heads/main"]);
}

test("svc mirror and scripts/mirror-refresh on twin mirrors: the same exit codes, lines and commit ids; each command it prints runs as printed", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }, { title: "Second", labels: ["bug"] }]);
  const env = givenGitEnv(t);
  const remote = svcUrl(sim.url, "demo");
  const mirrors = [await givenMirror(t, env, "launcher.git"), await givenMirror(t, env, "svc.git")] as const;
  // A dry run before each pair of runs brings the cache up to date, so that both print the same sync line.
  const scratch = await givenMirror(t, env, "scratch.git");
  const sync = async () => t.is((await LAUNCHER.run(env, [remote, scratch, "--dry-run"])).code, 0);
  const runBoth = () => sameFromBoth(t, mirrors, (frontEnd, mirror) => frontEnd.run(env, [remote, mirror]));

  await sync();
  const [dry] = await sameFromBoth(t, mirrors, (frontEnd, mirror) =>
    frontEnd.run(env, ["--dry-run", remote, mirror]),
  );
  t.is(dry.code, 0);
  t.is(dry.stdout, "A\tissues/0001.md\nA\tissues/0002.md\n");
  t.regex(dry.stderr, /would get its first commit \(2 added, 0 changed, 0 removed\); nothing was pushed$/m);

  const [created] = await runBoth();
  t.is(created.code, 0, created.stderr);
  t.regex(created.stderr, /^svc: verified: 2 files in issues\//m);
  t.is(await mirrorTip(t, env, mirrors[1]), await mirrorTip(t, env, mirrors[0]), "the same commit");
  const [upToDate] = await runBoth();
  t.regex(upToDate.stderr, /main is up to date \([0-9a-f]{12}\)$/m);

  // Both mirrors decline the next push: exit 1, each printing its own command to run again.
  await patchIssue(sim.url, "demo", 1, { status: "done" });
  await sync();
  const hooks = mirrors.map((mirror) => join(mirror, "hooks", "pre-receive"));
  for (const hook of hooks) {
    writeFileSync(hook, "#!/bin/sh\necho 'this mirror is frozen' >&2\nexit 1\n");
    chmodSync(hook, 0o755);
  }
  const refused = await runBoth();
  t.is(refused[0].code, 1, refused[0].stderr);
  t.regex(refused[0].stderr, /refused the push of .*this mirror is frozen/);
  const prefix = "Fix what git says, then run: ";
  const printed = refused.map((result) => printedCommand(t, result.stderr, prefix));
  t.deepEqual(printed, [`${SHIM} ${remote} ${mirrors[0]}`, `svc mirror ${remote} ${mirrors[1]}`]);

  for (const hook of hooks) rmSync(hook);
  const again = await sameFromBoth(t, mirrors, (frontEnd) =>
    run(env, "sh", ["-c", printed[FRONT_ENDS.indexOf(frontEnd)] as string]),
  );
  t.is(again[0].code, 0, again[0].stderr);
  t.regex(again[0].stderr, /fast-forwarded \(0 added, 1 changed, 0 removed\)$/m);
  t.is(await mirrorTip(t, env, mirrors[1]), await mirrorTip(t, env, mirrors[0]), "the same commit again");
});

test("refusals exit 2 from both front ends with the same problem, each with its own usage line and command", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }]);
  const env = givenGitEnv(t);
  const remote = svcUrl(sim.url, "demo");
  const mirror = await givenMirror(t, env, "mirror.git");
  const same = (args: readonly string[]) =>
    sameFromBoth(t, [mirror, mirror], (frontEnd) => frontEnd.run(env, args));

  for (const [args, problem] of [
    [
      [remote, mirror, "--branch", "bad..name"],
      /^svc: --branch "bad\.\.name" is not a valid branch name\n<usage>\n/,
    ],
    [[remote, `svc::${sim.url}/projects/demo`], /is an svc remote; a push there would write to the backend/],
    [[remote, ""], /^svc: the mirror's git URL is empty\n<usage>\n/],
    [[wikiRemote("https://acme.atlassian.net", "DOCS"), mirror], /VENDOR_API_KEY/],
  ] as const) {
    const [launcher] = await same(args);
    t.is(launcher.code, 2, launcher.stderr);
    t.regex(neutral(launcher.stderr, mirror, LAUNCHER), problem);
    t.notRegex(launcher.stderr, /^\s+at /m, "no stack trace");
  }

  // The command line itself: each front end refuses it its own way, both with exit 2 and their usage.
  for (const frontEnd of FRONT_ENDS) {
    const missing = await frontEnd.run(env, [remote]);
    t.is(missing.code, 2, `${frontEnd.name}: ${missing.stderr}`);
    t.regex(missing.stderr, new RegExp(`${frontEnd.name} <svc-remote-url> <mirror-git-url>`, "i"));
    const help = await frontEnd.run(env, ["--help"]);
    t.is(help.code, 0, frontEnd.name);
    t.regex(help.stdout, /^Exit codes:/m);
    t.true(help.stdout.includes(`${frontEnd.name} svc::http://127.0.0.1:7878/projects/demo `), frontEnd.name);
  }

  // An unreachable mirror: the same message; svc's command, run as printed once the mirror exists, works.
  const absent = join(env.dir, "absent.git");
  const [, unreachable] = await sameFromBoth(t, [absent, absent], (frontEnd) =>
    frontEnd.run(env, [remote, absent]),
  );
  t.is(unreachable.code, 2);
  t.regex(unreachable.stderr, /^svc: cannot read the mirror .+absent\.git: git ls-remote exited 128/m);
  const command = printedCommand(t, unreachable.stderr, "then run: ");
  t.is(command, `svc mirror ${remote} ${absent}`);
  await gitOk(t, env, ["init", "--quiet", "--bare", absent]);
  const fixed = await run(env, "sh", ["-c", command]);
  t.is(fixed.code, 0, fixed.stderr);
  t.regex(fixed.stderr, /absent\.git main: created at /m);
});
