/**
 * The wiki backend in-process against the fake wiki: page validation, pagination from the tenant base
 * (never `_links.base`, never an absolute `_links.next`), space resolution by key and alias, the 500-page
 * list, the shared rate-limit gate (`Retry-After`, `x-ratelimit-remaining: 0`), 401/403 messages without
 * credentials, and the writes (PUT with base + 1, 409 → conflict, trashed → gone, POST, DELETE).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import test, { type ExecutionContext } from "ava";
import { SvcError, UserFacingError } from "../../core/errors.js";
import {
  HttpClient,
  type HttpClientOptions,
  type HttpRequest,
  type HttpResponse,
  openGateAt,
} from "../../core/http.js";
import { type FakeWiki, givenFakeWiki } from "../../testing/fake-wiki.js";
import { wikiVars } from "../../testing/wiki.js";
import { WikiBackend, wikiPageToRecord } from "./backend.js";
import { wikiConfig } from "./config.js";

/** Timer and clock slack for lower bounds on waits. */
const SLACK_MS = 100;

function backendFor(
  wiki: FakeWiki,
  project = "SVC",
  overrides: Readonly<Record<string, string>> = {},
  http?: HttpClient,
): WikiBackend {
  const config = wikiConfig({ ...wikiVars(wiki), ...overrides });
  return new WikiBackend(
    config,
    project,
    http ?? new HttpClient({ agent: "wiki-backend-test", allowedOrigins: config.allowedOrigins }),
  );
}

/** An HttpClient that runs `before(n)` ahead of its n-th request (1-based). */
class SteppedClient extends HttpClient {
  private count = 0;

  constructor(
    options: HttpClientOptions,
    private readonly before: (n: number) => void,
  ) {
    super(options);
  }

  override request(request: HttpRequest): Promise<HttpResponse> {
    this.count++;
    this.before(this.count);
    return super.request(request);
  }
}

/** A fake page as the v2 API sends it. */
function pageJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "42",
    status: "current",
    title: "A page",
    spaceId: "98305",
    parentId: "7",
    createdAt: "2025-01-06T09:00:00.000Z",
    version: { number: 3, createdAt: "2025-01-07T10:00:00.000Z" },
    body: { storage: { representation: "storage", value: "<p>x</p>\r\n" } },
    ...overrides,
  };
}

test("wikiPageToRecord keeps the body byte for byte and the frontmatter of DESIGN.md §2", (t) => {
  const record = wikiPageToRecord(pageJson());
  if (typeof record === "string") return t.fail(record);
  t.is(record.key, "42");
  t.is(record.path, "pages/42.md");
  t.is(record.version, 3);
  t.is(record.updatedAt, "2025-01-07T10:00:00.000Z");
  t.is(record.content.body, "<p>x</p>\r\n");
  t.deepEqual(Object.keys(record.content.fields), [
    "id",
    "title",
    "version",
    "spaceId",
    "parentId",
    "createdAt",
    "updatedAt",
    "labels",
  ]);
  t.deepEqual(record.content.fields, {
    id: "42",
    title: "A page",
    version: 3,
    spaceId: "98305",
    parentId: "7",
    createdAt: "2025-01-06T09:00:00.000Z",
    updatedAt: "2025-01-07T10:00:00.000Z",
    labels: [],
  });
  // Numeric ids are accepted too; a root page has parentId null; without version.createdAt the page's own.
  const root = wikiPageToRecord(pageJson({ id: 42, spaceId: 98305, parentId: null, version: { number: 1 } }));
  if (typeof root === "string") return t.fail(root);
  t.is(root.content.fields.parentId, null);
  t.is(root.key, "42");
  t.is(root.updatedAt, "2025-01-06T09:00:00.000Z");
});

test("wikiPageToRecord names what is wrong with a malformed page", (t) => {
  const cases: [unknown, RegExp][] = [
    [null, /must be an object/],
    [[], /must be an object/],
    [pageJson({ id: "4x" }), /bad page id/],
    [pageJson({ id: -1 }), /bad page id/],
    [pageJson({ title: 5 }), /title is not a string/],
    [pageJson({ spaceId: undefined }), /spaceId is not an id/],
    [pageJson({ parentId: "up" }), /parentId is not an id/],
    [pageJson({ createdAt: "yesterday" }), /createdAt is not a timestamp/],
    [pageJson({ version: { number: "3" } }), /version\.number is missing/],
    [pageJson({ version: undefined }), /version\.number is missing/],
    [pageJson({ body: {} }), /body\.storage\.value is missing \(was body-format=storage sent\?\)/],
  ];
  for (const [value, reason] of cases) {
    const result = wikiPageToRecord(value);
    t.is(typeof result, "string", JSON.stringify(value));
    t.regex(String(result), reason);
  }
});

test("listAll follows _links.next from the tenant base through 600 pages with Basic auth; _links.base is never used", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 600);
  const listing = await backendFor(wiki).listAll();

  t.true(listing.complete);
  t.deepEqual(
    listing.records.map((record) => record.key),
    ids,
  );
  const paths = wiki.requests.map((request) => request.path);
  for (const record of listing.records) {
    t.is(wiki.page(record.key)?.body, record.content.body);
  }
  t.is(paths[0], "/wiki/api/v2/spaces?keys=SVC");
  const pageRequests = paths.slice(1);
  t.is(pageRequests.length, 3, "250 + 250 + 100");
  t.true(pageRequests.every((path) => path.startsWith(`/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages?`)));
  t.true(pageRequests.every((path) => /[?&]body-format=storage(&|$)/.test(path)));
  t.false(pageRequests[0]?.includes("cursor="));
  t.true(pageRequests.slice(1).every((path) => path.includes("cursor=")));
  t.true(wiki.requests.every((request) => request.headers.authorization === wiki.authorization));
  t.true(wiki.requests.every((request) => request.method === "GET"));
  t.is(wiki.baseHits, 0);
});

test("listSome stops at the limit and says whether there are more", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "BIG" }, { key: "EXACT" }] });
  wiki.seedPages("BIG", 1234);
  wiki.seedPages("EXACT", 500);
  const big = await backendFor(wiki, "BIG").listSome(500);
  t.is(big.records.length, 500);
  t.true(big.more);
  const exact = await backendFor(wiki, "EXACT").listSome(500);
  t.is(exact.records.length, 500);
  t.false(exact.more);
  t.is(wiki.baseHits, 0);
});

test("the space is resolved by key or by its alias; an unknown one says how to list them", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "DOCS", alias: "team-docs" }, { key: "SVC" }] });
  const id = wiki.space("DOCS").id;
  t.is(await backendFor(wiki, "DOCS").resolveSpace(), id);
  t.is(await backendFor(wiki, "team-docs").resolveSpace(), id);
  const error = await t.throwsAsync(backendFor(wiki, "NOPE").resolveSpace(), { instanceOf: UserFacingError });
  t.regex(error?.message ?? "", /no wiki space with key or alias "NOPE".*svc spaces --backend wiki/);
});

test("spaces() lists key, name and browser URL of every space", async (t) => {
  const wiki = await givenFakeWiki(t, {
    spaces: [
      { key: "SVC", name: "svc" },
      { key: "DOCS", alias: "team-docs" },
    ],
  });
  t.deepEqual(await backendFor(wiki, "").spaces(), [
    { id: wiki.space("SVC").id, key: "SVC", name: "svc", url: `${wiki.url}/wiki/spaces/SVC` },
    { id: wiki.space("DOCS").id, key: "DOCS", name: "DOCS space", url: `${wiki.url}/wiki/spaces/team-docs` },
  ]);
});

/** A server that answers every page listing with `next` as `_links.next`; counts requests to itself. */
async function givenNextServer(
  t: ExecutionContext,
  next: (origin: string) => string,
): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    const url = req.url ?? "";
    const body = url.startsWith("/wiki/api/v2/spaces?keys=")
      ? { results: [{ id: "1", key: "SVC", name: "SVC" }], _links: {} }
      : { results: [], _links: { next: next(origin) } };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: origin, hits };
}

test("an absolute _links.next is refused, and nothing is sent to the host it names", async (t) => {
  const wiki = await givenFakeWiki(t);
  const hostile = wiki.linksBase;
  const server = await givenNextServer(t, () => `${hostile}/api/v2/spaces/1/pages?cursor=x`);
  const config = wikiConfig({
    ...wikiVars(wiki),
    SVC_WIKI_BASE_URL: server.url,
    SVC_ALLOWED_ORIGINS: "http://127.0.0.1:*",
  });
  const backend = new WikiBackend(
    config,
    "SVC",
    new HttpClient({ agent: "t", allowedOrigins: config.allowedOrigins }),
  );
  const error = await t.throwsAsync(backend.listAll(), { instanceOf: SvcError });
  t.regex(error?.message ?? "", /_links\.next is not a path on this site/);
  t.is(wiki.baseHits, 0);
  t.is(server.hits.length, 2);
});

test("a protocol-relative _links.next stays on the tenant origin", async (t) => {
  let served = 0;
  const server = await givenNextServer(t, () => (served++ === 0 ? "//elsewhere.example/x?cursor=1" : ""));
  const wiki = await givenFakeWiki(t);
  const config = wikiConfig({
    ...wikiVars(wiki),
    SVC_WIKI_BASE_URL: server.url,
    SVC_ALLOWED_ORIGINS: server.url,
  });
  const backend = new WikiBackend(
    config,
    "SVC",
    new HttpClient({ agent: "t", allowedOrigins: config.allowedOrigins }),
  );
  const listing = await backend.listAll();
  t.deepEqual(listing.records, []);
  t.deepEqual(
    server.hits.slice(2),
    ["//elsewhere.example/x?cursor=1"],
    "asked of the tenant base, as a path",
  );
});

test("a 429 in the middle of a listing (Retry-After: 2) is waited out and the listing completes", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 600);
  // Requests: the space lookup, then pages 1, 2, 3; the 429 answers page 2.
  const http = new SteppedClient({ agent: "t", allowedOrigins: wiki.origin }, (n) => {
    if (n === 3) wiki.setRateLimit(1, 2);
  });
  const listing = await backendFor(wiki, "SVC", {}, http).listAll();
  t.is(listing.records.length, ids.length);
  t.deepEqual(
    wiki.requests.map((request) => request.status),
    [200, 200, 429, 200, 200],
  );
  const [limited, retried] = [wiki.requests[2], wiki.requests[3]];
  t.is(retried?.path, limited?.path);
  t.true((retried?.receivedAt ?? 0) - (limited?.receivedAt ?? 0) >= 2000 - SLACK_MS);
});

test("the gate is shared: after a 429 every client of that origin waits for Retry-After", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 3);
  wiki.setRateLimit(1, 2);
  const first = backendFor(wiki).listAll();
  // The second client starts once the first has read the 429 and closed the origin's gate (gates are never
  // removed, and this fake's origin is new: any instant set means it was armed).
  while (openGateAt(wiki.origin) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const second = backendFor(wiki).listAll();
  const [a, b] = await Promise.all([first, second]);
  t.is(a.records.length, 3);
  t.is(b.records.length, 3);
  const refusedAt = wiki.requests[0]?.receivedAt ?? 0;
  const later = wiki.requests.slice(1);
  t.is(later.length, 4);
  for (const request of later) {
    t.is(request.status, 200);
    t.true(
      request.receivedAt - refusedAt >= 2000 - SLACK_MS,
      `${request.path} after ${request.receivedAt - refusedAt} ms`,
    );
  }
});

test("x-ratelimit-remaining: 0 arms the gate: the next request waits", async (t) => {
  // Two requests per second: the second answer says 0 remaining, so the third waits for the next window.
  const wiki = await givenFakeWiki(t, { rateLimitQuota: 2, rateLimitWindowMs: 1000 });
  wiki.seedPages("SVC", 300);
  const listing = await backendFor(wiki).listAll();
  t.is(listing.records.length, 300);
  t.deepEqual(
    wiki.requests.map((request) => request.status),
    [200, 200, 200],
  );
  const [, second, third] = wiki.requests;
  t.true((third?.receivedAt ?? 0) - (second?.receivedAt ?? 0) >= 1000 - SLACK_MS);
});

test("401 with FAILURE_CLIENT_AUTH_MISMATCH says VENDOR_EMAIL is wrong, without the token", async (t) => {
  const wiki = await givenFakeWiki(t);
  const error = await t.throwsAsync(
    backendFor(wiki, "SVC", { VENDOR_EMAIL: "other@example.test" }).listAll(),
    {
      instanceOf: UserFacingError,
    },
  );
  t.regex(
    error?.message ?? "",
    /VENDOR_EMAIL \(other@example\.test\) is not the account VENDOR_API_KEY was issued to/,
  );
  t.is(error?.data.status, 401);
  const token = wiki.credentials.token;
  t.false(`${error?.message} ${JSON.stringify(error?.data)} ${error?.stack}`.includes(token));
});

test("401 for a wrong token names both variables, without the token", async (t) => {
  const wiki = await givenFakeWiki(t);
  const wrong = "not-the-token-5555";
  const error = await t.throwsAsync(backendFor(wiki, "SVC", { VENDOR_API_KEY: wrong }).spaces(), {
    instanceOf: UserFacingError,
  });
  t.regex(error?.message ?? "", /refused the credentials \(401\); check VENDOR_EMAIL and VENDOR_API_KEY/);
  t.false(`${error?.message} ${error?.stack}`.includes(wrong));
});

test("403 on a denied space says to ask for permission", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "LOCKED", denied: true }] });
  wiki.seedPages("LOCKED", 2);
  const error = await t.throwsAsync(backendFor(wiki, "LOCKED").listAll(), { instanceOf: UserFacingError });
  t.regex(
    error?.message ?? "",
    /has no permission for GET \/wiki\/api\/v2\/spaces\/\d+\/pages \(403\); ask an admin of space LOCKED/,
  );
  t.is(error?.data.status, 403);
  t.false(error?.message.includes(wiki.credentials.token));
});

test("update sends PUT with version base + 1; a stale base is a conflict; a trashed page is gone and stays trashed", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 3);
  const backend = backendFor(wiki);
  const page = wiki.page("2");
  if (!page) return t.fail("no page 2");
  const base = { version: page.version.number, updatedAt: page.version.createdAt };
  const desired = { fields: { title: page.title }, body: "<p>new</p>" };

  const ok = await backend.update("2", { fields: {}, body: "<p>new</p>" }, base, desired);
  if (ok.kind !== "ok") return t.fail(ok.kind);
  t.is(ok.record.version, base.version + 1);
  t.is(ok.record.content.body, "<p>new</p>");
  const puts = wiki.requests.filter((request) => request.method === "PUT");
  t.is(puts.length, 1);
  t.like(JSON.parse(puts[0]?.body ?? "{}"), {
    id: "2",
    status: "current",
    title: page.title,
    body: { representation: "storage", value: "<p>new</p>" },
    version: { number: base.version + 1 },
  });

  // The same base again: the server is at base + 1 now.
  const stale = await backend.update("2", { fields: {}, body: "<p>again</p>" }, base, desired);
  t.is(stale.kind, "conflict");
  t.is(wiki.page("2")?.body, "<p>new</p>");

  wiki.trashPage("3");
  const three = wiki.page("3");
  const gone = await backend.update(
    "3",
    { fields: {}, body: "<p>lost?</p>" },
    { version: three?.version.number ?? 0, updatedAt: three?.version.createdAt ?? "" },
    { fields: { title: three?.title ?? "" }, body: "<p>lost?</p>" },
  );
  t.is(gone.kind, "gone");
  t.is(wiki.page("3")?.status, "trashed");
  t.is(wiki.requests.filter((request) => request.method === "PUT").length, 2, "no PUT for the trashed page");
});

test("create POSTs to the space and returns the page with its id; remove trashes it, or reports a conflict or gone", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 2);
  const backend = backendFor(wiki);
  const created = await backend.create({ fields: { title: "Fresh" }, body: "<p>fresh</p>\n" });
  t.is(created.content.fields.title, "Fresh");
  t.is(created.content.body, "<p>fresh</p>\n");
  t.is(created.path, `pages/${created.key}.md`);
  const post = wiki.requests.find((request) => request.method === "POST");
  t.deepEqual(JSON.parse(post?.body ?? "{}"), {
    spaceId: wiki.space("SVC").id,
    status: "current",
    title: "Fresh",
    body: { representation: "storage", value: "<p>fresh</p>\n" },
  });

  const one = wiki.page("1");
  wiki.editPage("1");
  const conflict = await backend.remove("1", { version: one?.version.number ?? 0, updatedAt: "" });
  t.is(conflict.kind, "conflict");
  t.is(wiki.page("1")?.status, "current");

  const removed = await backend.remove(created.key, {
    version: created.version,
    updatedAt: created.updatedAt,
  });
  t.is(removed.kind, "ok");
  t.is(wiki.page(created.key)?.status, "trashed");
  const again = await backend.remove(created.key, { version: created.version, updatedAt: created.updatedAt });
  t.is(again.kind, "gone");
  t.is(wiki.requests.filter((request) => request.method === "DELETE").length, 1);
  t.is(wiki.baseHits, 0);
});
