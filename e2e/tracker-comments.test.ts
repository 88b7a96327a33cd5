/**
 * Comments as files on a tracker project (issue 34), real git against the fake tracker: a clone shows each
 * issue's thread under `comments/TEST-<n>/<id>.md` (author `Display Name (accountId)`, the body ADF as
 * Markdown); a new file is one POST of ADF and after `git pull` it is `<id>.md`; your own comment edited is
 * a PUT, removed a DELETE (each after a read of the comment: Jira has no `If-Match`); someone else's is
 * refused before any write with the command that restores it; a comment changed on the server since your
 * base is `fetch first`; a body over 32,767 characters of text is refused before any write; a deletion on
 * the server shows at the next full listing; `svc.comments false` clones without comments.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { refusedThenRestored } from "../testing/comments.js";
import { type AdfJson, type FakeTracker, givenFakeTracker } from "../testing/fake-tracker.js";
import { type GitEnv, git, gitOk } from "../testing/git.js";
import { commitAll, FETCH_FIRST, readWorkFile, writeWorkFile } from "../testing/push.js";
import { givenTrackerEnv, trackerRemote, trackerWrites } from "../testing/tracker.js";

const ME = "557058:bot-0001";
const ALICE = "557058:alice-0002";

/** A fake tracker with TEST-1..3, alice's comment on TEST-2, and a clone of it in `d`. */
async function givenThread(
  t: ExecutionContext,
): Promise<{ tracker: FakeTracker; env: GitEnv; theirs: string }> {
  const tracker = await givenFakeTracker(t);
  for (const summary of ["First", "Second", "Third"]) tracker.addIssue("TEST", { summary });
  const theirs = tracker.addComment("TEST-2", "I can reproduce it.").id;
  const env = givenTrackerEnv(t, tracker);
  await gitOk(t, env, ["clone", "-q", trackerRemote(tracker.url, "TEST"), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { tracker, env, theirs };
}

/** Pushes `d`, which must be accepted with `summary`; the writes the fake got from it (method, path, body). */
async function pushAccepted(
  t: ExecutionContext,
  tracker: FakeTracker,
  env: GitEnv,
  summary: RegExp,
): Promise<{ method: string; path: string; body: unknown }[]> {
  const from = tracker.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, summary);
  return trackerWrites(tracker, from).map(({ method, path, body }) => ({
    method,
    path,
    body: body === "" ? null : JSON.parse(body),
  }));
}

/** An ADF document of one paragraph of these inline nodes. */
function inlineDoc(inline: readonly Record<string, unknown>[]): AdfJson {
  return { type: "doc", version: 1, content: [{ type: "paragraph", content: [...inline] }] };
}

/** An ADF document of one paragraph of plain text for each of `texts`. */
function paragraph(...texts: string[]): AdfJson {
  return {
    type: "doc",
    version: 1,
    content: texts.map((text) => ({ type: "paragraph", content: [{ type: "text", text }] })),
  };
}

test("a clone shows each issue's thread; a fetch brings a new and an edited comment; svc.comments false shows none", async (t) => {
  const { tracker, env, theirs } = await givenThread(t);
  const second = tracker.addComment(
    "TEST-2",
    inlineDoc([
      { type: "text", text: "Fixed in " },
      { type: "text", text: "main", marks: [{ type: "code" }] },
    ]),
  ).id;
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.deepEqual(
    readdirSync(join(env.dir, "d", "comments")),
    ["TEST-2"],
    "no folder for an issue without comments",
  );
  t.deepEqual(readdirSync(join(env.dir, "d", "comments", "TEST-2")), [`${theirs}.md`, `${second}.md`]);
  const file = readWorkFile(env, "d", `comments/TEST-2/${theirs}.md`);
  t.regex(file, new RegExp(`^id: ${theirs}$`, "m"));
  t.regex(file, /^author: "Alice Example \(557058:alice-0002\)"$/m);
  t.regex(file, /^created_at: /m);
  t.regex(file, /^updated_at: /m);
  t.notRegex(file, /^version:/m, "Jira comments have no version");
  t.true(file.endsWith("---\nI can reproduce it.\n"), file);
  t.true(readWorkFile(env, "d", `comments/TEST-2/${second}.md`).endsWith("---\nFixed in `main`\n"));
  const grep = await git(env, ["grep", "-l", "reproduce"], { cwd: "d" });
  t.is(grep.stdout.trim(), `comments/TEST-2/${theirs}.md`);

  // Written elsewhere: a new comment and an edit move their issue's `updated`, so the delta brings them.
  const third = tracker.addComment("TEST-3", "Duplicate of TEST-2.").id;
  tracker.editComment(theirs, "I can reproduce it on 1.2 too.");
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.true(readWorkFile(env, "d", `comments/TEST-3/${third}.md`).endsWith("---\nDuplicate of TEST-2.\n"));
  t.true(
    readWorkFile(env, "d", `comments/TEST-2/${theirs}.md`).endsWith("---\nI can reproduce it on 1.2 too.\n"),
  );

  // A deletion does not move the issue's `updated`: the next full listing shows it.
  tracker.deleteComment(third);
  await gitOk(t, env, ["config", "svc.reconcileInterval", "0"], { cwd: "d" });
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.false(existsSync(join(env.dir, "d", "comments", "TEST-3")), "the deleted comment's file is gone");

  await gitOk(t, env, [
    "clone",
    "-q",
    "-c",
    "svc.comments=false",
    trackerRemote(tracker.url, "TEST"),
    "without",
  ]);
  t.false(existsSync(join(env.dir, "without", "comments")));
  t.deepEqual(readdirSync(join(env.dir, "without", "issues")), readdirSync(join(env.dir, "d", "issues")));
});

test("a new comment file is posted as ADF and after git pull is <id>.md; edit your own (PUT), delete your own (DELETE)", async (t) => {
  const { tracker, env } = await givenThread(t);
  writeWorkFile(env, "d", "comments/TEST-2/mine.md", "On it: **today**.\n");
  await commitAll(t, env, "d", "Comment on TEST-2");
  const posted = await pushAccepted(t, tracker, env, /1 created, 0 updated, 0 deleted/);
  const mine = tracker.comments("TEST-2").find((comment) => comment.author === ME);
  if (!mine) return t.fail("the comment is not on the server");
  t.deepEqual(posted, [
    {
      method: "POST",
      path: "/rest/api/3/issue/TEST-2/comment",
      body: {
        body: inlineDoc([
          { type: "text", text: "On it: " },
          { type: "text", text: "today", marks: [{ type: "strong" }] },
          { type: "text", text: "." },
        ]),
      },
    },
  ]);
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  const path = `comments/TEST-2/${mine.id}.md`;
  t.false(existsSync(join(env.dir, "d", "comments/TEST-2/mine.md")));
  t.regex(readWorkFile(env, "d", path), /^author: "svc bot \(557058:bot-0001\)"$/m);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  writeWorkFile(env, "d", path, readWorkFile(env, "d", path).replace("On it: **today**.", "Fixed."));
  await commitAll(t, env, "d", "Edit my comment");
  t.deepEqual(await pushAccepted(t, tracker, env, /0 created, 1 updated, 0 deleted/), [
    {
      method: "PUT",
      path: `/rest/api/3/issue/TEST-2/comment/${mine.id}`,
      body: { body: paragraph("Fixed.") },
    },
  ]);
  t.deepEqual(tracker.comment(mine.id)?.body, paragraph("Fixed."));
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });

  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Delete my comment");
  t.deepEqual(await pushAccepted(t, tracker, env, /0 created, 0 updated, 1 deleted/), [
    { method: "DELETE", path: `/rest/api/3/issue/TEST-2/comment/${mine.id}`, body: null },
  ]);
  t.deepEqual(
    tracker.comments("TEST-2").map((comment) => comment.author),
    [ALICE],
  );
});

/** The refusal of alice's comment `path` changed (`what`): it names the file, the author and you. */
function refusal(path: string, what: "edited" | "deleted"): string {
  return `${path}: this is Alice Example (${ALICE})'s comment, ${what} here; svc never rewrites or deletes anyone else's comment (you are svc bot (${ME}))`;
}

test("someone else's comment edited is refused before any write; the printed command restores it and the push goes through", async (t) => {
  const { tracker, env, theirs } = await givenThread(t);
  const path = `comments/TEST-2/${theirs}.md`;
  writeWorkFile(env, "d", path, readWorkFile(env, "d", path).replace("reproduce", "not reproduce"));
  mkdirSync(join(env.dir, "d", "comments", "TEST-3"));
  writeWorkFile(env, "d", "comments/TEST-3/new.md", "A new comment of mine.\n");
  await commitAll(t, env, "d", "Edit theirs, add mine");
  const fixed = await refusedThenRestored(
    t,
    env,
    refusal(path, "edited"),
    () => trackerWrites(tracker).length,
  );
  t.regex(fixed?.stderr ?? "", /1 created, 0 updated, 0 deleted/);
  t.true(readWorkFile(env, "d", path).endsWith("---\nI can reproduce it.\n"));
  t.deepEqual(tracker.comment(theirs)?.body, paragraph("I can reproduce it."));
  t.deepEqual(
    tracker.comments("TEST-3").map((comment) => [comment.author, comment.body]),
    [[ME, paragraph("A new comment of mine.")]],
  );
});

test("someone else's comment deleted is refused before any write; the printed command restores it and the next push goes through", async (t) => {
  const { tracker, env, theirs } = await givenThread(t);
  const path = `comments/TEST-2/${theirs}.md`;
  const original = readWorkFile(env, "d", path);
  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Delete theirs");
  const from = tracker.requests.length;
  await refusedThenRestored(t, env, refusal(path, "deleted"), () => trackerWrites(tracker).length);
  t.is(readWorkFile(env, "d", path), original);
  t.deepEqual(tracker.comment(theirs)?.body, paragraph("I can reproduce it."));
  t.deepEqual(trackerWrites(tracker, from), [], "restoring it writes nothing");

  writeWorkFile(env, "d", "comments/TEST-2/mine.md", "Mine.\n");
  await commitAll(t, env, "d", "Comment on TEST-2");
  const writes = await pushAccepted(t, tracker, env, /1 created, 0 updated, 0 deleted/);
  t.deepEqual(
    writes.map((write) => `${write.method} ${write.path}`),
    ["POST /rest/api/3/issue/TEST-2/comment"],
  );
  t.deepEqual(
    tracker.comments("TEST-2").map((comment) => [comment.author, comment.body]),
    [
      [ALICE, paragraph("I can reproduce it.")],
      [ME, paragraph("Mine.")],
    ],
  );
});

test("your comment changed on the server since your base: fetch first, then pull merges, then the push goes through", async (t) => {
  const { tracker, env } = await givenThread(t);
  const mine = tracker.addComment("TEST-1", paragraph("First line.", "Second line."), { author: ME }).id;
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  const path = `comments/TEST-1/${mine}.md`;
  t.true(readWorkFile(env, "d", path).endsWith("---\nFirst line.\n\nSecond line.\n"));
  tracker.editComment(mine, paragraph("First line, edited elsewhere.", "Second line."), { author: ME });
  writeWorkFile(
    env,
    "d",
    path,
    readWorkFile(env, "d", path).replace("Second line.", "Second line, edited here."),
  );
  await commitAll(t, env, "d", "Edit my comment");
  const from = tracker.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, FETCH_FIRST);
  t.deepEqual(trackerWrites(tracker, from), [], "nothing was written");
  const pull = await git(env, ["pull", "--no-edit"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr + pull.stdout);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.deepEqual(
    tracker.comment(mine)?.body,
    paragraph("First line, edited elsewhere.", "Second line, edited here."),
  );
});

test("a comment over 32,767 characters of text is refused before any write; a longer Markdown with less text is not", async (t) => {
  const { tracker, env } = await givenThread(t);
  mkdirSync(join(env.dir, "d", "comments", "TEST-1"));
  writeWorkFile(env, "d", "comments/TEST-1/long.md", `${"a".repeat(32_768)}\n`);
  await commitAll(t, env, "d", "A long comment");
  const from = tracker.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(
    push.stderr,
    /comments\/TEST-1\/long\.md: .*32,768 characters of text; the tracker accepts at most 32,767/,
  );
  t.deepEqual(trackerWrites(tracker, from), [], "nothing was written");

  // The limit counts the text: a link's address is no text, so 40,000 characters of Markdown may go.
  const link = `[the log](https://example.com/${"x".repeat(40_000)})\n`;
  writeWorkFile(env, "d", "comments/TEST-1/long.md", link);
  await commitAll(t, env, "d", "A long link");
  const linked = await git(env, ["push"], { cwd: "d" });
  t.is(linked.code, 0, linked.stderr);
  t.is(tracker.comments("TEST-1").length, 1);
});
