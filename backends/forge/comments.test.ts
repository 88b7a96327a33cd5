/**
 * The forge's comment client against the fake forge (every exchange judged against GitHub's description when
 * the fake closes): the repository-wide listing with its primed delta and 304s, pull requests' comments
 * skipped, compare-before-write for edits and deletions, 404 gone, the body limit before any request and the
 * forge's 422, `GET /user`, and the rate limits as for issues.
 */
import test, { type ExecutionContext } from "ava";
import { SvcError, UserFacingError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import { type FakeForge, type FakeForgeOptions, givenFakeForge } from "../../testing/fake-forge.js";
import type { Validator, ValidatorStore } from "../backend.js";
import { ForgeBackend } from "./backend.js";
import { type CommentListing, type ForgeComments, MAX_COMMENT_CHARACTERS } from "./comments.js";
import { QuotaExhaustedError } from "./quota.js";

const REPO = "acme/widgets";

/** The cache's validators, kept as the sync keeps a listing's (after it, replacing earlier deltas'). */
class Validators implements ValidatorStore {
  readonly kept = new Map<string, Validator>();
  lookup(url: string): Validator | undefined {
    return this.kept.get(url);
  }
  remember(validator: Validator): void {
    this.kept.set(validator.url, validator);
  }
  keep(listing: CommentListing): void {
    const prefix = listing.replacesValidators;
    if (prefix !== undefined)
      for (const url of this.kept.keys()) if (url.startsWith(prefix)) this.kept.delete(url);
    for (const validator of listing.validators) this.remember(validator);
  }
}

interface Given {
  readonly forge: FakeForge;
  readonly comments: ForgeComments;
  readonly validators: Validators;
}

async function givenComments(t: ExecutionContext, options: FakeForgeOptions = {}): Promise<Given> {
  const forge = await givenFakeForge(t, options);
  const backend = new ForgeBackend(
    { token: forge.token, baseUrl: forge.url, allowedOrigins: forge.origin },
    REPO,
    new HttpClient({ allowedOrigins: forge.origin, agent: "svc-test" }),
  );
  const validators = new Validators();
  backend.useValidators(validators);
  return { forge, comments: backend.comments(), validators };
}

/** The issues (not pull requests) of the fake, as the issues listing knows them. */
function knownIssues(forge: FakeForge): (key: string) => boolean {
  const keys = new Set(
    forge
      .issues(REPO)
      .filter((issue) => !issue.pullRequest)
      .map((issue) => String(issue.number)),
  );
  return (key) => keys.has(key);
}

/** The delta's `since` as the sync computes it: the newest `updated_at` listed, less the overlap. */
function nextSince(listing: CommentListing): string {
  const newest = listing.comments
    .map((comment) => comment.updatedAt)
    .sort()
    .at(-1) as string;
  return new Date(Date.parse(newest) - 60_000).toISOString();
}

test("listing: every comment on an issue, by updated_at, across result pages; pull requests' skipped", async (t) => {
  const { forge, comments } = await givenComments(t);
  forge.seed(REPO, 6, { pullRequests: 2 });
  const pulls = forge.issues(REPO).filter((issue) => issue.pullRequest);
  const numbers = forge.issues(REPO).map((issue) => issue.number);
  forge.seedComments(REPO, 230, numbers);
  const onPulls = forge.comments(REPO).filter((c) => pulls.some((p) => p.number === c.issueNumber));
  t.true(onPulls.length > 0);

  const listing = await comments.listAll(knownIssues(forge));
  // The primed delta lists the last minute's comments again (the cache takes each once).
  const listed = new Set(listing.comments.map((comment) => comment.id));
  const expected = forge.comments(REPO).filter((comment) => !onPulls.some((c) => c.id === comment.id));
  t.deepEqual([...listed].sort(), expected.map((comment) => String(comment.id)).sort());
  t.true(listing.skipped >= onPulls.length);
  t.true(listing.complete);
  const fake = new Map(forge.comments(REPO).map((comment) => [String(comment.id), comment]));
  for (const comment of listing.comments) {
    const expected = fake.get(comment.id);
    t.like(comment, {
      parentKey: String(expected?.issueNumber),
      author: expected?.author,
      authorId: expected?.author,
      body: expected?.body,
      createdAt: expected?.createdAt,
      updatedAt: expected?.updatedAt,
      version: null,
    });
  }
  const times = listing.comments.slice(0, expected.length).map((comment) => comment.updatedAt);
  t.deepEqual(times, [...times].sort(), "the full listing, before the primed delta, by updated_at");
  const listings = forge.requests.filter((request) => request.path.includes("/issues/comments"));
  // Three result pages of 100 (the later ones through Link, in GitHub's /repositories/<id> form), then the
  // primed delta: never one request per issue.
  t.deepEqual(
    listings.map((request) => request.path.replace(/\?.*/, "")),
    [
      "/repos/acme/widgets/issues/comments",
      `/repositories/${forge.repositoryId(REPO)}/issues/comments`,
      `/repositories/${forge.repositoryId(REPO)}/issues/comments`,
      "/repos/acme/widgets/issues/comments",
    ],
  );
  t.regex(listings[0]?.path ?? "", /\?sort=updated&direction=asc&per_page=100$/);
  t.regex(listings[3]?.path ?? "", /&since=/);
});

test("a no-op delta is all 304 and spends no quota; a comment added or edited since shows in the next", async (t) => {
  let now = Date.parse("2025-06-01T08:00:00Z");
  const { forge, comments, validators } = await givenComments(t, { now: () => now });
  forge.seed(REPO, 3);
  forge.seedComments(REPO, 9, [1, 2, 3]);
  const full = await comments.listAll(knownIssues(forge));
  validators.keep(full);
  const since = nextSince(full);

  const used = forge.quotaUsed;
  const from = forge.requests.length;
  const noop = await comments.listChangedSince(since, knownIssues(forge));
  validators.keep(noop);
  t.deepEqual(
    forge.requests.slice(from).map((request) => request.status),
    [304],
  );
  t.is(forge.quotaUsed, used);
  t.deepEqual(noop.comments, []);
  t.true(noop.unchanged.length > 0, "the 304 stands for the comments the kept page listed");
  t.false(noop.complete);

  now += 120_000;
  const added = forge.addComment(REPO, 2, "Someone else's reply");
  const delta = await comments.listChangedSince(since, knownIssues(forge));
  t.like(
    delta.comments.find((comment) => comment.id === String(added.id)),
    { parentKey: "2", author: "alice", body: "Someone else's reply" },
  );
  validators.keep(delta);
  now += 120_000;
  forge.editComment(REPO, added.id, "Someone else's reply, edited");
  const edited = await comments.listChangedSince(nextSince(delta), knownIssues(forge));
  t.is(edited.comments[0]?.body, "Someone else's reply, edited");
});

test("create posts as the token's user; whoAmI is GET /user's login", async (t) => {
  const { forge, comments } = await givenComments(t, { login: "octo-agent" });
  forge.seed(REPO, 2);
  t.is(await comments.whoAmI(), "octo-agent");
  const created = await comments.create("2", "On it.\r\n\n---\nnot: frontmatter\n");
  t.like(created, { parentKey: "2", author: "octo-agent", authorId: "octo-agent", version: null });
  t.is(created.body, "On it.\r\n\n---\nnot: frontmatter\n");
  t.deepEqual(
    forge.comments(REPO).map((comment) => [String(comment.id), comment.body]),
    [[created.id, created.body]],
  );
  forge.deleteIssue(REPO, 1);
  const gone = await t.throwsAsync(comments.create("1", "late"), { instanceOf: UserFacingError });
  t.regex(gone?.message ?? "", /issue 1 was deleted on the forge \(410\); nothing was written/);
});

test("update and remove compare before they write: changed since the base is a conflict, and nothing is sent", async (t) => {
  let now = Date.parse("2025-06-01T08:00:00Z");
  const { forge, comments } = await givenComments(t, { now: () => now });
  forge.seed(REPO, 1);
  const mine = await comments.create("1", "first draft");
  const base = { version: null, updatedAt: mine.updatedAt };
  now += 5000;
  forge.editComment(REPO, Number(mine.id), "edited in the browser");
  const writes = () => forge.requests.filter((request) => request.method !== "GET").length;
  const before = writes();
  const conflict = await comments.update(mine.id, "second draft", base);
  t.like(conflict, { kind: "conflict" });
  t.regex(conflict.kind === "conflict" ? conflict.current : "", /^updated \d{4}-/);
  t.like(await comments.remove(mine.id, base), { kind: "conflict" });
  t.is(writes(), before, "no PATCH and no DELETE");
  t.is(forge.comments(REPO)[0]?.body, "edited in the browser");

  const current = await comments.read(mine.id);
  const fresh = { version: null, updatedAt: current?.updatedAt as string };
  const updated = await comments.update(mine.id, "second draft", fresh);
  t.like(updated, { kind: "ok", comment: { id: mine.id, body: "second draft" } });
  // Run again on the same base (its answer lost): the comment already holds the body, so it is done.
  t.like(await comments.update(mine.id, "second draft", fresh), { kind: "ok" });
  t.is(forge.requests.filter((request) => request.method === "PATCH").length, 1);

  const latest = { version: null, updatedAt: updated.kind === "ok" ? updated.comment.updatedAt : "" };
  t.deepEqual(await comments.remove(mine.id, latest), { kind: "ok" });
  t.deepEqual(forge.comments(REPO), []);
  t.deepEqual(await comments.remove(mine.id, latest), { kind: "gone" });
  t.deepEqual(await comments.update(mine.id, "again", latest), { kind: "gone" });
  t.is(await comments.read(mine.id), undefined);
});

test("a body over 65,536 characters is refused before any request; the forge's 422 is said in its words", async (t) => {
  const { forge, comments } = await givenComments(t);
  forge.seed(REPO, 1);
  const from = forge.requests.length;
  const error = await t.throwsAsync(comments.create("1", "x".repeat(MAX_COMMENT_CHARACTERS + 1)), {
    instanceOf: UserFacingError,
  });
  t.is(
    error?.message,
    "posting a comment on issue 1: the body has 65537 characters; the forge takes at most 65536 in a comment. Shorten it; nothing was written",
  );
  t.is(forge.requests.length, from);
  const emoji = await comments.create("1", "😀".repeat(MAX_COMMENT_CHARACTERS));
  t.is([...emoji.body].length, MAX_COMMENT_CHARACTERS);
  const blank = await t.throwsAsync(comments.create("1", "   "), { instanceOf: SvcError });
  t.regex(
    blank?.message ?? "",
    /posting a comment on issue 1: the forge refused it \(422\): "?body missing_field/,
  );
});

test("rate limits as for issues: a secondary limit is waited out, a spent quota stops the listing with its reset", async (t) => {
  const { forge, comments } = await givenComments(t);
  forge.seed(REPO, 1);
  forge.seedComments(REPO, 2, [1]);
  forge.secondaryLimit(1, { status: 429, retryAfterSeconds: 0 });
  const listing = await comments.listAll(knownIssues(forge));
  t.is(new Set(listing.comments.map((comment) => comment.id)).size, 2);
  t.is(forge.requests[0]?.status, 429);
  forge.setRateLimit(0, 3600);
  const error = await t.throwsAsync(comments.listChangedSince("2025-01-01T00:00:00Z", knownIssues(forge)), {
    instanceOf: QuotaExhaustedError,
  });
  t.regex(error?.message ?? "", /allows no more requests with this FORGE_TOKEN until/);
});
