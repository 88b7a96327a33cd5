/**
 * Pushing to a wiki space (issue 5, "What it must show" 3): an edited page body becomes exactly one PUT
 * with `version.number` = base + 1; a page changed on the server meanwhile is rejected with git's own
 * `fetch first`, and `git pull` turns it into a conflict in `pages/<id>.md`; a new file becomes a POST and
 * after the pull `pages/<new id>.md`; `git rm` becomes a DELETE that moves the page to the trash.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { type FakeWiki, givenFakeWiki } from "../testing/fake-wiki.js";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { type GitEnv, git, gitOk } from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  FETCH_FIRST,
  readWorkFile,
  setField,
  writeWorkFile,
} from "../testing/push.js";
import { givenWikiEnv, pageFileBody, wikiRemote, wikiWrites } from "../testing/wiki.js";

interface PutBody {
  readonly id: string;
  readonly status: string;
  readonly title: string;
  readonly body: { readonly representation: string; readonly value: string };
  readonly version: { readonly number: number };
}

/** A fake wiki with `count` seeded pages in SVC and a clone of it in `d`. */
async function givenWikiClone(
  t: ExecutionContext,
  count: number,
): Promise<{ wiki: FakeWiki; env: GitEnv; ids: string[] }> {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", count);
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { wiki, env, ids };
}

/** Replaces everything after the frontmatter of a page file. */
function withBody(text: string, body: string): string {
  const close = text.indexOf("\n---\n", 3);
  if (close < 0) throw new Error(`no frontmatter in ${text.slice(0, 80)}`);
  return text.slice(0, close + "\n---\n".length) + body;
}

test("an edited page body is pushed as exactly one PUT with version.number = base + 1", async (t) => {
  const { wiki, env } = await givenWikiClone(t, 6);
  const page = wiki.page("2");
  t.is(page?.version.number, 2, "seeded at version 2, so base + 1 is not just 2");
  const before = wiki.requests.length;

  const body = "<p>Edited locally &amp; pushed</p>\n<p>ünïcödé 🧪</p>";
  editWorkFile(env, "d", "pages/2.md", (text) => withBody(text, body));
  await commitAll(t, env, "d", "Edit page 2");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);

  const writes = wikiWrites(wiki, before);
  t.deepEqual(
    writes.map((write) => [write.method, write.path, write.status]),
    [["PUT", "/wiki/api/v2/pages/2", 200]],
  );
  const sent = JSON.parse(writes[0]?.body ?? "{}") as PutBody;
  t.is(sent.version.number, 3);
  t.is(sent.id, "2");
  t.is(sent.title, page?.title ?? "");
  t.deepEqual(sent.body, { representation: "storage", value: body });
  t.is(wiki.page("2")?.version.number, 3);
  t.is(wiki.page("2")?.body, body);

  // The pull fast-forwards to the sync commit: the file shows the server's new version.
  const pull = await git(env, ["pull", "--ff-only"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  const file = readWorkFile(env, "d", "pages/2.md");
  t.regex(file, /^version: 3$/m);
  t.is(pageFileBody(Buffer.from(file, "utf8")).toString("utf8"), body);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  t.is(wiki.baseHits, 0);
});

test("server-controlled fields edited in the file are not sent: the PUT takes its version from the base", async (t) => {
  const { wiki, env } = await givenWikiClone(t, 3);
  const before = wiki.requests.length;
  editWorkFile(env, "d", "pages/3.md", (text) =>
    setField(setField(text, "version", "99"), "title", '"Renamed"'),
  );
  await commitAll(t, env, "d", "Rename page 3");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const writes = wikiWrites(wiki, before);
  t.is(writes.length, 1);
  const sent = JSON.parse(writes[0]?.body ?? "{}") as PutBody;
  t.is(sent.version.number, 4, "page 3 was seeded at version 3");
  t.is(sent.title, "Renamed");
  t.is(wiki.page("3")?.title, "Renamed");
  t.is(wiki.page("3")?.version.number, 4);
});

test("a page changed on the server meanwhile: push is rejected (fetch first), pull conflicts in pages/<id>.md, the resolution is pushed", async (t) => {
  const { wiki, env } = await givenWikiClone(t, 4);
  wiki.editPage("1", { body: "<p>Server version</p>" });
  const before = wiki.requests.length;

  editWorkFile(env, "d", "pages/1.md", (text) => withBody(text, "<p>Local version</p>"));
  await commitAll(t, env, "d", "Edit page 1 locally");
  const rejected = await git(env, ["push"], { cwd: "d" });
  t.is(rejected.code, 1, rejected.stderr);
  t.regex(rejected.stderr, FETCH_FIRST);
  t.regex(rejected.stderr, /pages\/1\.md/);
  t.deepEqual(wikiWrites(wiki, before), [], "nothing was written");
  t.is(wiki.page("1")?.body, "<p>Server version</p>");
  t.is(wiki.page("1")?.version.number, 2);

  const pull = await git(env, ["pull", "--no-rebase"], { cwd: "d" });
  t.not(pull.code, 0);
  t.regex(pull.stdout, /CONFLICT \(content\): Merge conflict in pages\/1\.md/);
  const conflicted = readWorkFile(env, "d", "pages/1.md");
  t.regex(
    conflicted,
    /^<<<<<<< HEAD\n<p>Local version<\/p>\n=======\n<p>Server version<\/p>\n>>>>>>> [0-9a-f]+$/m,
  );
  // Only the body conflicts: the server's version line merged cleanly.
  t.regex(conflicted, /^version: 2$/m);

  writeWorkFile(env, "d", "pages/1.md", withBody(conflicted, "<p>Both versions, merged</p>"));
  await gitOk(t, env, ["add", "pages/1.md"], { cwd: "d" });
  await gitOk(t, env, ["commit", "-q", "--no-edit"], { cwd: "d" });
  const afterPull = wiki.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const writes = wikiWrites(wiki, afterPull);
  t.deepEqual(
    writes.map((write) => [write.method, write.path]),
    [["PUT", "/wiki/api/v2/pages/1"]],
  );
  t.is((JSON.parse(writes[0]?.body ?? "{}") as PutBody).version.number, 3);
  t.is(wiki.page("1")?.body, "<p>Both versions, merged</p>");
  t.is(wiki.baseHits, 0);
});

test("a new file without an id is created with one POST and becomes pages/<new id>.md after the pull", async (t) => {
  const { wiki, env, ids } = await givenWikiClone(t, 3);
  const before = wiki.requests.length;
  const body = '<p>A new page</p>\n<ac:structured-macro ac:name="info"/>\n';
  writeWorkFile(env, "d", "pages/new.md", `---\ntitle: "Brand new page"\n---\n${body}`);
  await commitAll(t, env, "d", "Add a page");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);

  const writes = wikiWrites(wiki, before);
  t.deepEqual(
    writes.map((write) => [write.method, write.path, write.status]),
    [["POST", "/wiki/api/v2/pages", 200]],
  );
  const sent = JSON.parse(writes[0]?.body ?? "{}") as Record<string, unknown>;
  t.is(sent.spaceId, wiki.space("SVC").id);
  t.is(sent.title, "Brand new page");
  t.deepEqual(sent.body, { representation: "storage", value: body });
  const created = wiki.pages("SVC").find((page) => page.title === "Brand new page");
  if (!created) return t.fail("the page was not created");
  t.false(ids.includes(created.id));
  t.is(created.body, body);

  const pull = await git(env, ["pull", "--ff-only"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.false(existsSync(join(env.dir, "d", "pages", "new.md")));
  const file = readWorkFile(env, "d", `pages/${created.id}.md`);
  t.regex(file, new RegExp(`^id: ${created.id}$`, "m"));
  t.is(pageFileBody(Buffer.from(file, "utf8")).toString("utf8"), body);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  // Pushing again creates nothing twice.
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.is(wikiWrites(wiki, before).length, 1);
  t.is(wiki.baseHits, 0);
});

test("git rm of a page is pushed as one DELETE and the page goes to the trash", async (t) => {
  const { wiki, env } = await givenWikiClone(t, 4);
  const before = wiki.requests.length;
  await gitOk(t, env, ["rm", "-q", "pages/3.md"], { cwd: "d" });
  await gitOk(t, env, ["commit", "-q", "-m", "Remove page 3"], { cwd: "d" });
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);

  t.deepEqual(
    wikiWrites(wiki, before).map((write) => [write.method, write.path, write.status]),
    [["DELETE", "/wiki/api/v2/pages/3", 204]],
  );
  t.is(wiki.page("3")?.status, "trashed");
  t.deepEqual(
    wiki.pages("SVC").map((page) => page.id),
    ["1", "2", "4"],
  );
  const pull = await git(env, ["pull", "--ff-only"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.false(existsSync(join(env.dir, "d", "pages", "3.md")));
  t.is(wiki.baseHits, 0);
});

test("deleting a page that changed on the server meanwhile is rejected (fetch first) and trashes nothing", async (t) => {
  const { wiki, env } = await givenWikiClone(t, 3);
  wiki.editPage("2");
  const before = wiki.requests.length;
  await gitOk(t, env, ["rm", "-q", "pages/2.md"], { cwd: "d" });
  await gitOk(t, env, ["commit", "-q", "-m", "Remove page 2"], { cwd: "d" });
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, FETCH_FIRST);
  t.deepEqual(wikiWrites(wiki, before), []);
  t.is(wiki.page("2")?.status, "current");
});

test("editing a page trashed on the server meanwhile is rejected (fetch first): the page is not restored without the edit", async (t) => {
  const { wiki, env } = await givenWikiClone(t, 3);
  wiki.trashPage("2");
  const before = wiki.requests.length;
  editWorkFile(env, "d", "pages/2.md", (text) => withBody(text, "<p>Edited after it was trashed</p>"));
  await commitAll(t, env, "d", "Edit page 2");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.regex(push.stderr, FETCH_FIRST);
  t.regex(push.stderr, /pages\/2\.md .*deleted on the server/);
  t.deepEqual(wikiWrites(wiki, before), [], "no PUT: it would restore the page with its old content");
  t.is(wiki.page("2")?.status, "trashed");
  t.not(
    readWorkFile(env, "d", "pages/2.md").indexOf("<p>Edited after it was trashed</p>"),
    -1,
    "the edit is still in the working tree",
  );
});

test("a wiki push killed while the answer to its POST is on its way creates the page once (known by its title)", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 2);
  const proxy = await givenFaultProxy(t, wiki.url);
  const env = givenWikiEnv(t, wiki, { SVC_ALLOWED_ORIGINS: `${wiki.url},${proxy.url}` });
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", wikiRemote(proxy.url, "SVC"), "d"]);
  writeWorkFile(env, "d", "pages/new-page.md", "---\ntitle: Made once\n---\n<p>Only once.</p>");
  await commitAll(t, env, "d", "A new page");
  const before = wiki.requests.length;
  proxy.setFault((request) => (request.method === "POST" ? { kind: "late", ms: 1500 } : undefined));
  const killed = await git(env, ["push"], { cwd: "d", killWhen: proxy.answered("POST") });
  t.is(killed.code, null, killed.stderr);
  proxy.setFault(undefined);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.regex(again.stderr, /pages\/new-page\.md was created as record \d+ .* it is not created again/);
  t.deepEqual(
    wikiWrites(wiki, before).map((write) => write.method),
    ["POST"],
  );
});
