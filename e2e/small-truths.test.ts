/**
 * Smaller untruths of pushes and fetches (issue 31 item 6), each with real git against the simulator or a
 * fake vendor service, asserting git's exit status and the whole of stderr, and running each command a
 * message prints as printed (`sh -c`, dash here, from where the user stands, `GIT_EDITOR=false` so an
 * editor fails it):
 * - an edit of a server-controlled field is not sent, and the push names the command that puts the
 *   server's value back;
 * - the forge's `git rm` closes the issue, and the push's summary says `closed`, not `deleted`;
 * - a file named with an escape sequence: the refusal's command names it without control characters (dash
 *   has no `$'…'`) and runs, and git's `[remote rejected]` reason carries no escape either;
 * - a forge or tracker answer that is not JSON is a server fault: `when the server works again, run: …`.
 * The forge's `status/*` labels that are no status are in e2e/forge-push.test.ts.
 */
import test, { type ExecutionContext } from "ava";
import { type FakeForge, givenFakeForge } from "../testing/fake-forge.js";
import { givenFakeTracker } from "../testing/fake-tracker.js";
import { GARBAGE_BODY, givenFaultProxy } from "../testing/fault-proxy.js";
import { forgeRemote, forgeWrites, givenForgeEnv, givenProxiedForgeEnv } from "../testing/forge.js";
import { expectedIssueFile, type GitEnv, git, gitOk, manyIssues, run, svcUrl } from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  givenSimClone,
  issueOnServer,
  issuePath,
  lastSimAuditId,
  readWorkFile,
  setField,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProxiedTrackerEnv, trackerPath, trackerRemote, trackerWrites } from "../testing/tracker.js";

const REPO = "acme/widgets";

/** The command a message printed last: the rest of the line after `run: `, or the line after `run:`. */
function printedCommand(t: ExecutionContext, stderr: string): string {
  const at = stderr.lastIndexOf("run:");
  t.not(at, -1, stderr);
  const rest = stderr.slice(at + "run:".length);
  const line = rest.startsWith("\n") ? rest.slice(1) : rest;
  return line.slice(0, line.indexOf("\n")).trim();
}

/** Runs `command` as a user pasting it would, from `cwd`; an editor prompt fails it. */
async function runPrinted(t: ExecutionContext, env: GitEnv, command: string, cwd: string): Promise<void> {
  const ran = await run(env, "sh", ["-c", command], { cwd, env: { GIT_EDITOR: "false" } });
  t.is(ran.code, 0, `${command}\n${ran.stdout}${ran.stderr}`);
}

/** git's line for an accepted push from `before` to `after` (abbreviated as git abbreviates them). */
async function pushedLine(t: ExecutionContext, env: GitEnv, before: string, after: string): Promise<string> {
  const short = (oid: string) => gitOk(t, env, ["rev-parse", "--short", oid], { cwd: "d" });
  return `   ${await short(before)}..${await short(after)}  main -> main\n`;
}

test("an edit of version or id is not sent, and the printed git pull --ff-only puts the server's values back", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { env: { SVC_SYNC_INTERVAL: "0" } });
  // Whatever the user's pull settings say, the printed command neither merges nor opens an editor.
  await gitOk(t, env, ["config", "pull.ff", "false"], { cwd: "d" });
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "version", "999"));
  editWorkFile(env, "d", issuePath(2), (text) =>
    setField(setField(setField(text, "id", "7"), "version", "5"), "title", "Two, edited"),
  );
  const before = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  const mine = await commitAll(t, env, "d", "Edit server fields");

  const from = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.is(
    push.stderr,
    `svc: sim project demo at ${sim.url}: 0 created, 1 updated, 0 deleted; git pull brings the server's versions and ids\n` +
      "svc: issues/0001.md: version is set by the server; your edit of it was not sent\n" +
      "svc: issues/0002.md: id, version are set by the server; your edit of them was not sent\n" +
      "  to put the server's values back in these files, run: git pull --ff-only\n" +
      `To ${svcUrl(sim.url, "demo")}\n${await pushedLine(t, env, before, mine)}`,
  );
  t.deepEqual(simWrites(sim, from), [
    { method: "PATCH", path: "/projects/demo/issues/2", status: 200, body: { title: "Two, edited" } },
  ]);

  await runPrinted(t, env, printedCommand(t, push.stderr), "d");
  t.is(readWorkFile(env, "d", issuePath(1)), await expectedIssueFile(sim.url, "demo", 1));
  t.is(readWorkFile(env, "d", issuePath(2)), await expectedIssueFile(sim.url, "demo", 2));
  t.regex(readWorkFile(env, "d", issuePath(1)), /^version: 1$/m);
  t.regex(readWorkFile(env, "d", issuePath(2)), /^id: 2$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  t.is(await gitOk(t, env, ["rev-list", "--merges", "--count", `${mine}..HEAD`], { cwd: "d" }), "0");
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.is(again.stderr, "Everything up-to-date\n");
});

/** A fake forge with two open issues and a clone of it in `d`. */
async function givenForgeClone(t: ExecutionContext): Promise<{ forge: FakeForge; env: GitEnv }> {
  const forge = await givenFakeForge(t);
  for (const title of ["First", "Second"]) forge.addIssue(REPO, { title, body: "", labels: ["bug"] });
  const env = givenForgeEnv(t, forge);
  await gitOk(t, env, ["clone", "-q", forgeRemote(forge.url, REPO), "d"]);
  return { forge, env };
}

test("forge: git rm closes the issue as not planned, and the push's summary counts it as closed", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  await gitOk(t, env, ["rm", "-q", issuePath(1)], { cwd: "d" });
  const before = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  const mine = await commitAll(t, env, "d", "Remove the first");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.is(
    push.stderr,
    "svc: issues/0001.md: closed as not planned; it stays as status wont_fix\n" +
      `svc: forge repository ${REPO} at ${forge.url}: 0 created, 0 updated, 1 closed; git pull brings the server's versions and ids\n` +
      `To ${forgeRemote(forge.url, REPO)}\n${await pushedLine(t, env, before, mine)}`,
  );
  t.deepEqual(
    forgeWrites(forge, from).map((write) => [write.method, write.path, JSON.parse(write.body)]),
    [["PATCH", "/repos/acme/widgets/issues/1", { state: "closed", state_reason: "not_planned" }]],
  );
  t.is(forge.issues(REPO).length, 2, "nothing was deleted");
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", issuePath(1)), /^status: wont_fix$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("a file named with an escape sequence: the printed command names it without control characters and runs in sh", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(1), { env: { SVC_SYNC_INTERVAL: "0" } });
  const name = "issues/\u001b[31mit's 100%!.md";
  writeWorkFile(env, "d", name, "---\ntitle: [unclosed\n---\nRed.\n");
  await commitAll(t, env, "d", "A red name");

  const from = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  const shown = "issues/\ufffd[31mit's 100%!.md";
  t.is(
    push.stderr,
    "svc: push rejected, nothing was written:\n" +
      `  ${shown}: the frontmatter is not valid YAML at line 2\n` +
      "      expected: `key: value` lines\n" +
      '      received: "title: [unclosed": a `[`, `{` or quote opened on this line is not closed on it\n' +
      `  fix ${shown} as said above, then run:\n` +
      `  git add "$(printf 'issues/\\033[31mit'\\''s 100%%\\041.md')" && git commit -m '${"Fix issues/\ufffd[31mit'\\''s 100%!.md"}' && git push\n` +
      `To ${svcUrl(sim.url, "demo")}\n` +
      ` ! [remote rejected] main -> main (${shown}: the frontmatter is not valid YAML at line 2)\n` +
      `error: failed to push some refs to '${svcUrl(sim.url, "demo")}'\n`,
  );
  t.false(push.stderr.includes("\u001b"), "no escape reaches the terminal");
  t.deepEqual(simWrites(sim, from), []);

  editWorkFile(env, "d", name, (text) => setField(text, "title", "Closed"));
  await runPrinted(t, env, printedCommand(t, push.stderr), "d");
  const writes = simWrites(sim, from);
  t.deepEqual(
    writes.map((write) => [write.method, write.path, write.body]),
    [["POST", "/projects/demo/issues", { title: "Closed", body: "Red.\n" }]],
  );
  t.is((await issueOnServer(sim.url, "demo", 2)).frontmatter.title, "Closed");
  t.regex(await gitOk(t, env, ["log", "-1", "--format=%s"], { cwd: "d" }), /^Fix issues\/\ufffd\[31m/);
});

test("forge: an answer that is not JSON is a server fault; fetch, push and clone say when and what to run again", async (t) => {
  const forge = await givenFakeForge(t);
  forge.addIssue(REPO, { title: "First", body: "" });
  const proxy = await givenFaultProxy(t, forge.url);
  const env = givenProxiedForgeEnv(t, forge, proxy.url);
  const remote = forgeRemote(proxy.url, REPO);
  await gitOk(t, env, ["clone", "-q", remote, "d"]);
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "title", "First, edited"));
  await commitAll(t, env, "d", "Retitle");
  proxy.setFault(() => ({ kind: "garbage" }));

  const server = `forge repository ${REPO} at ${proxy.url}`;
  const notJson =
    `answered 200 with a body that is not JSON: ${JSON.stringify(GARBAGE_BODY)} ` +
    "(a proxy or sign-in page between svc and the server may have answered in its place)";
  const listing = `${server}: listing the issues of ${REPO} changed since <T> ${notJson}`;
  const since = (stderr: string) =>
    stderr.replace(/changed since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, "changed since <T>");

  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 128, fetch.stderr);
  const failed = `cannot sync with ${server} (${listing}); nothing was fetched`;
  t.is(
    since(fetch.stderr).replace(/from [\d.]+ s ago/, "from <age> ago"),
    `svc: ${failed}\nWhen the server works again, run: git fetch\n` +
      "To work from the cache's state from <age> ago on purpose, run: git -c svc.offline=true fetch\n" +
      `fatal: remote error: ${failed}; the svc: lines above say what to run\n`,
  );

  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.is(
    since(push.stderr),
    `svc: ${listing}\n` +
      "  nothing was written; when the server works again, run: git push\n" +
      `To ${remote}\n` +
      " ! [remote rejected] main -> main (the server failed (see above); nothing was written)\n" +
      `error: failed to push some refs to '${remote}'\n`,
  );
  t.deepEqual(forgeWrites(forge, from), []);

  const fresh = givenProxiedForgeEnv(t, forge, proxy.url);
  const clone = await git(fresh, ["clone", remote, "e"]);
  t.is(clone.code, 128, clone.stderr);
  t.is(
    clone.stderr,
    "Cloning into 'e'...\n" +
      `svc: ${server}: listing the issues of ${REPO} ${notJson}\n` +
      `no cached copy of ${server} is there to serve instead; when the server works again, run: git clone ${remote} e\n`,
  );

  proxy.setFault(undefined);
  await runPrinted(t, env, printedCommand(t, push.stderr), "d");
  t.is(forge.issue(REPO, 1)?.title, "First, edited");
  await runPrinted(t, fresh, printedCommand(t, clone.stderr), ".");
  t.regex(readWorkFile(fresh, "e", issuePath(1)), /^title: "First, edited"$/m);
});

test("tracker: an answer that is not JSON is a server fault; the push says when and what to run again", async (t) => {
  const tracker = await givenFakeTracker(t);
  tracker.addIssue("TEST", { summary: "First" });
  const proxy = await givenFaultProxy(t, tracker.url);
  const env = givenProxiedTrackerEnv(t, tracker, proxy.url);
  const remote = trackerRemote(proxy.url, "TEST");
  await gitOk(t, env, ["clone", "-q", remote, "d"]);
  editWorkFile(env, "d", trackerPath("TEST-1"), (text) => setField(text, "title", "First, edited"));
  await commitAll(t, env, "d", "Retitle");
  proxy.setFault(() => ({ kind: "garbage" }));

  const from = tracker.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.is(
    push.stderr,
    `svc: tracker project TEST at ${proxy.url}: reading the account's time zone answered 200 with a body that is not JSON: ` +
      `${JSON.stringify(GARBAGE_BODY)} (a proxy or sign-in page between svc and the server may have answered in its place)\n` +
      "  nothing was written; when the server works again, run: git push\n" +
      `To ${remote}\n` +
      " ! [remote rejected] main -> main (the server failed (see above); nothing was written)\n" +
      `error: failed to push some refs to '${remote}'\n`,
  );
  t.deepEqual(trackerWrites(tracker, from), []);

  proxy.setFault(undefined);
  await runPrinted(t, env, printedCommand(t, push.stderr), "d");
  t.is(tracker.issue("TEST-1")?.summary, "First, edited");
});
