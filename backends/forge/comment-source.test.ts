/**
 * The forge's comment source (backends/forge/comment-source.ts) over a stand-in for its client: a listing
 * that names a comment twice keeps the last; a skipped comment on an issue newer than the issues listing
 * holds the cursor back and drops the listing's validators; one on a pull request or older does not.
 */
import test from "ava";
import type { ServerComment } from "../backend.js";
import { isRecordOf } from "../comment.js";
import { ForgeCommentSource } from "./comment-source.js";
import type { CommentListing, ForgeComments } from "./comments.js";

const LISTED_AT = Date.parse("2026-01-01T12:00:00Z");

function comment(id: string, parentKey: string, at: string, body = "text"): ServerComment {
  return {
    id,
    parentKey,
    author: "alice",
    authorId: "alice",
    body,
    createdAt: at,
    updatedAt: at,
    version: null,
  };
}

/** A source whose client lists `listing`; pull request 9 was seen by the issues listing. */
function sourceOf(listing: Partial<CommentListing>): ForgeCommentSource {
  const full: CommentListing = {
    comments: [],
    unchanged: [],
    validators: [{ url: "u", etag: 'W/"1"', payload: "{}" }],
    complete: true,
    skipped: listing.skippedComments?.length ?? 0,
    skippedComments: [],
    ...listing,
  };
  const client = {
    listAll: async () => full,
    listChangedSince: async () => full,
  } as unknown as ForgeComments;
  return new ForgeCommentSource(client, {
    listedAt: () => LISTED_AT,
    isPullRequest: (key) => key === "9",
    overlapMs: 60_000,
  });
}

test("a comment listed twice (the full listing and its primed delta) is kept once, as listed last", async (t) => {
  const listing = await sourceOf({
    comments: [
      comment("1", "2", "2026-01-01T10:00:00Z"),
      comment("1", "2", "2026-01-01T11:00:00Z", "edited"),
    ],
  }).listAll(isRecordOf(["2"]));
  t.deepEqual(
    listing.comments.map((one) => [one.id, one.body]),
    [["1", "edited"]],
  );
  t.is(listing.validators?.length, 1);
  t.is(listing.cursorCeiling, undefined);
});

test("a skipped comment on an issue newer than the issues listing holds the cursor back; on a pull request or older it does not", async (t) => {
  const fresh = comment("5", "7", "2026-01-01T12:00:03Z");
  const held = await sourceOf({ skippedComments: [fresh] }).listChangedSince("2026-01-01T11:00:00Z");
  t.is(held.cursorCeiling, fresh.updatedAt);
  t.is(held.validators, undefined, "its validators are not kept: the next fetch asks again");
  for (const skipped of [
    comment("6", "9", "2026-01-01T12:00:03Z"),
    comment("8", "7", "2026-01-01T11:00:00Z"),
  ]) {
    const kept = await sourceOf({ skippedComments: [skipped] }).listChangedSince("2026-01-01T11:00:00Z");
    t.is(kept.cursorCeiling, undefined, skipped.id);
    t.is(kept.validators?.length, 1, skipped.id);
  }
});
