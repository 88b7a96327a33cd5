/**
 * Writing comments with git push (issue 34) on the simulator: a new file without `id` posts a comment (the
 * author is `git config svc.author`), and after `git pull` it is `<id>.md`; an edited body of one's own
 * comment is one PATCH with `If-Match`; `git rm` of one's own a DELETE; someone else's comment edited or
 * deleted is refused before any write, with the command that restores it; a comment changed on the server
 * since the user's base is `fetch first`, then pull, then push; a comment on a record the same push
 * creates is refused ("push the record first"). Real git, a real simulator.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { RunningSim } from "../server/sim/server.js";
import {
  commentsOnServer,
  expectedCommentFile,
  patchComment,
  postComment,
  type SimCommentJson,
} from "../testing/comments.js";
import { type GitEnv, git, gitOk, givenGitEnv, manyIssues, run } from "../testing/git.js";
import {
  commitAll,
  givenClone,
  lastSimAuditId,
  readWorkFile,
  simWrites,
  writeWorkFile,
} from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

const ME = "me@example.com";
const FETCH_FIRST = "! [rejected]        main -> main (fetch first)";

/** A simulator with issues 1-3, a comment of someone else's on issue 2, and a clone `d` whose svc.author is ME. */
async function givenThread(
  t: ExecutionContext,
): Promise<{ sim: RunningSim; env: GitEnv; theirs: SimCommentJson }> {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const theirs = await postComment(sim.url, "demo", 2, "alice@example.com", "I can reproduce it.\n");
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  await givenClone(t, env, sim.url, "demo", "d");
  await gitOk(t, env, ["config", "svc.author", ME], { cwd: "d" });
  return { sim, env, theirs };
}

/** Pushes `d`, which must be accepted with `summary`; the writes the simulator got, as method, path and body. */
async function pushAccepted(
  t: ExecutionContext,
  env: GitEnv,
  sim: RunningSim,
  summary: RegExp,
): Promise<{ method: string; path: string; body: unknown }[]> {
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, summary);
  return simWrites(sim, before).map(({ method, path, body }) => ({ method, path, body }));
}

test("a new comment file is posted once, as svc.author; after git pull it is <id>.md; edit and delete your own", async (t) => {
  const { sim, env } = await givenThread(t);
  writeWorkFile(env, "d", "comments/0002/mine.md", "On it.\n");
  await commitAll(t, env, "d", "Comment on issue 2");
  t.deepEqual(await pushAccepted(t, env, sim, /1 created, 0 updated, 0 deleted/), [
    { method: "POST", path: "/projects/demo/issues/2/comments", body: { body: "On it.\n", author: ME } },
  ]);
  const mine = (await commentsOnServer(sim.url, "demo")).find((comment) => comment.author === ME);
  if (!mine) return t.fail("the comment is not on the server");
  const pull = await git(env, ["pull", "-q"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.false(existsSync(join(env.dir, "d", "comments/0002/mine.md")));
  const path = `comments/0002/${mine.id}.md`;
  t.is(readWorkFile(env, "d", path), expectedCommentFile(mine));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  // Edit your own: one PATCH of the body, If-Match the version you fetched.
  writeWorkFile(env, "d", path, readWorkFile(env, "d", path).replace("On it.", "On it; a fix is in review."));
  await commitAll(t, env, "d", "Edit my comment");
  t.deepEqual(await pushAccepted(t, env, sim, /0 created, 1 updated, 0 deleted/), [
    {
      method: "PATCH",
      path: `/projects/demo/comments/${mine.id}`,
      body: { body: "On it; a fix is in review.\n" },
    },
  ]);
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", path), /^version: 2$/m);

  // Delete your own.
  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Delete my comment");
  t.deepEqual(await pushAccepted(t, env, sim, /0 created, 0 updated, 1 deleted/), [
    { method: "DELETE", path: `/projects/demo/comments/${mine.id}`, body: null },
  ]);
  t.deepEqual(
    (await commentsOnServer(sim.url, "demo")).map((comment) => comment.author),
    ["alice@example.com"],
  );
});

test("someone else's comment edited or deleted is refused before any write; the printed command restores it and the push goes through", async (t) => {
  const { sim, env, theirs } = await givenThread(t);
  const path = `comments/0002/${theirs.id}.md`;
  writeWorkFile(env, "d", path, readWorkFile(env, "d", path).replace("reproduce", "not reproduce"));
  mkdirSync(join(env.dir, "d", "comments", "0003"));
  writeWorkFile(env, "d", "comments/0003/new.md", "A new comment of mine.\n");
  await commitAll(t, env, "d", "Edit theirs, add mine");
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.true(push.stderr.includes(`${path}: this is alice@example.com's comment, edited here`), push.stderr);
  t.deepEqual(simWrites(sim, before), [], "nothing was written");
  const command = /^ {2}(git checkout [0-9a-f]{40} -- .*&& git push)$/m.exec(push.stderr)?.[1];
  if (!command) return t.fail(push.stderr);
  const fixed = await run(env, "sh", ["-c", command], { cwd: "d" });
  t.is(fixed.code, 0, fixed.stderr);
  t.regex(fixed.stderr, /1 created, 0 updated, 0 deleted/);
  t.is(readWorkFile(env, "d", path), expectedCommentFile(theirs));
  const server = await commentsOnServer(sim.url, "demo");
  t.is(server.find((comment) => comment.id === theirs.id)?.body, "I can reproduce it.\n");
  t.is(server.length, 2);

  // Deleting it is refused the same way.
  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Delete theirs");
  const removed = await git(env, ["push"], { cwd: "d" });
  t.is(removed.code, 1, removed.stderr);
  t.true(
    removed.stderr.includes(`${path}: this is alice@example.com's comment, deleted here`),
    removed.stderr,
  );
  t.is((await commentsOnServer(sim.url, "demo")).length, 2);
});

test("your comment changed on the server since your base: fetch first, then pull merges, then the push goes through", async (t) => {
  const { sim, env } = await givenThread(t);
  const mine = await postComment(sim.url, "demo", 1, ME, "First line.\n\nSecond line.\n");
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  const path = `comments/0001/${mine.id}.md`;
  await patchComment(sim.url, "demo", mine.id, "First line, edited elsewhere.\n\nSecond line.\n");
  writeWorkFile(
    env,
    "d",
    path,
    readWorkFile(env, "d", path).replace("Second line.", "Second line, edited here."),
  );
  await commitAll(t, env, "d", "Edit my comment");
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.true(push.stderr.includes(FETCH_FIRST), push.stderr);
  t.deepEqual(simWrites(sim, before), []);
  const pull = await git(env, ["pull", "--no-edit"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr + pull.stdout);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  const body = (await commentsOnServer(sim.url, "demo")).find((comment) => comment.id === mine.id)?.body;
  t.is(body, "First line, edited elsewhere.\n\nSecond line, edited here.\n");
});

test("a comment on a record the same push creates is refused: push the record first", async (t) => {
  const { sim, env } = await givenThread(t);
  writeWorkFile(env, "d", "issues/new-bug.md", "---\ntitle: A new bug\n---\nIt breaks.\n");
  mkdirSync(join(env.dir, "d", "comments", "new-bug"), { recursive: true });
  writeWorkFile(env, "d", "comments/new-bug/first.md", "I saw it first.\n");
  await commitAll(t, env, "d", "A bug and its first comment");
  const before = lastSimAuditId(sim);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, /comments\/new-bug\/first\.md: issues\/new-bug\.md is a record this push creates/);
  t.regex(push.stderr, /Push the record first/);
  t.deepEqual(simWrites(sim, before), [], "nothing was written");
  t.true(push.stderr.includes("git rm --cached comments/new-bug/first.md"), push.stderr);

  // As the message says: the record alone, then the comment in its record's folder.
  await gitOk(t, env, ["rm", "-q", "--cached", "comments/new-bug/first.md"], { cwd: "d" });
  await gitOk(t, env, ["commit", "-q", "-m", "Push the record first"], { cwd: "d" });
  const record = await git(env, ["push"], { cwd: "d" });
  t.is(record.code, 0, record.stderr);
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.true(existsSync(join(env.dir, "d", "issues", "0004.md")));
  mkdirSync(join(env.dir, "d", "comments", "0004"), { recursive: true });
  await run(env, "mv", ["comments/new-bug/first.md", "comments/0004/first.md"], { cwd: "d" });
  rmSync(join(env.dir, "d", "comments", "new-bug"), { recursive: true });
  await commitAll(t, env, "d", "The comment");
  const comment = await git(env, ["push"], { cwd: "d" });
  t.is(comment.code, 0, comment.stderr);
  const posted = (await commentsOnServer(sim.url, "demo")).find((one) => one.issue_id === 4);
  t.is(posted?.body, "I saw it first.\n");
  t.deepEqual(readdirSync(join(env.dir, "d", "comments", "0004")), ["first.md"]);
});

test("the bulk-delete guard counts comments and says so; an edit of a comment's frontmatter is ignored and said", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const mine = [];
  for (const body of ["One.", "Two.", "Three."]) mine.push(await postComment(sim.url, "demo", 1, ME, body));
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0", SVC_BULK_DELETE_LIMIT: "2" });
  await givenClone(t, env, sim.url, "demo", "d");
  await gitOk(t, env, ["config", "svc.author", ME], { cwd: "d" });

  const first = `comments/0001/${mine[0]?.id}.md`;
  writeWorkFile(env, "d", first, readWorkFile(env, "d", first).replace("version: 1", "version: 7"));
  await commitAll(t, env, "d", "Edit a version");
  const ignored = await git(env, ["push"], { cwd: "d" });
  t.is(ignored.code, 0, ignored.stderr);
  t.regex(ignored.stderr, /0 created, 0 updated, 0 deleted/);
  t.true(ignored.stderr.includes(first), ignored.stderr);
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });

  await gitOk(t, env, ["rm", "-q", "-r", "comments", "issues/0002.md", "issues/0003.md"], { cwd: "d" });
  await commitAll(t, env, "d", "Delete my three comments and two issues");
  const before = lastSimAuditId(sim);
  const refused = await git(env, ["push"], { cwd: "d" });
  t.is(refused.code, 1, refused.stderr);
  t.true(
    refused.stderr.includes(
      "svc: this push deletes 2 records and 3 comments, more than SVC_BULK_DELETE_LIMIT=2; nothing was written.\n" +
        "  If you mean it, say so in a commit message and push again:\n" +
        '  git commit --allow-empty -m "Delete 2 records and 3 comments [allow-bulk-delete]" && git push\n',
    ),
    refused.stderr,
  );
  t.deepEqual(simWrites(sim, before), []);
  const ran = await run(
    env,
    "sh",
    ["-c", 'git commit --allow-empty -m "Delete 2 records and 3 comments [allow-bulk-delete]" && git push'],
    { cwd: "d", env: { GIT_EDITOR: "false" } },
  );
  t.is(ran.code, 0, ran.stderr);
  t.regex(ran.stderr, /0 created, 0 updated, 5 deleted/);
  t.is(simWrites(sim, before).filter((write) => write.method === "DELETE").length, 5);
  t.deepEqual(await commentsOnServer(sim.url, "demo"), []);
});
