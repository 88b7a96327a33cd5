/**
 * The fake wiki itself: cursor pagination through `_links.next` (and the `Link` header) over 1,234 pages,
 * space resolution by key and alias, Basic authentication failures, 403 for a denied space, the version rule
 * on PUT, trash and purge on DELETE, the 429 switch, and the hostile `_links.base` counter. Footer comments
 * and accounts: a page's listing and the site's, paginated the same way; POST 201 with `location`; GET; PUT
 * with the version rule (409 on a stale one, someone else's comment refused); DELETE for good; a comment's
 * versions; the test helpers writing as someone else; `POST /users-bulk` and v1 `GET /user/current`;
 * comments of a trashed page unreadable, of a purged page gone.
 */
import test from "ava";
import { callFake, type FakeCallOptions, type FakeResponse } from "./fake-http.js";
import { basicAuthorization, type FakeWiki, givenFakeWiki, type VendorErrorBody } from "./fake-wiki.js";

type WikiResponse = FakeResponse;

/** One request to the fake as its own account unless given; `path` is relative to its origin, like `_links.next`. */
function call(
  wiki: FakeWiki,
  method: string,
  path: string,
  options: FakeCallOptions = {},
): Promise<WikiResponse> {
  return callFake(
    wiki.url,
    method,
    path,
    { authorization: wiki.authorization, headers: { accept: "application/json" }, redirect: "follow" },
    options,
  );
}

interface Listing<T> {
  readonly results: T[];
  readonly _links: { readonly next?: string; readonly base: string };
}

interface PageJson {
  readonly id: string;
  readonly status: string;
  readonly title: string;
  readonly spaceId: string;
  readonly parentId: string | null;
  readonly createdAt: string;
  readonly version: { readonly number: number; readonly createdAt: string; readonly message: string };
  readonly body: { readonly storage?: { readonly representation: string; readonly value: string } };
  readonly _links: Record<string, string>;
}

interface SpaceJson {
  readonly id: string;
  readonly key: string;
  readonly name: string;
  readonly currentActiveAlias: string;
  readonly _links: { readonly webui: string };
}

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Follows `_links.next`, joined to the fake's own origin, to the end; returns every result and each response. */
async function walk<T>(
  wiki: FakeWiki,
  first: string,
  options: FakeCallOptions = {},
): Promise<{ results: T[]; responses: WikiResponse[] }> {
  const results: T[] = [];
  const responses: WikiResponse[] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    const response = await call(wiki, "GET", path, options);
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${response.text}`);
    responses.push(response);
    const body = response.json<Listing<T>>();
    results.push(...body.results);
    path = body._links.next;
  }
  return { results, responses };
}

function pagesPath(wiki: FakeWiki, query = "body-format=storage"): string {
  return `/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages?${query}`;
}

test("a walk along _links.next returns all 1,234 pages once each, 25 at a time, with Link headers", async (t) => {
  const wiki = await givenFakeWiki(t);
  const seeded = wiki.seedPages("SVC", 1234);
  const { results, responses } = await walk<PageJson>(wiki, pagesPath(wiki));

  t.is(responses.length, Math.ceil(1234 / 25));
  t.deepEqual(
    results.map((page) => page.id),
    seeded,
  );
  for (const [index, response] of responses.entries()) {
    const body = response.json<Listing<PageJson>>();
    t.is(body._links.base, wiki.linksBase);
    t.regex(response.headers["content-type"] ?? "", /^application\/json/);
    if (index < responses.length - 1) {
      t.is(body.results.length, 25);
      const next = body._links.next ?? "";
      t.true(
        next.startsWith(`/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages?body-format=storage&cursor=`),
        next,
      );
      t.is(response.headers.link, `<${next}>; rel="next", <${wiki.linksBase}>; rel="base"`);
    } else {
      t.is(body.results.length, 1234 % 25);
      t.is(body._links.next, undefined);
      t.is(response.headers.link, undefined);
    }
  }
  t.is(wiki.baseHits, 0);
});

test("pages carry the vendor's fields, RFC 3339 timestamps with milliseconds, and exact storage bodies", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 30);
  const { results } = await walk<PageJson>(wiki, pagesPath(wiki, "body-format=storage&limit=250"));
  t.is(results.length, 30);
  for (const page of results) {
    const state = wiki.page(page.id);
    t.truthy(state);
    t.is(page.body.storage?.representation, "storage");
    t.is(page.body.storage?.value, state?.body);
    t.is(page.spaceId, wiki.space("SVC").id);
    t.regex(page.createdAt, RFC3339_MS);
    t.regex(page.version.createdAt, RFC3339_MS);
    t.deepEqual(Object.keys(page._links).sort(), ["editui", "tinyui", "webui"]);
  }
  const bodies = results.map((page) => page.body.storage?.value ?? "");
  t.true(bodies.some((body) => body.includes("<ac:structured-macro") && body.includes("<![CDATA[")));
  t.true(bodies.some((body) => body.startsWith("---\n")));
  t.true(bodies.some((body) => body.includes("日本語") && body.includes("🧪")));
  t.true(bodies.some((body) => body.includes("\r\n")));
  t.true(bodies.includes(""));
  t.true(results.some((page) => page.parentId !== null));

  const withoutFormat = await call(wiki, "GET", pagesPath(wiki, "limit=1"));
  t.deepEqual(withoutFormat.json<Listing<PageJson>>().results[0]?.body, {});
});

test("limit defaults to 25, is clamped to 250, and must be at least 1", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 300);
  const beyond = { deliberate: "a limit outside 1..250, to see the fake clamp or refuse it" };
  const big = await call(wiki, "GET", pagesPath(wiki, "limit=1000"), beyond);
  t.is(big.json<Listing<PageJson>>().results.length, 250);
  t.true(big.json<Listing<PageJson>>()._links.next?.includes("limit=1000&cursor="));
  const walked = await walk<PageJson>(wiki, pagesPath(wiki, "limit=250"));
  t.is(walked.responses.length, 2);
  t.is(walked.results.length, 300);
  t.is((await call(wiki, "GET", pagesPath(wiki, "limit=0"), beyond)).status, 400);
  t.is((await call(wiki, "GET", pagesPath(wiki, "cursor=not-a-cursor"))).status, 400);
});

test("sort=-modified-date puts a page edited on the server first", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 40);
  const edited = wiki.editPage(ids[3] as string, { body: "<p>changed</p>" });
  const { results } = await walk<PageJson>(wiki, pagesPath(wiki, "sort=-modified-date&limit=7"));
  t.is(results.length, 40);
  t.is(results[0]?.id, edited.id);
  t.is(results[0]?.version.number, edited.version.number);
  const stamps = results.map((page) => page.version.createdAt);
  t.deepEqual(stamps, [...stamps].sort().reverse());
});

test("status filters repeated or comma-separated: the trash and the archive, a trashed page keeping its modified date", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 6);
  const edited = wiki.editPage(ids[0] as string);
  wiki.trashPage(ids[0] as string);
  wiki.trashPage(ids[2] as string);
  wiki.archivePage(ids[4] as string);
  const removed = (query: string, options: FakeCallOptions = {}) =>
    walk<PageJson>(wiki, pagesPath(wiki, query), options).then(({ results }) =>
      results.map((page) => `${page.id} ${page.status}`),
    );
  const modified = (id: string) => wiki.page(id)?.version.createdAt ?? "";
  const expected = [ids[0], ids[2], ids[4]]
    .map((id) => id as string)
    .sort((a, b) => modified(b).localeCompare(modified(a)))
    .map((id) => `${id} ${wiki.page(id)?.status}`);
  t.is(expected[0], `${ids[0]} trashed`, "edited last");
  t.deepEqual(await removed("status=trashed&status=deleted&status=archived&sort=-modified-date"), expected);
  // The description has the exploded form only; the fake also takes a comma list (ASSUMPTION in the fake).
  const commas = { deliberate: "status as a comma list, which the description does not have" };
  t.deepEqual(await removed("status=trashed,archived&sort=-modified-date", commas), expected);
  t.is(wiki.page(ids[0] as string)?.version.createdAt, edited.version.createdAt, "trashing makes no version");
  // The default is current and archived; svc's listing asks for current only.
  t.deepEqual((await removed("status=current")).length, 3);
  t.deepEqual((await removed("sort=id")).length, 4);
  t.is(
    (await call(wiki, "GET", pagesPath(wiki, "status=gone"), { deliberate: "no such status" })).status,
    400,
  );
});

test("a space resolves by its raw key and by its alias; an unknown key finds nothing", async (t) => {
  const wiki = await givenFakeWiki(t, {
    spaces: [
      { key: "DO", alias: "DOT", name: "dotfiles" },
      { key: "OTHER", name: "Other" },
    ],
  });
  const byKey = (await call(wiki, "GET", "/wiki/api/v2/spaces?keys=DO")).json<Listing<SpaceJson>>();
  const byAlias = (await call(wiki, "GET", "/wiki/api/v2/spaces?keys=DOT")).json<Listing<SpaceJson>>();
  t.is(byKey.results.length, 1);
  t.deepEqual(byAlias.results, byKey.results);
  t.like(byKey.results[0], {
    key: "DO",
    currentActiveAlias: "DOT",
    name: "dotfiles",
    id: wiki.space("DO").id,
  });
  t.is(byKey.results[0]?._links.webui, "/spaces/DOT");
  const both = (await call(wiki, "GET", "/wiki/api/v2/spaces?keys=DO,OTHER")).json<Listing<SpaceJson>>();
  t.deepEqual(
    both.results.map((space) => space.key),
    ["DO", "OTHER"],
  );
  const none = await call(wiki, "GET", "/wiki/api/v2/spaces?keys=NOPE");
  t.is(none.status, 200);
  t.deepEqual(none.json<Listing<SpaceJson>>().results, []);
});

test("authentication: missing, wrong token, token with another account's email, and Bearer all get 401", async (t) => {
  const wiki = await givenFakeWiki(t);
  const path = "/wiki/api/v2/spaces";

  const missing = await call(wiki, "GET", path, { authorization: null });
  t.is(missing.status, 401);
  t.is(missing.json<VendorErrorBody>().errors[0]?.status, 401);
  t.is(missing.headers["x-failure-category"], undefined);

  const wrongToken = await call(wiki, "GET", path, {
    authorization: basicAuthorization(wiki.credentials.email, "not-the-token"),
  });
  t.is(wrongToken.status, 401);
  t.is(wrongToken.headers["x-failure-category"], undefined);
  t.regex(wrongToken.text, /^Basic authentication with passwords is deprecated/);

  const mismatch = await call(wiki, "GET", path, {
    authorization: basicAuthorization("someone-else@example.test", wiki.credentials.token),
  });
  t.is(mismatch.status, 401);
  t.is(mismatch.headers["x-failure-category"], "FAILURE_CLIENT_AUTH_MISMATCH");

  const bearer = await call(wiki, "GET", path, { authorization: `Bearer ${wiki.credentials.token}` });
  t.is(bearer.status, 401);

  t.is((await call(wiki, "GET", path)).status, 200);
  t.deepEqual(
    wiki.requests.map((request) => request.status),
    [401, 401, 401, 401, 200],
  );
});

test("a denied space is listed but its pages answer 403 with the vendor's error body", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "SVC" }, { key: "SECRET", denied: true }] });
  const secretPage = wiki.createPage("SECRET", { title: "hidden", body: "<p>x</p>" });
  const spaces = (await call(wiki, "GET", "/wiki/api/v2/spaces?keys=SECRET")).json<Listing<SpaceJson>>();
  t.is(spaces.results.length, 1);
  const list = await call(wiki, "GET", `/wiki/api/v2/spaces/${wiki.space("SECRET").id}/pages`);
  t.is(list.status, 403);
  t.like(list.json<VendorErrorBody>().errors[0], { status: 403, code: "FORBIDDEN" });
  t.is((await call(wiki, "GET", `/wiki/api/v2/pages/${secretPage.id}`)).status, 403);

  const vendorLike = await givenFakeWiki(t, { spaces: [{ key: "SECRET", denied: true }], deniedStatus: 404 });
  t.is(
    (await call(vendorLike, "GET", `/wiki/api/v2/spaces/${vendorLike.space("SECRET").id}/pages`)).status,
    404,
  );
});

test("PUT needs version current + 1: the right number updates, a stale one gets 409 CONFLICT", async (t) => {
  const wiki = await givenFakeWiki(t);
  const [id] = wiki.seedPages("SVC", 1) as [string];
  const before = wiki.page(id);
  const put = (number: number, value: string) =>
    call(wiki, "PUT", `/wiki/api/v2/pages/${id}`, {
      json: {
        id,
        status: "current",
        title: before?.title,
        body: { representation: "storage", value },
        version: { number, message: "svc push" },
      },
    });

  const ok = await put((before?.version.number ?? 0) + 1, "<p>mine</p>");
  t.is(ok.status, 200);
  const updated = ok.json<PageJson>();
  t.is(updated.version.number, (before?.version.number ?? 0) + 1);
  t.is(updated.version.message, "svc push");
  t.is(updated.body.storage?.value, "<p>mine</p>");
  t.is(updated._links.base, wiki.linksBase);
  t.is(wiki.page(id)?.body, "<p>mine</p>");

  wiki.editPage(id, { body: "<p>theirs</p>" });
  const stale = await put(updated.version.number + 1, "<p>mine again</p>");
  t.is(stale.status, 409);
  const error = stale.json<VendorErrorBody>().errors[0];
  t.like(error, { status: 409, code: "CONFLICT", detail: null });
  t.regex(error?.title ?? "", /Current Version: \[\d+\]\. Provided version: \[\d+\]/);
  t.is(wiki.page(id)?.body, "<p>theirs</p>");

  const missingVersion = await call(wiki, "PUT", `/wiki/api/v2/pages/${id}`, {
    json: { id, status: "current", title: "t", body: { representation: "storage", value: "" } },
    deliberate: "no version, to see the 400",
  });
  t.is(missingVersion.status, 400);
});

test("POST creates a current page at version 1; a second page with the same title is refused", async (t) => {
  const wiki = await givenFakeWiki(t);
  const spaceId = wiki.space("SVC").id;
  const create = () =>
    call(wiki, "POST", "/wiki/api/v2/pages", {
      json: {
        spaceId,
        status: "current",
        title: "[svc-test] new page",
        body: { representation: "storage", value: "<p>hello</p>" },
      },
    });
  const created = await create();
  t.is(created.status, 200);
  const page = created.json<PageJson>();
  t.regex(page.id, /^\d+$/);
  t.like(page, { status: "current", spaceId, parentId: null, version: { number: 1 } });
  t.is(wiki.page(page.id)?.body, "<p>hello</p>");
  t.is((await create()).status, 400);
});

test("DELETE moves a page to the trash; purge removes a trashed page; PUT status current restores", async (t) => {
  const wiki = await givenFakeWiki(t);
  const [gone, kept, restored] = wiki.seedPages("SVC", 3) as [string, string, string];

  t.is((await call(wiki, "DELETE", `/wiki/api/v2/pages/${gone}`)).status, 204);
  t.is(wiki.page(gone)?.status, "trashed");
  const current = await walk<PageJson>(wiki, pagesPath(wiki));
  t.deepEqual(
    current.results.map((page) => page.id),
    [kept, restored],
  );
  t.is((await call(wiki, "GET", `/wiki/api/v2/pages/${gone}`)).status, 404);
  t.is((await call(wiki, "GET", `/wiki/api/v2/pages/${gone}?status=trashed`)).status, 200);
  const trashed = await walk<PageJson>(wiki, pagesPath(wiki, "status=trashed"));
  t.deepEqual(
    trashed.results.map((page) => page.id),
    [gone],
  );

  t.is((await call(wiki, "DELETE", `/wiki/api/v2/pages/${kept}?purge=true`)).status, 400);
  t.is((await call(wiki, "DELETE", `/wiki/api/v2/pages/${gone}?purge=true`)).status, 204);
  t.is(wiki.page(gone), undefined);
  t.is((await call(wiki, "DELETE", `/wiki/api/v2/pages/${gone}`)).status, 404);

  wiki.trashPage(restored);
  const before = wiki.page(restored);
  const restore = await call(wiki, "PUT", `/wiki/api/v2/pages/${restored}`, {
    json: {
      id: restored,
      status: "current",
      title: "ignored on restore",
      body: { representation: "storage", value: "<p>ignored</p>" },
      version: { number: (before?.version.number ?? 0) + 1 },
    },
  });
  t.is(restore.status, 200);
  t.like(wiki.page(restored), { status: "current", title: before?.title, body: before?.body });
});

test("the 429 switch answers the next requests with Retry-After, then normal answers carry the quota", async (t) => {
  const wiki = await givenFakeWiki(t, { rateLimitQuota: 500 });
  wiki.setRateLimit(2, 3);
  for (let i = 0; i < 2; i++) {
    const limited = await call(wiki, "GET", "/wiki/api/v2/spaces");
    t.is(limited.status, 429);
    t.is(limited.headers["retry-after"], "3");
    t.is(limited.headers["x-ratelimit-remaining"], "0");
    t.regex(limited.headers["x-ratelimit-reset"] ?? "", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z$/);
    t.is(limited.json<VendorErrorBody>().errors[0]?.status, 429);
  }
  const ok = await call(wiki, "GET", "/wiki/api/v2/spaces");
  t.is(ok.status, 200);
  t.is(ok.headers["x-ratelimit-limit"], "500");
  t.is(ok.headers["x-ratelimit-remaining"], "499");
  t.is(ok.headers["retry-after"], undefined);
});

test("the fake's own quota runs out within a window and says when it resets", async (t) => {
  let now = Date.UTC(2025, 5, 1, 12, 0, 0, 0);
  const wiki = await givenFakeWiki(t, { rateLimitQuota: 2, rateLimitWindowMs: 10_000, now: () => now });
  t.is((await call(wiki, "GET", "/wiki/api/v2/spaces")).headers["x-ratelimit-remaining"], "1");
  const last = await call(wiki, "GET", "/wiki/api/v2/spaces");
  t.is(last.status, 200);
  t.is(last.headers["x-ratelimit-remaining"], "0");
  now += 4_000;
  const refused = await call(wiki, "GET", "/wiki/api/v2/spaces");
  t.is(refused.status, 429);
  t.is(refused.headers["retry-after"], "6");
  now += 6_000;
  t.is((await call(wiki, "GET", "/wiki/api/v2/spaces")).status, 200);
});

test("the hostile _links.base server counts every hit, and the request log keeps what was sent", async (t) => {
  const wiki = await givenFakeWiki(t);
  t.true(wiki.linksBase.startsWith("http://127.0.0.1:"));
  t.not(new URL(wiki.linksBase).origin, wiki.origin);
  const spaces = await call(wiki, "GET", "/wiki/api/v2/spaces?keys=SVC");
  t.is(spaces.json<Listing<SpaceJson>>()._links.base, wiki.linksBase);
  t.is(wiki.baseHits, 0);
  // A client that trusted _links.base would do this; the counter must notice.
  await fetch(`${wiki.linksBase}/api/v2/spaces`, { signal: AbortSignal.timeout(10_000) });
  t.is(wiki.baseHits, 1);
  t.is(wiki.baseRequests[0]?.path, "/wiki/api/v2/spaces");

  const [logged] = wiki.requests;
  t.like(logged, { method: "GET", path: "/wiki/api/v2/spaces?keys=SVC", status: 200 });
  t.is(logged?.headers.authorization, wiki.authorization);

  const self = await givenFakeWiki(t, { linksBase: "self" });
  t.is(self.linksBase, `${self.url}/wiki`);
});

interface CommentJson {
  readonly id: string;
  readonly status: string;
  readonly title: string;
  readonly pageId: string;
  readonly version: { readonly number: number; readonly createdAt: string; readonly authorId: string };
  readonly body: { readonly storage?: { readonly value: string } };
  readonly _links: Record<string, string>;
}

/** The comment ids of a walk along `_links.next`, and each response. */
async function walkComments(
  wiki: FakeWiki,
  first: string,
): Promise<{ ids: string[]; responses: WikiResponse[] }> {
  const { results, responses } = await walk<CommentJson>(wiki, first);
  return { ids: results.map((comment) => comment.id), responses };
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
  const page = await walkComments(
    wiki,
    `/wiki/api/v2/pages/${a}/footer-comments?body-format=storage&limit=7`,
  );
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
  const site = await walkComments(
    wiki,
    "/wiki/api/v2/footer-comments?body-format=storage&sort=created-date&limit=10",
  );
  t.deepEqual(site.ids, [...onA, ...onB]);
  wiki.editComment(onA[3] as string);
  const newest = await walkComments(wiki, "/wiki/api/v2/footer-comments?sort=-modified-date&limit=250");
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
  const site = await walkComments(wiki, "/wiki/api/v2/footer-comments");
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
