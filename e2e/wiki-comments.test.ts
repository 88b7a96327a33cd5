/**
 * Footer comments on the wiki (issue 34) end to end, real git against the fake wiki: a clone shows each page's
 * thread as `comments/<page id>/<comment id>.md` (storage XHTML byte for byte, `author` the display name with
 * the account id, quoted: it holds a colon); a new comment file is one POST and after `git pull` is
 * `<id>.md`; an edit of one's own comment is one PUT with the next version; `git rm` of one's own one DELETE;
 * someone else's comment edited or deleted is refused before any write, and the printed command restores it; a comment
 * changed on the server since the base is `fetch first`; a comment deleted on the wiki leaves at the next
 * full listing; `svc.comments false` clones without comments.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { refusedThenRestored } from "../testing/comments.js";
import {
  ACCOUNT_DISPLAY_NAME,
  ACCOUNT_ID,
  OTHER_ACCOUNT_ID,
  OTHER_DISPLAY_NAME,
} from "../testing/fake-wiki/vendor-data.js";
import { type FakeWiki, type FakeWikiRequest, givenFakeWiki } from "../testing/fake-wiki.js";
import { type GitEnv, git, gitOk, svc } from "../testing/git.js";
import { commitAll, FETCH_FIRST, readWorkFile, writeWorkFile } from "../testing/push.js";
import { givenWikiEnv, wikiRemote } from "../testing/wiki.js";

const THEIRS = "<p>I can reproduce it &amp; <strong>it hurts</strong>.</p>";

/** A fake wiki with pages 1-3 in SVC, someone else's comment on page 2, and a clone `d` of the space. */
async function givenThread(
  t: ExecutionContext,
  cloneArgs: readonly string[] = [],
): Promise<{ wiki: FakeWiki; env: GitEnv; ids: string[]; theirs: string }> {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 3);
  const theirs = wiki.addComment(ids[1] as string, THEIRS, { authorId: OTHER_ACCOUNT_ID }).id;
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "-q", ...cloneArgs, wikiRemote(wiki.url, "SVC"), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { wiki, env, ids, theirs };
}

/** The comment writes the wiki got after request `from`: method and path (account look-ups left out). */
function commentWrites(wiki: FakeWiki, from: number): FakeWikiRequest[] {
  return wiki.requests
    .slice(from)
    .filter((request) => request.method !== "GET" && request.path.includes("/footer-comments"));
}

/**
 * Pushes `d`, which must be accepted with `summary` and write exactly one comment request `[method, path]`;
 * the JSON body that request sent.
 */
async function pushedOne(
  t: ExecutionContext,
  env: GitEnv,
  wiki: FakeWiki,
  summary: RegExp,
  expected: readonly [string, string],
): Promise<unknown> {
  const before = wiki.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  t.regex(push.stderr, summary);
  const writes = commentWrites(wiki, before);
  t.deepEqual(
    writes.map((write) => [write.method, write.path]),
    [expected],
  );
  return JSON.parse(writes[0]?.body || "null");
}

test("a clone shows the threads: comments/<page>/<id>.md with the author's name and account id, the body byte for byte", async (t) => {
  const { wiki, env, ids, theirs } = await givenThread(t);
  const path = `comments/${ids[1]}/${theirs}.md`;
  const file = readWorkFile(env, "d", path);
  const comment = wiki.comment(theirs);
  t.is(
    file,
    `---\nid: ${theirs}\nauthor: "${OTHER_DISPLAY_NAME} (${OTHER_ACCOUNT_ID})"\ncreated_at: ${comment?.createdAt}\nupdated_at: ${comment?.version.createdAt}\nversion: 1\n---\n${THEIRS}`,
  );
  t.deepEqual(readdirSync(join(env.dir, "d", "comments")), [ids[1]]);
  t.false(
    existsSync(join(env.dir, "d", "comments", String(ids[0]))),
    "a page without comments has no folder",
  );
});

test("a new comment is posted once and after git pull is <id>.md; edit and delete your own", async (t) => {
  const { wiki, env, ids } = await givenThread(t);
  const page = ids[0] as string;
  mkdirSync(join(env.dir, "d", "comments", page), { recursive: true });
  writeWorkFile(env, "d", `comments/${page}/mine.md`, "<p>On it.</p>");
  await commitAll(t, env, "d", "Comment on page 1");
  const posted = await pushedOne(t, env, wiki, /1 created, 0 updated, 0 deleted/, [
    "POST",
    "/wiki/api/v2/footer-comments",
  ]);
  t.deepEqual(posted, { pageId: page, body: { representation: "storage", value: "<p>On it.</p>" } });
  const [mine] = wiki.comments(page);
  if (!mine) return t.fail("the comment is not on the server");
  t.is(mine.authorId, ACCOUNT_ID);
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  const path = `comments/${page}/${mine.id}.md`;
  t.false(existsSync(join(env.dir, "d", `comments/${page}/mine.md`)));
  t.regex(
    readWorkFile(env, "d", path),
    new RegExp(`^author: "${ACCOUNT_DISPLAY_NAME} \\(${ACCOUNT_ID}\\)"$`, "m"),
  );
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  // Edit your own: one PUT naming the next version.
  writeWorkFile(env, "d", path, readWorkFile(env, "d", path).replace("On it.", "On it; in review."));
  await commitAll(t, env, "d", "Edit my comment");
  const put = await pushedOne(t, env, wiki, /0 created, 1 updated, 0 deleted/, [
    "PUT",
    `/wiki/api/v2/footer-comments/${mine.id}`,
  ]);
  t.like(put, {
    version: { number: 2 },
    body: { representation: "storage", value: "<p>On it; in review.</p>" },
  });
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", path), /^version: 2$/m);

  // Delete your own.
  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Delete my comment");
  await pushedOne(t, env, wiki, /0 created, 0 updated, 1 deleted/, [
    "DELETE",
    `/wiki/api/v2/footer-comments/${mine.id}`,
  ]);
  t.is(wiki.comment(mine.id), undefined);
});

/** The refusal of the other account's comment `path` changed (`what`): it names the file and the author. */
function refusal(path: string, what: "edited" | "deleted"): string {
  return `${path}: this is ${OTHER_DISPLAY_NAME} (${OTHER_ACCOUNT_ID})'s comment, ${what} here`;
}

test("someone else's comment edited is refused before any write; the printed command restores it", async (t) => {
  const { wiki, env, ids, theirs } = await givenThread(t);
  const path = `comments/${ids[1]}/${theirs}.md`;
  const original = readWorkFile(env, "d", path);
  writeWorkFile(env, "d", path, original.replace("reproduce", "not reproduce"));
  await commitAll(t, env, "d", "Edit theirs");
  const before = wiki.requests.length;
  await refusedThenRestored(t, env, refusal(path, "edited"), () => commentWrites(wiki, 0).length);
  t.is(readWorkFile(env, "d", path), original, "the file is back");
  t.is(wiki.comment(theirs)?.body, THEIRS);
  t.is(wiki.comment(theirs)?.version.number, 1);
  t.deepEqual(commentWrites(wiki, before), []);
});

test("someone else's comment deleted is refused before any write; the printed command restores it and the next push goes through", async (t) => {
  const { wiki, env, ids, theirs } = await givenThread(t);
  const path = `comments/${ids[1]}/${theirs}.md`;
  const original = readWorkFile(env, "d", path);
  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Delete theirs");
  const before = wiki.requests.length;
  await refusedThenRestored(t, env, refusal(path, "deleted"), () => commentWrites(wiki, 0).length);
  t.is(readWorkFile(env, "d", path), original, "the file is back");
  t.is(wiki.comment(theirs)?.body, THEIRS);
  t.deepEqual(commentWrites(wiki, before), [], "restoring it writes nothing");

  // The next push goes through: a comment of one's own on the same page is posted.
  writeWorkFile(env, "d", `comments/${ids[1]}/mine.md`, "<p>Mine.</p>");
  await commitAll(t, env, "d", "Comment on page 2");
  await pushedOne(t, env, wiki, /1 created, 0 updated, 0 deleted/, ["POST", "/wiki/api/v2/footer-comments"]);
  t.deepEqual(
    wiki.comments(ids[1] as string).map((comment) => comment.body),
    [THEIRS, "<p>Mine.</p>"],
  );
});

test("your comment edited on the server since your base: the push is fetch first and writes nothing", async (t) => {
  const { wiki, env, ids } = await givenThread(t);
  const page = ids[2] as string;
  const mine = wiki.addComment(page, "<p>First.</p>\n<p>Second.</p>", { authorId: ACCOUNT_ID });
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  const path = `comments/${page}/${mine.id}.md`;
  wiki.editComment(mine.id, "<p>First, edited elsewhere.</p>\n<p>Second.</p>");
  writeWorkFile(env, "d", path, readWorkFile(env, "d", path).replace("Second.", "Second, edited here."));
  await commitAll(t, env, "d", "Edit my comment");
  const before = wiki.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, FETCH_FIRST);
  t.deepEqual(commentWrites(wiki, before), []);
  t.is(wiki.comment(mine.id)?.body, "<p>First, edited elsewhere.</p>\n<p>Second.</p>");
});

test("svc.comments false clones without comments", async (t) => {
  const { env } = await givenThread(t, ["-c", "svc.comments=false"]);
  t.false(existsSync(join(env.dir, "d", "comments")));
  t.true(existsSync(join(env.dir, "d", "pages")));
});

test("a space without comments: a fetch lists the comments changed since, not the site's whole listing; a new one arrives", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 2);
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "-q", wikiRemote(wiki.url, "SVC"), "d"]);
  t.false(existsSync(join(env.dir, "d", "comments")));
  const theirs = wiki.addComment(ids[0] as string, THEIRS).id;
  const from = wiki.requests.length;
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  const listings = wiki.requests
    .slice(from)
    .filter((request) => request.path.startsWith("/wiki/api/v2/footer-comments?"))
    .map((request) => request.path);
  t.deepEqual(listings, ["/wiki/api/v2/footer-comments?body-format=storage&sort=-modified-date&limit=250"]);
  t.regex(readWorkFile(env, "d", `comments/${ids[0]}/${theirs}.md`), /I can reproduce it/);
});

test("a comment deleted on the wiki stays until a full listing of the comments, then leaves with git pull", async (t) => {
  const { wiki, env, ids, theirs } = await givenThread(t);
  const path = `comments/${ids[1]}/${theirs}.md`;
  wiki.deleteComment(theirs);
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.true(existsSync(join(env.dir, "d", path)), "a delta cannot show a deleted comment");
  const reconcile = await svc(env, ["sync", "--reconcile", "d"]);
  t.is(reconcile.code, 0, reconcile.stderr);
  await gitOk(t, env, ["pull", "-q"], { cwd: "d" });
  t.false(existsSync(join(env.dir, "d", path)));
  t.true(existsSync(join(env.dir, "d", `pages/${ids[1]}.md`)));
});
