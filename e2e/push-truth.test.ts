/**
 * Pushes that must tell the truth and never double a write (issue 11 items 2, 5 and 7): the server's field
 * limits refused before any write; a permanent refusal mid-push that names the file and what to change, and
 * a later edit of a file created before it that is an update, not a second create; an unassign under
 * `svc.autoMerge`; a crafted `..` path, a forced push of an older commit and a pushed tag refused with
 * git's own `[remote rejected]` line; a server record over the limits whose other fields can still be
 * edited. Real git against the real simulator; every next command a message names is run as printed.
 */
import test from "ava";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { git, gitOk, givenGitEnv, manyIssues, run } from "../testing/git.js";
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
import { givenProject, givenSim } from "../testing/sim.js";

test("a title over the simulator's limit is refused before any write, naming file, field and limit", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2));
  writeWorkFile(env, "d", "issues/a-good.md", "---\ntitle: Fine\n---\n");
  writeWorkFile(env, "d", "issues/b-long.md", `---\ntitle: ${"t".repeat(2000)}\n---\n`);
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Three changes, one too long");

  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1);
  t.regex(
    push.stderr,
    /svc: push rejected, nothing was written:\n {2}issues\/b-long\.md: field `title` is 2,000 characters; sim accepts at most 1,000/,
  );
  t.regex(
    push.stderr,
    /\[remote rejected\] main -> main \(issues\/b-long\.md: field `title` is 2,000 characters/,
  );
  t.deepEqual(simWrites(sim, before), []);
});

test("a permanent refusal mid-push names the file and what to change; an edit of a file created before it is an update", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const proxy = await givenFaultProxy(t, sim.url);
  const env = givenGitEnv(t);
  await givenClone(t, env, proxy.url, "demo", "d");
  writeWorkFile(env, "d", "issues/a-first.md", "---\ntitle: First\n---\nOne.\n");
  writeWorkFile(env, "d", "issues/b-second.md", "---\ntitle: Second\n---\nTwo.\n");
  await commitAll(t, env, "d", "Two new issues");

  // The server refuses the second create with a validation error the client cannot know of.
  proxy.setFault((request) =>
    request.method === "POST" && request.nth === 1
      ? {
          kind: "answer",
          status: 400,
          body: { error: "invalid_body", message: "title is reserved", details: { field: "title" } },
        }
      : undefined,
  );
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1);
  t.regex(
    push.stderr,
    /svc: the server refused the create from issues\/b-second\.md: .*answered 400: .*title is reserved/,
  );
  t.regex(push.stderr, /1 of 2 writes were done and are kept; pushing again as it is fails the same way/);
  t.regex(push.stderr, /git commit -am "Fix issues\/b-second\.md" && git push/);
  t.regex(
    push.stderr,
    /\[remote rejected\] main -> main \(issues\/b-second\.md: refused by the server \(400\)/,
  );
  t.notRegex(push.stderr, /push again to finish/);
  proxy.setFault(undefined);

  // The user fixes the refused file and also edits the one that was created: one PATCH, one POST.
  editWorkFile(env, "d", "issues/b-second.md", (text) => setField(text, "title", "Second, renamed"));
  editWorkFile(env, "d", "issues/a-first.md", (text) => text.replace("One.", "One, edited."));
  const fix = await git(env, ["commit", "-am", "Fix issues/b-second.md"], { cwd: "d" });
  t.is(fix.code, 0, fix.stderr);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path, write.status]),
    [
      ["POST", "/projects/demo/issues", 201],
      ["POST", "/projects/demo/issues", 201],
      ["PATCH", "/projects/demo/issues/3", 200],
    ],
  );
  t.is(sim.store.getProject("demo")?.issue_count, 4);
  t.is((await issueOnServer(sim.url, "demo", 3)).body, "One, edited.\n");
  t.is((await issueOnServer(sim.url, "demo", 4)).frontmatter.title, "Second, renamed");
  t.is((await git(env, ["pull"], { cwd: "d" })).code, 0);
  t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n"), [1, 2, 3, 4].map(issuePath));
});

test("with svc.autoMerge, removing the assignee line while the title changed on the server sends null", async (t) => {
  const { sim, env } = await givenSimClone(t, [{ title: "Assigned", assignee: "dana" }, { title: "Other" }]);
  await gitOk(t, env, ["config", "svc.autoMerge", "true"], { cwd: "d" });
  await fetch(`${sim.url}/projects/demo/issues/1`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title: "Assigned, retitled" }),
  });
  editWorkFile(env, "d", issuePath(1), (text) => text.replace(/^assignee: .*\n/m, ""));
  await commitAll(t, env, "d", "Unassign");
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(simWrites(sim, before), [
    { method: "PATCH", path: "/projects/demo/issues/1", status: 200, body: { assignee: null } },
  ]);
  const server = await issueOnServer(sim.url, "demo", 1);
  t.is(server.frontmatter.assignee ?? null, null);
  t.is(server.frontmatter.title, "Assigned, retitled");
});

test("a crafted tree entry issues/../../x.md gets git's [remote rejected] line naming it; nothing is written", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(1));
  const blob = await gitOk(t, env, ["hash-object", "-w", "--stdin"], {
    cwd: "d",
    input: "---\ntitle: x\n---\n",
  });
  const inner = await gitOk(t, env, ["mktree"], { cwd: "d", input: `100644 blob ${blob}\tx.md\n` });
  const mid = await gitOk(t, env, ["mktree"], { cwd: "d", input: `040000 tree ${inner}\t..\n` });
  const issues = await gitOk(t, env, ["rev-parse", "HEAD:issues"], { cwd: "d" });
  const entries = (await gitOk(t, env, ["ls-tree", issues], { cwd: "d" })).split("\n");
  const crafted = await gitOk(t, env, ["mktree"], {
    cwd: "d",
    input: `${[...entries, `040000 tree ${mid}\t..`].join("\n")}\n`,
  });
  const root = await gitOk(t, env, ["mktree"], { cwd: "d", input: `040000 tree ${crafted}\tissues\n` });
  const commit = await gitOk(t, env, ["commit-tree", root, "-p", "HEAD", "-m", "crafted"], { cwd: "d" });
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push", "origin", `${commit}:refs/heads/main`], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(
    push.stderr,
    /\[remote rejected\] .* -> main \(issues\/\.\.\/\.\.\/x\.md: the path is not a file inside the repository/,
  );
  t.deepEqual(simWrites(sim, before), []);
});

test("a forced push of an older commit is refused, origin/main stays, and the printed command restores the old state", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2));
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Close 1");
  t.is((await git(env, ["push"], { cwd: "d" })).code, 0);
  t.is((await git(env, ["pull"], { cwd: "d" })).code, 0);
  const tracking = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  const old = await gitOk(t, env, ["rev-parse", "HEAD~2"], { cwd: "d" });

  const before = lastSimAuditId(sim);
  const push = await git(env, ["push", "-f", "origin", "HEAD~2:main"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, /svc cannot move main back/);
  t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), tracking);
  t.deepEqual(simWrites(sim, before), []);
  const command = /\n {2}(git restore .*)\n/.exec(push.stderr)?.[1] ?? "";
  t.true(command.startsWith(`git restore --source=${old.slice(0, 12)}`), push.stderr);
  const ran = await run(env, "sh", ["-c", command], { cwd: "d" });
  t.is(ran.code, 0, ran.stderr);
  t.is((await issueOnServer(sim.url, "demo", 1)).frontmatter.status, "open");
});

test("a pushed tag is refused with what svc keeps and the command for main", async (t) => {
  const { env } = await givenSimClone(t, manyIssues(1));
  await gitOk(t, env, ["tag", "v1"], { cwd: "d" });
  const push = await git(env, ["push", "origin", "v1"], { cwd: "d" });
  t.is(push.code, 1);
  t.regex(
    push.stderr,
    /\[remote rejected\] v1 -> v1 \(svc keeps records, not tags: the tag stays in your clone; push commits with git push origin HEAD:main\)/,
  );
});

test("a server record with 100,000 labels: a status edit goes through; a labels edit names the field and the limit", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(1));
  const labels = Array.from({ length: 100_000 }, (_, i) => `l${i}`);
  sim.store.createIssue("demo", { title: "Overloaded", labels });
  const env = givenGitEnv(t);
  await givenClone(t, env, sim.url, "demo", "d");

  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "status", "in_review"));
  await commitAll(t, env, "d", "Review");
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(simWrites(sim, before), [
    { method: "PATCH", path: "/projects/demo/issues/2", status: 200, body: { status: "in_review" } },
  ]);

  t.is((await git(env, ["pull"], { cwd: "d" })).code, 0);
  editWorkFile(env, "d", issuePath(2), (text) => text.replace("l99999]", "l99999, extra]"));
  await commitAll(t, env, "d", "One more label");
  const refused = await git(env, ["push"], { cwd: "d" });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /issues\/0002\.md: field `labels` has 100,001 entries; sim accepts at most 100/);
  t.notRegex(refused.stderr, /fix the file/);
  t.true(readWorkFile(env, "d", issuePath(2)).includes("extra"));
});
