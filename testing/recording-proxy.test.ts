/**
 * The recording proxy the contract suites put in front of the real services in `npm run test:real` (and of
 * the fakes here): it forwards both ways, keeps pagination on itself, and its close() fails naming the
 * operation and the field of every exchange that departs from the vendor's description.
 */
import test from "ava";
import { startFakeForge } from "./fake-forge.js";
import { callFake } from "./fake-http.js";
import { startFakeTracker } from "./fake-tracker.js";
import { startRecordingProxy } from "./recording-proxy.js";

test("GitHub through the proxy: the answer as the fake gave it, Link rewritten to the proxy, each exchange judged", async (t) => {
  const forge = await startFakeForge();
  forge.seed("acme/widgets", 3);
  const proxy = await startRecordingProxy("github", forge.url);
  const defaults = { authorization: `Bearer ${forge.token}`, headers: {} };
  const first = await callFake(proxy.url, "GET", "/repos/acme/widgets/issues?state=all&per_page=2", defaults);
  t.is(first.status, 200);
  t.is(first.json<unknown[]>().length, 2);
  const next = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? "")?.[1] ?? "";
  t.true(next.startsWith(`${proxy.origin}/repositories/`), next);
  const second = await callFake(proxy.url, "GET", next, defaults);
  t.is(second.json<unknown[]>().length, 1);
  t.deepEqual(
    proxy.exchanges.map((exchange) => `${exchange.method} ${exchange.path.split("?")[0]} ${exchange.status}`),
    [
      "GET /repos/acme/widgets/issues 200",
      `GET /repositories/${forge.repositoryId("acme/widgets")}/issues 200`,
    ],
  );
  t.is(proxy.contract.operations.get("issues/list-for-repo"), 2);
  await proxy.close();
  await forge.close();
});

test("a departure seen through the proxy fails its close(), naming operation and field, as the fake's does", async (t) => {
  const tracker = await startFakeTracker();
  const proxy = await startRecordingProxy("jira", tracker.url);
  const authorization = `Basic ${Buffer.from(`${tracker.email}:${tracker.apiToken}`).toString("base64")}`;
  const answer = await callFake(
    proxy.url,
    "POST",
    "/rest/api/3/search/approximate-count",
    { authorization, headers: {} },
    { json: { jql: "project = TEST", maxResults: 1 } },
  );
  t.is(answer.status, 400);
  const departure =
    /countIssues \(POST \/rest\/api\/3\/search\/approximate-count\): request body \/maxResults: expected no such member/;
  await t.throwsAsync(proxy.close(), { message: departure });
  await t.throwsAsync(tracker.close(), { message: departure });
});
