/**
 * The fake forge's issue comments and `GET /user`, through plain `fetch`: the repository-wide listing (sort,
 * direction, since, paging in the `/repositories/<id>` form, pull requests' comments included, 304s), one
 * issue's listing, get/create/update/delete with their 404/410/422, the body limit, and the helpers tests
 * change comments with. Every exchange is judged against GitHub's description when the fake closes.
 */
import test from "ava";
import { type FakeForge, givenFakeForge } from "../fake-forge.js";
import { callForge, linkRelations } from "./requests.js";

const REPO = "/repos/acme/widgets";
const COMMENTS = `${REPO}/issues/comments`;

const call = callForge;
const links = linkRelations;

interface CommentJson {
  readonly id: number;
  readonly body: string;
  readonly user: { readonly login: string };
  readonly issue_url: string;
  readonly html_url: string;
  readonly url: string;
  readonly created_at: string;
  readonly updated_at: string;
}

/** Every page of a listing from `first`, following rel="next" as given. */
async function allPages(
  forge: FakeForge,
  first: string,
): Promise<{ comments: CommentJson[]; pages: number }> {
  const comments: CommentJson[] = [];
  let pages = 0;
  for (let url: string | undefined = first; url !== undefined; pages++) {
    const page = await call(forge, "GET", url);
    if (page.status !== 200) throw new Error(`${url}: ${page.status} ${page.text}`);
    comments.push(...page.json<CommentJson[]>());
    url = links(page.headers.link).next;
  }
  return { comments, pages };
}

test("the repository-wide listing: every comment, pull requests' too, by updated_at, paged in the /repositories/<id> form", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 4, { pullRequests: 1 });
  const pull = forge.issues("acme/widgets").find((issue) => issue.pullRequest)?.number as number;
  const ids = forge.seedComments("acme/widgets", 25, [1, pull, 3]);
  t.is(ids.length, 25);
  const edited = forge.editComment("acme/widgets", ids[0] as number, "edited later");

  const first = await call(forge, "GET", `${COMMENTS}?sort=updated&direction=asc&per_page=10`);
  t.is(first.status, 200);
  t.regex(
    links(first.headers.link).next ?? "",
    /\/repositories\/1000\/issues\/comments\?sort=updated&direction=asc&per_page=10&page=2$/,
  );
  const { comments, pages } = await allPages(forge, `${COMMENTS}?sort=updated&direction=asc&per_page=10`);
  t.is(pages, 3);
  t.is(comments.length, 25);
  t.is(comments.at(-1)?.id, edited.id, "the edited comment is listed last");
  t.is(comments.at(-1)?.body, "edited later");
  const times = comments.map((comment) => comment.updated_at);
  t.deepEqual(times, [...times].sort());
  const onPull = comments.filter((comment) => comment.issue_url.endsWith(`/issues/${pull}`));
  t.true(onPull.length > 0);
  t.true(onPull.every((comment) => comment.html_url.includes(`/pull/${pull}#issuecomment-${comment.id}`)));
  t.true(comments.some((comment) => comment.html_url.includes("/issues/1#issuecomment-")));

  const newestFirst = await call(forge, "GET", `${COMMENTS}?sort=created&direction=desc&per_page=100`);
  t.deepEqual(
    newestFirst.json<CommentJson[]>().map((comment) => comment.id),
    [...ids].reverse(),
  );
  const byDefault = await call(forge, "GET", COMMENTS);
  t.is(byDefault.json<CommentJson[]>().length, 25, "30 a page by default");
  t.is(byDefault.json<CommentJson[]>()[0]?.id, ids[0], "ascending ids without sort");
});

test("since keeps comments updated at or after it; a bad since or sort answers 422", async (t) => {
  let now = Date.parse("2025-03-01T12:00:00Z");
  const forge = await givenFakeForge(t, { now: () => now });
  forge.seed("acme/widgets", 2);
  forge.seedComments("acme/widgets", 4, [1, 2]);
  now += 60_000;
  const added = forge.addComment("acme/widgets", 2, "Someone else's note");
  t.is(added.author, "alice");
  t.is(
    forge.issue("acme/widgets", 2)?.updatedAt,
    added.createdAt,
    "a new comment moves its issue's updated_at",
  );
  const since = await call(forge, "GET", `${COMMENTS}?sort=updated&direction=asc&since=${added.updatedAt}`);
  t.deepEqual(
    since.json<CommentJson[]>().map((comment) => comment.id),
    [added.id],
  );
  const deliberate = { deliberate: "a value the description refuses" };
  t.is((await call(forge, "GET", `${COMMENTS}?since=yesterday`, deliberate)).status, 422);
  t.is((await call(forge, "GET", `${COMMENTS}?sort=comments`, deliberate)).status, 422);
});

test("a listing's ETag answers 304 uncounted until a comment changes; one issue's listing has its own", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 2);
  const [first] = forge.seedComments("acme/widgets", 3, [1, 2]);
  const url = `${COMMENTS}?sort=updated&direction=asc&per_page=100`;
  const list = await call(forge, "GET", url);
  const etag = list.headers.etag ?? "";
  t.regex(etag, /^W\/"[0-9a-f]+"$/);
  const used = forge.quotaUsed;
  const cached = await call(forge, "GET", url, { headers: { "if-none-match": etag } });
  t.is(cached.status, 304);
  t.is(forge.quotaUsed, used);
  t.false(forge.requests.at(-1)?.counted);

  const thread = await call(forge, "GET", `${REPO}/issues/1/comments`);
  t.deepEqual(
    thread.json<CommentJson[]>().map((comment) => comment.body.length > 0),
    [true, true],
  );
  t.is((await call(forge, "GET", `${REPO}/issues/99/comments`)).status, 404);

  forge.editComment("acme/widgets", first as number, "changed in the browser");
  t.is((await call(forge, "GET", url, { headers: { "if-none-match": etag } })).status, 200);
});

test("get, create, update and delete one comment; a deleted one answers 404, a deleted issue's 410", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 2);
  const created = await call(forge, "POST", `${REPO}/issues/1/comments`, { json: { body: "On it\r\n" } });
  t.is(created.status, 201);
  const comment = created.json<CommentJson>();
  t.is(created.headers.location, comment.url);
  t.like(comment, { body: "On it\r\n", user: { login: "svc-bot" } });
  t.true(comment.issue_url.endsWith("/repos/acme/widgets/issues/1"));
  t.is(forge.issue("acme/widgets", 1)?.updatedAt, comment.created_at);

  const one = `${COMMENTS}/${comment.id}`;
  t.like((await call(forge, "GET", one)).json<CommentJson>(), { id: comment.id, body: "On it\r\n" });
  const updated = await call(forge, "PATCH", one, { json: { body: "Done" } });
  t.is(updated.status, 200);
  t.is(updated.json<CommentJson>().body, "Done");
  t.true(updated.json<CommentJson>().updated_at > comment.updated_at);

  const removed = await call(forge, "DELETE", one);
  t.is(removed.status, 204);
  t.is(removed.text, "");
  t.deepEqual(forge.comments("acme/widgets"), []);
  t.is((await call(forge, "GET", one)).status, 404);
  t.is((await call(forge, "PATCH", one, { json: { body: "x" } })).status, 404);
  t.is((await call(forge, "DELETE", one)).status, 404);

  forge.addComment("acme/widgets", 2, "goes with its issue");
  forge.deleteIssue("acme/widgets", 2);
  t.deepEqual(forge.comments("acme/widgets"), []);
  t.is((await call(forge, "GET", `${REPO}/issues/2/comments`)).status, 410);
  t.is((await call(forge, "POST", `${REPO}/issues/2/comments`, { json: { body: "late" } })).status, 410);
});

test("a body over 65,536 characters or a blank one answers GitHub's 422; 65,536 emoji are taken", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 1);
  const url = `${REPO}/issues/1/comments`;
  const tooLong = await call(forge, "POST", url, { json: { body: "x".repeat(65_537) } });
  t.is(tooLong.status, 422);
  t.like(tooLong.json<object>(), {
    message: "Validation Failed",
    errors: [
      {
        resource: "IssueComment",
        code: "custom",
        field: "body",
        message: "body is too long (maximum is 65536 characters)",
      },
    ],
    status: "422",
  });
  const blank = await call(forge, "POST", url, { json: { body: "  " } });
  t.like(blank.json<object>(), {
    errors: [{ resource: "IssueComment", code: "missing_field", field: "body" }],
  });
  const emoji = await call(forge, "POST", url, { json: { body: "😀".repeat(65_536) } });
  t.is(emoji.status, 201);
  const id = emoji.json<CommentJson>().id;
  t.is((await call(forge, "PATCH", `${COMMENTS}/${id}`, { json: { body: "y".repeat(65_537) } })).status, 422);
  t.is(forge.comments("acme/widgets").length, 1);
});

test("GET /user answers the token's user; the comment routes count against the quota and hit its limit", async (t) => {
  const forge = await givenFakeForge(t, { login: "octo-agent", quota: 3 });
  forge.seed("acme/widgets", 1);
  const user = await call(forge, "GET", "/user");
  t.is(user.status, 200);
  t.like(user.json<object>(), { login: "octo-agent", type: "User" });
  await call(forge, "GET", COMMENTS);
  await call(forge, "POST", `${REPO}/issues/1/comments`, { json: { body: "one" } });
  t.is(forge.quotaUsed, 3);
  const limited = await call(forge, "GET", COMMENTS);
  t.is(limited.status, 403);
  t.is(limited.headers["x-ratelimit-remaining"], "0");
  t.false(forge.requests.at(-1)?.counted);
});

test("the helpers: seeded comments over many issues, someone else's comment, edits and deletions server-side", async (t) => {
  const forge = await givenFakeForge(t);
  const numbers = forge.seed("acme/widgets", 40);
  const ids = forge.seedComments("acme/widgets", 120, numbers);
  t.is(new Set(ids).size, 120);
  t.deepEqual(
    ids,
    [...ids].sort((a, b) => a - b),
  );
  t.true(ids.every((id) => String(id).length === 10));
  t.is(forge.comments("acme/widgets", numbers[0]).length, 3);
  const authors = new Set(forge.comments("acme/widgets").map((comment) => comment.author));
  t.deepEqual([...authors].sort(), ["alice", "bob", "carol", "svc-bot"]);
  const mine = forge.addComment("acme/widgets", 1, "mine", { author: "svc-bot" });
  t.is(mine.author, "svc-bot");
  const before = forge.comments("acme/widgets", 1).find((comment) => comment.id === mine.id);
  const unchanged = forge.editComment("acme/widgets", mine.id, "mine");
  t.is(before?.updatedAt, unchanged.updatedAt, "an edit that changes nothing moves nothing");
  forge.deleteComment("acme/widgets", mine.id);
  t.throws(() => forge.deleteComment("acme/widgets", mine.id), { message: /no comment/ });
  const issue = await call(forge, "GET", `${REPO}/issues/1`);
  t.is(issue.json<{ comments: number }>().comments, 3);
});
