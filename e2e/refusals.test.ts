/**
 * Every refusal names the next command, and that command works as printed (issue 12): each test runs the
 * printed line with `sh -c` from the folder the user pushed from, with `GIT_EDITOR=false` so that a command
 * that would open an editor fails the test. Real git against the real simulator.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { givenFaultProxy, type ProxiedRequest } from "../testing/fault-proxy.js";
import { type GitEnv, git, gitOk, givenGitEnv, manyIssues, run, svc } from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  givenClone,
  givenSimClone,
  issueOnServer,
  issuePath,
  lastSimAuditId,
  readWorkFile,
  setField,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProject, givenSim, givenTempDir } from "../testing/sim.js";

/** The command a refusal printed: the one line of stderr, indented two spaces, that starts with `git`. */
function printedCommand(t: ExecutionContext, stderr: string): string {
  const commands = stderr.split("\n").filter((line) => /^ {2}git /.test(line));
  t.is(commands.length, 1, stderr);
  return commands[0]?.trim() ?? "";
}

/** Runs `command` as a user pasting it would, from `cwd`; an editor prompt fails it. */
async function runPrinted(t: ExecutionContext, env: GitEnv, command: string, cwd: string): Promise<void> {
  const ran = await run(env, "sh", ["-c", command], { cwd, env: { GIT_EDITOR: "false" } });
  t.is(ran.code, 0, `${command}\n${ran.stdout}${ran.stderr}`);
}

test("a file outside issues/, pushed from a subfolder: the printed command keeps it on disk, untracked, and pushes the rest", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2));
  writeWorkFile(env, "d", "NOTES.md", "remember the milk\n");
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Close 1, and my notes");

  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d/issues" });
  t.is(push.code, 1, push.stderr);
  t.true(
    push.stderr.includes(
      "svc: push rejected, nothing was written:\n" +
        "  NOTES.md: only issues/<name>.md files are records, and svc pushes nothing else\n" +
        "  run (NOTES.md stays on disk, untracked):\n" +
        '  git rm --cached ../NOTES.md && git commit -m "Keep NOTES.md out of svc" && git push\n',
    ),
    push.stderr,
  );
  t.deepEqual(simWrites(sim, before), []);

  await runPrinted(t, env, printedCommand(t, push.stderr), "d/issues");
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path, write.body]),
    [["PATCH", "/projects/demo/issues/1", { status: "done" }]],
  );
  t.is(readWorkFile(env, "d", "NOTES.md"), "remember the milk\n");
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "?? NOTES.md");
});

test("an invalid file: fixed as the message says, the printed command (a new commit, no amend) pushes it", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2));
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", "[unclosed"));
  await commitAll(t, env, "d", "Retitle 2");

  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.notRegex(push.stderr, /amend/);
  t.regex(
    push.stderr,
    /\n {2}fix issues\/0002\.md as said above, then run:\n {2}git add issues\/0002\.md && git commit -m "Fix issues\/0002\.md" && git push\n/,
  );
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", '"[closed]"'));
  await runPrinted(t, env, printedCommand(t, push.stderr), "d");
  t.is((await issueOnServer(sim.url, "demo", 2)).frontmatter.title, "[closed]");
});

test("a duplicate of a renamed record: the printed command removes the leftover copy", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(3));
  await gitOk(t, env, ["mv", issuePath(3), "issues/a.md"], { cwd: "d" });
  writeWorkFile(env, "d", "issues/b.md", readWorkFile(env, "d", "issues/a.md"));
  await commitAll(t, env, "d", "Two names for 3");

  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, /issues\/b\.md: two files have id 3: issues\/a\.md and this one; keep one\n/);
  const command = printedCommand(t, push.stderr);
  t.is(command, 'git rm issues/b.md && git commit -m "Remove issues/b.md" && git push');
  await runPrinted(t, env, command, "d");
  t.deepEqual(simWrites(sim, before), []);
  t.false(existsSync(join(env.dir, "d", "issues", "b.md")));
});

test("more deletes than the limit: the printed command allows them with an empty commit, no editor", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(7));
  await gitOk(t, env, ["rm", "-q", ...[1, 2, 3, 4, 5, 6].map(issuePath)], { cwd: "d" });
  await commitAll(t, env, "d", "Clean up");

  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  const command = printedCommand(t, push.stderr);
  t.is(command, 'git commit --allow-empty -m "Delete 6 records [allow-bulk-delete]" && git push');
  t.deepEqual(simWrites(sim, before), []);
  await runPrinted(t, env, command, "d");
  t.is(simWrites(sim, before).filter((write) => write.method === "DELETE").length, 6);
});

test("deleting a file outside issues/ that an earlier commit added needs no write and is not refused", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(1));
  writeWorkFile(env, "d", "NOTES.md", "x\n");
  const withNotes = await commitAll(t, env, "d", "Notes");
  const refused = await git(env, ["push"], { cwd: "d" });
  t.is(refused.code, 1, refused.stderr);
  await runPrinted(t, env, printedCommand(t, refused.stderr), "d");

  // A branch from the commit that had the notes: the server's history now holds that commit, so this
  // push's base has NOTES.md and the push deletes it.
  rmSync(join(env.dir, "d", "NOTES.md"));
  await gitOk(t, env, ["checkout", "-q", "-b", "side", withNotes], { cwd: "d" });
  await gitOk(t, env, ["rm", "-q", "NOTES.md"], { cwd: "d" });
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Drop the notes, close 1");
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push", "origin", "side:main"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path]),
    [["PATCH", "/projects/demo/issues/1"]],
  );
});

test("committed conflict markers: refused naming their line, not as a YAML error; the printed command pushes the resolution", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { dir: "a" });
  await givenClone(t, env, sim.url, "demo", "b");
  editWorkFile(env, "a", issuePath(2), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "a", "Done");
  await gitOk(t, env, ["push"], { cwd: "a" });
  editWorkFile(env, "b", issuePath(2), (text) => setField(text, "status", "wont_fix"));
  await commitAll(t, env, "b", "Won't fix");
  t.is((await git(env, ["push"], { cwd: "b" })).code, 1);
  t.not((await git(env, ["pull", "--no-rebase"], { cwd: "b" })).code, 0);
  // The markers are committed as they are: the merge is concluded, the file is not.
  await gitOk(t, env, ["commit", "-qam", "Merge"], { cwd: "b" });
  const conflicted = readWorkFile(env, "b", issuePath(2));
  const line = conflicted.split("\n").findIndex((text) => text.startsWith("<<<<<<< ")) + 1;
  t.true(line > 1, conflicted);

  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "b" });
  t.is(push.code, 1, push.stderr);
  t.true(
    push.stderr.includes(
      `  issues/0002.md: unresolved conflict markers (<<<<<<<) at line ${line}\n` +
        "      expected: one version of each conflicting part: keep the lines you want, delete the lines <<<<<<< …, ======= and >>>>>>> …\n" +
        "  fix issues/0002.md as said above, then run:\n" +
        '  git add issues/0002.md && git commit -m "Resolve issues/0002.md" && git push\n',
    ),
    push.stderr,
  );
  t.notRegex(push.stderr, /YAML|amend/);
  t.regex(push.stderr, /\[remote rejected\] main -> main \(issues\/0002\.md: unresolved conflict markers/);
  t.deepEqual(simWrites(sim, before), []);

  editWorkFile(env, "b", issuePath(2), (text) =>
    text.replace(/^<<<<<<< .*\n(status: wont_fix\n)=======\nstatus: done\n>>>>>>> .*\n/m, "$1"),
  );
  await runPrinted(t, env, printedCommand(t, push.stderr), "b");
  t.is((await issueOnServer(sim.url, "demo", 2)).frontmatter.status, "wont_fix");
});

/** The command at the end of the stderr line that starts with `lead`: what follows its `: git …`. */
function commandAfter(t: ExecutionContext, stderr: string, lead: string): string {
  const line = stderr.split("\n").find((text) => text.startsWith(lead)) ?? "";
  const at = line.indexOf(": git ");
  t.true(at !== -1, `no line "${lead}…: git …" in\n${stderr}`);
  return line.slice(at + 2);
}

/** Two clones of a two-issue project; `a` has pushed `theirs` to issue 2, `b` has committed `mine`. */
async function givenConcurrentEdits(
  t: ExecutionContext,
  theirs: (text: string) => string,
  mine: (text: string) => string,
) {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { dir: "a" });
  await givenClone(t, env, sim.url, "demo", "b");
  editWorkFile(env, "a", issuePath(2), theirs);
  await commitAll(t, env, "a", "Theirs");
  await gitOk(t, env, ["push"], { cwd: "a" });
  editWorkFile(env, "b", issuePath(2), mine);
  await commitAll(t, env, "b", "Mine");
  return { sim, env };
}

const STALE_HEAD =
  "svc: these records changed on the server since the state your commits are based on; nothing was written:\n" +
  "  issues/0002.md (record 2): version 2 on the server, your base has 1\n" +
  "  to merge the server's changes into yours and push: git pull --no-rebase --no-edit && git push\n" +
  "  if git pull stops at conflicts, edit issues/0002.md to keep one version of each conflicting part, then: " +
  "git add issues/0002.md && git commit --no-edit && git push\n";
const AUTO_MERGE =
  "  these edits merge field by field; to let svc merge them for you from now on: git config svc.autoMerge true && git push\n";

test("a stale push whose edits merge field by field offers svc.autoMerge after git pull; the printed command writes the merge", async (t) => {
  const { sim, env } = await givenConcurrentEdits(
    t,
    (text) => setField(text, "title", '"Title from a"'),
    (text) => setField(text, "status", "in_progress"),
  );
  const push = await git(env, ["push"], { cwd: "b/issues" });
  t.is(push.code, 1, push.stderr);
  t.true(
    push.stderr.includes(STALE_HEAD.replaceAll("add issues/0002.md", "add 0002.md") + AUTO_MERGE),
    push.stderr,
  );
  t.regex(push.stderr, /! \[rejected\] +main -> main \(fetch first\)/);

  await runPrinted(t, env, commandAfter(t, push.stderr, "  these edits merge field by field"), "b/issues");
  const server = await issueOnServer(sim.url, "demo", 2);
  t.is(server.frontmatter.title, "Title from a");
  t.is(server.frontmatter.status, "in_progress");
});

test("a stale push of the same field: no svc.autoMerge offer; git pull as printed stops at the conflict, a push then says how to finish the merge, and that pushes", async (t) => {
  const { sim, env } = await givenConcurrentEdits(
    t,
    (text) => setField(text, "status", "done"),
    (text) => setField(text, "status", "wont_fix"),
  );
  const push = await git(env, ["push"], { cwd: "b" });
  t.is(push.code, 1, push.stderr);
  t.true(push.stderr.includes(STALE_HEAD), push.stderr);
  t.false(push.stderr.includes("svc.autoMerge"), push.stderr);

  const pull = await run(env, "sh", ["-c", commandAfter(t, push.stderr, "  to merge the server's changes")], {
    cwd: "b",
    env: { GIT_EDITOR: "false" },
  });
  t.not(pull.code, 0);
  t.regex(pull.stdout, /CONFLICT \(content\): Merge conflict in issues\/0002\.md/);

  // Pushed again in the middle of the merge: git pushes the commit before it, which is still stale.
  const again = await git(env, ["push"], { cwd: "b" });
  t.is(again.code, 1, again.stderr);
  t.true(
    again.stderr.includes(
      "  you are in the middle of a merge with conflicts in issues/0002.md: edit them to keep one version of each " +
        "conflicting part; to finish it and push: git add issues/0002.md && git commit --no-edit && git push\n",
    ),
    again.stderr,
  );
  t.false(again.stderr.includes("git pull --no-rebase"), again.stderr);
  editWorkFile(env, "b", issuePath(2), (text) =>
    text.replace(/^<<<<<<< .*\n(status: wont_fix\n)=======\nstatus: done\n>>>>>>> .*\n/m, "$1"),
  );
  await runPrinted(t, env, commandAfter(t, again.stderr, "  you are in the middle of a merge"), "b");
  t.is((await issueOnServer(sim.url, "demo", 2)).frontmatter.status, "wont_fix");
});

test("a push while the server is down says nothing was written and what to run; run when it is back, it pushes", async (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const first = await givenSim(t, { db, ephemeral: false });
  await givenProject(first.url, "demo", manyIssues(2));
  const env = givenGitEnv(t);
  await givenClone(t, env, first.url, "demo", "d");
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Done");
  await first.close();

  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.true(
    push.stderr.includes(
      `svc: cannot reach the backend: GET ${first.url}/projects/demo/issues failed: nothing is listening at ` +
        `${first.url} (ECONNREFUSED); is the server running?\n` +
        "  nothing was written; when the server is back, run: git push\n",
    ),
    push.stderr,
  );
  t.regex(
    push.stderr,
    /\[remote rejected\] main -> main \(the server cannot be reached; nothing was written\)/,
  );

  const again = await givenSim(t, { db, ephemeral: false, bind: first.url.replace("http://", "") });
  const command = commandAfter(t, push.stderr, "  nothing was written");
  t.is(command, "git push");
  await runPrinted(t, env, command, "d");
  t.is((await issueOnServer(again.url, "demo", 1)).frontmatter.status, "done");
});

test("a host name that does not resolve is named as such, with exit 2 from svc", async (t) => {
  const env = givenGitEnv(t, { SVC_ALLOWED_ORIGINS: "http://nonexistent.invalid:*" });
  const list = await svc(env, [
    "list",
    "--backend",
    "sim",
    "--project",
    "demo",
    "--origin",
    "http://nonexistent.invalid:7878",
  ]);
  t.is(list.code, 2, list.stderr);
  t.regex(
    list.stderr,
    /^svc: cannot reach the backend: GET http:\/\/nonexistent\.invalid:7878\/projects\/demo\/issues failed: the host name nonexistent\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\); check the URL\n$/,
  );
});

test("a 302 is never followed: a push names the Location and the remote URL to use, and with it the push goes through", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const proxy = await givenFaultProxy(t, sim.url);
  const env = givenGitEnv(t);
  await givenClone(t, env, proxy.url, "demo", "d");
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Done");
  const moved = (kind: string) => (request: ProxiedRequest) =>
    request.method === kind
      ? { kind: "answer" as const, status: 302, body: "", headers: { location: `${sim.url}${request.path}` } }
      : undefined;
  const redirect =
    `answered 302 with Location ${sim.url}/projects/demo/issues/1; svc never follows redirects (a redirect ` +
    "could send your credentials elsewhere): if the new address is right, use it in the remote URL: " +
    `git remote set-url origin svc::${sim.url}/projects/demo`;

  // At the write: the server acted on nothing.
  proxy.setFault(moved("PATCH"));
  const before = lastSimAuditId(sim);
  const write = await git(env, ["push"], { cwd: "d" });
  t.is(write.code, 1, write.stderr);
  t.true(
    write.stderr.includes(
      `svc: the update of record 1 (issues/0001.md) failed: ${proxy.url} ${redirect}\n` +
        "  nothing was written; once the remote URL is right, run: git push\n",
    ),
    write.stderr,
  );

  // At the sync before any write; a fetch fails, nothing fetched, and names it too (issue 31).
  proxy.setFault(moved("GET"));
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, /\n {2}nothing was written\n/);
  t.regex(
    push.stderr,
    /answered 302 with Location .*\/projects\/demo\/issues\?…; svc never follows redirects/,
  );
  const fetched = await git(env, ["fetch"], { cwd: "d", env: { SVC_SYNC_INTERVAL: "0" } });
  t.is(fetched.code, 128, fetched.stderr);
  t.regex(
    fetched.stderr,
    /answered 302 with Location .*; svc never follows redirects.*\); nothing was fetched$/m,
  );
  t.deepEqual(simWrites(sim, before), []);

  await runPrinted(t, env, commandAfter(t, write.stderr, "svc: the update of record 1"), "d");
  await runPrinted(t, env, "git push", "d");
  t.is((await issueOnServer(sim.url, "demo", 1)).frontmatter.status, "done");
});
