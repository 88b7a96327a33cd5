/**
 * Comments as files on the forge (issue 34): real git against the fake forge. A clone shows each issue's
 * thread under `comments/<issue file stem>/<id>.md` (pull requests' comments left out), and a no-op fetch
 * after it is all `304`; a new comment file is a POST and after `git pull` is `<id>.md`; one's own comment
 * edited is one PATCH and deleted one DELETE (each after a read of the comment: the forge has no
 * `If-Match`); someone else's edited or deleted is refused before any write, and the command printed restores it; a
 * comment changed on the forge since the fetch is `fetch first`; an issue edited and commented in one push
 * is written before its comment; `svc.comments false` clones none.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { refusedThenRestored } from "../testing/comments.js";
import { type FakeForge, type FakeForgeComment, givenFakeForge } from "../testing/fake-forge.js";
import { forgeRemote, forgeWrites, givenForgeEnv } from "../testing/forge.js";
import { type GitEnv, git, gitOk } from "../testing/git.js";
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
/** The fake's token user (whose comments are "yours"). */
const ME = "svc-bot";

/** The file svc writes for a forge comment: no `version` (the forge has none). */
function expectedFile(comment: FakeForgeComment): string {
  return (
    `---\nid: ${comment.id}\nauthor: ${comment.author}\ncreated_at: ${comment.createdAt}\n` +
    `updated_at: ${comment.updatedAt}\n---\n${comment.body}`
  );
}

/** Issues 1-3 and pull request 4, alice's comments on issue 2 and on the pull request, and a clone `d`. */
async function givenThread(
  t: ExecutionContext,
  clone: readonly string[] = [],
): Promise<{ forge: FakeForge; env: GitEnv; theirs: FakeForgeComment }> {
  const forge = await givenFakeForge(t);
  for (const title of ["First", "Second", "Third"]) forge.addIssue(REPO, { title, body: `${title} body\n` });
  forge.addIssue(REPO, { title: "A pull request", pullRequest: true });
  const theirs = forge.addComment(REPO, 2, "I can reproduce it.\n");
  forge.addComment(REPO, 4, "Looks good to me.\n");
  const env = givenForgeEnv(t, forge);
  await gitOk(t, env, ["clone", "-q", ...clone, forgeRemote(forge.url, REPO), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { forge, env, theirs: forge.comments(REPO, 2).find((one) => one.id === theirs.id) ?? theirs };
}

/** Pushes `d`, accepted with `summary`; the writes the forge got, as method and path. */
async function pushAccepted(
  t: ExecutionContext,
  env: GitEnv,
  forge: FakeForge,
  summary: RegExp,
): Promise<string[]> {
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, summary);
  return forgeWrites(forge, from).map((request) => `${request.method} ${request.path}`);
}

test("a clone shows each issue's thread, not the pull request's; a no-op fetch is all 304", async (t) => {
  const { forge, env, theirs } = await givenThread(t);
  t.deepEqual(readdirSync(join(env.dir, "d", "comments")), ["0002"]);
  t.deepEqual(readdirSync(join(env.dir, "d", "comments", "0002")), [`${theirs.id}.md`]);
  t.is(readWorkFile(env, "d", `comments/0002/${theirs.id}.md`), expectedFile(theirs));

  const from = forge.requests.length;
  await gitOk(t, env, ["fetch", "-q"], { cwd: "d" });
  const asked = forge.requests.slice(from);
  t.true(
    asked.some((request) => request.path.includes("/issues/comments?")),
    "the comments were listed",
  );
  t.deepEqual(
    asked.filter((request) => request.status !== 304).map((request) => `${request.status} ${request.path}`),
    [],
    "every request of a no-op fetch is answered 304",
  );

  // A comment written elsewhere arrives with the next pull. The delta after a delta that moved the cursors
  // asks from the new cursors (as the issues' does); the one after that is all 304 again.
  const added = forge.addComment(REPO, 3, "Duplicate of #2.");
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.is(readWorkFile(env, "d", `comments/0003/${added.id}.md`), expectedFile(added));
  await gitOk(t, env, ["fetch", "-q"], { cwd: "d" });
  const again = forge.requests.length;
  await gitOk(t, env, ["fetch", "-q"], { cwd: "d" });
  t.deepEqual(
    forge.requests
      .slice(again)
      .filter((request) => request.status !== 304)
      .map((request) => `${request.status} ${request.path}`),
    [],
  );
});

test("a new comment file is posted; after git pull it is <id>.md; edit and delete your own", async (t) => {
  const { forge, env } = await givenThread(t);
  mkdirSync(join(env.dir, "d", "comments", "0001"));
  writeWorkFile(env, "d", "comments/0001/mine.md", "On it.\n");
  await commitAll(t, env, "d", "Comment on issue 1");
  t.deepEqual(await pushAccepted(t, env, forge, /1 created, 0 updated, 0 closed/), [
    `POST /repos/${REPO}/issues/1/comments`,
  ]);
  const mine = forge.comments(REPO, 1)[0];
  if (!mine) return t.fail("the comment is not on the forge");
  t.is(mine.author, ME);
  t.is(mine.body, "On it.\n");
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.false(existsSync(join(env.dir, "d", "comments/0001/mine.md")));
  const path = `comments/0001/${mine.id}.md`;
  t.is(readWorkFile(env, "d", path), expectedFile(mine));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  editWorkFile(env, "d", path, (text) => text.replace("On it.", "On it; a fix is in review."));
  await commitAll(t, env, "d", "Edit my comment");
  t.deepEqual(await pushAccepted(t, env, forge, /0 created, 1 updated, 0 closed/), [
    `PATCH /repos/${REPO}/issues/comments/${mine.id}`,
  ]);
  t.is(forge.comments(REPO, 1)[0]?.body, "On it; a fix is in review.\n");
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });

  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Delete my comment");
  t.deepEqual(await pushAccepted(t, env, forge, /0 created, 0 updated, 0 closed, 1 deleted/), [
    `DELETE /repos/${REPO}/issues/comments/${mine.id}`,
  ]);
  t.deepEqual(forge.comments(REPO, 1), []);
});

test("someone else's comment edited is refused before any write; the printed command restores it", async (t) => {
  const { forge, env, theirs } = await givenThread(t);
  const path = `comments/0002/${theirs.id}.md`;
  editWorkFile(env, "d", path, (text) => text.replace("reproduce", "not reproduce"));
  writeWorkFile(env, "d", "comments/0002/new.md", "A new comment of mine.\n");
  await commitAll(t, env, "d", "Edit theirs, add mine");
  const fixed = await refusedThenRestored(
    t,
    env,
    `${path}: this is alice's comment, edited here`,
    () => forgeWrites(forge).length,
  );
  t.regex(fixed?.stderr ?? "", /1 created, 0 updated, 0 closed/);
  t.is(readWorkFile(env, "d", path), expectedFile(theirs));
  t.deepEqual(
    forge.comments(REPO, 2).map((comment) => [comment.author, comment.body]),
    [
      ["alice", "I can reproduce it.\n"],
      [ME, "A new comment of mine.\n"],
    ],
  );
});

test("someone else's comment deleted is refused before any write; the printed command restores it and the next push goes through", async (t) => {
  const { forge, env, theirs } = await givenThread(t);
  const path = `comments/0002/${theirs.id}.md`;
  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Delete theirs");
  const from = forge.requests.length;
  await refusedThenRestored(
    t,
    env,
    `${path}: this is alice's comment, deleted here`,
    () => forgeWrites(forge).length,
  );
  t.is(readWorkFile(env, "d", path), expectedFile(theirs));
  t.deepEqual(forgeWrites(forge, from), [], "restoring it writes nothing");

  writeWorkFile(env, "d", "comments/0002/mine.md", "Mine.\n");
  await commitAll(t, env, "d", "Comment on issue 2");
  t.deepEqual(await pushAccepted(t, env, forge, /1 created, 0 updated, 0 closed/), [
    `POST /repos/${REPO}/issues/2/comments`,
  ]);
  t.deepEqual(
    forge.comments(REPO, 2).map((comment) => [comment.author, comment.body]),
    [
      ["alice", "I can reproduce it.\n"],
      [ME, "Mine.\n"],
    ],
  );
});

test("your comment changed on the forge since the fetch: fetch first, then pull, then the push goes through", async (t) => {
  const { forge, env } = await givenThread(t);
  mkdirSync(join(env.dir, "d", "comments", "0003"));
  writeWorkFile(env, "d", "comments/0003/mine.md", "First line.\n\nSecond line.\n");
  await commitAll(t, env, "d", "Comment on issue 3");
  await pushAccepted(t, env, forge, /1 created/);
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  const mine = forge.comments(REPO, 3)[0];
  if (!mine) return t.fail("the comment is not on the forge");
  const path = `comments/0003/${mine.id}.md`;
  forge.editComment(REPO, mine.id, "First line, edited elsewhere.\n\nSecond line.\n");
  editWorkFile(env, "d", path, (text) => text.replace("Second line.", "Second line, edited here."));
  await commitAll(t, env, "d", "Edit my comment");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, FETCH_FIRST);
  t.deepEqual(forgeWrites(forge, from), [], "nothing was written");
  const pull = await git(env, ["pull", "--no-edit"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr + pull.stdout);
  await pushAccepted(t, env, forge, /0 created, 1 updated, 0 closed/);
  t.is(forge.comments(REPO, 3)[0]?.body, "First line, edited elsewhere.\n\nSecond line, edited here.\n");
});

test("an issue edited and commented in one push: the issue is written first, then its comment", async (t) => {
  const { forge, env } = await givenThread(t);
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "status", "in_progress"));
  mkdirSync(join(env.dir, "d", "comments", "0001"));
  writeWorkFile(env, "d", "comments/0001/mine.md", "Started.\n");
  await commitAll(t, env, "d", "Start issue 1 and say so");
  const writes = await pushAccepted(t, env, forge, /1 created, 1 updated, 0 closed/);
  t.is(writes.at(-1), `POST /repos/${REPO}/issues/1/comments`, writes.join("\n"));
  t.true(
    writes.slice(0, -1).some((write) => write.startsWith(`PATCH /repos/${REPO}/issues/1`)),
    writes.join("\n"),
  );
});

test("svc.comments false clones without comments; the issues are the same", async (t) => {
  const { forge, env } = await givenThread(t, ["-c", "svc.comments=false"]);
  t.false(existsSync(join(env.dir, "d", "comments")));
  t.deepEqual(readdirSync(join(env.dir, "d", "issues")), ["0001.md", "0002.md", "0003.md"]);
  const from = forge.requests.length;
  forge.addComment(REPO, 1, "Another.");
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.false(existsSync(join(env.dir, "d", "comments")));
  t.false(
    forge.requests.slice(from).some((request) => request.path.includes("/comments")),
    "no comment listing",
  );
});
