/**
 * The arrows of the house (DESIGN.md §1) that issue 33 drew, read from the sources' own imports (type-only
 * ones included, which the build erases): `git/` imports only `core/` and itself (its tests `testing/` as
 * well), never `cache/`, `helper/`, `cli/`, `backends/` or `server/`; `cli/` and `scripts/swarm/` never import
 * `helper/` (what both need lives below them).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import test from "ava";
import { repoRoot } from "../testing/paths.js";

/** The TypeScript sources under `folder` (relative to the repository), tests included. */
function sources(folder: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.c?ts$/.test(entry.name)) found.push(path);
    }
  };
  walk(folder);
  return found;
}

/** The repository folders `file` imports from (`core`, `git`, …): `from "…"`, `import("…")`, `require("…")`. */
function importedFolders(file: string): Set<string> {
  const text = readFileSync(join(repoRoot, file), "utf8");
  const folders = new Set<string>();
  for (const match of text.matchAll(
    /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)"(\.{1,2}\/[^"]+)"/gm,
  )) {
    const target = posix.normalize(posix.join(posix.dirname(file), match[1] as string));
    folders.add(target.split("/")[0] as string);
  }
  return folders;
}

/** `file → folder` for each import of a file under `folder` that reaches one of `forbidden`. */
function arrows(folder: string, forbidden: (file: string) => readonly string[]): string[] {
  return sources(folder).flatMap((file) =>
    [...importedFolders(file)].filter((to) => forbidden(file).includes(to)).map((to) => `${file} -> ${to}/`),
  );
}

test("the reader sees the arrows there are: cache/ imports git/, helper/ imports cache/ and git/", (t) => {
  t.true(importedFolders("cache/cache.ts").has("git"));
  t.true(importedFolders("helper/push.ts").has("cache"));
  t.true(importedFolders("helper/push.ts").has("git"));
  t.true(importedFolders("helper/bin.cts").has("core"), "a require of the CommonJS executable counts too");
  t.true(sources("git").includes("git/objects.ts"));
});

test("git/ imports only core/ and itself (its tests testing/ too)", (t) => {
  const upward = ["cache", "helper", "cli", "backends", "server", "scripts", "e2e", "fixtures"];
  t.deepEqual(
    arrows("git", (file) => (file.endsWith(".test.ts") ? upward : [...upward, "testing"])),
    [],
  );
});

test("cli/ and scripts/swarm/ never import helper/", (t) => {
  t.deepEqual(
    arrows("cli", () => ["helper"]),
    [],
  );
  t.deepEqual(
    arrows("scripts/swarm", () => ["helper"]),
    [],
  );
  t.deepEqual(
    [...importedFolders("scripts/swarm.ts")].filter((to) => to === "helper"),
    [],
  );
});
