/**
 * Which fetches svc answers itself (helper/stateless-connect.ts): only a clone's plain fetch that sends
 * `done`; a negotiation, a shallow fetch or one asking for more than a pack goes to upload-pack.
 */
import test from "ava";
import { asksForFirstState } from "./stateless-connect.js";

test("only a clone's plain fetch with done is answered with the first state", (t) => {
  const want = `want ${"a".repeat(40)}`;
  const base = [
    "command=fetch",
    "agent=git/2.39.5",
    "object-format=sha1",
    "thin-pack",
    "no-progress",
    "ofs-delta",
    "filter blob:none",
    want,
    want,
  ];
  t.true(asksForFirstState([...base, "done"]));
  t.false(asksForFirstState(base), "without done, git negotiates");
  t.false(asksForFirstState([...base, `have ${"b".repeat(40)}`, "done"]));
  t.false(asksForFirstState([...base, "deepen 1", "done"]));
  t.false(asksForFirstState([...base, "want-ref refs/heads/main", "done"]));
  t.false(asksForFirstState([...base, "packfile-uris https", "done"]));
});
