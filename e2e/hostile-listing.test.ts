/**
 * A wiki that will not stop talking (issue 11, item 3): a `_links.next` that repeats, one that never ends,
 * and an answer far larger than anything a listing needs. Real git and the `svc` bin against the fake wiki:
 * each ends with one clear error naming the server (and the cursor, or the cap), after a bounded number of
 * requests; the oversized answer is cut off a little after the cap, and the helper's memory stays small. A
 * listing that never ends but never repeats is stopped by its time (`SVC_LISTING_TIMEOUT_MS`, issue 31)
 * long before the page cap.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { type FakeWiki, givenFakeWiki } from "../testing/fake-wiki.js";
import { cacheFolders, git, gitOk, svc, withCacheRoot } from "../testing/git.js";
import { givenWikiEnv, wikiRemote } from "../testing/wiki.js";

/** A Node stack trace, crash report or bug report: what a user must never see for a hostile server. */
const CRASH = /node:events|Unhandled 'error' event|internal error|^\s+at .+:\d+:\d+\)?$/m;
const MIB = 1024 * 1024;

/**
 * The lines of `stderr`, sorted: git and the helper share the stream, so the order of their lines
 * varies between runs; what each says does not.
 */
function stderrLines(stderr: string): string[] {
  return stderr.split("\n").sort();
}

/** The requests of the page listing of space SVC (the fake's one paginated page listing). */
function listingRequests(wiki: FakeWiki): number {
  return wiki.requests.filter((request) => /\/spaces\/\d+\/pages\?/.test(request.path)).length;
}

function pagesPath(wiki: FakeWiki): string {
  return `/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages?body-format=storage&status=current&limit=250`;
}

function repeatMessage(wiki: FakeWiki, listing: string, next: string): string {
  return (
    `${listing} at ${wiki.origin} goes round in a circle: result page 2 points to itself ` +
    `(_links.next ${JSON.stringify(next)}); svc stopped after 2 result pages instead of asking forever. ` +
    `The server (or a proxy in front of it) is at fault: report it to the admins of ${wiki.origin}`
  );
}

test("a repeated _links.next ends git clone, svc list and svc spaces with an error naming the server and the cursor", async (t) => {
  const wiki = await givenFakeWiki(t, { hostileListing: { kind: "repeat-cursor" } });
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki);
  const next = `${pagesPath(wiki)}&cursor=same-cursor-every-time`;
  const message = repeatMessage(wiki, "listing the pages of space SVC", next);

  const clone = await git(env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);
  t.is(clone.code, 128);
  t.deepEqual(stderrLines(clone.stderr), stderrLines(`Cloning into 'd'...\nsvc: ${message}\n`));
  t.is(listingRequests(wiki), 2, "the first result page, and the one it named, once");
  t.false(existsSync(join(env.dir, "d")), "git removes the failed clone");

  const before = listingRequests(wiki);
  const list = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"]);
  t.is(list.code, 2);
  t.is(list.stderr, `svc: ${message}\n`);
  t.is(list.stdout, "");
  t.is(listingRequests(wiki) - before, 2);

  wiki.setHostileListing({ kind: "repeat-cursor", on: "spaces" });
  const spacesBefore = wiki.requests.length;
  const spaces = await svc(env, ["spaces", "--backend", "wiki"]);
  t.is(spaces.code, 2);
  t.is(
    spaces.stderr,
    `svc: ${repeatMessage(wiki, "listing spaces", "/wiki/api/v2/spaces?limit=250&cursor=same-cursor-every-time")}\n`,
  );
  t.is(wiki.requests.length - spacesBefore, 2);
  t.is(wiki.baseHits, 0);
});

test("git fetch in a clone: a repeated _links.next is reported, the cached state served, and without a cache the fetch fails", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);
  const tip = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  // Every page changed since the clone: the delta listing (newest first) must read past the first result page.
  for (const id of ids) wiki.editPage(id);
  wiki.setHostileListing({ kind: "repeat-cursor" });
  const message = repeatMessage(
    wiki,
    "listing the pages of space SVC",
    `${pagesPath(wiki).replace("&limit=", "&sort=-modified-date&limit=")}&cursor=same-cursor-every-time`,
  );

  const before = listingRequests(wiki);
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 128, "nothing was fetched: the fetch fails, as git's does (issue 31)");
  t.is(
    fetch.stderr.replace(/from \d+\.\d s ago/, "from <age> ago"),
    `svc: cannot sync with wiki space SVC at ${wiki.url} (${message}); nothing was fetched\n` +
      "To work from the cache's state from <age> ago on purpose, run: git -c svc.offline=true fetch\n" +
      `fatal: remote error: cannot sync with wiki space SVC at ${wiki.url} (${message}); nothing was fetched; the svc: lines above say what to run\n`,
  );
  t.is(listingRequests(wiki) - before, 2);
  t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), tip);

  // With no cache to fall back on, the full listing's error ends the fetch.
  const fresh = withCacheRoot(env, join(env.home, "empty-cache"));
  const full = repeatMessage(
    wiki,
    "listing the pages of space SVC",
    `${pagesPath(wiki)}&cursor=same-cursor-every-time`,
  );
  const failed = await git(fresh, ["fetch"], { cwd: "d" });
  t.is(failed.code, 128);
  t.deepEqual(stderrLines(failed.stderr), stderrLines(`svc: ${full}\n`));
  t.notRegex(failed.stderr, CRASH);
  t.is(wiki.baseHits, 0);
});

test("an endless listing stops at SVC_MAX_RESULT_PAGES with an error that says how to go further", async (t) => {
  const wiki = await givenFakeWiki(t, { hostileListing: { kind: "endless" } });
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki, { SVC_MAX_RESULT_PAGES: "20" });
  const message =
    `listing the pages of space SVC at ${wiki.origin} still points to a next result page (_links.next ` +
    `${JSON.stringify(`${pagesPath(wiki)}&cursor=endless-20`)}) after 20 result pages, the most svc reads ` +
    "in one listing (SVC_MAX_RESULT_PAGES=20). If the listing is really that long, run the command again " +
    `with e.g. SVC_MAX_RESULT_PAGES=40; if not, report it to the admins of ${wiki.origin}`;

  const clone = await git(env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);
  t.is(clone.code, 128);
  t.deepEqual(stderrLines(clone.stderr), stderrLines(`Cloning into 'd'...\nsvc: ${message}\n`));
  t.is(listingRequests(wiki), 20);

  const list = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"]);
  t.is(list.code, 2);
  t.is(list.stderr, `svc: ${message}\n`);
  t.is(listingRequests(wiki), 40);

  // An honest listing is untouched by the cap: 3 result pages under a cap of 3.
  wiki.setHostileListing(undefined);
  wiki.seedPages("SVC", 600);
  const honest = await git(env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "ok"], {
    env: { SVC_MAX_RESULT_PAGES: "3", SVC_BLOB_LIMIT: "0" },
  });
  t.is(honest.code, 0, honest.stderr);
});

test("an endless listing of new cursors is stopped at SVC_LISTING_TIMEOUT_MS long before the page cap: git clone fails naming the setting and the server, leaving no clone and no cache", async (t) => {
  const wiki = await givenFakeWiki(t, { hostileListing: { kind: "endless" } });
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki, { SVC_LISTING_TIMEOUT_MS: "1500" });
  const remote = wikiRemote(wiki.url, "SVC");

  const clone = await git(env, ["clone", "--filter=blob:none", remote, "d"]);
  t.false(clone.timedOut);
  t.is(clone.code, 128);
  const pages = listingRequests(wiki);
  t.true(
    pages > 1 && pages < 10_000,
    `${pages} result pages: the time stopped the listing, not the page cap`,
  );
  t.deepEqual(
    stderrLines(clone.stderr),
    stderrLines(
      "Cloning into 'd'...\n" +
        `svc: listing the pages of space SVC at ${wiki.origin} did not end within 1500 ms (SVC_LISTING_TIMEOUT_MS, ` +
        `the longest svc gives one listing); svc stopped after ${pages} result pages. If the listing is really ` +
        `that long, run the command again with e.g. SVC_LISTING_TIMEOUT_MS=3000; if not, is ${wiki.origin} ` +
        "overloaded or stuck?\n" +
        `no cached copy of wiki space SVC at ${wiki.url} is there to serve instead; when the server works ` +
        `again, run: git clone --filter=blob:none ${remote} d\n`,
    ),
  );
  t.notRegex(clone.stderr, CRASH);
  t.false(existsSync(join(env.dir, "d")), "git removes the failed clone");
  t.deepEqual(cacheFolders(env), [], "no cache is made before a listing succeeded");
});

test("a 200 MB answer is refused a little after 32 MiB, the connection closed, and the helper stays small", async (t) => {
  const bytes = 200 * 1000 * 1000;
  const wiki = await givenFakeWiki(t, { hostileListing: { kind: "oversized", bytes } });
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki, { SVC_TRACE: "1" });
  const message =
    `the server at ${wiki.origin} sent more than 32 MiB in answer to GET /wiki/api/v2/spaces/` +
    `${wiki.space("SVC").id}/pages, the most svc accepts in one response; svc closed the connection and ` +
    "kept none of it. If answers this large are expected, run the command again with e.g. " +
    `SVC_HTTP_MAX_RESPONSE_MIB=64; if not, report it to the admins of ${wiki.origin}`;

  const clone = await git(env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);
  t.is(clone.code, 128);
  t.true(clone.stderr.includes(`\nsvc: ${message}\n`), clone.stderr);
  t.true(clone.stderr.includes(`\nsvc: ${message}\n`), clone.stderr);
  t.notRegex(clone.stderr, CRASH);
  const [streamed] = await wiki.streamed();
  t.true(streamed?.closedEarly, "svc hung up before the end");
  t.true((streamed?.bytesWritten ?? 0) > 32 * MIB);
  // On top of the cap, only what the sockets' kernel buffers held when svc hung up (here at most
  // tcp_rmem 32 MiB + tcp_wmem 4 MiB, when the reader lags): far from the 200 MB the fake had to send.
  t.true((streamed?.bytesWritten ?? bytes) < 72 * MIB, `the fake sent ${streamed?.bytesWritten} bytes`);
  const rss = Number(/exit maxRSS=(\d+)KB/.exec(clone.stderr)?.[1]);
  t.true(rss * 1024 < 192 * MIB, `the helper's peak RSS was ${rss} KB`);

  const list = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"]);
  t.is(list.code, 2);
  t.is(list.stderr, `svc: ${message}\n`);
});

test("an answer whose content-length is over the cap is refused before its body is read", async (t) => {
  const bytes = 200 * 1000 * 1000;
  const wiki = await givenFakeWiki(t, { hostileListing: { kind: "oversized", bytes, announce: true } });
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki, { SVC_HTTP_MAX_RESPONSE_MIB: "4" });
  const list = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"]);
  t.is(list.code, 2);
  t.is(
    list.stderr,
    `svc: the server at ${wiki.origin} announced ${bytes} bytes (content-length) in answer to GET ` +
      `/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages, more than the 4 MiB svc accepts in one response; ` +
      "svc closed the connection without reading it. If answers this large are expected, run the command " +
      `again with e.g. SVC_HTTP_MAX_RESPONSE_MIB=8; if not, report it to the admins of ${wiki.origin}\n`,
  );
  const [streamed] = await wiki.streamed();
  t.true(streamed?.closedEarly);
  t.true((streamed?.bytesWritten ?? bytes) < 32 * MIB, `the fake sent ${streamed?.bytesWritten} bytes`);
});
