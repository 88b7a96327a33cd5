/**
 * The wiki's footer-comment client against the fake wiki (every exchange judged against Confluence's v2
 * description at the fake's close): the site-wide listing across result pages, kept to the pages asked
 * for, with what it costs; the delta; one page's listing; the origin of an edited comment; authors' names
 * asked once per account; create, update (409 → conflict), remove (compare-before-write), 404 → gone;
 * whoAmI asked once.
 */
import test from "ava";
import { SvcError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import { type FakeWiki, type FakeWikiRequest, givenFakeWiki } from "../../testing/fake-wiki.js";
import { wikiVars } from "../../testing/wiki.js";
import { WikiBackend } from "./backend.js";
import { parseFooterComment, type WikiComments } from "./comments.js";
import { wikiConfig } from "./config.js";

function commentsFor(wiki: FakeWiki): WikiComments {
  const config = wikiConfig(wikiVars(wiki));
  const http = new HttpClient({ agent: "wiki-comments-test", allowedOrigins: config.allowedOrigins });
  return new WikiBackend(config, "SVC", http).comments();
}

/** The requests sent since `from` (an index into `wiki.requests`), as `METHOD path-without-query`. */
function sentSince(wiki: FakeWiki, from: number): string[] {
  return wiki.requests.slice(from).map((r: FakeWikiRequest) => `${r.method} ${r.path.split("?")[0]}`);
}

function page(wiki: FakeWiki, title: string, space = "SVC"): string {
  return wiki.createPage(space, { title, body: `<p>${title}</p>` }).id;
}

test("listAll walks the site-wide listing 250 at a time and keeps the pages asked for", async (t) => {
  const wiki = await givenFakeWiki(t, {
    spaces: [{ key: "SVC" }, { key: "OTHER" }],
  });
  const a = page(wiki, "A");
  const b = page(wiki, "B");
  const elsewhere = page(wiki, "Elsewhere", "OTHER");
  const notAsked = page(wiki, "Not asked");
  wiki.seedComments([a], 140);
  wiki.seedComments([b], 120, { authorId: wiki.self.accountId });
  wiki.seedComments([elsewhere, notAsked], 5);
  const comments = commentsFor(wiki);
  const from = wiki.requests.length;
  const listed = await comments.listAll([a, b]);
  t.is(listed.length, 260);
  t.deepEqual(
    listed.map((c) => c.id),
    [...wiki.comments(a), ...wiki.comments(b)].map((c) => c.id),
  );
  // 270 comments on the site: two result pages; the two authors' names in one request.
  t.deepEqual(sentSince(wiki, from), [
    "GET /wiki/api/v2/footer-comments",
    "GET /wiki/api/v2/footer-comments",
    "POST /wiki/api/v2/users-bulk",
  ]);
  t.is(wiki.baseHits, 0);
  const first = listed[0];
  const server = wiki.comments(a)[0];
  if (!first || !server) return t.fail();
  t.deepEqual(first, {
    id: server.id,
    parentKey: a,
    author: `Jane Doe (${wiki.someoneElse.accountId})`,
    authorId: wiki.someoneElse.accountId,
    body: server.body,
    createdAt: server.createdAt,
    updatedAt: server.version.createdAt,
    version: 1,
  });
  t.is(listed.at(-1)?.author, `svc fake (${wiki.self.accountId})`);
  // Names are kept per client: a second listing asks for none.
  const again = wiki.requests.length;
  await comments.listAll([a]);
  t.false(sentSince(wiki, again).includes("POST /wiki/api/v2/users-bulk"));
});

test("an edited comment costs one versions request for its origin, none when the caller knows it", async (t) => {
  let now = Date.UTC(2025, 5, 1, 12, 0, 0, 0);
  const wiki = await givenFakeWiki(t, { now: () => now });
  const a = page(wiki, "A");
  const written = wiki.addComment(a, "<p>first</p>");
  now += 60_000;
  const edited = wiki.editComment(written.id, "<p>second</p>");
  const comments = commentsFor(wiki);
  const from = wiki.requests.length;
  const [listed] = await comments.listAll([a]);
  t.like(listed, {
    body: "<p>second</p>",
    version: 2,
    createdAt: written.createdAt,
    updatedAt: edited.version.createdAt,
    authorId: wiki.someoneElse.accountId,
  });
  t.not(listed?.createdAt, listed?.updatedAt);
  t.true(sentSince(wiki, from).includes(`GET /wiki/api/v2/footer-comments/${written.id}/versions`));
  const known = wiki.requests.length;
  const origin = { createdAt: written.createdAt, authorId: written.authorId };
  const [again] = await comments.listAll([a], (id) => (id === written.id ? origin : undefined));
  t.deepEqual(again, listed);
  t.deepEqual(sentSince(wiki, known), ["GET /wiki/api/v2/footer-comments"]);
});

test("listChangedSince reads newest first and stops at the first comment older than since", async (t) => {
  let now = Date.UTC(2025, 5, 1, 12, 0, 0, 0);
  const wiki = await givenFakeWiki(t, { now: () => now });
  const a = page(wiki, "A");
  const old = wiki.seedComments([a], 300);
  now += 3_600_000;
  const since = new Date(now).toISOString();
  const fresh = wiki.addComment(a, "<p>new</p>");
  now += 1_000;
  const oldId = old[10] as string;
  wiki.editComment(oldId, "<p>edited</p>");
  const comments = commentsFor(wiki);
  const from = wiki.requests.length;
  const changed = await comments.listChangedSince(since, [a]);
  t.deepEqual(
    changed.map((c) => c.id),
    [oldId, fresh.id],
  );
  // One result page of the listing (not the two the 302 comments fill), the edited one's origin, the name.
  t.deepEqual(sentSince(wiki, from), [
    "GET /wiki/api/v2/footer-comments",
    `GET /wiki/api/v2/footer-comments/${oldId}/versions`,
    "POST /wiki/api/v2/users-bulk",
  ]);
});

test("listPage lists one page's comments; a page not found is a 404 failure", async (t) => {
  const wiki = await givenFakeWiki(t);
  const a = page(wiki, "A");
  const b = page(wiki, "B");
  wiki.seedComments([a, b], 3);
  const comments = commentsFor(wiki);
  const listed = await comments.listPage(b);
  t.deepEqual(
    listed.map((c) => [c.id, c.parentKey]),
    wiki.comments(b).map((c) => [c.id, b]),
  );
  const error = await t.throwsAsync(comments.listPage("999999"), { instanceOf: SvcError });
  t.is(error?.data?.status, 404);
});

test("create posts a storage body on the page and returns the comment as the server keeps it", async (t) => {
  const wiki = await givenFakeWiki(t);
  const a = page(wiki, "A");
  const comments = commentsFor(wiki);
  const body = '<p>Deploy &amp; roll back: <ac:link><ri:page ri:content-title="Ops" /></ac:link></p>\n\n';
  const from = wiki.requests.length;
  const created = await comments.create(a, body);
  const server = wiki.comment(created.id);
  if (!server) return t.fail("not on the server");
  t.is(server.body, body);
  t.is(server.authorId, wiki.self.accountId);
  t.deepEqual(created, {
    id: server.id,
    parentKey: a,
    author: `svc fake (${wiki.self.accountId})`,
    authorId: wiki.self.accountId,
    body,
    createdAt: server.createdAt,
    updatedAt: server.createdAt,
    version: 1,
  });
  const post = wiki.requests[from];
  t.deepEqual(JSON.parse(post?.body ?? ""), { pageId: a, body: { representation: "storage", value: body } });
  t.is(post?.status, 201);
});

test("update sends the base version + 1; a stale base is a conflict and changes nothing", async (t) => {
  const wiki = await givenFakeWiki(t);
  const a = page(wiki, "A");
  const comments = commentsFor(wiki);
  const created = await comments.create(a, "<p>one</p>");
  const updated = await comments.update(created.id, "<p>two</p>", 1);
  if (updated.kind !== "ok") return t.fail(updated.kind);
  t.is(updated.comment.version, 2);
  t.is(updated.comment.body, "<p>two</p>");
  t.is(wiki.comment(created.id)?.body, "<p>two</p>");
  // The caller still holds version 1: the server is at 2.
  const stale = await comments.update(created.id, "<p>three</p>", 1);
  t.is(stale.kind, "conflict");
  t.is(wiki.requests.at(-1)?.status, 409);
  t.is(wiki.comment(created.id)?.body, "<p>two</p>");
  t.is(wiki.comment(created.id)?.version.number, 2);
});

test("remove deletes only at the base version; a deleted comment is gone for update, remove and get", async (t) => {
  const wiki = await givenFakeWiki(t);
  const a = page(wiki, "A");
  const comments = commentsFor(wiki);
  const created = await comments.create(a, "<p>one</p>");
  wiki.editComment(created.id, "<p>edited in the browser</p>");
  const from = wiki.requests.length;
  t.deepEqual(await comments.remove(created.id, 1), { kind: "conflict", current: "version 2" });
  t.deepEqual(sentSince(wiki, from), [`GET /wiki/api/v2/footer-comments/${created.id}`]);
  t.truthy(wiki.comment(created.id));
  t.deepEqual(await comments.remove(created.id, 2), { kind: "ok" });
  t.is(wiki.comment(created.id), undefined);
  t.deepEqual(await comments.remove(created.id, 2), { kind: "gone" });
  t.deepEqual(await comments.update(created.id, "<p>x</p>", 2), { kind: "gone" });
  t.is(await comments.get(created.id), undefined);
  t.is(wiki.requests.at(-1)?.status, 404);
});

test("whoAmI asks v1 user/current once and names the account", async (t) => {
  const wiki = await givenFakeWiki(t);
  const comments = commentsFor(wiki);
  const from = wiki.requests.length;
  t.deepEqual(await comments.whoAmI(), wiki.self);
  t.deepEqual(await comments.whoAmI(), wiki.self);
  t.deepEqual(sentSince(wiki, from), ["GET /wiki/rest/api/user/current"]);
});

test("an account users-bulk does not know is written without a name", async (t) => {
  const wiki = await givenFakeWiki(t);
  const a = page(wiki, "A");
  wiki.addComment(a, "<p>by a ghost</p>", { authorId: "557058:deleted" });
  const [listed] = await commentsFor(wiki).listAll([a]);
  t.is(listed?.author, "Unknown user (557058:deleted)");
});

test("parseFooterComment names what is malformed", (t) => {
  const good = {
    id: "3200001",
    pageId: "7",
    version: { number: 1, createdAt: "2025-01-06T09:00:00.000Z", authorId: "712020:abc" },
    body: { storage: { representation: "storage", value: "<p>x</p>" } },
  };
  t.like(parseFooterComment(good), { id: "3200001", pageId: "7", body: "<p>x</p>", version: 1 });
  t.like(parseFooterComment({ ...good, pageId: undefined }), { id: "3200001", pageId: undefined });
  t.is(parseFooterComment({ ...good, pageId: "p7" }), "comment 3200001: pageId is not an id");
  t.is(parseFooterComment({ ...good, id: "x" }), 'bad comment id "x"');
  t.is(
    parseFooterComment({ ...good, body: {} }),
    "comment 3200001: body.storage.value is missing (was body-format=storage sent?)",
  );
  t.is(
    parseFooterComment({ ...good, version: { ...good.version, authorId: "<script>" } }),
    "comment 3200001: version.authorId is not an account id",
  );
  t.is(
    parseFooterComment({ ...good, version: { number: 1 } }),
    "comment 3200001: version.createdAt is not a timestamp",
  );
});
