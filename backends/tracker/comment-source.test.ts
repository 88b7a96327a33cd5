/**
 * The tracker's `CommentSource` adapter (comment-source.ts) against the fake tracker: set unless
 * `comments: false`; listings without `threads`; `update` and `remove` need the comment's issue (and refuse
 * before any request without it); `bodyProblem` counts the ADF's text, not the Markdown's characters; who
 * you are is `Display Name (accountId)` from `/myself`.
 */
import test from "ava";
import { UserFacingError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import { type FakeTracker, givenFakeTracker } from "../../testing/fake-tracker.js";
import { trackerVars } from "../../testing/tracker.js";
import type { CommentSource } from "../backend.js";
import { TrackerBackend } from "./backend.js";
import { trackerConfig } from "./config.js";

/** The backend's comment source, as the sync and the push see it (the `CommentSource` interface). */
function sourceOf(tracker: FakeTracker, comments?: boolean): CommentSource | undefined {
  return backendFor(tracker, comments).commentSource;
}

function backendFor(tracker: FakeTracker, comments?: boolean): TrackerBackend {
  const config = trackerConfig(trackerVars(tracker));
  const http = new HttpClient({
    agent: "tracker-comment-source-test",
    allowedOrigins: config.allowedOrigins,
  });
  return new TrackerBackend(config, "TEST", http, {
    mutationGapMs: 0,
    ...(comments === undefined ? {} : { comments }),
  });
}

test("commentSource is set unless comments are off; its listing is the client's without threads", async (t) => {
  const tracker = await givenFakeTracker(t);
  const [key] = tracker.seed("TEST", 2) as [string, string];
  const id = tracker.addComment(key, "Hello.").id;
  t.is(sourceOf(tracker, false), undefined);
  const source = sourceOf(tracker);
  if (!source) return t.fail("no comment source");
  t.false(source.versioned);
  const listing = await source.listAll();
  t.deepEqual(Object.keys(listing).sort(), ["comments", "complete"]);
  t.true(listing.complete);
  t.deepEqual(
    listing.comments.map((comment) => [comment.id, comment.parentKey, comment.body]),
    [[id, key, "Hello.\n"]],
  );
});

test("update and remove go to the comment's issue; without it they refuse before any request", async (t) => {
  const tracker = await givenFakeTracker(t);
  const [key] = tracker.seed("TEST", 1) as [string];
  const source = sourceOf(tracker);
  if (!source) return t.fail("no comment source");
  const mine = await source.create(key, "Mine.", "ignored");
  const base = { version: null, updatedAt: mine.updatedAt };
  const from = tracker.requests.length;
  const error = await t.throwsAsync(source.update(mine.id, "Edited.", base, ""));
  t.true(error instanceof UserFacingError);
  t.regex(error?.message ?? "", new RegExp(`comment ${mine.id}: the issue it is on is not known`));
  await t.throwsAsync(source.remove(mine.id, base, ""));
  t.is(tracker.requests.length, from, "no request");
  const edited = await source.update(mine.id, "Edited.", base, key);
  if (edited.kind !== "ok") return t.fail(edited.kind);
  t.is(edited.comment.body, "Edited.\n");
  t.deepEqual(await source.remove(mine.id, { version: null, updatedAt: edited.comment.updatedAt }, key), {
    kind: "ok",
  });
  t.deepEqual(tracker.comments(key), []);
});

test("bodyProblem counts the ADF's text; whoAmI is the display name with the account id", async (t) => {
  const tracker = await givenFakeTracker(t);
  const source = sourceOf(tracker);
  if (!source) return t.fail("no comment source");
  t.regex(source.bodyProblem?.("a".repeat(32_768)) ?? "", /32,768 characters of text/);
  t.is(source.bodyProblem?.(`[log](https://example.com/${"x".repeat(40_000)})`), undefined);
  t.deepEqual(await source.whoAmI(undefined), {
    id: tracker.self.accountId,
    author: `svc bot (${tracker.self.accountId})`,
  });
});
