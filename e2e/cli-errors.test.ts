/**
 * Every refusal of the command line names the next command, and that command runs as printed from where
 * the user stands (issue 12 item 8): the lines a refusal indents by two spaces are run with `sh -c`, in the
 * same folder and environment, against a real simulator on port 0. The `svc` bin and real git.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { type GitEnv, gitOk, givenGitEnv, type RunResult, run, svc } from "../testing/git.js";
import { givenProject, givenSim } from "../testing/sim.js";

/** The command lines a message prints for the user to run: its lines indented by exactly two spaces. */
function printedCommands(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((line) => /^ {2}\S/.test(line))
    .map((line) => line.trim());
}

/** `line` run by a POSIX shell, as a user pasting it would. */
function shell(env: GitEnv, line: string, cwd?: string): Promise<RunResult> {
  return run(env, "sh", ["-c", line], cwd === undefined ? {} : { cwd });
}

async function givenDemo(t: Parameters<typeof givenSim>[0]): Promise<string> {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First" }, { title: "Second", body: "Body\n" }]);
  return sim.url;
}

test("svc clone demo refuses with exit 2 and prints svc init sim::demo, which clones the project", async (t) => {
  const simUrl = await givenDemo(t);
  const env = givenGitEnv(t, { SVC_SIM_ORIGIN: simUrl });

  const refused = await svc(env, ["clone", "demo"]);
  t.is(refused.code, 2);
  t.is(refused.stdout, "");
  t.deepEqual(printedCommands(refused.stderr), ["svc init sim::demo", "svc init wiki::demo"]);
  t.false(existsSync(join(env.dir, "demo")), "a refusal makes nothing");

  const [init = ""] = printedCommands(refused.stderr);
  const cloned = await shell(env, init);
  t.is(cloned.code, 0, cloned.stderr);
  t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "demo" })).split("\n"), [
    "issues/0001.md",
    "issues/0002.md",
  ]);
});

test("a mistyped option or command: the corrected command line it prints runs as printed", async (t) => {
  const simUrl = await givenDemo(t);
  const env = givenGitEnv(t);

  const option = await svc(env, ["init", "sim::demo", "d", "--orign", simUrl]);
  t.is(option.code, 2);
  t.is(option.stdout, "");
  t.is(
    option.stderr,
    `svc init: unknown option --orign (did you mean --origin?)
usage: svc init <kind::project> [dir] [--at <time>] [--no-comments] [--origin <url>]
Run:
  svc init sim::demo d --origin ${simUrl}
`,
  );
  const command = await svc(env, ["iint", "sim::demo", "e", "--origin", simUrl]);
  t.is(command.code, 2);
  t.is(
    command.stderr,
    `svc: unknown command "iint"; did you mean svc init? Run:\n  svc init sim::demo e --origin ${simUrl}\n`,
  );
  for (const [refusal, dir] of [
    [option, "d"],
    [command, "e"],
  ] as const) {
    t.false(existsSync(join(env.dir, dir)), "a refusal makes nothing");
    const [line = ""] = printedCommands(refusal.stderr);
    const fixed = await shell(env, line);
    t.is(fixed.code, 0, fixed.stderr);
    t.true(existsSync(join(env.dir, dir, "issues", "0002.md")), line);
  }
});

test("svc pull, svc push in a clone made by svc init print git pull and git push, which run there; elsewhere they say where", async (t) => {
  const simUrl = await givenDemo(t);
  const env = givenGitEnv(t);
  const init = await svc(env, ["init", "sim::demo", "d", "--origin", simUrl]);
  t.is(init.code, 0, init.stderr);

  for (const word of ["pull", "push"]) {
    const refused = await svc(env, [word], { cwd: join("d", "issues") });
    t.is(refused.code, 2);
    t.is(
      refused.stderr,
      `svc: unknown command "${word}"; in a clone made by svc init, git itself does that. Run:\n  git ${word}\n`,
    );
    const ran = await shell(env, `git ${word}`, join("d", "issues"));
    t.is(ran.code, 0, ran.stderr);
  }

  const outside = await svc(env, ["pull"]);
  t.is(outside.code, 2);
  t.is(
    outside.stderr,
    `svc: unknown command "pull"; git itself does that in a clone made by svc init, and this folder is not in one (its origin is not an svc:: URL). In the clone's folder, run:
  git pull
To make a clone: svc init --help
`,
  );
});

test("a remote URL with a user name and password: git clone refuses without echoing them, and the clone it names works", async (t) => {
  const simUrl = await givenDemo(t);
  const env = givenGitEnv(t);
  const withPassword = `svc::${simUrl.replace("http://", "http://agent:s3cret@")}/projects/demo`;

  const refused = await run(env, "git", ["clone", withPassword, "d"]);
  t.is(refused.code, 128);
  t.false(refused.stderr.includes("s3cret"), refused.stderr);
  t.false(refused.stderr.includes("doctor"), refused.stderr);
  const clean = `svc::${simUrl}/projects/demo`;
  t.true(
    refused.stderr.includes(
      "svc: a remote URL must not carry a user name or password; svc reads credentials from the environment " +
        "(VENDOR_EMAIL and VENDOR_API_KEY for a wiki, TRACKER_EMAIL and TRACKER_API_TOKEN for a tracker, FORGE_TOKEN for a forge; the simulator needs none). Use the URL without them: " +
        `git clone ${clean} (in an existing clone: git remote set-url origin ${clean})\n`,
    ),
    refused.stderr,
  );

  const [, named = ""] = /Use the URL without them: (git clone \S+)/.exec(refused.stderr) ?? [];
  const cloned = await shell(env, named);
  t.is(cloned.code, 0, cloned.stderr);
  t.true(existsSync(join(env.dir, "demo", "issues", "0001.md")));
});

test("a reader that hangs up (svc log | head -1) ends svc quietly: exit 0, nothing on stderr, no EPIPE", async (t) => {
  const sim = await givenSim(t);
  // 1,500 changed records make a log of ~100 KB: more than a pipe holds, so svc is still writing when
  // head has read its line and gone.
  const count = 1500;
  for (let i = 1; i <= count; i++) sim.store.createIssue("demo", { title: `Issue ${i}` });
  const env = givenGitEnv(t);
  const init = await svc(env, ["init", "sim::demo", "d", "--origin", sim.url]);
  t.is(init.code, 0, init.stderr);
  for (let id = 1; id <= count; id++) sim.store.patchIssue("demo", id, { status: "done" }, undefined);
  const sync = await svc(env, ["sync", "d"]);
  t.is(sync.code, 0, sync.stderr);

  const piped = await shell(env, `{ svc log d; echo "svc exited $?" >&2; } | head -1`);
  t.is(piped.code, 0);
  t.regex(piped.stdout, /^state [0-9a-f]{12} {2}seen \S+ {2}sync\n$/);
  t.is(piped.stderr, "svc exited 0\n");

  // The reader gone before svc writes at all, for commands that print a little or a lot.
  for (const args of [["log", "d"], ["log", "--json", "d"], ["--help"], ["doctor", "--offline", "d"]]) {
    const closed = await svc(env, args, { closeStdout: true });
    t.deepEqual([closed.code, closed.stderr], [0, ""], `svc ${args.join(" ")}`);
  }
});

test("a simulator URL on a host that is not loopback names the cause (loopback-only, or a name that does not resolve) and the command that works", async (t) => {
  const simUrl = await givenDemo(t);
  const env = givenGitEnv(t);
  const port = new URL(simUrl).port;
  const working = `svc::${simUrl}/projects/demo`;

  const remote = await run(env, "git", ["clone", `svc::http://192.0.2.7:${port}/projects/demo`, "d"]);
  t.is(remote.code, 128);
  t.is(
    remote.stderr,
    `Cloning into 'd'...
svc: remote URL "http://192.0.2.7:${port}/projects/demo" names a simulator project (no wiki/, tracker/ or forge/ before /projects/) on 192.0.2.7, which is not a loopback address: the simulator listens only on loopback (127.0.0.1, localhost, [::1]), by design, as it has no authentication. For a simulator on this machine: git clone ${working} (in an existing clone: git remote set-url origin ${working}); for a wiki space or a tracker project there, name its kind: svc::http://192.0.2.7:${port}/wiki/projects/demo or svc::http://192.0.2.7:${port}/tracker/projects/demo
`,
  );
  const typo = await run(env, "git", ["clone", `svc::http://sim.invalid:${port}/projects/demo`, "d"]);
  t.is(typo.code, 128);
  t.regex(
    typo.stderr,
    new RegExp(
      `^Cloning into 'd'\\.\\.\\.\\nsvc: remote URL "http://sim\\.invalid:${port}/projects/demo" names a simulator project \\(no wiki/, tracker/ or forge/ before /projects/\\) on sim\\.invalid, and the host name sim\\.invalid does not resolve \\((ENOTFOUND|EAI_AGAIN)\\); the simulator listens only on loopback \\(127\\.0\\.0\\.1, localhost, \\[::1\\]\\)\\. For a simulator on this machine: git clone ${working.replace(/\./g, "\\.")} \\(in an existing clone: git remote set-url origin ${working.replace(/\./g, "\\.")}\\)\\n$`,
    ),
  );
  t.false(existsSync(join(env.dir, "d")), "nothing was cloned");
  const [, clone = ""] = /For a simulator on this machine: (git clone \S+)/.exec(typo.stderr) ?? [];
  const cloned = await shell(env, `${clone} d`);
  t.is(cloned.code, 0, cloned.stderr);
  t.true(existsSync(join(env.dir, "d", "issues", "0002.md")));

  // In that clone, a remote moved off loopback: svc sync names the cause and set-url as printed fixes it.
  await gitOk(t, env, [
    "-C",
    "d",
    "remote",
    "set-url",
    "origin",
    `svc::http://192.0.2.7:${port}/projects/demo`,
  ]);
  const sync = await svc(env, ["sync"], { cwd: "d" });
  t.is(sync.code, 2);
  t.true(
    sync.stderr.startsWith(
      `svc: remote URL "svc::http://192.0.2.7:${port}/projects/demo" names a simulator project`,
    ),
  );
  const [, setUrl = ""] = /\(in an existing clone: (git remote set-url origin \S+)\)/.exec(sync.stderr) ?? [];
  t.is(setUrl, `git remote set-url origin ${working}`);
  t.is((await shell(env, `${setUrl} && svc sync`, "d")).code, 0);

  const init = await svc(env, ["init", "sim::demo", "e", "--origin", `http://192.0.2.7:${port}`]);
  t.is(init.code, 2);
  t.is(
    init.stderr,
    `svc: --origin http://192.0.2.7:${port} puts the simulator on 192.0.2.7, which is not a loopback address: the simulator listens only on loopback (127.0.0.1, localhost, [::1]), by design, as it has no authentication. For a simulator on this machine: svc init sim::demo e --origin ${simUrl}\n`,
  );
  const [, initAgain = ""] = /For a simulator on this machine: (.*)\n/.exec(init.stderr) ?? [];
  const made = await shell(env, initAgain);
  t.is(made.code, 0, made.stderr);
  t.true(existsSync(join(env.dir, "e", "issues", "0002.md")));
});
