/**
 * The docs name only what exists (issue 33), read from README.md, SECURITY.md and docs/*.md:
 *
 * - every repository path in a code span (`helper/pktline.ts`, `scripts/deploy/`, `backends/*\/config.ts`)
 *   and every relative link exists, and a link's `#anchor` names a heading of the page it points to;
 * - a code span holding a path, followed directly by code spans holding names (`core/http.ts`
 *   `HttpClient.checkEgress`, `parseAllowlist`), is a `file` `symbol` pair: the file declares each name
 *   (`Class.member`: the class, and a member of that name);
 * - docs/commands.md's table is the code's: one row per command class of `COMMANDS` (cli/main.ts), its first
 *   cell the usage line `svc <command> --help` prints, its second starting with the command's description;
 * - docs/settings.md's table names every setting svc reads (the `SVC_*` names and credentials of the
 *   environment, the `svc.*` keys of git's config) and none that nothing reads;
 * - docs/CHANGELOG.md has one `## Revision N` per cache schema revision (cache/db-schema.ts `CACHE_MIGRATIONS`);
 * - README.md stays a front door: at most 16 KB, and it links every docs page; its test line (the second
 *   line of its first `sh` block) is what .ci/run runs right after its clean install.
 *
 * Each check returns what it found wrong, so that a failure lists every stale name at once.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import test from "ava";
import { CACHE_MIGRATIONS } from "../cache/db-schema.js";
import { describeCommand, usageLine } from "../cli/command-spec.js";
import { COMMANDS } from "../cli/main.js";
import { repoRoot } from "./paths.js";

/** The top-level folders and files whose paths the docs name. */
const ROOTS = [
  "core",
  "git",
  "backends",
  "cache",
  "helper",
  "server",
  "cli",
  "scripts",
  "e2e",
  "testing",
  "fixtures",
  "docs",
  ".ci",
];
const ROOT_FILES = ["README.md", "SECURITY.md", "package.json", "tsconfig.json", "biome.json"];

/** Where svc itself reads its settings (what a user runs: not the tests, the dev scripts or the servers). */
const SETTING_READERS = ["core", "git", "backends", "cache", "helper", "cli"];

/**
 * `SVC_*` names in svc's code that are no setting of the user's: what svc sets for its own child processes,
 * the hooks tests inject faults through, and constants that happen to start so.
 */
const NOT_SETTINGS = new Set([
  "SVC_CLONE_WITH_BLOBS", // svc init → the helper of its clone
  "SVC_USER_CWD", // svc init → the helper of its clone
  "SVC_COPYING_HISTORY", // the helper → the git it runs on the cache
  "SVC_TEST_KILL_AT", // e2e fault injection
  "SVC_TEST_DIE_AFTER_WRITES", // e2e fault injection
  "SVC_VERSION", // a constant
  "SVC_IDENTITY", // a constant
]);

/** Environment variables svc reads that belong to others: git's, the shell's, npm's. */
function othersVariable(name: string): boolean {
  return /^GIT_/.test(name) || ["HOME", "PATH", "XDG_CACHE_HOME", "INIT_CWD"].includes(name);
}

const read = (file: string) => readFileSync(join(repoRoot, file), "utf8");

/** Files under `folder` (relative to the repository) whose names pass `keep`. */
function filesUnder(folder: string, keep: (name: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (keep(entry.name)) found.push(path);
    }
  };
  if (existsSync(join(repoRoot, folder))) walk(folder);
  return found;
}

/** The pages the check reads. */
function docPages(): string[] {
  return ["README.md", "SECURITY.md", ...filesUnder("docs", (name) => name.endsWith(".md")).sort()];
}

/** The text of `page` without its fenced code blocks (examples of output, not references). */
function prose(page: string): string {
  return read(page).replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

interface Span {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** The code spans of `text` (single or double backticks), in order. */
function codeSpans(text: string): Span[] {
  return [...text.matchAll(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g)].map((match) => ({
    text: (match[2] ?? "").trim().replaceAll("\\|", "|"),
    start: match.index,
    end: match.index + match[0].length,
  }));
}

/** A span that is a repository path (`./` allowed; no `<placeholder>`), else undefined. */
function repoPath(span: string): string | undefined {
  const path = span.replace(/^\.\//, "");
  if (/[\s<>`'"$]/.test(path)) return undefined;
  if (ROOT_FILES.includes(path)) return path;
  const [top] = path.split("/");
  return path.includes("/") && ROOTS.includes(top ?? "") ? path : undefined;
}

/** Whether `path` (a file, a folder with a trailing `/`, or a glob with `*`) exists. */
function pathExists(path: string): boolean {
  if (path.includes("*")) {
    const pattern = new RegExp(
      `^${path.split("*").map(escapeRegExp).join("[^/]+")}${path.endsWith("/") ? "" : "$"}`,
    );
    const top = path.split("/")[0] ?? "";
    return filesUnder(top, () => true).some((file) => pattern.test(file));
  }
  const full = join(repoRoot, path);
  if (!existsSync(full)) return false;
  return path.endsWith("/") ? statSync(full).isDirectory() : true;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether `file`'s text declares `name` (a function, class, type, variable, or a member). */
function declares(text: string, name: string): boolean {
  const word = escapeRegExp(name);
  const topLevel = new RegExp(
    `\\b(?:function\\*?|class|interface|type|enum|const|let|var|namespace)\\s+${word}\\b|` +
      `export\\s*\\{[^}]*\\b${word}\\b[^}]*\\}`,
  );
  const member = new RegExp(
    `^\\s*(?:(?:public|private|protected|static|readonly|async|override|get|set|abstract)\\s+)*\\*?${word}\\??\\s*[(<:=]`,
    "m",
  );
  return topLevel.test(text) || member.test(text);
}

/** Whether `file` declares `symbol`: `Name`, or `Class.member`. */
function declaresSymbol(file: string, symbol: string): boolean {
  const text = read(file);
  const [owner, member] = symbol.split(".");
  if (member === undefined) return declares(text, owner ?? "");
  const at = text.search(new RegExp(`\\b(?:class|interface|namespace)\\s+${escapeRegExp(owner ?? "")}\\b`));
  return at >= 0 && declares(text.slice(at), member);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)?$/;

/** The names in code spans right after the path span `at` of `spans` in `text`: `` `a`, `b` and `c` ``. */
function namesAfter(text: string, spans: readonly Span[], at: number): string[] {
  const names: string[] = [];
  for (let next = at + 1; next < spans.length; next++) {
    const gap = text.slice(spans[next - 1]?.end, spans[next]?.start);
    const span = spans[next]?.text ?? "";
    if (!/^(\s*,\s*|\s+|\s*,?\s+and\s+)$/.test(gap) || !IDENTIFIER.test(span)) break;
    names.push(span);
  }
  return names;
}

/** Every problem with the paths and `file` `symbol` pairs of `page`. */
function pathProblems(page: string): string[] {
  const text = prose(page);
  const spans = codeSpans(text);
  const problems: string[] = [];
  spans.forEach((span, index) => {
    const path = repoPath(span.text);
    if (path === undefined) return;
    if (!pathExists(path)) {
      problems.push(`${page}: \`${span.text}\` does not exist`);
      return;
    }
    if (path.endsWith("/") || path.includes("*")) return;
    for (const name of namesAfter(text, spans, index)) {
      if (!declaresSymbol(path, name)) problems.push(`${page}: \`${path}\` declares no \`${name}\``);
    }
  });
  return problems;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(page: string): Set<string> {
  return new Set([...prose(page).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map((match) => anchor(match[1] ?? "")));
}

/** Every relative link of `page` whose file, or whose anchor in it, does not exist. */
function linkProblems(page: string): string[] {
  const problems: string[] = [];
  const text = prose(page).replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g, "");
  for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1] ?? "";
    if (/^[a-z]+:/i.test(target)) continue;
    const [file = "", fragment] = target.split("#");
    const resolved = file === "" ? page : posix.normalize(posix.join(posix.dirname(page), file));
    if (!existsSync(join(repoRoot, resolved))) {
      problems.push(`${page}: the link ${target} leads nowhere`);
    } else if (fragment !== undefined && resolved.endsWith(".md") && !anchorsOf(resolved).has(fragment)) {
      problems.push(`${page}: the link ${target}: ${resolved} has no heading #${fragment}`);
    }
  }
  return problems;
}

/** The rows of the first table of `page` whose header row's first cell is `header`, as cells. */
function tableRows(page: string, header: string): string[][] {
  const lines = read(page).split("\n");
  const start = lines.findIndex((line) => line.startsWith("|") && cells(line)[0] === header);
  if (start < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(cells(line));
  }
  return rows;
}

/** The cells of a table row (a `|` inside a code span is written `\|`). */
function cells(line: string): string[] {
  return line
    .replace(/^\|/, "")
    .replace(/\|\s*$/, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

/** Every difference between docs/commands.md's table and the command classes. */
function commandProblems(): string[] {
  const rows = tableRows("docs/commands.md", "Command");
  const documented = new Map<string, string>();
  for (const [first = "", second = ""] of rows) {
    const usage = codeSpans(first)[0]?.text;
    if (usage?.startsWith("svc ")) documented.set(usage, second);
  }
  const problems: string[] = [];
  const expected = new Set<string>();
  for (const commandClass of COMMANDS) {
    const spec = describeCommand(commandClass);
    const usage = usageLine(spec);
    expected.add(usage);
    const description = documented.get(usage);
    if (description === undefined) problems.push(`docs/commands.md: no row for \`${usage}\``);
    else if (!description.startsWith(spec.description)) {
      problems.push(
        `docs/commands.md: \`${usage}\` should start "${spec.description}", not "${description}"`,
      );
    }
  }
  for (const usage of documented.keys()) {
    if (!expected.has(usage)) problems.push(`docs/commands.md: \`${usage}\` is no command's usage line`);
  }
  return problems;
}

/** Non-test TypeScript sources under the given folders. */
function sources(folders: readonly string[]): string[] {
  return folders.flatMap((folder) =>
    filesUnder(folder, (name) => /\.c?ts$/.test(name) && !name.endsWith(".test.ts")),
  );
}

/** The error codes (`SVC_USAGE`, …) of core/errors.ts, which are no settings. */
function errorCodes(): Set<string> {
  return new Set(
    [...read("core/errors.ts").matchAll(/\|\s*"(SVC_[A-Z_]+)"/g)].map((match) => match[1] ?? ""),
  );
}

/** The settings `files` read: environment variables and `svc.*` git config keys (lower case). */
function settingsRead(files: readonly string[]): { env: Set<string>; git: Set<string> } {
  const codes = errorCodes();
  const env = new Set<string>();
  const git = new Set<string>();
  for (const file of files) {
    const text = read(file);
    for (const [name] of text.matchAll(/\bSVC_[A-Z0-9_]+\b/g)) {
      if (!codes.has(name) && !NOT_SETTINGS.has(name)) env.add(name);
    }
    for (const match of text.matchAll(/\benv\??(?:\.|\[")([A-Z][A-Z0-9_]+)\b/g)) {
      const name = match[1] ?? "";
      if (!othersVariable(name) && !NOT_SETTINGS.has(name)) env.add(name);
    }
    for (const match of text.matchAll(/["'`]svc\.([a-zA-Z]+)["'`]/g))
      git.add(`svc.${match[1]?.toLowerCase()}`);
  }
  return { env, git };
}

/** Every difference between docs/settings.md's table and the settings the code reads. */
function settingProblems(): string[] {
  const env = new Set<string>();
  const git = new Set<string>();
  for (const [first = ""] of tableRows("docs/settings.md", "Setting")) {
    for (const { text } of codeSpans(first)) {
      if (/^[A-Z][A-Z0-9_]+$/.test(text)) env.add(text);
      else if (/^svc\.[a-zA-Z]+$/.test(text)) git.add(text.toLowerCase());
    }
  }
  const svc = settingsRead(sources(SETTING_READERS));
  const anywhere = settingsRead(sources([...SETTING_READERS, "scripts", "server", "testing", "e2e"]));
  const problems: string[] = [];
  for (const name of svc.env) if (!env.has(name)) problems.push(`docs/settings.md: no row for ${name}`);
  for (const key of svc.git)
    if (!git.has(key)) problems.push(`docs/settings.md: no row for git config ${key}`);
  for (const name of env)
    if (!anywhere.env.has(name)) problems.push(`docs/settings.md: nothing reads ${name}`);
  for (const key of git) if (!anywhere.git.has(key)) problems.push(`docs/settings.md: nothing reads ${key}`);
  return problems;
}

test("every path, link and `file` `symbol` pair in README.md, SECURITY.md and docs/ exists", (t) => {
  const problems = docPages().flatMap((page) => [...pathProblems(page), ...linkProblems(page)]);
  t.deepEqual(problems, []);
});

test("docs/commands.md has one row per svc command: its usage line and its description, from the code", (t) => {
  t.deepEqual(commandProblems(), []);
});

test("docs/settings.md names every setting svc reads, and only those", (t) => {
  t.deepEqual(settingProblems(), []);
});

test("docs/CHANGELOG.md has one entry per cache schema revision", (t) => {
  const latest = Math.max(...Object.keys(CACHE_MIGRATIONS).map(Number));
  const entries = [...read("docs/CHANGELOG.md").matchAll(/^## Revision (\d+)\b/gm)].map((match) =>
    Number(match[1]),
  );
  t.deepEqual(
    entries.sort((a, b) => b - a),
    Array.from({ length: latest }, (_, index) => latest - index),
  );
});

test("README.md is a front door: at most 16 KB, linking every docs page", (t) => {
  const readme = read("README.md");
  t.true(Buffer.byteLength(readme) <= 16 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes`);
  const linked = new Set([...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((match) => match[1]));
  const unlinked = filesUnder("docs", (name) => name.endsWith(".md")).filter((page) => !linked.has(page));
  t.deepEqual(unlinked, []);
});

test("CI runs exactly README.md's test line right after a clean install", (t) => {
  const block = /```sh\n([\s\S]*?)```/.exec(read("README.md"))?.[1] ?? "";
  const [, testLine] = block.split("\n").map((line) => line.replace(/\s+#.*$/, "").trim());
  const ci = read(".ci/run")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const install = ci.findIndex((line) => /^npm ci\b/.test(line));
  t.true(install >= 0, ".ci/run makes no clean install (npm ci)");
  t.is(ci[install + 1], testLine);
});

test("the checks can fail: a stale path, a missing symbol and a dead anchor are each found", (t) => {
  t.false(pathExists("helper/no-such-file.ts"));
  t.true(pathExists("helper/pktline.ts"));
  t.true(pathExists("scripts/deploy/"));
  t.true(pathExists("backends/*/config.ts"));
  t.false(pathExists("backends/*/no-such.ts"));
  t.true(declaresSymbol("helper/pktline.ts", "decodePktHeader"));
  t.true(declaresSymbol("helper/pktline.ts", "ByteReader.readPkt"));
  t.false(declaresSymbol("helper/pktline.ts", "ByteReader.changesBetween"));
  t.false(declaresSymbol("helper/push-plan.ts", "changesBetween"));
  const text = "see `core/http.ts` `HttpClient.checkEgress`, `parseAllowlist` and `x y`";
  t.deepEqual(namesAfter(text, codeSpans(text), 0), ["HttpClient.checkEgress", "parseAllowlist"]);
  t.is(anchor("What svc says when"), "what-svc-says-when");
  t.is(anchor("Descriptions: Markdown ⇄ ADF"), "descriptions-markdown--adf");
});
