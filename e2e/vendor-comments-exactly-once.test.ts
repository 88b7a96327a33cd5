/**
 * A new comment is posted exactly once on the forge, the tracker and the wiki (issue 34), as on the
 * simulator (`comments-exactly-once.test.ts`): the push's whole process group is killed (`kill -9`) while the
 * fake's answer to the comment POST is held back (the server has made the comment); the next plain `git push`
 * finds the comment through the create journal, says so, and posts nothing; `git pull` then leaves the file
 * as `comments/<record>/<id>.md`. Real git, the fakes behind the fault proxy, real processes.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { givenFakeForge } from "../testing/fake-forge.js";
import { givenFakeTracker } from "../testing/fake-tracker.js";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import { type FaultProxy, givenFaultProxy } from "../testing/fault-proxy.js";
import { forgeRemote, givenProxiedForgeEnv } from "../testing/forge.js";
import { type GitEnv, git, gitOk } from "../testing/git.js";
import { commitAll, readWorkFile, writeWorkFile } from "../testing/push.js";
import { givenProxiedTrackerEnv, trackerRemote } from "../testing/tracker.js";
import { givenWikiEnv, wikiRemote } from "../testing/wiki.js";

/** A request the fake saw: enough to count comment creates. */
interface Seen {
  readonly method: string;
  readonly path: string;
}

/**
 * Commits `comments/<record>/once.md` (`text`) in clone `d`, pushes it killed while the answer to the POST of
 * `postPath` is held, then pushes again; checks the second push names the comment found, that the fake saw
 * exactly one create, and that `git pull` leaves `comments/<record>/<id>.md`. `posted` reads the id of the
 * one comment the server has on the record (undefined while it has none or several).
 */
async function postedOnceUnderKill(
  t: ExecutionContext,
  setup: {
    env: GitEnv;
    proxy: FaultProxy;
    record: string;
    text: string;
    postPath: string;
    requests: () => readonly Seen[];
    posted: () => string | undefined;
  },
): Promise<void> {
  const { env, proxy, record, postPath } = setup;
  mkdirSync(join(env.dir, "d", "comments", record), { recursive: true });
  writeWorkFile(env, "d", `comments/${record}/once.md`, setup.text);
  await commitAll(t, env, "d", "A comment");

  const creates = () =>
    setup.requests().filter((request) => request.method === "POST" && request.path === postPath).length;
  proxy.setFault((request) =>
    request.method === "POST" && request.path === postPath ? { kind: "late", ms: 1500 } : undefined,
  );
  const killed = await git(env, ["push"], { cwd: "d", killWhen: proxy.answered("POST", postPath) });
  t.is(killed.code, null, killed.stderr);
  const id = setup.posted();
  if (id === undefined) return t.fail("the server did not commit the comment before the kill");

  proxy.setFault(undefined);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  t.true(
    again.stderr.includes(
      `svc: comments/${record}/once.md was posted as comment ${id} (comments/${record}/${id}.md) by a push that was cut off before the answer arrived; it is not created again`,
    ),
    again.stderr,
  );
  t.is(creates(), 1, "one comment create in all");
  t.is(setup.posted(), id, "still one comment on the record");

  const pull = await git(env, ["pull", "-q"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.deepEqual((await gitOk(t, env, ["ls-files", "comments"], { cwd: "d" })).split("\n"), [
    `comments/${record}/${id}.md`,
  ]);
  t.true(readWorkFile(env, "d", `comments/${record}/${id}.md`).startsWith(`---\nid: ${id}\n`));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
}

/** The only element of `list`'s ids, else undefined. */
function onlyId(list: readonly { id: string | number }[]): string | undefined {
  return list.length === 1 ? String(list[0]?.id) : undefined;
}

test("forge: a push killed while the answer to its comment POST is held posts the comment once", async (t) => {
  const REPO = "acme/widgets";
  const forge = await givenFakeForge(t);
  forge.addIssue(REPO, { title: "First", body: "" });
  const proxy = await givenFaultProxy(t, forge.url);
  const env = givenProxiedForgeEnv(t, forge, proxy.url);
  await gitOk(t, env, ["clone", "-q", forgeRemote(proxy.url, REPO), "d"]);
  await postedOnceUnderKill(t, {
    env,
    proxy,
    record: "0001",
    text: "Only once, please.\n",
    postPath: `/repos/${REPO}/issues/1/comments`,
    requests: () => forge.requests,
    posted: () => onlyId(forge.comments(REPO, 1)),
  });
  t.is(forge.comments(REPO, 1)[0]?.body, "Only once, please.\n");
});

test("tracker: a push killed while the answer to its comment POST is held posts the comment once", async (t) => {
  const tracker = await givenFakeTracker(t);
  tracker.addIssue("TEST", { summary: "First" });
  const proxy = await givenFaultProxy(t, tracker.url);
  const env = givenProxiedTrackerEnv(t, tracker, proxy.url);
  await gitOk(t, env, ["clone", "-q", trackerRemote(proxy.url, "TEST"), "d"]);
  await postedOnceUnderKill(t, {
    env,
    proxy,
    record: "TEST-1",
    // Markdown the ADF round trip respells (`*` → `_`, `*` items → `-`): the journal compares what the
    // server gives back with the text as the server will spell it.
    text: "Only *once*, please:\n\n* one\n* two",
    postPath: "/rest/api/3/issue/TEST-1/comment",
    requests: () => tracker.requests,
    posted: () => onlyId(tracker.comments("TEST-1")),
  });
});

test("wiki: a push killed while the answer to its comment POST is held posts the comment once", async (t) => {
  const wiki = await givenFakeWiki(t);
  const [page] = wiki.seedPages("SVC", 2);
  if (page === undefined) return t.fail("no page");
  const proxy = await givenFaultProxy(t, wiki.url);
  const env = givenWikiEnv(t, wiki, { SVC_ALLOWED_ORIGINS: `${wiki.url},${proxy.url}` });
  await gitOk(t, env, ["clone", "-q", wikiRemote(proxy.url, "SVC"), "d"]);
  await postedOnceUnderKill(t, {
    env,
    proxy,
    record: page,
    text: "<p>Only once, please.</p>",
    postPath: "/wiki/api/v2/footer-comments",
    requests: () => wiki.requests,
    posted: () => onlyId(wiki.comments(page)),
  });
  t.is(wiki.comments(page)[0]?.body, "<p>Only once, please.</p>");
});
