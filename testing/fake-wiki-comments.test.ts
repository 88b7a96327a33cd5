/**
 * The fake wiki's footer comments and accounts, over HTTP (every exchange judged against Confluence's v2
 * description at close): a page's listing and the site's, paginated through `_links.next` and `Link`; POST
 * 201 with `location`; GET; PUT with the version rule (409 on a stale one, someone else's comment refused);
 * DELETE for good; a comment's versions; the test helpers writing as someone else; `POST /users-bulk` and
 * v1 `GET /user/current`; comments of a trashed page unreadable, of a purged page gone.
 */
import test from "ava";
import { callFake, type FakeCallOptions, type FakeResponse } from "./fake-http.js";
import { type FakeWiki, givenFakeWiki } from "./fake-wiki.js";

function call(
  wiki: FakeWiki,
  method: string,
  path: string,
  options: FakeCallOptions = {},
): Promise<FakeResponse> {
  return callFake(
    wiki.url,
    method,
    path,
    { authorization: wiki.authorization, headers: { accept: "application/json" }, redirect: "follow" },
    options,
  );
}

interface CommentJson {
  readonly id: string;
  readonly status: string;
  readonly title: string;
  readonly pageId: string;
  readonly version: { readonly number: number; readonly createdAt: string; readonly authorId: string };
  readonly body: { readonly storage?: { readonly value: string } };
  readonly _links: Record<string, string>;
}

interface Listing<T> {
  readonly results: T[];
  readonly _links: { readonly next?: string; readonly base: string };
}

async function walk(wiki: FakeWiki, first: string): Promise<{ ids: string[]; responses: FakeResponse[] }> {
  const ids: string[] = [];
  const responses: FakeResponse[] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    const response = await call(wiki, "GET", path);
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${response.text}`);
    responses.push(response);
    const body = response.json<Listing<CommentJson>>();
    ids.push(...body.results.map((comment) => comment.id));
    path = body._links.next;
  }
  return { ids, responses };
}

const json = (body: unknown, deliberate?: string): FakeCallOptions => ({
  json: body,
  ...(deliberate === undefined ? {} : { deliberate }),
});

const storage = (value: string) => ({ representation: "storage", value });

test("a page's comments and the site's walk along _links.next and Link, in the order asked", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "SVC" }, { key: "OTHER" }] });
  const a = wiki.createPage("SVC", { title: "A", body: "" }).id;
  const b = wiki.createPage("OTHER", { title: "B", body: "" }).id;
  const onA = wiki.seedComments([a], 30);
  const onB = wiki.seedComments([b], 4);
  const page = await walk(wiki, `/wiki/api/v2/pages/${a}/footer-comments?body-format=storage&limit=7`);
  t.deepEqual(page.ids, onA);
  t.is(page.responses.length, 5);
  const firstBody = page.responses[0]?.json<Listing<CommentJson>>();
  const next = firstBody?._links.next ?? "";
  t.true(
    next.startsWith(`/wiki/api/v2/pages/${a}/footer-comments?body-format=storage&limit=7&cursor=`),
    next,
  );
  t.is(page.responses[0]?.headers.link, `<${next}>; rel="next", <${wiki.linksBase}>; rel="base"`);
  t.is(page.responses.at(-1)?.headers.link, undefined);
  const comment = firstBody?.results[0];
  const server = wiki.comment(onA[0] as string);
  t.like(comment, {
    id: server?.id,
    status: "current",
    title: "Re: A",
    pageId: a,
    version: { number: 1, createdAt: server?.createdAt, authorId: wiki.someoneElse.accountId },
    body: { storage: { value: server?.body } },
  });
  const site = await walk(
    wiki,
    "/wiki/api/v2/footer-comments?body-format=storage&sort=created-date&limit=10",
  );
  t.deepEqual(site.ids, [...onA, ...onB]);
  wiki.editComment(onA[3] as string);
  const newest = await walk(wiki, "/wiki/api/v2/footer-comments?sort=-modified-date&limit=250");
  t.is(newest.ids[0], onA[3]);
  t.deepEqual(newest.responses[0]?.json<Listing<CommentJson>>().results[0]?.body, {});
  t.is(wiki.baseHits, 0);
});

test("POST makes a comment (201, location); PUT takes exactly the next version; DELETE is for good", async (t) => {
  const wiki = await givenFakeWiki(t);
  const a = wiki.createPage("SVC", { title: "A", body: "" }).id;
  const created = await call(
    wiki,
    "POST",
    "/wiki/api/v2/footer-comments",
    json({ pageId: a, body: storage("<p>x</p>") }),
  );
  t.is(created.status, 201);
  const comment = created.json<CommentJson>();
  t.is(created.headers.location, `/wiki/api/v2/footer-comments/${comment.id}`);
  t.is(comment._links.base, wiki.linksBase);
  t.deepEqual(wiki.comment(comment.id)?.authorId, wiki.self.accountId);
  const path = `/wiki/api/v2/footer-comments/${comment.id}`;
  const stale = await call(wiki, "PUT", path, json({ version: { number: 1 }, body: storage("<p>y</p>") }));
  t.is(stale.status, 409);
  t.regex(stale.text, /Current Version: \[1\]/);
  const nested = { storage: storage("<p>y</p>") };
  const put = await call(wiki, "PUT", path, json({ version: { number: 2, message: "m" }, body: nested }));
  t.is(put.status, 200);
  t.like(put.json<CommentJson>(), { version: { number: 2, authorId: wiki.self.accountId } });
  t.is(wiki.comment(comment.id)?.body, "<p>y</p>");
  const got = await call(wiki, "GET", `${path}?body-format=storage`);
  t.is(got.json<CommentJson>().body.storage?.value, "<p>y</p>");
  const versions = await call(wiki, "GET", `${path}/versions?sort=modified-date&limit=1`);
  t.deepEqual(
    versions.json<Listing<{ number: number }>>().results.map((v) => v.number),
    [1],
  );
  t.is((await call(wiki, "DELETE", path)).status, 204);
  t.is(wiki.comment(comment.id), undefined);
  t.is((await call(wiki, "GET", path)).status, 404);
  t.is((await call(wiki, "DELETE", path)).status, 404);
});

test("writes are refused: an empty body, a missing or trashed page, someone else's comment", async (t) => {
  const wiki = await givenFakeWiki(t);
  const a = wiki.createPage("SVC", { title: "A", body: "" }).id;
  const post = (body: unknown) => call(wiki, "POST", "/wiki/api/v2/footer-comments", json(body));
  t.is((await post({ pageId: a, body: storage("  ") })).status, 400);
  t.is((await post({ pageId: a })).status, 400);
  t.is((await post({ pageId: "999999", body: storage("<p>x</p>") })).status, 404);
  const theirs = wiki.addComment(a, "<p>theirs</p>");
  const put = await call(
    wiki,
    "PUT",
    `/wiki/api/v2/footer-comments/${theirs.id}`,
    json({ version: { number: 2 }, body: storage("<p>mine now</p>") }),
  );
  t.is(put.status, 404);
  t.is(wiki.comment(theirs.id)?.body, "<p>theirs</p>");
  wiki.trashPage(a);
  t.is((await call(wiki, "GET", `/wiki/api/v2/footer-comments/${theirs.id}`)).status, 404);
  t.is((await call(wiki, "GET", `/wiki/api/v2/pages/${a}/footer-comments`)).status, 404);
  const site = await walk(wiki, "/wiki/api/v2/footer-comments");
  t.deepEqual(site.ids, []);
  t.is((await call(wiki, "DELETE", `/wiki/api/v2/pages/${a}?purge=true`)).status, 204);
  t.deepEqual(wiki.comments(a), []);
});

test("the helpers write as someone else: an edit is a new version by the comment's author", async (t) => {
  let now = Date.UTC(2025, 5, 1, 12, 0, 0, 0);
  const wiki = await givenFakeWiki(t, { now: () => now, firstCommentId: 500 });
  const a = wiki.createPage("SVC", { title: "A", body: "" }).id;
  const written = wiki.addComment(a, "<p>one</p>");
  t.is(written.id, "500");
  t.is(written.authorId, wiki.someoneElse.accountId);
  now += 1000;
  const edited = wiki.editComment(written.id, "<p>two</p>");
  t.is(edited.version.number, 2);
  t.is(edited.createdAt, written.createdAt);
  t.true(edited.version.createdAt > written.createdAt);
  const mine = wiki.addComment(a, "<p>mine</p>", { authorId: wiki.self.accountId });
  t.is(mine.authorId, wiki.self.accountId);
  wiki.deleteComment(written.id);
  t.deepEqual(
    wiki.comments(a).map((c) => c.id),
    [mine.id],
  );
});

test("users-bulk names the accounts it knows; v1 user/current is the configured account", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.addAccount({ accountId: "557058:third", displayName: "Third Person" });
  const users = await call(
    wiki,
    "POST",
    "/wiki/api/v2/users-bulk",
    json({ accountIds: [wiki.someoneElse.accountId, "557058:third", "557058:nobody"] }),
  );
  t.is(users.status, 200);
  t.deepEqual(
    users
      .json<Listing<{ accountId: string; displayName: string }>>()
      .results.map((u) => [u.accountId, u.displayName]),
    [
      [wiki.someoneElse.accountId, wiki.someoneElse.displayName],
      ["557058:third", "Third Person"],
    ],
  );
  t.is(
    (
      await call(
        wiki,
        "POST",
        "/wiki/api/v2/users-bulk",
        json({ accountIds: [] }, "no account ids, below the description's minItems"),
      )
    ).status,
    400,
  );
  const me = await call(wiki, "GET", "/wiki/rest/api/user/current");
  t.like(me.json<{ accountId: string; displayName: string }>(), wiki.self);
});
