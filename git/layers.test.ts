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

/** Each runtime or type import between our own source files (tests excluded), as `from → to` file paths. */
function importGraph(): Map<string, string[]> {
  const folders = ["backends", "cache", "cli", "core", "git", "helper", "scripts", "server", "testing"];
  const files = folders.flatMap(sources).filter((file) => !file.endsWith(".test.ts"));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(repoRoot, file), "utf8");
    const targets = [
      ...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)"(\.{1,2}\/[^"]+)"/gm),
    ]
      .map((match) => posix.normalize(posix.join(posix.dirname(file), match[1] as string)))
      .map((target) => target.replace(/\.js$/, ".ts").replace(/\.cjs$/, ".cts"))
      .filter((target) => known.has(target));
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan): each one is an import cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
      } else if (onStack.has(next))
        low.set(file, Math.min(low.get(file) as number, index.get(next) as number));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

test("no import cycle between source files, type-only imports included", (t) => {
  const graph = importGraph();
  t.true(
    (graph.get("helper/push.ts") ?? []).some((to) => to.startsWith("cache/")),
    "the graph sees imports",
  );
  t.deepEqual(cycles(new Map([...graph, ["a.ts", ["b.ts"]], ["b.ts", ["a.ts"]]])), [["a.ts", "b.ts"]]);
  t.deepEqual(cycles(graph), []);
});

test("no cycle between the parts: core/ and git/ import no part above them, backends/ no cache/ or helper/", (t) => {
  t.deepEqual(
    arrows("core", (file) =>
      file.endsWith(".test.ts") ? [] : ["git", "backends", "cache", "helper", "cli", "server"],
    ),
    [],
  );
  t.deepEqual(
    arrows("backends", (file) => (file.endsWith(".test.ts") ? [] : ["cache", "helper", "cli", "server"])),
    [],
  );
  t.deepEqual(
    arrows("cache", (file) => (file.endsWith(".test.ts") ? [] : ["helper", "cli", "server"])),
    [],
  );
});

test("no source file outside the tests is over 600 lines, comments and blank lines included", (t) => {
  // biome's noExcessiveLinesPerFile counts code lines only; a reader scrolls through all of them.
  const folders = ["backends", "cache", "cli", "core", "git", "helper", "scripts", "server", "testing"];
  const long = folders
    .flatMap(sources)
    .filter((file) => !file.endsWith(".test.ts"))
    .map((file) => ({ file, lines: readFileSync(join(repoRoot, file), "utf8").split("\n").length - 1 }))
    .filter(({ lines }) => lines > 600)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
  t.true(sources("helper").includes("helper/push.ts"), "the walk sees the sources");
  t.deepEqual(long, []);
});
