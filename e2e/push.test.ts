/**
 * `git push` (issue 4, DESIGN.md §4): an edited file becomes one PATCH with only the changed fields and
 * `If-Match`, a new file one POST and a renamed file after `git pull`, `git rm` a DELETE (more than five
 * only with `[allow-bulk-delete]`), and server-controlled fields are never sent. Real git, a real simulator.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { expectedIssueFile, git, gitOk, givenGitEnv, manyIssues, patchIssue } from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  getIssue,
  givenClone,
  givenRecordingProxy,
  givenSimClone,
  issueOnServer,
  issuePath,
  lastSimAuditId,
  type RecordedRequest,
  type RecordingProxy,
  readWorkFile,
  setField,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

/** What git prints for an accepted push of main: `<old>..<new>  main -> main`. */
const ACCEPTED = /^ {3}[0-9a-f]{7,}\.\.[0-9a-f]{7,} {2}main -> main$/m;

/** The non-GET requests the proxy saw after the first `from`. */
function writeRequests(proxy: RecordingProxy, from: number): RecordedRequest[] {
  return proxy.requests.slice(from).filter((request) => request.method !== "GET");
}

test("a status edit is one PATCH with only status and If-Match; pull fast-forwards; a second edit needs no pull", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(4));
  const proxy = await givenRecordingProxy(t, sim.url);
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  await givenClone(t, env, proxy.url, "demo", "d");
  const path = issuePath(2);
  t.regex(readWorkFile(env, "d", path), /^version: 1$/m);

  let before = lastSimAuditId(sim);
  let requests = proxy.requests.length;
  editWorkFile(env, "d", path, (text) => setField(text, "status", "done"));
  const first = await commitAll(t, env, "d", "Close issue 2");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, ACCEPTED);
  t.regex(push.stderr, /0 created, 1 updated, 0 deleted/);
  t.deepEqual(simWrites(sim, before), [
    { method: "PATCH", path: "/projects/demo/issues/2", status: 200, body: { status: "done" } },
  ]);
  t.deepEqual(writeRequests(proxy, requests), [
    { method: "PATCH", path: "/projects/demo/issues/2", ifMatch: '"1"' },
  ]);
  let issue = await issueOnServer(sim.url, "demo", 2);
  t.is(issue.frontmatter.version, 2);
  t.is(issue.frontmatter.status, "done");
  t.is(issue.frontmatter.title, "Issue 2", "fields the push did not change stay as they were");

  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.regex(pull.stdout, /Fast-forward/);
  t.is(await gitOk(t, env, ["log", "--merges", "--oneline"], { cwd: "d" }), "");
  t.is(
    await gitOk(t, env, ["rev-parse", "HEAD^"], { cwd: "d" }),
    first,
    "the sync commit sits on the user's",
  );
  t.is(readWorkFile(env, "d", path), await expectedIssueFile(sim.url, "demo", 2));
  t.regex(readWorkFile(env, "d", path), /^version: 2$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  // Twice more, without a pull in between: each push is based on the one before, whose versions svc knows.
  for (const [edit, version] of [
    [{ title: '"Issue 2, renamed"' }, 2],
    [{ labels: "[triaged]" }, 3],
  ] as const) {
    before = lastSimAuditId(sim);
    requests = proxy.requests.length;
    const [[name, value]] = Object.entries(edit) as [[string, string]];
    editWorkFile(env, "d", path, (text) => setField(text, name, value));
    await commitAll(t, env, "d", `Edit ${name} of issue 2`);
    const again = await git(env, ["push"], { cwd: "d" });
    t.is(again.code, 0, again.stderr);
    t.notRegex(again.stderr, /rejected|fetch first/);
    t.is(simWrites(sim, before).length, 1);
    t.deepEqual(writeRequests(proxy, requests), [
      { method: "PATCH", path: "/projects/demo/issues/2", ifMatch: `"${version}"` },
    ]);
  }
  issue = await issueOnServer(sim.url, "demo", 2);
  t.is(issue.frontmatter.version, 4);
  t.is(issue.frontmatter.title, "Issue 2, renamed");
  t.deepEqual(issue.frontmatter.labels, ["triaged"]);
  t.is(issue.frontmatter.status, "done");

  const head = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d" });
  const pullAgain = await git(env, ["pull"], { cwd: "d" });
  t.is(pullAgain.code, 0, pullAgain.stderr);
  t.regex(pullAgain.stdout, /Fast-forward/);
  t.is((await git(env, ["merge-base", "--is-ancestor", head, "HEAD"], { cwd: "d" })).code, 0);
  // The user was behind svc's own sync commit of the first of them; svc joined the two, not the user.
  const mergeAuthors = (await gitOk(t, env, ["log", "--merges", "--format=%an <%ae>"], { cwd: "d" }))
    .split("\n")
    .filter(Boolean);
  t.true(
    mergeAuthors.every((author) => author === "svc <svc@localhost>"),
    mergeAuthors.join(", "),
  );
  t.regex(readWorkFile(env, "d", path), /^version: 4$/m);
  t.is(readWorkFile(env, "d", path), await expectedIssueFile(sim.url, "demo", 2));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("pushing with nothing new prints Everything up-to-date, exits 0 and writes nothing", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { env: { SVC_SYNC_INTERVAL: "0" } });
  const before = lastSimAuditId(sim);

  const fresh = await git(env, ["push"], { cwd: "d" });
  t.is(fresh.code, 0, fresh.stderr);
  t.regex(fresh.stderr, /Everything up-to-date/);

  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "in_progress"));
  await commitAll(t, env, "d", "Start issue 1");
  await gitOk(t, env, ["push"], { cwd: "d" });
  const afterPush = lastSimAuditId(sim);
  const pushedAgain = await git(env, ["push"], { cwd: "d" });
  t.is(pushedAgain.code, 0, pushedAgain.stderr);
  t.regex(pushedAgain.stderr, /Everything up-to-date/);
  await gitOk(t, env, ["pull"], { cwd: "d" });
  const pulled = await git(env, ["push"], { cwd: "d" });
  t.is(pulled.code, 0, pulled.stderr);
  t.regex(pulled.stderr, /Everything up-to-date/);
  t.is(simWrites(sim, afterPush).length, 0);
  t.is(simWrites(sim, before).length, 1);
});

test("a new file without id is one POST; after pull it is issues/00NN.md; pushing again creates nothing", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(6), { env: { SVC_SYNC_INTERVAL: "0" } });

  const before = lastSimAuditId(sim);
  writeWorkFile(
    env,
    "d",
    "issues/new-bug.md",
    "---\ntitle: The new bug\nstatus: open\nlabels: [bug]\n---\nIt crashes on start.\n",
  );
  await commitAll(t, env, "d", "File a bug");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, /created record 7 from issues\/new-bug\.md \(it becomes issues\/0007\.md\)/);
  t.deepEqual(simWrites(sim, before), [
    {
      method: "POST",
      path: "/projects/demo/issues",
      status: 201,
      body: { title: "The new bug", status: "open", labels: ["bug"], body: "It crashes on start.\n" },
    },
  ]);
  t.is(sim.store.getProject("demo")?.issue_count, 7);

  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.regex(pull.stdout, /Fast-forward/);
  t.false(existsSync(join(env.dir, "d", "issues", "new-bug.md")));
  t.is(readWorkFile(env, "d", "issues/0007.md"), await expectedIssueFile(sim.url, "demo", 7));
  t.regex(readWorkFile(env, "d", "issues/0007.md"), /^id: 7$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.regex(again.stderr, /Everything up-to-date/);
  t.is(sim.store.getProject("demo")?.issue_count, 7);
  t.is(simWrites(sim, before).length, 1);
});

test("a new file edited again before a pull is an update of the record it created, not a second POST", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(3), { env: { SVC_SYNC_INTERVAL: "0" } });

  const before = lastSimAuditId(sim);
  writeWorkFile(env, "d", "issues/new-bug.md", "---\ntitle: Draft\n---\nFirst words.\n");
  await commitAll(t, env, "d", "Draft a bug");
  await gitOk(t, env, ["push"], { cwd: "d" });
  editWorkFile(env, "d", "issues/new-bug.md", (text) => text.replace("Draft", "Final"));
  await commitAll(t, env, "d", "Title it");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path, write.body]),
    [
      ["POST", "/projects/demo/issues", { title: "Draft", body: "First words.\n" }],
      ["PATCH", "/projects/demo/issues/4", { title: "Final" }],
    ],
  );
  t.is(sim.store.getProject("demo")?.issue_count, 4);
  await gitOk(t, env, ["pull"], { cwd: "d" });
  t.false(existsSync(join(env.dir, "d", "issues", "new-bug.md")));
  t.is(readWorkFile(env, "d", "issues/0004.md"), await expectedIssueFile(sim.url, "demo", 4));
  t.regex(readWorkFile(env, "d", "issues/0004.md"), /^title: Final$/m);
});

test("git rm deletes the issue; six deletes are refused without [allow-bulk-delete] and go through with it", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(9), { env: { SVC_SYNC_INTERVAL: "0" } });

  let before = lastSimAuditId(sim);
  await gitOk(t, env, ["rm", "-q", issuePath(1)], { cwd: "d" });
  await commitAll(t, env, "d", "Remove issue 1");
  const one = await git(env, ["push"], { cwd: "d" });
  t.is(one.code, 0, one.stderr);
  t.deepEqual(simWrites(sim, before), [
    { method: "DELETE", path: "/projects/demo/issues/1", status: 204, body: null },
  ]);
  t.is((await getIssue(sim.url, "demo", 1)).status, 404);

  before = lastSimAuditId(sim);
  const six = [2, 3, 4, 5, 6, 7];
  await gitOk(t, env, ["rm", "-q", ...six.map(issuePath)], { cwd: "d" });
  await commitAll(t, env, "d", "Clean up");
  const refused = await git(env, ["push"], { cwd: "d" });
  t.is(refused.code, 1, refused.stderr);
  t.regex(refused.stderr, /! \[remote rejected\] main -> main \(.*\[allow-bulk-delete\].*\)/);
  t.regex(refused.stderr, /deletes 6 records, more than SVC_BULK_DELETE_LIMIT=5; nothing was written/);
  t.deepEqual(simWrites(sim, before), []);
  for (const id of six) t.is((await getIssue(sim.url, "demo", id)).status, 200);

  await gitOk(t, env, ["commit", "-q", "--amend", "-m", "Clean up [allow-bulk-delete]"], { cwd: "d" });
  const allowed = await git(env, ["push"], { cwd: "d" });
  t.is(allowed.code, 0, allowed.stderr);
  t.deepEqual(
    simWrites(sim, before).map((write) => [write.method, write.path, write.status]),
    six.map((id) => ["DELETE", `/projects/demo/issues/${id}`, 204]),
  );
  for (const id of six) t.is((await getIssue(sim.url, "demo", id)).status, 404);
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n"), [issuePath(8), issuePath(9)]);
});

test("SVC_BULK_DELETE_LIMIT changes the limit; 0 means none", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(5), { env: { SVC_SYNC_INTERVAL: "0" } });
  const before = lastSimAuditId(sim);
  await gitOk(t, env, ["rm", "-q", issuePath(1), issuePath(2)], { cwd: "d" });
  await commitAll(t, env, "d", "Remove two");
  const refused = await git(env, ["push"], { cwd: "d", env: { SVC_BULK_DELETE_LIMIT: "1" } });
  t.is(refused.code, 1, refused.stderr);
  t.regex(refused.stderr, /more than SVC_BULK_DELETE_LIMIT=1/);
  t.deepEqual(simWrites(sim, before), []);
  const unlimited = await git(env, ["push"], { cwd: "d", env: { SVC_BULK_DELETE_LIMIT: "0" } });
  t.is(unlimited.code, 0, unlimited.stderr);
  t.is(simWrites(sim, before).length, 2);
});

test("edited version and id are never sent; the other changed fields are", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(8), { env: { SVC_SYNC_INTERVAL: "0" } });
  const path = issuePath(7);

  const before = lastSimAuditId(sim);
  editWorkFile(env, "d", path, (text) =>
    setField(setField(setField(text, "version", "999"), "id", "1"), "title", '"Seven, edited"'),
  );
  editWorkFile(env, "d", issuePath(8), (text) => setField(text, "version", "999"));
  await commitAll(t, env, "d", "Edit server fields");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, /issues\/0007\.md: id, version are set by the server; your edit of them was not sent/);
  t.regex(push.stderr, /issues\/0008\.md: version is set by the server/);
  const writes = simWrites(sim, before);
  t.deepEqual(writes, [
    { method: "PATCH", path: "/projects/demo/issues/7", status: 200, body: { title: "Seven, edited" } },
  ]);
  const issue7 = await issueOnServer(sim.url, "demo", 7);
  t.is(issue7.frontmatter.title, "Seven, edited");
  t.is(issue7.frontmatter.version, 2);
  t.is((await issueOnServer(sim.url, "demo", 1)).frontmatter.title, "Issue 1", "issue 1 is untouched");
  t.is((await issueOnServer(sim.url, "demo", 8)).frontmatter.version, 1);

  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.is(readWorkFile(env, "d", path), await expectedIssueFile(sim.url, "demo", 7));
  t.regex(readWorkFile(env, "d", path), /^id: 7$/m);
  t.regex(readWorkFile(env, "d", path), /^version: 2$/m);
});

test("a renamed issue file is an update of that issue, and pull puts it back under its canonical name", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(3), { env: { SVC_SYNC_INTERVAL: "0" } });
  const before = lastSimAuditId(sim);
  await gitOk(t, env, ["mv", issuePath(2), "issues/login.md"], { cwd: "d" });
  editWorkFile(env, "d", "issues/login.md", (text) => setField(text, "status", "in_review"));
  await commitAll(t, env, "d", "Rename and review");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(simWrites(sim, before), [
    { method: "PATCH", path: "/projects/demo/issues/2", status: 200, body: { status: "in_review" } },
  ]);
  await gitOk(t, env, ["pull"], { cwd: "d" });
  t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n"), [
    issuePath(1),
    issuePath(2),
    issuePath(3),
  ]);
  t.is(readWorkFile(env, "d", issuePath(2)), await expectedIssueFile(sim.url, "demo", 2));
});

test("a push to another branch than main is refused, naming main", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(2), { env: { SVC_SYNC_INTERVAL: "0" } });
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Done");
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push", "origin", "HEAD:feature"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, /\[remote rejected\] HEAD -> feature \(svc keeps one branch, main/);
  t.deepEqual(simWrites(sim, before), []);
});

// A clone that pushes again and again without pulling: each push's merge base is read off the cache's
// history (the commit the last push built on), not walked; these are the answers a walk gives.
test("twelve pushes without a pull: each writes its one change; a change on the server meanwhile is fetch first; an older pushed commit is up to date; pull fast-forwards", async (t) => {
  const { sim, env } = await givenSimClone(t, manyIssues(3), { env: { SVC_SYNC_INTERVAL: "0" } });
  const pushed: string[] = [];
  for (let round = 1; round <= 12; round++) {
    const id = (round % 2) + 1;
    editWorkFile(env, "d", issuePath(id), (text) => `${text}Round ${round}.\n`);
    pushed.push(await commitAll(t, env, "d", `Round ${round}`));
    const before = lastSimAuditId(sim);
    const push = await git(env, ["push"], { cwd: "d", env: { SVC_TRACE: "1" } });
    t.is(push.code, 0, push.stderr);
    // The base is the commit the last push built on (the import's commit for the first), known without a walk.
    const base = round === 1 ? await gitOk(t, env, ["rev-parse", "HEAD^"], { cwd: "d" }) : pushed[round - 2];
    t.true(push.stderr.includes(`merge base ${base} from the cache's history`), push.stderr);
    t.deepEqual(
      simWrites(sim, before).map((write) => [write.method, write.path]),
      [["PATCH", `/projects/demo/issues/${id}`]],
      `round ${round}`,
    );
  }
  t.is((await issueOnServer(sim.url, "demo", 2)).frontmatter.version, 7);

  // Someone else edits issue 3; this clone edits it too without a pull: its base is stale.
  await patchIssue(sim.url, "demo", 3, { title: "Changed on the server" });
  editWorkFile(env, "d", issuePath(3), (text) => `${text}A line from this clone.\n`);
  await commitAll(t, env, "d", "A line in 3");
  const before = lastSimAuditId(sim);
  const stale = await git(env, ["push"], { cwd: "d" });
  t.is(stale.code, 1, stale.stderr);
  t.regex(stale.stderr, /fetch first/);
  t.deepEqual(simWrites(sim, before), []);

  // An older commit of this clone, pushed long ago, is already in the server's history: nothing to write.
  const older = await git(env, ["push", "origin", `${pushed[3]}:refs/heads/main`], { cwd: "d" });
  t.is(older.code, 0, older.stderr);
  t.regex(older.stderr, /Everything up-to-date/);
  t.deepEqual(simWrites(sim, before), []);

  const pull = await git(env, ["pull", "--no-rebase", "--no-edit"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  await gitOk(t, env, ["push"], { cwd: "d" });
  const three = await issueOnServer(sim.url, "demo", 3);
  t.is(three.frontmatter.title, "Changed on the server");
  t.is(three.body, "Body 3\nA line from this clone.\n");
  await gitOk(t, env, ["pull", "--ff-only"], { cwd: "d" });
  for (const id of [1, 2, 3])
    t.is(readWorkFile(env, "d", issuePath(id)), await expectedIssueFile(sim.url, "demo", id));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});
