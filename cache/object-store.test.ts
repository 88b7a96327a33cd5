import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { givenTempDir } from "../testing/sim.js";
import { hasObject, ObjectLookup } from "./object-store.js";

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };

function git(repo: string, args: readonly string[], input?: string): string {
  return execFileSync("git", [`--git-dir=${repo}`, ...args], { env: GIT_ENV, input }).toString("utf8");
}

/** Packs `oids` (with git's own index, version 2 unless told) and removes their loose copies. */
function pack(repo: string, oids: readonly string[], indexVersion = 2): void {
  git(
    repo,
    ["pack-objects", "-q", `--index-version=${indexVersion}`, join(repo, "objects", "pack", "p")],
    `${oids.join("\n")}\n`,
  );
  git(repo, ["prune-packed"]);
}

/** A bare repo holding `count` blobs (hashed with git itself); returns their ids. */
function givenBlobs(repo: string, count: number, salt: string): string[] {
  const oids: string[] = [];
  for (let i = 0; i < count; i++)
    oids.push(git(repo, ["hash-object", "-w", "--stdin"], `${salt} ${i}\n`).trim());
  return oids;
}

/** Ids that are not in any repository here (random-looking, spread over every first byte). */
function absentIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    `${(i % 256).toString(16).padStart(2, "0")}${"5a".repeat(19)}`.slice(0, 40),
  );
}

test("hasObject finds loose objects and objects in v2 and v1 pack indexes, and nothing else", (t) => {
  const repo = join(givenTempDir(t, "svc-object-store-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const packedV2 = givenBlobs(repo, 300, "v2");
  pack(repo, packedV2);
  const packedV1 = givenBlobs(repo, 40, "v1");
  pack(repo, packedV1, 1);
  const loose = givenBlobs(repo, 5, "loose");

  const idx = readdirSync(join(repo, "objects", "pack")).filter((name) => name.endsWith(".idx"));
  t.is(idx.length, 2);
  t.is(git(repo, ["count-objects"]).trim().split(" ")[0], "5", "only the last five are loose");
  for (const oid of [...packedV2, ...packedV1, ...loose]) t.true(hasObject(repo, oid), oid);
  for (const oid of absentIds(512)) t.false(hasObject(repo, oid), oid);
  // The first and last names of the v2 index: the bounds of the search.
  const sorted = [...packedV2].sort();
  t.true(hasObject(repo, sorted[0] as string));
  t.true(hasObject(repo, sorted.at(-1) as string));
  t.false(hasObject(repo, "not an id"));

  const lookup = new ObjectLookup(join(repo, "objects"));
  for (const oid of [...packedV2, ...packedV1, ...loose]) t.true(lookup.has(oid), oid);
  for (const oid of absentIds(512)) t.false(lookup.has(oid), oid);
  t.true(lookup.has(sorted[0] as string));
  t.true(lookup.has(sorted.at(-1) as string));
  t.false(lookup.has("not an id"));
});

test("hasObject is false for a repository without objects and for an unreadable index", (t) => {
  const repo = join(givenTempDir(t, "svc-object-store-"), "repo.git");
  execFileSync("git", ["init", "-q", "--bare", repo], { env: GIT_ENV });
  const [oid] = givenBlobs(repo, 1, "x");
  pack(repo, [oid as string]);
  t.false(existsSync(join(repo, "objects", (oid as string).slice(0, 2), (oid as string).slice(2))));
  t.true(hasObject(repo, oid as string));
  const [idx] = readdirSync(join(repo, "objects", "pack")).filter((name) => name.endsWith(".idx"));
  writeFileSync(join(repo, "objects", "pack", idx as string), "garbage");
  t.false(hasObject(repo, oid as string));
  t.false(new ObjectLookup(join(repo, "objects")).has(oid as string));
  t.false(hasObject(join(repo, "missing"), oid as string));
  t.false(new ObjectLookup(join(repo, "missing", "objects")).has(oid as string));
});
