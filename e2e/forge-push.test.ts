/**
 * Pushing to a forge repository (issue 14, "What it must show" 2, 3, 4, 6): real git against the fake
 * forge. Each status round-trips through state, state reason and `status/*` label, keeping a label added
 * on the forge; an edit is one PATCH with only the changed fields; an issue changed on the forge since the
 * fetch is refused with `fetch first` and merges with `git pull`; a new file is a POST and becomes
 * `issues/<number>.md` after the pull; `git rm` closes as not planned; rate limits are waited out or
 * named.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { type FakeForge, givenFakeForge } from "../testing/fake-forge.js";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { forgeRemote, forgeWrites, givenForgeEnv, givenProxiedForgeEnv } from "../testing/forge.js";
import { type GitEnv, git, gitOk, run } from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  FETCH_FIRST,
  issuePath,
  readWorkFile,
  setField,
  writeWorkFile,
} from "../testing/push.js";

const REPO = "acme/widgets";

/** A fake forge with three open issues and a clone of it in `d`. */
async function givenForgeClone(t: ExecutionContext): Promise<{ forge: FakeForge; env: GitEnv }> {
  const forge = await givenFakeForge(t);
  for (const title of ["First", "Second", "Third"])
    forge.addIssue(REPO, { title, body: `${title} body\n`, labels: ["bug"] });
  const env = givenForgeEnv(t, forge);
  await gitOk(t, env, ["clone", "-q", forgeRemote(forge.url, REPO), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { forge, env };
}

const EXPECTED = {
  open: { state: "open", label: undefined },
  in_progress: { state: "open", label: "status/in-progress" },
  in_review: { state: "open", label: "status/in-review" },
  done: { state: "closed", reason: "completed", label: undefined },
  wont_fix: { state: "closed", reason: "not_planned", label: undefined },
} as const;

test("each of the five statuses round-trips, and a label added on the forge meanwhile survives", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  // The label lands on the forge after the fetch, next to the status line: svc.autoMerge merges the two
  // edits field by field (plain git would call adjacent lines a conflict), and the write keeps the label.
  await gitOk(t, env, ["config", "svc.autoMerge", "true"], { cwd: "d" });
  let extra = 0;
  for (const status of ["in_progress", "in_review", "done", "wont_fix", "open"] as const) {
    const label = `extra-${++extra}`;
    forge.addLabel(REPO, 1, label);
    editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", status));
    await commitAll(t, env, "d", `Status ${status}`);
    const push = await git(env, ["push"], { cwd: "d" });
    t.is(push.code, 0, push.stderr);

    const issue = forge.issue(REPO, 1);
    const expected = EXPECTED[status];
    t.is(issue?.state, expected.state, status);
    if ("reason" in expected) t.is(issue?.stateReason, expected.reason, status);
    t.deepEqual(
      issue?.labels.filter((name) => name.startsWith("status/")),
      expected.label ? [expected.label] : [],
      status,
    );
    const extras = Array.from({ length: extra }, (_, n) => `extra-${n + 1}`);
    for (const name of extras) t.true(issue?.labels.includes(name), `${status}: ${name} kept`);

    await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
    const pulled = readWorkFile(env, "d", issuePath(1));
    t.regex(pulled, new RegExp(`^status: ${status}$`, "m"));
    t.regex(pulled, new RegExp(`^labels: \\[bug, ${extras.join(", ")}\\]$`, "m"));
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  }
});

test("without svc.autoMerge, a status edit over a forge-side label edit is fetch first, then an ordinary merge", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  forge.addLabel(REPO, 2, "triage");
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", "Second, mine"));
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Done");
  const refused = await git(env, ["push"], { cwd: "d" });
  t.regex(refused.stderr, FETCH_FIRST);
  const pull = await git(env, ["pull", "--no-rebase", "--no-edit"], { cwd: "d" });
  if (pull.code !== 0) {
    // title, status and labels are neighbouring lines: git calls that a conflict; keep both sides' edits.
    t.regex(pull.stdout + pull.stderr, /CONFLICT .*issues\/0002\.md/);
    editWorkFile(env, "d", issuePath(2), (text) =>
      text.replace(
        /<<<<<<< HEAD\n[\s\S]*?=======\n[\s\S]*?>>>>>>> [^\n]*\n/,
        `title: "Second, mine"\nstatus: done\nlabels: [bug, triage]\n`,
      ),
    );
    await commitAll(t, env, "d", "Merge");
  }
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const issue = forge.issue(REPO, 2);
  t.is(issue?.state, "closed");
  t.is(issue?.title, "Second, mine");
  t.deepEqual([...(issue?.labels ?? [])].sort(), ["bug", "triage"]);
});

test("an edit is one PATCH with only the changed fields", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", "Second, renamed"));
  await commitAll(t, env, "d", "Rename");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const writes = forgeWrites(forge, from);
  t.deepEqual(
    writes.map((write) => [write.method, write.path, write.status]),
    [["PATCH", "/repos/acme/widgets/issues/2", 200]],
  );
  t.deepEqual(JSON.parse(writes[0]?.body ?? "{}"), { title: "Second, renamed" });
  t.is(forge.issue(REPO, 2)?.title, "Second, renamed");
  t.is(forge.issue(REPO, 2)?.body, "Second body\n");
});

test("an issue changed on the forge since the fetch: fetch first, git pull merges, the push then succeeds", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  forge.editIssue(REPO, 3, { body: "Third body\nwith a line from the forge\n" });
  editWorkFile(env, "d", issuePath(3), (text) => setField(text, "title", "Third, mine"));
  await commitAll(t, env, "d", "Mine");
  const from = forge.requests.length;
  const refused = await git(env, ["push"], { cwd: "d" });
  t.not(refused.code, 0);
  t.regex(refused.stderr, FETCH_FIRST);
  t.regex(refused.stderr, /issues\/0003\.md/);
  t.deepEqual(forgeWrites(forge, from), [], "nothing written");
  await gitOk(t, env, ["pull", "-q", "--no-rebase", "--no-edit"], { cwd: "d" });
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.is(forge.issue(REPO, 3)?.title, "Third, mine");
  t.is(forge.issue(REPO, 3)?.body, "Third body\nwith a line from the forge\n");
});

test("a new file becomes a POST and issues/<number>.md after git pull; git rm closes as not planned", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  writeWorkFile(
    env,
    "d",
    "issues/new-bug.md",
    "---\ntitle: A new bug\nstatus: in_review\nlabels: [kind:test]\nassignees: [alice]\n---\nFound it.\n",
  );
  await gitOk(t, env, ["rm", "-q", issuePath(1)], { cwd: "d" });
  await commitAll(t, env, "d", "New and removed");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, /issues\/0001\.md: closed as not planned; it stays as status wont_fix/);
  const writes = forgeWrites(forge, from);
  t.deepEqual(
    writes.map((write) => [write.method, write.path]),
    [
      ["POST", "/repos/acme/widgets/issues"],
      ["PATCH", "/repos/acme/widgets/issues/1"],
    ],
  );
  t.deepEqual(JSON.parse(writes[0]?.body ?? "{}"), {
    title: "A new bug",
    body: "Found it.\n",
    labels: ["kind:test", "status/in-review"],
    assignees: ["alice"],
  });
  const created = forge.issues(REPO).find((issue) => issue.title === "A new bug");
  t.truthy(created);
  t.is(forge.issue(REPO, 1)?.state, "closed");
  t.is(forge.issue(REPO, 1)?.stateReason, "not_planned");

  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.false(existsSync(join(env.dir, "d", "issues", "new-bug.md")));
  const file = readWorkFile(env, "d", issuePath(created?.number ?? 0));
  t.regex(file, /^status: in_review$/m);
  t.regex(file, /^labels: \["kind:test"\]$/m);
  t.regex(readWorkFile(env, "d", issuePath(1)), /^status: wont_fix$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("a title over 256 characters is refused before any write, naming the file", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", "x".repeat(257)));
  await commitAll(t, env, "d", "Too long");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.not(push.code, 0);
  t.regex(push.stderr, /issues\/0002\.md/);
  t.regex(push.stderr, /257 characters; forge accepts at most 256/);
  t.deepEqual(forgeWrites(forge, from), []);
});

test("rate limits: a reset 3 s ahead is waited for; an hour ahead is named; a secondary limit's Retry-After is honoured", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  forge.setRateLimit(0, 3);
  const started = Date.now();
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  t.true(Date.now() - started >= 2000, "it waited for the reset");

  forge.setRateLimit(0, 3600);
  const refused = await git(env, ["fetch"], { cwd: "d" });
  const combined = refused.stderr;
  t.regex(
    combined,
    /allows no more requests with this FORGE_TOKEN until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in (59|60|61) min\)/,
  );
  t.false(combined.includes(forge.token));
  forge.setRateLimit(5000, 3600);

  forge.secondaryLimit(1, { retryAfterSeconds: 2 });
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", "After a secondary limit"));
  await commitAll(t, env, "d", "Secondary");
  const secondaryStarted = Date.now();
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.true(Date.now() - secondaryStarted >= 1500, "it waited for Retry-After");
  t.is(forge.issue(REPO, 2)?.title, "After a secondary limit");
  const limited = forge.requests.filter((request) => request.status === 403);
  t.true(limited.length >= 1);
});

test("a push killed while the answer to its POST is on its way creates the issue once, and closes it as asked", async (t) => {
  const forge = await givenFakeForge(t);
  forge.addIssue(REPO, { title: "First", body: "" });
  const proxy = await givenFaultProxy(t, forge.url);
  const env = givenProxiedForgeEnv(t, forge, proxy.url);
  await gitOk(t, env, ["clone", "-q", forgeRemote(proxy.url, REPO), "d"]);
  writeWorkFile(env, "d", "issues/new.md", "---\ntitle: Only once\nstatus: done\n---\nPlease.\n");
  await commitAll(t, env, "d", "A new issue, already done");

  proxy.setFault((request) => (request.method === "POST" ? { kind: "late", ms: 1500 } : undefined));
  const killed = await git(env, ["push"], { cwd: "d", killWhen: proxy.answered("POST") });
  t.is(killed.code, null, killed.stderr);
  t.is(forge.issues(REPO).length, 2, "the forge made the issue; the close never left");
  t.is(forge.issues(REPO)[1]?.state, "open");

  proxy.setFault(undefined);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.regex(
    again.stderr,
    /issues\/new\.md was created as record 2 \(issues\/0002\.md\) by a push that was cut off/,
  );
  t.is(forge.requests.filter((request) => request.method === "POST").length, 1);
  t.is(forge.issues(REPO).length, 2);
  t.is(forge.issue(REPO, 2)?.state, "closed");
  t.is(forge.issue(REPO, 2)?.stateReason, "completed");
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", issuePath(2)), /^status: done$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("an edit of an issue deleted on the forge meanwhile is refused, and nothing is written", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  forge.deleteIssue(REPO, 2);
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "title", "Edited after its deletion"));
  await commitAll(t, env, "d", "Edit");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.not(push.code, 0);
  t.regex(push.stderr, /issues\/0002\.md/);
  t.regex(push.stderr, /deleted on the server/);
  t.deepEqual(forgeWrites(forge, from), []);
});

test("issues disabled on the repository: the clone says so (410)", async (t) => {
  const forge = await givenFakeForge(t, {
    repos: [{ owner: "acme", name: "widgets", issuesDisabled: true }],
  });
  const env = givenForgeEnv(t, forge);
  const clone = await git(env, ["clone", forgeRemote(forge.url, REPO), "d"]);
  t.not(clone.code, 0);
  t.regex(clone.stderr, /issues are disabled on acme\/widgets \(410\)/);
});

test("status/in-progress in labels is refused before any write, naming the statuses; the printed command pushes the fix", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  editWorkFile(env, "d", issuePath(3), (text) => setField(text, "labels", "[bug, status/in-progress]"));
  await commitAll(t, env, "d", "In progress");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  const remote = forgeRemote(forge.url, REPO);
  const problem =
    "field `labels` has the entry status/in-progress: on the forge that label is the status in_progress; " +
    "remove it from labels and set status: in_progress instead (the statuses: open, in_progress, in_review, done, wont_fix)";
  t.is(
    push.stderr,
    "svc: push rejected, nothing was written:\n" +
      `  issues/0003.md: ${problem}\n` +
      "  fix issues/0003.md as said above, then run:\n" +
      '  git add issues/0003.md && git commit -m "Fix issues/0003.md" && git push\n' +
      `To ${remote}\n` +
      ` ! [remote rejected] main -> main (issues/0003.md: ${problem.slice(0, 117)}…)\n` +
      `error: failed to push some refs to '${remote}'\n`,
  );
  t.deepEqual(forgeWrites(forge, from), []);

  editWorkFile(env, "d", issuePath(3), (text) =>
    setField(setField(text, "labels", "[bug]"), "status", "in_progress"),
  );
  const command = push.stderr.split("\n").find((line) => line.startsWith("  git ")) ?? "";
  const ran = await run(env, "sh", ["-c", command.trim()], { cwd: "d", env: { GIT_EDITOR: "false" } });
  t.is(ran.code, 0, ran.stderr);
  t.deepEqual(forge.issue(REPO, 3)?.labels, ["bug", "status/in-progress"]);
});

test("a status/ label that is no status (status/blocked, set on the forge) is a label: shown, kept once, removable", async (t) => {
  const { forge, env } = await givenForgeClone(t);
  forge.addLabel(REPO, 2, "status/blocked");
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", issuePath(2)), /^status: open\nlabels: \[bug, status\/blocked\]$/m);

  // Kept through a status change and a label edit, and never sent twice.
  editWorkFile(env, "d", issuePath(2), (text) =>
    setField(setField(text, "labels", "[bug, status/blocked, triage]"), "status", "in_progress"),
  );
  await commitAll(t, env, "d", "Triage, in progress");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(
    forgeWrites(forge, from).map((write) => JSON.parse(write.body)),
    [{ labels: ["bug", "status/blocked", "triage", "status/in-progress"] }],
  );
  t.deepEqual(forge.issue(REPO, 2)?.labels, ["bug", "status/blocked", "triage", "status/in-progress"]);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(
    readWorkFile(env, "d", issuePath(2)),
    /^status: in_progress\nlabels: \[bug, status\/blocked, triage\]$/m,
  );
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  // Removed like any label; svc's own status label stays.
  editWorkFile(env, "d", issuePath(2), (text) => setField(text, "labels", "[bug, triage]"));
  await commitAll(t, env, "d", "Unblocked");
  const push2 = await git(env, ["push"], { cwd: "d" });
  t.is(push2.code, 0, push2.stderr);
  t.deepEqual(forge.issue(REPO, 2)?.labels, ["bug", "triage", "status/in-progress"]);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", issuePath(2)), /^status: in_progress\nlabels: \[bug, triage\]$/m);
});
