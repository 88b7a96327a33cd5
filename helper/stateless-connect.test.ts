/**
 * Which fetches svc answers itself (helper/stateless-connect.ts): only a clone's plain fetch that sends
 * `done`; a negotiation, a shallow fetch or one asking for more than a pack goes to upload-pack.
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { givenTempDir } from "../testing/sim.js";
import { asksForFirstState, folderIdentity } from "./stateless-connect.js";

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

test("a folder made anew at the same path has another identity, even on the inode of the one before", (t) => {
  const folder = join(givenTempDir(t, "svc-identity-"), "objects");
  mkdirSync(folder);
  const first = folderIdentity(folder);
  t.is(folderIdentity(folder), first, "stable while the folder lives");
  if (first === undefined) {
    t.pass("no birth time here: no identity, so no prefetch mark");
    return;
  }
  // Deleted and made again until the file system hands out an inode it had given before (it usually does).
  const seen = new Map<bigint, string>([[statSync(folder, { bigint: true }).ino, first]]);
  let reused = false;
  for (let round = 0; round < 20 && !reused; round++) {
    rmSync(folder, { recursive: true });
    mkdirSync(folder);
    const { ino } = statSync(folder, { bigint: true });
    const identity = folderIdentity(folder) as string;
    const before = seen.get(ino);
    if (before !== undefined) {
      reused = true;
      t.not(identity, before, `inode ${ino} again`);
    }
    seen.set(ino, identity);
  }
  t.is(folderIdentity(join(folder, "missing")), undefined);
});
