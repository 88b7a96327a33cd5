/**
 * Cloning a wiki space (issue 5, "What it must show" 2): a sparse checkout set before the first checkout
 * fetches only the matching `pages/<id>.md` files, in one batch; every page file's body is byte for byte
 * the page's `body.storage.value`; `svc init wiki::<KEY>` writes the wiki remote URL.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { FakeWiki } from "../testing/fake-wiki.js";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import {
  auditRows,
  fetchRequests,
  type GitEnv,
  git,
  gitOk,
  lastAuditId,
  missingObjects,
  run,
  SPARSE_SET,
  svc,
  testWithBlobLimit,
} from "../testing/git.js";
import { givenWikiEnv, pageFileBody, wikiRemote } from "../testing/wiki.js";

function checkedOut(env: GitEnv, dir: string): string[] {
  const folder = join(env.dir, dir, "pages");
  return existsSync(folder) ? readdirSync(folder).sort() : [];
}

/** `pages/<id>.md` for every id starting with `prefix`, as `checkedOut` lists them. */
function filesWithPrefix(ids: readonly string[], prefix: string): string[] {
  return ids
    .filter((id) => id.startsWith(prefix))
    .map((id) => `${id}.md`)
    .sort();
}

/** Each checked-out page file's body is byte-identical to the fake's `body.storage.value`. */
function assertBodiesIdentical(t: ExecutionContext, env: GitEnv, dir: string, wiki: FakeWiki): void {
  const files = checkedOut(env, dir);
  t.true(files.length > 0);
  for (const file of files) {
    const id = file.replace(/\.md$/, "");
    const page = wiki.page(id);
    if (!page) {
      t.fail(`pages/${file} has no page on the server`);
      continue;
    }
    const bytes = readFileSync(join(env.dir, dir, "pages", file));
    t.true(pageFileBody(bytes).equals(Buffer.from(page.body, "utf8")), `pages/${file}`);
  }
}

test("a sparse clone of a 1,234-page space fetches only pages/12* in one batch, bodies byte-identical", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 1234);
  // Prefetch off: by default the first lazy fetch also brings the pages outside the pattern (prefetch.test.ts).
  const env = givenWikiEnv(t, wiki, { SVC_PREFETCH_BYTES: "0" });
  const wanted = filesWithPrefix(ids, "12");
  t.is(wanted.length, 1 + 10 + 35, "12, 120-129, 1200-1234");

  await gitOk(t, env, ["clone", "--filter=blob:none", "--sparse", wikiRemote(wiki.url, "SVC"), "d"]);
  t.deepEqual(checkedOut(env, "d"), []);
  t.is((await missingObjects(env, "d")).length, 1234);
  const afterClone = lastAuditId(env);
  const requestsAfterClone = wiki.requests.length;

  await gitOk(t, env, [...SPARSE_SET, "pages/12*"], { cwd: "d" });
  t.deepEqual(checkedOut(env, "d"), wanted);
  const fetches = fetchRequests(auditRows(env, afterClone));
  t.deepEqual(
    fetches.map((row) => row.detail.wants),
    [wanted.length],
    "one fetch request wanting exactly the matching pages",
  );
  t.is((await missingObjects(env, "d")).length, 1234 - wanted.length);
  // Blobs come from the cache: materializing them needs no page request (only the sync's listing, if any).
  t.false(
    wiki.requests.slice(requestsAfterClone).some((request) => /\/pages\/\d+/.test(request.path)),
    "no single-page GETs",
  );
  assertBodiesIdentical(t, env, "d", wiki);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  t.is(wiki.baseHits, 0);
});

testWithBlobLimit(
  "svc init wiki::KEY of a space over the blob limit, then sparse-checkout set before checkout: only pages/12* in one batch",
  async (t) => {
    const wiki = await givenFakeWiki(t);
    const ids = wiki.seedPages("SVC", 1234);
    const env = givenWikiEnv(t, wiki, { SVC_PREFETCH_BYTES: "0", SVC_BLOB_LIMIT: "500" });
    const wanted = filesWithPrefix(ids, "12");

    // 1,234 pages are over the (opt-in) SVC_BLOB_LIMIT=500: the clone is made, its checkout refused.
    const init = await svc(env, ["init", "wiki::SVC", "d"]);
    t.is(init.code, 2, init.stderr);
    t.regex(init.stderr, /this fetch wants 1234 record files, more than SVC_BLOB_LIMIT=500/);
    t.true(
      new RegExp(`^ {2}cd d && git ${SPARSE_SET.join(" ")} 'pages/.+' && git checkout main$`, "m").test(
        init.stderr,
      ),
      init.stderr,
    );
    t.deepEqual(checkedOut(env, "d"), []);
    t.is(
      await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }),
      "",
      "the refusal leaves the index clean",
    );
    t.is(await gitOk(t, env, ["config", "remote.origin.url"], { cwd: "d" }), wikiRemote(wiki.url, "SVC"));
    t.is(
      auditRows(env).filter((row) => row.op === "materialize").length,
      0,
      "nothing materialized for the refused checkout",
    );
    const before = lastAuditId(env);

    await gitOk(t, env, [...SPARSE_SET, "pages/12*"], { cwd: "d" });
    await gitOk(t, env, ["checkout", "main"], { cwd: "d" });
    t.deepEqual(checkedOut(env, "d"), wanted);
    t.deepEqual(
      fetchRequests(auditRows(env, before)).map((row) => row.detail.wants),
      [wanted.length],
    );
    t.is((await missingObjects(env, "d")).length, 1234 - wanted.length);
    assertBodiesIdentical(t, env, "d", wiki);
    t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
    t.is(wiki.baseHits, 0);
  },
);

test("svc init wiki::KEY with SVC_BLOB_LIMIT=0 checks out every page, bodies byte-identical, in one batch", async (t) => {
  const wiki = await givenFakeWiki(t);
  // 27 pages: every tricky body of the fake three times (CDATA holding `---`, CRLF, a leading `---` line,
  // trailing blank lines, the empty body, entities, non-ASCII).
  const ids = wiki.seedPages("SVC", 27);
  const env = givenWikiEnv(t, wiki, { SVC_BLOB_LIMIT: "0" });

  const init = await svc(env, ["init", "wiki::SVC", "d"]);
  t.is(init.code, 0, init.stderr);
  t.deepEqual(checkedOut(env, "d"), ids.map((id) => `${id}.md`).sort());
  t.deepEqual(await missingObjects(env, "d"), []);
  // One fetch: svc init's clone gets every page with the commit (the checkout then needs no lazy fetch).
  t.deepEqual(
    fetchRequests(auditRows(env)).map((row) => row.detail.filter),
    [null],
  );
  // svc answers that fetch with its own pack, read from the database: nothing is written into the cache's
  // repository for it (issue 18).
  t.deepEqual(
    auditRows(env)
      .filter((row) => row.op === "materialize")
      .map((row) => row.detail.blobs),
    [],
  );
  assertBodiesIdentical(t, env, "d", wiki);
  t.is(await gitOk(t, env, ["config", "remote.origin.url"], { cwd: "d" }), wikiRemote(wiki.url, "SVC"));
  t.is(await gitOk(t, env, ["config", "pull.rebase"], { cwd: "d" }), "false");
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");

  // The frontmatter of DESIGN.md §2, in order; labels always empty.
  const page = wiki.page(ids[1] as string);
  const text = readFileSync(join(env.dir, "d", "pages", `${ids[1]}.md`), "utf8");
  t.true(
    text.startsWith(
      `---\nid: ${page?.id}\ntitle: "Design / \\"Notes\\" #0002"\nversion: ${page?.version.number}\n` +
        `spaceId: ${page?.spaceId}\nparentId: ${page?.parentId}\ncreatedAt: ${page?.createdAt}\n` +
        `updatedAt: ${page?.version.createdAt}\nlabels: []\n---\n`,
    ),
    text.slice(0, 400),
  );
  t.is(wiki.baseHits, 0);
});

test("git fetch after server-side changes brings them; the new page's body is byte-identical", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 5);
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);

  const body = "<p>Added in the browser &amp; <strong>bold</strong></p>\r\n<p>ünïcödé</p>\n";
  const added = wiki.createPage("SVC", { title: "Added later", body });
  wiki.editPage(ids[0] as string, { body: "<p>Changed in the browser</p>" });
  wiki.trashPage(ids[1] as string);
  const fetch = await git(env, ["pull", "--ff-only"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  t.true(checkedOut(env, "d").includes(`${added.id}.md`));
  const file = readFileSync(join(env.dir, "d", "pages", `${added.id}.md`));
  t.true(pageFileBody(file).equals(Buffer.from(body, "utf8")));
  t.is(
    pageFileBody(readFileSync(join(env.dir, "d", "pages", `${ids[0]}.md`))).toString("utf8"),
    "<p>Changed in the browser</p>",
  );

  // The trashed page is gone with the same pull: the fetch asked for the space's removed pages.
  t.false(checkedOut(env, "d").includes(`${ids[1]}.md`));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  t.is(wiki.baseHits, 0);
});

/** `METHOD path?query` of each request after the first `from`, the space's id written `{id}`. */
function askedWiki(wiki: FakeWiki, from: number): string[] {
  const space = `/spaces/${wiki.space("SVC").id}/`;
  return wiki.requests
    .slice(from)
    .map((request) => `${request.method} ${request.path.replace(space, "/spaces/{id}/")}`);
}

const WIKI_DELTA_FETCH = [
  "GET /wiki/api/v2/spaces?keys=SVC",
  "GET /wiki/api/v2/spaces/{id}/pages?body-format=storage&status=current&sort=-modified-date&limit=250",
  "GET /wiki/api/v2/spaces/{id}/pages?status=trashed&status=deleted&status=archived&sort=-modified-date&limit=250",
  // The footer comments changed since (the space has one): the site's listing newest first; the comment,
  // written within the overlap, is listed again, and its author's name asked (once a fetch).
  "GET /wiki/api/v2/footer-comments?body-format=storage&sort=-modified-date&limit=250",
  "POST /wiki/api/v2/users-bulk",
];

test("pages trashed or archived on the wiki leave the working tree with a plain git pull: one request for the space's removed pages a fetch", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 6);
  // In the trash before the clone, and still: the answer names it, the cache never held it.
  wiki.trashPage(ids[5] as string);
  wiki.addComment(ids[0] as string, "<p>A comment, so that a fetch lists the comments changed since</p>");
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "-q", wikiRemote(wiki.url, "SVC"), "d"]);
  const [kept = "", trashed = "", archived = "", edited = ""] = ids;
  wiki.trashPage(trashed);
  wiki.archivePage(archived);
  wiki.editPage(edited, { body: "<p>Edited, then trashed</p>" });
  wiki.trashPage(edited);

  const from = wiki.requests.length;
  const before = lastAuditId(env);
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.notRegex(pull.stderr, /svc sync --reconcile/);
  t.is(
    await gitOk(t, env, ["diff", "--name-status", "HEAD@{1}", "HEAD"], { cwd: "d" }),
    [trashed, archived, edited]
      .map((id) => `D\tpages/${id}.md`)
      .sort()
      .join("\n"),
  );
  t.true(checkedOut(env, "d").includes(`${kept}.md`));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  // No full listing: the delta (the edited page, trashed since) and the removed pages.
  t.deepEqual(askedWiki(wiki, from), WIKI_DELTA_FETCH);
  const syncs = auditRows(env, before).filter((row) => row.op === "sync");
  t.is(syncs.length, 1);
  t.like(syncs[0]?.detail, { full: false, deleted: 3, changed: 0, removedNamed: 4, removedComplete: true });

  // Nothing removed since: a fetch is the same requests, and says nothing about deletions.
  const again = wiki.requests.length;
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  t.is(fetch.stderr, "");
  t.deepEqual(askedWiki(wiki, again), WIKI_DELTA_FETCH);
  // The fake judged each listing against Confluence's description (its close() fails on a departure).
  const checked = wiki.contract.operations.get("getPagesInSpace") ?? 0;
  t.true(checked >= 5, `${checked} listings checked`);
  t.is(wiki.baseHits, 0);
});

test("more removed pages than one answer holds: the pull removes those it names, says when a full listing last looked, and the command it prints removes the rest", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 260);
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "-q", wikiRemote(wiki.url, "SVC"), "d"]);
  // 255 pages to the trash: an answer of 250 (the last modified first) leaves out the 5 edited longest ago.
  const removed = ids.slice(0, 255);
  for (const id of removed) wiki.trashPage(id);
  const modified = (id: string) => wiki.page(id)?.version.createdAt ?? "";
  const oldest = [...removed]
    .sort((a, b) => modified(a).localeCompare(modified(b)) || Number(a) - Number(b))
    .slice(0, 5);
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  const tracked = async () =>
    (await gitOk(t, env, ["ls-tree", "--name-only", "origin/main", "pages/"], { cwd: "d" })).split("\n");
  t.deepEqual((await tracked()).sort(), [...oldest, ...ids.slice(255)].map((id) => `pages/${id}.md`).sort());
  const line =
    /^svc: records deleted on wiki space SVC .* are seen only by a full listing, made at most every 10 min \(svc\.reconcileInterval\); the last was \d+\.\d s ago\. To look now, run: (svc sync --reconcile && git pull)$/m.exec(
      pull.stderr,
    );
  t.truthy(line, pull.stderr);
  const looked = await run(env, "sh", ["-c", line?.[1] ?? "false"], { cwd: "d" });
  t.is(looked.code, 0, looked.stderr);
  t.deepEqual(
    (await tracked()).sort(),
    ids
      .slice(255)
      .map((id) => `pages/${id}.md`)
      .sort(),
  );
  t.deepEqual(
    checkedOut(env, "d"),
    ids
      .slice(255)
      .map((id) => `${id}.md`)
      .sort(),
  );
});
