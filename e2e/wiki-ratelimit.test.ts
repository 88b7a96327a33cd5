/**
 * The wiki's rate limit (issue 5, "What it must show" 6): a 429 with `Retry-After: 2` makes the next calls
 * wait about 2 s and then succeed, and the listing (or the clone) still completes. Only lower bounds on the
 * waits are asserted; the fake stamps each request with its arrival time.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { FakeWiki } from "../testing/fake-wiki.js";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import { gitOk, svc } from "../testing/git.js";
import { givenWikiEnv, wikiRemote } from "../testing/wiki.js";

/** Timer and clock slack: a wait of `seconds` is accepted from `seconds * 1000 - SLACK_MS` on. */
const SLACK_MS = 100;

/** Each 429 is followed, no earlier than `seconds` later, by a request that succeeded. */
function assertWaitedAfter429(t: ExecutionContext, wiki: FakeWiki, seconds: number): void {
  const requests = wiki.requests;
  const refused = requests.flatMap((request, index) => (request.status === 429 ? [index] : []));
  t.true(refused.length > 0, "the fake answered 429");
  for (const index of refused) {
    const limited = requests[index];
    const next = requests[index + 1];
    if (!limited || !next) {
      t.fail(`no request after the 429 at ${index}`);
      continue;
    }
    const gap = next.receivedAt - limited.receivedAt;
    t.true(gap >= seconds * 1000 - SLACK_MS, `request ${index + 1} came ${gap} ms after the 429`);
    t.is(next.path, limited.path, "the refused request is the one sent again");
  }
  t.is(requests.at(-1)?.status, 200);
}

test("svc list: a 429 with Retry-After: 2 is waited out and the listing completes", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 600);
  const env = givenWikiEnv(t, wiki);
  wiki.setRateLimit(1, 2);

  const result = await svc(env, ["list", "--backend", "wiki", "--project", "SVC", "--format", "json"]);
  t.is(result.code, 0, result.stderr);
  t.deepEqual(
    (JSON.parse(result.stdout) as { id: string }[]).map((page) => page.id),
    ids.slice(0, 500),
  );
  t.is(wiki.requests[0]?.status, 429);
  t.is(wiki.requests.filter((request) => request.status === 429).length, 1);
  assertWaitedAfter429(t, wiki, 2);
  t.true(
    wiki.requests.slice(1).every((request) => request.status === 200),
    JSON.stringify(wiki.requests.map((request) => request.status)),
  );
});

test("svc list: two 429s in a row are both waited out", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 30);
  const env = givenWikiEnv(t, wiki);
  wiki.setRateLimit(2, 1);

  const result = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"]);
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout.split("\n").length - 2, 30);
  t.deepEqual(
    wiki.requests.slice(0, 3).map((request) => request.status),
    [429, 429, 200],
  );
  assertWaitedAfter429(t, wiki, 1);
});

test("git clone: a 429 with Retry-After: 2 during the sync is waited out and the clone is complete", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 300);
  const env = givenWikiEnv(t, wiki);
  wiki.setRateLimit(1, 2);

  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);
  const folder = join(env.dir, "d", "pages");
  t.true(existsSync(folder));
  t.is(readdirSync(folder).length, ids.length);
  assertWaitedAfter429(t, wiki, 2);
});
