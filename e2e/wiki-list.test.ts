/**
 * `svc spaces` and `svc list` against the fake wiki (issue 5, "What it must show" 1): spaces with key, name
 * and URL; a 1,234-page space listed as its first 500 pages with a warning, or refused with `--no-truncate`;
 * `--format table` aligned and `--format json` parseable; never a request to the host of `_links.base`.
 */
import test from "ava";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import { svc } from "../testing/git.js";
import { givenWikiEnv } from "../testing/wiki.js";

interface ListedPage {
  readonly id: string;
  readonly title: string;
  readonly version: number;
  readonly spaceId: string;
  readonly parentId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly labels: string[];
}

/** Where each header word starts, in code points: the offsets every row's cells must start at. */
function columnStarts(header: string): number[] {
  const starts: number[] = [];
  const chars = [...header];
  chars.forEach((char, index) => {
    if (char !== " " && (index === 0 || chars[index - 1] === " ")) starts.push(index);
  });
  return starts;
}

/** The cells of one table line cut at `starts` (code points), each trimmed. */
function cellsAt(line: string, starts: readonly number[]): string[] {
  const chars = [...line];
  return starts.map((start, column) => {
    const end = starts[column + 1] ?? chars.length;
    return chars.slice(start, end).join("").trim();
  });
}

/** Lines of `text` without the final newline's empty string. */
function lines(text: string): string[] {
  return text.split("\n").slice(0, -1);
}

test("svc spaces lists key, name and URL of every readable space, as a table and as JSON", async (t) => {
  const wiki = await givenFakeWiki(t, {
    spaces: [
      { key: "SVC", name: "svc test space" },
      { key: "DOCS", name: "Team documentation", alias: "team-docs" },
      { key: "LOCKED", name: "Locked", denied: true },
    ],
  });
  const env = givenWikiEnv(t, wiki);

  const table = await svc(env, ["spaces", "--backend", "wiki"]);
  t.is(table.code, 0, table.stderr);
  t.is(table.stderr, "");
  const [header = "", ...rows] = lines(table.stdout);
  t.deepEqual(header.split(/\s+/), ["KEY", "NAME", "URL"]);
  const starts = columnStarts(header);
  t.deepEqual(
    rows.map((row) => cellsAt(row, starts)),
    [
      ["SVC", "svc test space", `${wiki.url}/wiki/spaces/SVC`],
      ["DOCS", "Team documentation", `${wiki.url}/wiki/spaces/team-docs`],
      ["LOCKED", "Locked", `${wiki.url}/wiki/spaces/LOCKED`],
    ],
  );

  const json = await svc(env, ["spaces", "--backend", "wiki", "--format", "json"]);
  t.is(json.code, 0, json.stderr);
  t.deepEqual(JSON.parse(json.stdout), [
    { key: "SVC", name: "svc test space", url: `${wiki.url}/wiki/spaces/SVC` },
    { key: "DOCS", name: "Team documentation", url: `${wiki.url}/wiki/spaces/team-docs` },
    { key: "LOCKED", name: "Locked", url: `${wiki.url}/wiki/spaces/LOCKED` },
  ]);
  t.is(wiki.baseHits, 0);
  t.true(wiki.requests.every((request) => request.headers.authorization === wiki.authorization));
});

test("svc list of a 1,234-page space prints the first 500 pages and warns on stderr", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 1234);
  const env = givenWikiEnv(t, wiki);

  const result = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"]);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, /^svc: warning: space SVC has more than 500 pages; showing the first 500/m);
  t.regex(result.stderr, /--no-truncate/);
  const [header = "", ...rows] = lines(result.stdout);
  t.is(rows.length, 500);
  t.deepEqual(header.split(/\s+/), ["ID", "VERSION", "UPDATED", "PARENT", "TITLE"]);
  t.deepEqual(
    rows.map((row) => row.split(/\s+/)[0]),
    ids.slice(0, 500),
  );
  t.is(wiki.baseHits, 0, "the listing followed _links.next from the tenant base, never _links.base");
  // Pagination went past the first page of results, so _links.next was followed.
  t.true(wiki.requests.some((request) => /[?&]cursor=/.test(request.path)));
});

test("svc list --format table is aligned: every cell starts at its header's offset", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 40);
  const env = givenWikiEnv(t, wiki);

  const table = await svc(env, ["list", "--backend", "wiki", "--project", "SVC", "--format", "table"]);
  t.is(table.code, 0, table.stderr);
  const json = await svc(env, ["list", "--backend", "wiki", "--project", "SVC", "--format", "json"]);
  t.is(json.code, 0, json.stderr);
  const pages = JSON.parse(json.stdout) as ListedPage[];
  t.is(pages.length, 40);

  const [header = "", ...rows] = lines(table.stdout);
  const starts = columnStarts(header);
  t.deepEqual(cellsAt(header, starts), ["ID", "VERSION", "UPDATED", "PARENT", "TITLE"]);
  t.deepEqual(
    rows.map((row) => cellsAt(row, starts)),
    pages.map((page) => [page.id, String(page.version), page.updatedAt, page.parentId ?? "", page.title]),
  );
  for (const row of rows) {
    const chars = [...row];
    for (const start of starts.slice(1)) {
      // Two spaces before every column: a cell never runs into the next one.
      t.is(chars.slice(start - 2, start).join(""), "  ", row);
    }
  }
  // Ids of one, two and three digits: the padding is really exercised.
  t.true(rows.some((row) => row.startsWith("1 ")));
  t.true(rows.some((row) => row.startsWith("40 ")));
});

test("svc list --format json parses and carries the frontmatter fields of each page", async (t) => {
  const wiki = await givenFakeWiki(t);
  const ids = wiki.seedPages("SVC", 1234);
  const env = givenWikiEnv(t, wiki);

  const result = await svc(env, ["list", "--backend", "wiki", "--project", "SVC", "--format", "json"]);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, /more than 500 pages/);
  const pages = JSON.parse(result.stdout) as ListedPage[];
  t.is(pages.length, 500);
  t.deepEqual(
    pages.map((page) => page.id),
    ids.slice(0, 500),
  );
  const server = wiki.page(ids[12] as string);
  t.deepEqual(pages[12], {
    id: server?.id,
    title: server?.title,
    version: server?.version.number,
    spaceId: wiki.space("SVC").id,
    parentId: server?.parentId,
    createdAt: server?.createdAt,
    updatedAt: server?.version.createdAt,
    labels: [],
  });
});

test("svc list --no-truncate exits non-zero for more than 500 pages and prints nothing on stdout", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 1234);
  const env = givenWikiEnv(t, wiki);

  for (const format of ["table", "json"]) {
    const result = await svc(env, [
      "list",
      "--backend",
      "wiki",
      "--project",
      "SVC",
      "--no-truncate",
      "--format",
      format,
    ]);
    t.not(result.code, 0, format);
    t.is(result.stdout, "", format);
    t.regex(result.stderr, /space SVC has more than 500 pages; --no-truncate refuses a partial list/);
  }
  t.is(wiki.baseHits, 0);
});

test("svc list --no-truncate succeeds with exactly 500 pages and fails with 501", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "FULL" }, { key: "OVER" }] });
  wiki.seedPages("FULL", 500);
  wiki.seedPages("OVER", 501);
  const env = givenWikiEnv(t, wiki);

  const full = await svc(env, ["list", "--backend", "wiki", "--project", "FULL", "--no-truncate"]);
  t.is(full.code, 0, full.stderr);
  t.is(full.stderr, "");
  t.is(lines(full.stdout).length, 501);

  const over = await svc(env, ["list", "--backend", "wiki", "--project", "OVER", "--no-truncate"]);
  t.is(over.code, 1, over.stderr);
  t.is(over.stdout, "");
});

test("svc list takes a space's alias as well as its key", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "DOCS", alias: "team-docs" }] });
  const ids = wiki.seedPages("DOCS", 3);
  const env = givenWikiEnv(t, wiki);

  for (const project of ["DOCS", "team-docs"]) {
    const result = await svc(env, ["list", "--backend", "wiki", "--project", project, "--format", "json"]);
    t.is(result.code, 0, result.stderr);
    t.deepEqual(
      (JSON.parse(result.stdout) as ListedPage[]).map((page) => page.id),
      ids,
      project,
    );
  }
  const unknown = await svc(env, ["list", "--backend", "wiki", "--project", "NOPE"]);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /no wiki space with key or alias "NOPE"/);
  t.regex(unknown.stderr, /svc spaces --backend wiki/);
});
