/**
 * Every explicit fetch asks the server (issue 12 item 1): a change made right after a fetch arrives with the
 * very next `git pull` under default settings. A debounce (`svc.syncInterval`, `SVC_SYNC_INTERVAL`) is
 * opt-in, and when it serves the cached state it says so, with the state's age and a command that, run as
 * printed, asks the server. Serving the cached state because the server is down also says how old it is.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import {
  auditRows,
  expectedIssueFile,
  git,
  gitOk,
  givenGitEnv,
  lastAuditId,
  manyIssues,
  patchIssue,
  run,
  svcUrl,
} from "../testing/git.js";
import { givenSimClone } from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

/** The one `svc: served the cached state …` line of `stderr`, with its age replaced by `<age>`. */
function servedLine(stderr: string): string | undefined {
  const line = stderr.split("\n").find((text) => text.startsWith("svc: served the cached state"));
  return line?.replace(/from \d+\.\d s ago/, "from <age> ago");
}

/** The command a `served the cached state` line tells the user to run. */
function printedCommand(stderr: string): string {
  const match = /; run (.+) to ask the server$/m.exec(stderr);
  if (!match?.[1]) throw new Error(`no command in:\n${stderr}`);
  return match[1];
}

test("with default settings a change made right after a fetch arrives with the next git pull", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(4));

  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  t.is(fetch.stderr, "");
  await patchIssue(sim.url, "demo", 2, { status: "done", body: "Changed right after the fetch.\n" });
  const before = lastAuditId(env);
  const pull = await git(env, ["pull", "-q"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.is(pull.stderr, "");
  t.is(
    readFileSync(join(env.dir, "d", "issues", "0002.md"), "utf8"),
    await expectedIssueFile(sim.url, "demo", 2),
  );
  t.is(auditRows(env, before).filter((row) => row.op === "sync").length, 1, "one delta request");
});

test("an opt-in svc.syncInterval serves the cached state saying so, and the printed command asks the server", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(4));
  await gitOk(t, env, ["config", "svc.syncInterval", "600"], { cwd: "d" });

  await patchIssue(sim.url, "demo", 3, { title: "Renamed on the server" });
  const before = lastAuditId(env);
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  t.is(
    fetch.stderr.replace(/from \d+\.\d s ago/, "from <age> ago"),
    `svc: served the cached state of sim project demo at ${sim.url} from <age> ago (svc.syncInterval=600); ` +
      "run git -c svc.syncInterval=0 fetch to ask the server\n",
  );
  t.is(auditRows(env, before).filter((row) => row.op === "sync").length, 0, "the server was not asked");

  // In a pull the command is the pull, with the user's own options.
  const pull = await git(env, ["pull", "--ff-only", "-q"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.is(
    servedLine(pull.stderr),
    `svc: served the cached state of sim project demo at ${sim.url} from <age> ago (svc.syncInterval=600); ` +
      "run git -c svc.syncInterval=0 pull --ff-only -q to ask the server",
  );
  t.notRegex(readFileSync(join(env.dir, "d", "issues", "0003.md"), "utf8"), /Renamed on the server/);

  const asked = await run(env, "sh", ["-c", printedCommand(pull.stderr)], { cwd: "d" });
  t.is(asked.code, 0, asked.stderr);
  t.is(servedLine(asked.stderr), undefined);
  t.is(
    readFileSync(join(env.dir, "d", "issues", "0003.md"), "utf8"),
    await expectedIssueFile(sim.url, "demo", 3),
  );
});

test("SVC_SYNC_INTERVAL is named as such, and a clone it serves from the cache prints a command for the new folder", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "600" });
  const url = svcUrl(sim.url, "demo");
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", url, "first"]);
  await patchIssue(sim.url, "demo", 1, { status: "in_review" });

  const second = await git(env, ["clone", "-q", "--filter=blob:none", url, "second"]);
  t.is(second.code, 0, second.stderr);
  t.is(
    servedLine(second.stderr),
    `svc: served the cached state of sim project demo at ${sim.url} from <age> ago (SVC_SYNC_INTERVAL=600); ` +
      "run cd second && git -c svc.syncInterval=0 pull to ask the server",
  );
  t.regex(readFileSync(join(env.dir, "second", "issues", "0001.md"), "utf8"), /^status: open$/m);
  const asked = await run(env, "sh", ["-c", printedCommand(second.stderr)]);
  t.is(asked.code, 0, asked.stderr);
  t.is(
    readFileSync(join(env.dir, "second", "issues", "0001.md"), "utf8"),
    await expectedIssueFile(sim.url, "demo", 1),
  );
});

test("a fetch or pull while the server is down fails as git does, says nothing was fetched and how old the cache's state is; the offline switch it prints serves that state", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2));
  await sim.close();
  const why = `cannot sync with sim project demo at ${sim.url} (cannot reach the backend: GET ${sim.url}/projects/demo/issues failed: nothing is listening at ${sim.url} (ECONNREFUSED); is the server running?); nothing was fetched`;
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 128, fetch.stderr);
  t.is(
    fetch.stderr.replace(/from \d+\.\d s ago/, "from <age> ago"),
    `svc: ${why}\nWhen the server is back, run: git fetch\n` +
      "To work from the cache's state from <age> ago on purpose, run: git -c svc.offline=true fetch\n" +
      `fatal: remote error: ${why}; the svc: lines above say what to run\n`,
  );
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.not(pull.code, 0, "no Already up to date with exit 0 while the server could not be asked");
  t.notRegex(pull.stdout, /Already up to date/);
  const offline = /^To work from .* on purpose, run: (.+)$/m.exec(pull.stderr)?.[1] ?? "";
  t.is(offline, "git -c svc.offline=true pull");
  const served = await run(env, "sh", ["-c", offline], { cwd: "d" });
  t.is(served.code, 0, served.stderr);
  t.regex(served.stdout, /Already up to date/);
  t.is(
    served.stderr.replace(/from \d+\.\d s ago/, "from <age> ago"),
    `svc: warning: working offline (svc.offline=true): served the cached state of sim project demo at ${sim.url} from <age> ago; the server was not asked\n`,
  );
  const environment = await git(env, ["fetch"], { cwd: "d", env: { SVC_OFFLINE: "1" } });
  t.is(environment.code, 0, environment.stderr);
  t.regex(environment.stderr, /^svc: warning: working offline \(SVC_OFFLINE=1\): served the cached state/);
  const bad = await git(env, ["fetch"], { cwd: "d", env: { SVC_OFFLINE: "maybe" } });
  t.not(bad.code, 0);
  t.regex(bad.stderr, /^svc: SVC_OFFLINE="maybe" is not true or false; use e\.g\. SVC_OFFLINE=1$/m);
});
