/**
 * Pushes that must not write (issue 4, DESIGN.md §4): invalid frontmatter, files outside `issues/`, two files
 * with one id, links and non-UTF-8 files are refused with a message naming the file, and nothing reaches the
 * server, not even the valid edits beside them. A push killed after some writes (the test-only switch
 * `SVC_TEST_DIE_AFTER_WRITES`) is finished by pushing again, without writing anything twice.
 */
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { auditRows, expectedIssueFile, git, gitOk, type givenGitEnv, manyIssues } from "../testing/git.js";
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

interface BadPush {
  readonly name: string;
  /** Breaks the working tree of `d` in one way. */
  readonly spoil: (env: ReturnType<typeof givenGitEnv>) => void;
  /** The file the message must name. */
  readonly file: string;
  /** What stderr must say about it. */
  readonly message: RegExp;
  /** The whole reason git prints in `! [remote rejected] main -> main (<reason>)`, where it is pinned. */
  readonly reason?: string;
}

const BAD_PUSHES: readonly BadPush[] = [
  {
    name: "invalid YAML",
    spoil: (env) => editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", "[unclosed")),
    file: issuePath(2),
    message: /the frontmatter is not valid YAML/,
  },
  {
    name: "a file outside issues/",
    spoil: (env) => writeWorkFile(env, "d", "notes.txt", "remember the milk\n"),
    file: "notes.txt",
    message: /only issues\/<name>\.md files are records, and svc pushes nothing else\n/,
  },
  {
    name: "a copy of an issue file under a new name (duplicate id)",
    spoil: (env) => writeWorkFile(env, "d", "issues/copy.md", readWorkFile(env, "d", issuePath(3))),
    file: "issues/copy.md",
    message: /two files have id 3/,
  },
  {
    name: "a symbolic link",
    spoil: (env) => symlinkSync("0003.md", join(env.dir, "d", "issues", "link.md")),
    file: "issues/link.md",
    message: /a record must be a regular file/,
  },
  {
    name: "a file that is not UTF-8",
    spoil: (env) =>
      writeWorkFile(env, "d", "issues/latin1.md", Buffer.from("---\ntitle: caf\xe9\n---\n", "latin1")),
    file: "issues/latin1.md",
    message: /not valid UTF-8/,
  },
  {
    name: "an unknown status",
    spoil: (env) => editWorkFile(env, "d", issuePath(2), (text) => setField(text, "status", "closed")),
    file: issuePath(2),
    message: /field `status` has a value this backend does not know/,
  },
  {
    name: "an unknown field",
    spoil: (env) =>
      editWorkFile(env, "d", issuePath(2), (text) => text.replace("status:", "priority: high\nstatus:")),
    file: issuePath(2),
    message: /unknown field `"priority"`\n +expected: only the fields id, title, status/,
    reason: 'issues/0002.md: unknown field `"priority"`',
  },
];

test("invalid files are refused naming the file, and nothing is written, not even the valid edit beside them", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(3), { env: { SVC_SYNC_INTERVAL: "0" } });
  const before = lastSimAuditId(sim);

  for (const bad of BAD_PUSHES) {
    await gitOk(t, env, ["reset", "-q", "--hard", "origin/main"], { cwd: "d" });
    await gitOk(t, env, ["clean", "-q", "-fdx"], { cwd: "d" });
    editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
    bad.spoil(env);
    await commitAll(t, env, "d", `Valid edit and ${bad.name}`);
    const push = await git(env, ["push"], { cwd: "d" });
    t.is(push.code, 1, `${bad.name}: ${push.stderr}`);
    t.regex(push.stderr, /svc: push rejected, nothing was written:/, bad.name);
    t.true(push.stderr.includes(`  ${bad.file}: `), `${bad.name}: ${push.stderr}`);
    t.regex(push.stderr, bad.message, bad.name);
    t.true(
      push.stderr.includes(`! [remote rejected] main -> main (${bad.file}: `),
      `${bad.name}: ${push.stderr}`,
    );
    if (bad.reason) t.true(push.stderr.includes(`main -> main (${bad.reason})\n`), push.stderr);
    t.deepEqual(simWrites(sim, before), [], bad.name);
  }

  // All at once: every file is named.
  await gitOk(t, env, ["reset", "-q", "--hard", "origin/main"], { cwd: "d" });
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  BAD_PUSHES[1]?.spoil(env);
  BAD_PUSHES[2]?.spoil(env);
  BAD_PUSHES[0]?.spoil(env);
  await commitAll(t, env, "d", "Three problems");
  const all = await git(env, ["push"], { cwd: "d" });
  t.is(all.code, 1, all.stderr);
  for (const file of ["notes.txt", "issues/copy.md", issuePath(2)])
    t.true(all.stderr.includes(`  ${file}: `));
  t.regex(all.stderr, /\(and 2 more\)\)/);
  t.deepEqual(simWrites(sim, before), []);
  t.is((await issueOnServer(sim.url, "demo", 1)).frontmatter.version, 1);

  // Without the bad files the valid edit goes through: it was held back only by them.
  await gitOk(t, env, ["reset", "-q", "--hard", "origin/main"], { cwd: "d" });
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Only the valid edit");
  const good = await git(env, ["push"], { cwd: "d" });
  t.is(good.code, 0, good.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path, write.body]),
    [["PATCH", "/projects/demo/issues/1", { status: "done" }]],
  );
});

test("a push killed after 2 of 5 writes is finished by pushing again, each change written exactly once", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(6), { env: { SVC_SYNC_INTERVAL: "0" } });
  const ids = [1, 2, 3, 4, 5];

  const before = lastSimAuditId(sim);
  for (const id of ids) editWorkFile(env, "d", issuePath(id), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Close five");
  const killed = await git(env, ["push"], { cwd: "d", env: { SVC_TEST_DIE_AFTER_WRITES: "2" } });
  t.not(killed.code, 0);
  t.regex(killed.stderr, /git-remote-svc died of signal 9/);
  t.is(simWrites(sim, before).length, 2);
  t.is(auditRows(env).filter((row) => row.op === "write").length, 2);
  t.false(auditRows(env).some((row) => row.op === "push-accept"));

  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  const writes = simWrites(sim, before);
  t.true(
    writes.every((write) => write.method === "PATCH" && write.status === 200),
    JSON.stringify(writes),
  );
  for (const id of ids) {
    const patches = writes.filter((write) => write.path === `/projects/demo/issues/${id}`);
    t.is(patches.length, 1, `issue ${id}: ${JSON.stringify(patches)}`);
    t.deepEqual(patches[0]?.body, { status: "done" });
    const issue = await issueOnServer(sim.url, "demo", id);
    t.is(issue.frontmatter.version, 2, `issue ${id}`);
    t.is(issue.frontmatter.status, "done");
  }
  t.is((await issueOnServer(sim.url, "demo", 6)).frontmatter.version, 1);

  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.regex(pull.stdout, /Fast-forward/);
  for (const id of ids)
    t.is(readWorkFile(env, "d", issuePath(id)), await expectedIssueFile(sim.url, "demo", id));
  const last = await git(env, ["push"], { cwd: "d" });
  t.is(last.code, 0, last.stderr);
  t.regex(last.stderr, /Everything up-to-date/);
  t.is(simWrites(sim, before).length, 5);
});

test("a push killed right after its POST does not create the issue twice when pushed again", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { env: { SVC_SYNC_INTERVAL: "0" } });

  const before = lastSimAuditId(sim);
  writeWorkFile(env, "d", "issues/new-bug.md", "---\ntitle: Only once\n---\nPlease.\n");
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "New bug and a close");
  const killed = await git(env, ["push"], { cwd: "d", env: { SVC_TEST_DIE_AFTER_WRITES: "1" } });
  t.not(killed.code, 0);
  t.deepEqual(
    simWrites(sim, before).map((write) => write.method),
    ["POST"],
  );

  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path]),
    [
      ["POST", "/projects/demo/issues"],
      ["PATCH", "/projects/demo/issues/1"],
    ],
  );
  t.is(sim.store.getProject("demo")?.issue_count, 3);

  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n"), [
    issuePath(1),
    issuePath(2),
    issuePath(3),
  ]);
  t.is(readWorkFile(env, "d", issuePath(3)), await expectedIssueFile(sim.url, "demo", 3));
});

test("after a push killed right after its POST, git pull then push still creates nothing twice", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { env: { SVC_SYNC_INTERVAL: "0" } });

  const before = lastSimAuditId(sim);
  writeWorkFile(env, "d", "issues/new-bug.md", "---\ntitle: Only once\n---\nPlease.\n");
  await commitAll(t, env, "d", "New bug");
  const killed = await git(env, ["push"], { cwd: "d", env: { SVC_TEST_DIE_AFTER_WRITES: "1" } });
  t.not(killed.code, 0);

  // The server has the new issue now; the user's commit is not in svc's history yet, so pull merges.
  const pull = await git(env, ["pull", "--no-rebase"], { cwd: "d" });
  t.is(pull.code, 0, pull.stdout + pull.stderr);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => write.method),
    ["POST"],
  );
  t.is(sim.store.getProject("demo")?.issue_count, 3);
  const after = await git(env, ["pull"], { cwd: "d" });
  t.is(after.code, 0, after.stderr);
  t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n"), [
    issuePath(1),
    issuePath(2),
    issuePath(3),
  ]);
});
