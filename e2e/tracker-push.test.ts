/**
 * Pushing to a tracker project (issue 15, "What it must show" 2–5): real git against the fake tracker.
 * A status edit is the one workflow transition to it, and a status no single transition reaches is refused
 * naming the reachable ones; a paragraph edit sends an ADF document whose other nodes are the server's,
 * byte for byte; an issue changed on the server meanwhile is `fetch first`, then an ordinary merge; a new
 * file is a POST and becomes `issues/TEST-<n>.md` after the pull; `git rm` is a DELETE, never of an issue
 * with subtasks; a push killed while the create's answer is on its way creates the issue once.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { type FakeTracker, givenFakeTracker } from "../testing/fake-tracker.js";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { type GitEnv, git, gitOk, run } from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  FETCH_FIRST,
  readWorkFile,
  setField,
  writeWorkFile,
} from "../testing/push.js";
import {
  givenProxiedTrackerEnv,
  givenTrackerEnv,
  RICH_DESCRIPTION,
  trackerPath,
  trackerRemote,
  trackerWrites,
} from "../testing/tracker.js";

/** A fake tracker with three issues (TEST-1..3) and a clone of it in `d`. */
async function givenTrackerClone(
  t: ExecutionContext,
  tracker?: FakeTracker,
): Promise<{ tracker: FakeTracker; env: GitEnv }> {
  const fake = tracker ?? (await givenFakeTracker(t));
  for (const summary of ["First", "Second", "Third"])
    fake.addIssue("TEST", {
      summary,
      description: {
        type: "doc",
        version: 1,
        content: [{ type: "paragraph", content: [{ type: "text", text: `${summary} body` }] }],
      },
      labels: ["bug"],
    });
  const env = givenTrackerEnv(t, fake);
  await gitOk(t, env, ["clone", "-q", trackerRemote(fake.url, "TEST"), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { tracker: fake, env };
}

function bodyOf(request: { body: string } | undefined): Record<string, unknown> {
  return JSON.parse(request?.body || "{}") as Record<string, unknown>;
}

/** Runs `git push` in `d`, asserts it succeeded, and returns the writes the fake tracker got from it. */
async function pushedWrites(t: ExecutionContext, tracker: FakeTracker, env: GitEnv) {
  const from = tracker.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  return trackerWrites(tracker, from);
}
test("To Do → In Progress → Done: each push posts the one transition; a status two steps away is refused", async (t) => {
  const { tracker, env } = await givenTrackerClone(t);
  const refusedFrom = tracker.requests.length;
  editWorkFile(env, "d", trackerPath("TEST-1"), (text) => setField(text, "status", "Done"));
  await commitAll(t, env, "d", "Straight to done");
  const refused = await git(env, ["push"], { cwd: "d" });
  t.is(refused.code, 1, refused.stderr);
  t.regex(refused.stderr, /status "Done" cannot be reached from "To Do" by one transition/);
  t.regex(refused.stderr, /it can go to "In Progress"/);
  t.regex(refused.stderr, /issues\/TEST-1\.md/);
  t.deepEqual(trackerWrites(tracker, refusedFrom), []);
  t.is(tracker.issue("TEST-1")?.status, "To Do");

  for (const status of ["In Progress", "Done"]) {
    editWorkFile(env, "d", trackerPath("TEST-1"), (text) => setField(text, "status", `"${status}"`));
    await commitAll(t, env, "d", `Status ${status}`);
    const from = tracker.requests.length;
    const push = await git(env, ["push"], { cwd: "d" });
    t.is(push.code, 0, push.stderr);
    const writes = trackerWrites(tracker, from);
    t.deepEqual(
      writes.map((write) => [write.method, write.path, write.status]),
      [["POST", "/rest/api/3/issue/TEST-1/transitions", 204]],
      status,
    );
    t.deepEqual(Object.keys(bodyOf(writes[0])), ["transition"]);
    t.is(tracker.issue("TEST-1")?.status, status);
    await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
    t.regex(readWorkFile(env, "d", trackerPath("TEST-1")), new RegExp(`^status: "?${status}"?$`, "m"));
  }
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("a transition that needs fields fails with the tracker's own field errors, naming the file", async (t) => {
  const tracker = await givenFakeTracker(t, {
    projects: [
      {
        key: "TEST",
        transitions: [
          { id: "21", name: "Start progress", from: ["To Do"], to: "In Progress" },
          {
            id: "31",
            name: "Resolve",
            from: ["In Progress", "To Do"],
            to: "Done",
            requires: { resolution: "Resolution is required." },
          },
        ],
      },
    ],
  });
  const { env } = await givenTrackerClone(t, tracker);
  editWorkFile(env, "d", trackerPath("TEST-2"), (text) => setField(text, "status", "done"));
  await commitAll(t, env, "d", "Resolve");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1);
  t.regex(push.stderr, /issues\/TEST-2\.md/);
  t.regex(push.stderr, /resolution: "Resolution is required\."/);
  t.regex(push.stderr, /make this one in the tracker \(then git pull\), or set another status/);
  t.is(tracker.issue("TEST-2")?.status, "To Do");
});

test("a paragraph edit sends an ADF document whose other nodes are the server's, byte for byte", async (t) => {
  const tracker = await givenFakeTracker(t);
  tracker.addIssue("TEST", { summary: "Rich", description: RICH_DESCRIPTION });
  const env = givenTrackerEnv(t, tracker);
  await gitOk(t, env, ["clone", "-q", trackerRemote(tracker.url, "TEST"), "d"]);
  editWorkFile(env, "d", trackerPath("TEST-1"), (text) =>
    text.replace("It fails **badly**.", "It fails **badly**, every time."),
  );
  await commitAll(t, env, "d", "Say more");
  const writes = await pushedWrites(t, tracker, env);
  t.deepEqual(
    writes.map((write) => [write.method, write.path]),
    [["PUT", "/rest/api/3/issue/TEST-1"]],
  );
  const sent = bodyOf(writes[0]) as { fields: { description: { content: unknown[] } } };
  t.deepEqual(Object.keys(sent), ["fields"]);
  t.deepEqual(Object.keys(sent.fields), ["description"]);
  const before = RICH_DESCRIPTION.content.map((node) => JSON.stringify(node));
  const after = sent.fields.description.content.map((node) => JSON.stringify(node));
  t.is(after.length, before.length);
  for (const [index, node] of after.entries()) {
    if (index === 1) t.regex(node, /every time/);
    else t.is(node, before[index], `node ${index}`);
  }
  t.deepEqual(tracker.issue("TEST-1")?.description, sent.fields.description);
});

test("a broken ```adf block is refused naming the file and its line, and the printed command pushes the fix", async (t) => {
  const { tracker, env } = await givenTrackerClone(t);
  editWorkFile(env, "d", trackerPath("TEST-2"), (text) =>
    text.replace("Second body", 'Second body\n\n```adf\n{"type":"rule"\n```'),
  );
  await commitAll(t, env, "d", "Add a rule");
  const from = tracker.requests.length;
  const refused = await git(env, ["push"], { cwd: "d" });
  t.is(refused.code, 1, refused.stderr);
  t.regex(
    refused.stderr,
    /issues\/TEST-2\.md: the ```adf block at line 3 of the description does not hold valid JSON/,
  );
  // Nothing an agent would paste and get stuck on: no placeholder, no interactive command.
  t.notRegex(refused.stderr, /<file>|checkout -p/);
  t.deepEqual(trackerWrites(tracker, from), []);

  const commands = refused.stderr.split("\n").filter((line) => /^ {2}git /.test(line));
  t.deepEqual(commands, ['  git add issues/TEST-2.md && git commit -m "Fix issues/TEST-2.md" && git push']);
  editWorkFile(env, "d", trackerPath("TEST-2"), (text) =>
    text.replace('{"type":"rule"\n', '{"type":"rule"}\n'),
  );
  const ran = await run(env, "sh", ["-c", commands[0]?.trim() ?? ""], {
    cwd: "d",
    env: { GIT_EDITOR: "false" },
  });
  t.is(ran.code, 0, ran.stderr);
  t.is(
    JSON.stringify(tracker.issue("TEST-2")?.description),
    JSON.stringify({
      type: "doc",
      version: 1,
      content: [{ type: "paragraph", content: [{ type: "text", text: "Second body" }] }, { type: "rule" }],
    }),
  );
});

test("a title edit is a PUT of the summary alone: an untouched description is never written", async (t) => {
  const { tracker, env } = await givenTrackerClone(t);
  editWorkFile(env, "d", trackerPath("TEST-3"), (text) =>
    setField(setField(text, "title", "Third, renamed"), "labels", "[bug, kind=test]"),
  );
  await commitAll(t, env, "d", "Rename");
  const writes = await pushedWrites(t, tracker, env);
  t.deepEqual(
    writes.map((write) => [write.method, write.path]),
    [["PUT", "/rest/api/3/issue/TEST-3"]],
  );
  t.deepEqual(bodyOf(writes[0]), {
    fields: { summary: "Third, renamed" },
    update: { labels: [{ add: "kind=test" }] },
  });
  t.is(tracker.issue("TEST-3")?.summary, "Third, renamed");
  t.deepEqual(tracker.issue("TEST-3")?.labels, ["bug", "kind=test"]);
});

test("an issue changed on the server meanwhile: fetch first, git pull merges, the push goes through", async (t) => {
  const { tracker, env } = await givenTrackerClone(t);
  tracker.editIssue("TEST-2", { summary: "Second, theirs" });
  editWorkFile(env, "d", trackerPath("TEST-2"), (text) => text.replace("Second body", "Second body, mine"));
  await commitAll(t, env, "d", "Mine");
  const from = tracker.requests.length;
  const refused = await git(env, ["push"], { cwd: "d" });
  t.regex(refused.stderr, FETCH_FIRST);
  t.deepEqual(trackerWrites(tracker, from), []);
  const pull = await git(env, ["pull", "--no-rebase", "--no-edit"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const issue = tracker.issue("TEST-2");
  t.is(issue?.summary, "Second, theirs");
  t.regex(JSON.stringify(issue?.description), /Second body, mine/);
});

test("a new file is a POST with the project's default type, and becomes issues/TEST-<n>.md after git pull", async (t) => {
  const { tracker, env } = await givenTrackerClone(t);
  writeWorkFile(
    env,
    "d",
    "issues/new-bug.md",
    '---\ntitle: "[svc-test] Login fails"\nstatus: In Progress\nlabels: [kind=test]\n---\nSteps:\n\n1. open\n',
  );
  await commitAll(t, env, "d", "A new bug");
  const writes = await pushedWrites(t, tracker, env);
  t.deepEqual(
    writes.map((write) => [write.method, write.path]),
    [
      ["POST", "/rest/api/3/issue"],
      ["POST", "/rest/api/3/issue/TEST-4/transitions"],
    ],
  );
  const fields = bodyOf(writes[0]).fields as Record<string, unknown>;
  t.deepEqual(fields.project, { key: "TEST" });
  t.deepEqual(fields.labels, ["kind=test"]);
  const created = tracker.issue("TEST-4");
  t.is(created?.type, "Task");
  t.is(created?.status, "In Progress");
  t.is(created?.summary, "[svc-test] Login fails");
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.false(existsSync(join(env.dir, "d", "issues", "new-bug.md")));
  t.regex(readWorkFile(env, "d", trackerPath("TEST-4")), /^key: TEST-4$/m);
  t.regex(readWorkFile(env, "d", trackerPath("TEST-4")), /^1\. open$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("git rm is a DELETE; an issue with subtasks is refused, naming them, and nothing is deleted", async (t) => {
  const { tracker, env } = await givenTrackerClone(t);
  tracker.addIssue("TEST", { summary: "Sub of First", type: "Subtask", parent: "TEST-1" });
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", trackerPath("TEST-4")), /^parent: TEST-1$/m);

  await gitOk(t, env, ["rm", "-q", trackerPath("TEST-3")], { cwd: "d" });
  await commitAll(t, env, "d", "Drop the third");
  let from = tracker.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.deepEqual(
    trackerWrites(tracker, from).map((write) => [write.method, write.path.split("?")[0], write.status]),
    [["DELETE", "/rest/api/3/issue/TEST-3", 204]],
  );
  t.is(tracker.issue("TEST-3"), undefined);

  await gitOk(t, env, ["rm", "-q", trackerPath("TEST-1")], { cwd: "d" });
  await commitAll(t, env, "d", "Drop the first");
  from = tracker.requests.length;
  const refused = await git(env, ["push"], { cwd: "d" });
  t.is(refused.code, 1);
  t.regex(
    refused.stderr,
    /issue TEST-1 has the subtask TEST-4, and svc never deletes subtasks with their parent/,
  );
  t.regex(refused.stderr, /git checkout origin\/main -- issues\/TEST-1\.md/);
  t.deepEqual(trackerWrites(tracker, from), []);
  t.truthy(tracker.issue("TEST-1"));
  t.truthy(tracker.issue("TEST-4"));

  // The advice, followed literally, brings the file back and the push through.
  await gitOk(t, env, ["checkout", "origin/main", "--", trackerPath("TEST-1")], { cwd: "d" });
  await gitOk(t, env, ["commit", "-qam", "Keep the first"], { cwd: "d" });
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.truthy(tracker.issue("TEST-1"));
});

test("a push killed while the create's answer is on its way creates the issue once, and finishes its status", async (t) => {
  const tracker = await givenFakeTracker(t);
  tracker.addIssue("TEST", { summary: "First" });
  const proxy = await givenFaultProxy(t, tracker.url);
  const env = givenProxiedTrackerEnv(t, tracker, proxy.url);
  await gitOk(t, env, ["clone", "-q", trackerRemote(proxy.url, "TEST"), "d"]);
  writeWorkFile(
    env,
    "d",
    "issues/new.md",
    "---\ntitle: Only once\nstatus: In Progress\n---\nPlease *now*.\n",
  );
  await commitAll(t, env, "d", "A new issue, already started");

  const CREATE = "/rest/api/3/issue";
  proxy.setFault((request) =>
    request.method === "POST" && request.path === CREATE ? { kind: "late", ms: 1500 } : undefined,
  );
  const killed = await git(env, ["push"], { cwd: "d", killWhen: proxy.answered("POST", CREATE) });
  t.is(killed.code, null, killed.stderr);
  t.is(tracker.issues("TEST").length, 2, "the tracker made the issue; the transition never left");
  t.is(tracker.issue("TEST-2")?.status, "To Do");

  proxy.setFault(undefined);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.regex(
    again.stderr,
    /issues\/new\.md was created as record TEST-2 \(issues\/TEST-2\.md\) by a push that was cut off/,
  );
  t.is(
    tracker.requests.filter((request) => request.method === "POST" && request.path === "/rest/api/3/issue")
      .length,
    1,
  );
  t.is(tracker.issues("TEST").length, 2);
  t.is(tracker.issue("TEST-2")?.status, "In Progress");
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", trackerPath("TEST-2")), /^status: "In Progress"$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});
