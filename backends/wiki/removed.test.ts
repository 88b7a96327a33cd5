/**
 * The wiki's removed pages (issue 31): the parser of the one answer, and `listRemoved` in-process against the
 * fake wiki: one request without bodies, the pages in the trash, deleted or archived, whether the answer held
 * them all, and a malformed answer as an error.
 */
import { createServer } from "node:http";
import test from "ava";
import { HttpClient } from "../../core/http.js";
import { type FakeWiki, givenFakeWiki } from "../../testing/fake-wiki.js";
import { closeServer, listenOnLoopback } from "../../testing/loopback.js";
import { wikiVars } from "../../testing/wiki.js";
import { WikiBackend } from "./backend.js";
import { wikiConfig } from "./config.js";
import { REMOVED_QUERY, removedPages } from "./removed.js";

function backendFor(wiki: Pick<FakeWiki, "url" | "origin" | "credentials">): WikiBackend {
  const config = wikiConfig(wikiVars(wiki as FakeWiki));
  return new WikiBackend(
    config,
    "SVC",
    new HttpClient({ agent: "wiki-removed-test", allowedOrigins: config.allowedOrigins }),
  );
}

test("removedPages keeps the pages whose own status is trashed, deleted or archived, and says whether more follow", (t) => {
  const page = (id: unknown, status: unknown) => ({ id, status, title: "t", spaceId: "1" });
  const cases: [unknown, ReturnType<typeof removedPages>][] = [
    [
      { results: [], _links: {} },
      { ids: [], more: false },
    ],
    [
      {
        results: [page("3", "trashed"), page("9", "deleted"), page("12", "archived")],
        _links: { base: "https://x/wiki" },
      },
      { ids: ["3", "9", "12"], more: false },
    ],
    // A server that ignored the filter: a current page (or one without a status) is no removal.
    [
      { results: [page("3", "current"), page("4", undefined), page("5", "trashed")] },
      { ids: ["5"], more: false },
    ],
    [
      { results: [page(7, "trashed")], _links: { next: "/wiki/api/v2/x?cursor=a" } },
      { ids: ["7"], more: true },
    ],
    [
      { results: [page("7", "trashed")], _links: { next: "" } },
      { ids: ["7"], more: false },
    ],
    [{ results: {} }, "an answer without a results list"],
    [[], "an answer without a results list"],
    [{ results: ["3"] }, "a result that is not an object"],
    [{ results: [page("../3", "trashed")] }, 'a page id that is not a number: "../3"'],
    [{ results: [page(-1, "trashed")] }, "a page id that is not a number: -1"],
    [{ results: [page(null, "trashed")] }, "a page id that is not a number: null"],
  ];
  for (const [value, expected] of cases) t.deepEqual(removedPages(value), expected, JSON.stringify(value));
});

test("listRemoved is one request without bodies for the space's trashed, deleted and archived pages", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 5);
  wiki.trashPage(ids[1] as string);
  wiki.archivePage(ids[3] as string);
  const backend = backendFor(wiki);
  await backend.resolveSpace();
  const from = wiki.requests.length;
  const removed = await backend.listRemoved();
  t.deepEqual([...removed.keys].sort(), [ids[1], ids[3]].sort());
  t.true(removed.complete);
  t.deepEqual(
    wiki.requests.slice(from).map((request) => request.path),
    [`/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages?${REMOVED_QUERY}`],
  );
  t.is(REMOVED_QUERY, "status=trashed&status=deleted&status=archived&sort=-modified-date&limit=250");
  t.false(wiki.requests.at(-1)?.answer.includes('"storage"'), "no bodies");
});

test("more removed pages than one answer holds: the 250 last modified, and not complete", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 251);
  for (const id of ids) wiki.trashPage(id);
  const backend = backendFor(wiki);
  const removed = await backend.listRemoved();
  t.is(removed.keys.length, 250);
  t.false(removed.complete);
  t.is(wiki.requests.filter((request) => request.path.includes("status=trashed")).length, 1);
});

test("a malformed answer is an error naming what came; a refusal says the status", async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      (req.url ?? "").startsWith("/wiki/api/v2/spaces?keys=")
        ? JSON.stringify({ results: [{ id: "1", key: "SVC", name: "SVC" }], _links: {} })
        : JSON.stringify({ results: [{ id: "x", status: "trashed" }] }),
    );
  });
  const origin = await listenOnLoopback(server);
  t.teardown(() => closeServer(server));
  const backend = backendFor({
    url: origin,
    origin,
    credentials: { email: "me@example.test", token: "token" },
  });
  await t.throwsAsync(backend.listRemoved(), {
    message: `wiki space SVC at ${origin}: listing the removed pages of space SVC answered with a page id that is not a number: "x"`,
  });

  const wiki = await givenFakeWiki(t, { spaces: [{ key: "SVC", denied: true }], deniedStatus: 404 });
  await t.throwsAsync(backendFor(wiki).listRemoved(), {
    message:
      /listing the removed pages of space SVC \(GET \/wiki\/api\/v2\/spaces\/\d+\/pages\) answered 404/,
  });
});
