/**
 * What the wiki backend refuses, and how it says so (issue 5, "What it must show" 4, 5 and 7):
 * - no request ever goes to the host `_links.base` names; an origin outside `SVC_ALLOWED_ORIGINS` is refused
 *   before any request, with a message starting `origin not allowlisted:`;
 * - missing variables get one message naming all of them; a bad tenant gets `invalid wiki tenant subdomain:`;
 *   neither sends anything;
 * - 401 `FAILURE_CLIENT_AUTH_MISMATCH` and 403 become messages that say what to fix; the API token never
 *   appears in any output (nor in the cache or the working tree).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { type FakeWiki, givenFakeWiki } from "../testing/fake-wiki.js";
import { auditRows, type GitEnv, git, gitOk, type RunResult, svc } from "../testing/git.js";
import { commitAll, editWorkFile } from "../testing/push.js";
import { givenWikiEnv, wikiRemote } from "../testing/wiki.js";

const REQUIRED = ["VENDOR_API_KEY", "VENDOR_EMAIL", "SVC_WIKI_TENANT", "SVC_ALLOWED_ORIGINS"] as const;

/** A Node stack trace: what a user must never see for a configuration mistake. */
const STACK = /^\s+at .+:\d+:\d+\)?$/m;

/** The commands every configuration check must stop before a request: list, spaces, init, git clone. */
function everyEntryPoint(
  env: GitEnv,
  wiki: FakeWiki,
  vars: Readonly<Record<string, string | undefined>>,
  dir: string,
): Promise<[string, RunResult][]> {
  const options = { env: vars };
  return Promise.all([
    svc(env, ["list", "--backend", "wiki", "--project", "SVC"], options).then(
      (result): [string, RunResult] => ["svc list", result],
    ),
    svc(env, ["spaces", "--backend", "wiki"], options).then((result): [string, RunResult] => [
      "svc spaces",
      result,
    ]),
    svc(env, ["init", "wiki::SVC", `${dir}-init`], options).then((result): [string, RunResult] => [
      "svc init",
      result,
    ]),
    git(env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), `${dir}-clone`], options).then(
      (result): [string, RunResult] => ["git clone", result],
    ),
  ]);
}

/** Every file under `root` that contains `needle` (as bytes). */
function filesContaining(root: string, needle: string): string[] {
  const found: string[] = [];
  const bytes = Buffer.from(needle, "utf8");
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile() && readFileSync(path).includes(bytes)) found.push(path);
    }
  };
  if (existsSync(root)) walk(root);
  return found;
}

test("no request goes to the host of _links.base through list, init, fetch and push; the token is stored nowhere", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 600);
  t.not(new URL(wiki.linksBase).origin, wiki.origin, "the fake's _links.base names another host");
  const env = givenWikiEnv(t, wiki, { SVC_BLOB_LIMIT: "0" });

  const list = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"]);
  t.is(list.code, 0, list.stderr);
  const spaces = await svc(env, ["spaces", "--backend", "wiki"]);
  t.is(spaces.code, 0, spaces.stderr);
  const init = await svc(env, ["init", "wiki::SVC", "d"]);
  t.is(init.code, 0, init.stderr);
  wiki.editPage("7");
  wiki.createPage("SVC", { title: "Made in the browser", body: "<p>new</p>" });
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  await gitOk(t, env, ["merge", "-q", "--ff-only", "origin/main"], { cwd: "d" });
  editWorkFile(env, "d", "pages/8.md", (text) => `${text}<p>more</p>`);
  await commitAll(t, env, "d", "Edit page 8");
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);

  t.true(wiki.requests.some((request) => request.method === "PUT"));
  t.true(
    wiki.requests.some((request) => request.path.includes("cursor=")),
    "pagination was used",
  );
  t.is(wiki.baseHits, 0);
  t.deepEqual(wiki.baseRequests, []);
  const token = wiki.credentials.token;
  for (const result of [list, spaces, init, fetch, push]) {
    t.false(result.stdout.includes(token) || result.stderr.includes(token));
  }
  t.deepEqual(filesContaining(env.cacheRoot, token), [], "the cache");
  t.deepEqual(filesContaining(join(env.dir, "d"), token), [], "the working tree and its .git");
});

test("an origin outside SVC_ALLOWED_ORIGINS is refused before any request: svc list, svc spaces, svc init, git clone", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki);

  const results = await everyEntryPoint(env, wiki, { SVC_ALLOWED_ORIGINS: "http://localhost:1" }, "d");
  for (const [what, result] of results) {
    t.not(result.code, 0, what);
    t.true(
      result.stderr.includes(`svc: origin not allowlisted: ${wiki.origin}`),
      `${what}: ${result.stderr}`,
    );
    t.regex(result.stderr, /^svc: origin not allowlisted: /m, what);
    t.regex(result.stderr, /SVC_ALLOWED_ORIGINS/, what);
    t.notRegex(result.stderr, STACK, what);
  }
  t.is(wiki.requests.length, 0);
  t.is(wiki.baseHits, 0);
  t.deepEqual(readdirSync(env.cacheRoot), [], "a refusal creates no cache folder (issue 11)");
});

test("an existing clone whose origin left the allowlist: fetch and push are refused before any request", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki);
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", wikiRemote(wiki.url, "SVC"), "d"]);
  editWorkFile(env, "d", "pages/1.md", (text) => `${text}<p>local</p>`);
  await commitAll(t, env, "d", "Edit page 1");
  const before = wiki.requests.length;

  const denied = { env: { SVC_ALLOWED_ORIGINS: "http://localhost:1,https://acme.atlassian.net" } };
  const fetch = await git(env, ["fetch"], { ...denied, cwd: "d" });
  t.not(fetch.code, 0);
  t.regex(fetch.stderr, /^svc: origin not allowlisted: http:\/\/127\.0\.0\.1:\d+/m);
  const push = await git(env, ["push"], { ...denied, cwd: "d" });
  t.not(push.code, 0);
  t.regex(push.stderr, /^svc: origin not allowlisted: http:\/\/127\.0\.0\.1:\d+/m);
  t.is(wiki.requests.length, before);
  t.is(wiki.page("1")?.version.number, 1);
  t.is(
    auditRows(env).filter((row) => row.op === "egress-denied").length,
    2,
    "the helper records each refusal in the existing cache's audit table",
  );
});

test("missing variables: one message naming every missing one, and no request", async (t) => {
  const wiki = await givenFakeWiki(t);
  const env = givenWikiEnv(t, wiki);
  const combinations: (typeof REQUIRED)[number][][] = [
    ["VENDOR_API_KEY", "VENDOR_EMAIL"],
    ["SVC_WIKI_TENANT", "SVC_ALLOWED_ORIGINS"],
    ["VENDOR_API_KEY", "SVC_WIKI_TENANT", "SVC_ALLOWED_ORIGINS"],
    [...REQUIRED],
  ];
  for (const [index, unset] of combinations.entries()) {
    const vars = Object.fromEntries(unset.map((name) => [name, undefined]));
    for (const [what, result] of await everyEntryPoint(env, wiki, vars, `m${index}`)) {
      const label = `${what} without ${unset.join(", ")}`;
      t.not(result.code, 0, label);
      const messages = result.stderr.split("\n").filter((line) => /which (is|are) not set:/.test(line));
      t.is(messages.length, 1, `${label}: one message\n${result.stderr}`);
      const named = (messages[0] ?? "").replace(/^.*not set: /, "").split(", ");
      t.deepEqual(named, [...unset], label);
      t.notRegex(result.stderr, STACK, label);
    }
    t.false(existsSync(join(env.dir, `m${index}-init`)), "svc init made no folder");
  }
  t.is(wiki.requests.length, 0);
});

test("an empty VENDOR_API_KEY or VENDOR_EMAIL counts as missing", async (t) => {
  const wiki = await givenFakeWiki(t);
  const env = givenWikiEnv(t, wiki);
  const result = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"], {
    env: { VENDOR_API_KEY: "", VENDOR_EMAIL: "" },
  });
  t.is(result.code, 2);
  t.regex(result.stderr, /not set: VENDOR_API_KEY, VENDOR_EMAIL$/m);
  t.is(wiki.requests.length, 0);
});

test("a bad tenant (Acme.corp, 64 characters, empty) gets `invalid wiki tenant subdomain:` and no request", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 2);
  const env = givenWikiEnv(t, wiki);
  const bad = ["Acme.corp", "a".repeat(64), "", "acme.atlassian.net", "https://acme", "acme_corp"];
  for (const [index, tenant] of bad.entries()) {
    for (const [what, result] of await everyEntryPoint(env, wiki, { SVC_WIKI_TENANT: tenant }, `t${index}`)) {
      const label = `${what} with SVC_WIKI_TENANT=${JSON.stringify(tenant)}`;
      t.not(result.code, 0, label);
      t.regex(result.stderr, /^svc: invalid wiki tenant subdomain: /m, `${label}\n${result.stderr}`);
      t.notRegex(result.stderr, STACK, label);
    }
  }
  t.is(wiki.requests.length, 0);

  // The longest valid tenant works (the base URL override points it at the fake).
  const longest = await svc(env, ["list", "--backend", "wiki", "--project", "SVC"], {
    env: { SVC_WIKI_TENANT: "a".repeat(63) },
  });
  t.is(longest.code, 0, longest.stderr);
});

test("401 FAILURE_CLIENT_AUTH_MISMATCH (right token, wrong email) says to fix VENDOR_EMAIL; the token is never printed", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 2);
  const env = givenWikiEnv(t, wiki);
  const results = await everyEntryPoint(env, wiki, { VENDOR_EMAIL: "someone-else@example.test" }, "d");
  const token = wiki.credentials.token;
  for (const [what, result] of results) {
    t.not(result.code, 0, what);
    t.regex(
      result.stderr,
      /VENDOR_EMAIL \(someone-else@example\.test\) is not the account VENDOR_API_KEY was issued to/,
      `${what}: ${result.stderr}`,
    );
    t.false(result.stdout.includes(token) || result.stderr.includes(token), `${what} printed the token`);
    t.false(
      result.stderr.includes(Buffer.from(`someone-else@example.test:${token}`).toString("base64")),
      `${what} printed the Authorization header`,
    );
    t.notRegex(result.stderr, STACK, what);
  }
  t.true(
    wiki.requests.length > 0 &&
      wiki.requests.every((request) => request.status === 401 && request.method === "GET"),
  );
});

test("401 for a wrong token says to check both variables; the wrong token is never printed either", async (t) => {
  const wiki = await givenFakeWiki(t);
  const env = givenWikiEnv(t, wiki);
  const wrong = "wrong-token-abcdef-987654";
  for (const [what, result] of await everyEntryPoint(env, wiki, { VENDOR_API_KEY: wrong }, "d")) {
    t.not(result.code, 0, what);
    t.regex(result.stderr, /refused the credentials \(401\); check VENDOR_EMAIL and VENDOR_API_KEY/, what);
    t.false(result.stdout.includes(wrong) || result.stderr.includes(wrong), `${what} printed the token`);
  }
});

test("403 on a denied space says the account lacks permission; the token is never printed", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "SVC" }, { key: "LOCKED", denied: true }] });
  wiki.seedPages("LOCKED", 3);
  const env = givenWikiEnv(t, wiki);
  const token = wiki.credentials.token;

  const list = await svc(env, ["list", "--backend", "wiki", "--project", "LOCKED"]);
  const clone = await git(env, ["clone", "--filter=blob:none", wikiRemote(wiki.url, "LOCKED"), "d"]);
  for (const [what, result] of [
    ["svc list", list],
    ["git clone", clone],
  ] as const) {
    t.not(result.code, 0, what);
    t.regex(
      result.stderr,
      /the wiki account svc-fake@example\.test has no permission for GET \/wiki\/api\/v2\/spaces\/\d+\/pages \(403\); ask an admin of space LOCKED for access/,
      `${what}: ${result.stderr}`,
    );
    t.false(result.stdout.includes(token) || result.stderr.includes(token), `${what} printed the token`);
    t.notRegex(result.stderr, STACK, what);
  }
  t.true(wiki.requests.some((request) => request.status === 403));
});
