/**
 * The pre-flight script (Document 3, "Rules for test fixtures" 5): `.env` parsing, and the exit codes
 * against the fake wiki: 0 when every configured target answers and the test space exists, 1 when one
 * fails, 2 when no credentials are configured. One read-only GET per target; no credential printed.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { type FakeWiki, givenFakeWiki } from "../testing/fake-wiki.js";
import { givenGitEnv, run } from "../testing/git.js";
import { repoRoot } from "../testing/paths.js";
import { wikiVars } from "../testing/wiki.js";
import { parseDotEnv, preflight } from "./preflight.js";

/** The wiki target configured against `wiki`, checking test space `space`. */
function wikiTarget(wiki: FakeWiki, space = "SVC"): NodeJS.ProcessEnv {
  return { ...wikiVars(wiki), SVC_WIKI_TEST_SPACE: space };
}

async function runPreflight(env: NodeJS.ProcessEnv): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await preflight(env, (line) => lines.push(line));
  return { code, lines };
}

test("parseDotEnv reads KEY=value lines with comments, export, quotes and CRLF", (t) => {
  const text = [
    "# a comment",
    "VENDOR_API_KEY=abc123",
    "export VENDOR_EMAIL=me@example.test",
    "  SVC_WIKI_TENANT = acme  ",
    'QUOTED="value with # hash and  spaces"',
    "SINGLE='single quoted'",
    "INLINE=value # trailing comment",
    "HASH=a#b",
    "EMPTY=",
    "   # indented comment=not a variable",
    "not a line",
    "1BAD=starts with a digit",
    "WINDOWS=crlf\r",
    "MISMATCHED=\"open'",
    "URL=https://acme.atlassian.net/wiki?x=1&y=2",
    "",
  ].join("\n");
  t.deepEqual(parseDotEnv(text), {
    VENDOR_API_KEY: "abc123",
    VENDOR_EMAIL: "me@example.test",
    SVC_WIKI_TENANT: "acme",
    QUOTED: "value with # hash and  spaces",
    SINGLE: "single quoted",
    INLINE: "value",
    HASH: "a#b",
    EMPTY: "",
    WINDOWS: "crlf",
    MISMATCHED: "\"open'",
    URL: "https://acme.atlassian.net/wiki?x=1&y=2",
  });
  t.deepEqual(parseDotEnv(""), {});
  t.deepEqual(parseDotEnv("A=1\r\nB=2\r\n"), { A: "1", B: "2" });
  t.deepEqual(parseDotEnv("A=1\nA=2\n"), { A: "2" }, "the last definition wins");
});

test("exit 2 when no backend credentials are configured, without a request", async (t) => {
  const wiki = await givenFakeWiki(t);
  for (const env of [
    {},
    { SVC_ALLOWED_ORIGINS: wiki.origin, SVC_WIKI_BASE_URL: wiki.url },
    { VENDOR_API_KEY: "" },
  ]) {
    const result = await runPreflight(env);
    t.is(result.code, 2, JSON.stringify(env));
    t.regex(result.lines.join("\n"), /no backend credentials are configured/);
  }
  t.is(wiki.requests.length, 0);
});

test("exit 0 when the wiki answers and the test space exists: one read-only GET", async (t) => {
  const wiki = await givenFakeWiki(t);
  const result = await runPreflight(wikiTarget(wiki));
  t.is(result.code, 0, result.lines.join("\n"));
  t.deepEqual(result.lines, [
    "wiki: ok: space SVC found",
    "forge: not configured",
    "scratch repository: not configured",
    "tracker: not configured",
  ]);
  t.deepEqual(
    wiki.requests.map((request) => [request.method, request.path, request.headers.authorization]),
    [["GET", "/wiki/api/v2/spaces?keys=SVC", wiki.authorization]],
  );
});

test("the test space is found by its alias as well as its key", async (t) => {
  const wiki = await givenFakeWiki(t, { spaces: [{ key: "SVCTEST", alias: "svc-test-space" }] });
  t.is((await runPreflight(wikiTarget(wiki, "SVCTEST"))).code, 0);
  t.is((await runPreflight(wikiTarget(wiki, "svc-test-space"))).code, 0);
});

test("without SVC_WIKI_TEST_SPACE a reachable wiki is enough, and the output says what else to set", async (t) => {
  const wiki = await givenFakeWiki(t);
  const result = await runPreflight(wikiVars(wiki));
  t.is(result.code, 0, result.lines.join("\n"));
  t.regex(result.lines[0] ?? "", /^wiki: ok: reachable \(set SVC_WIKI_TEST_SPACE/);
  t.is(wiki.requests.length, 1);
});

test("exit 1 when the test space does not exist", async (t) => {
  const wiki = await givenFakeWiki(t);
  const result = await runPreflight(wikiTarget(wiki, "NOPE"));
  t.is(result.code, 1);
  t.regex(result.lines[0] ?? "", /^wiki: FAILED: .*space NOPE not found/);
});

test("exit 1 when the credentials are refused; the token is not printed", async (t) => {
  const wiki = await givenFakeWiki(t);
  for (const [overrides, hint] of [
    [{ VENDOR_API_KEY: "wrong-token-777" }, /VENDOR_API_KEY was refused/],
    [{ VENDOR_EMAIL: "other@example.test" }, /belongs to another account: set VENDOR_EMAIL/],
  ] as const) {
    const result = await runPreflight({ ...wikiTarget(wiki), ...overrides });
    t.is(result.code, 1, JSON.stringify(overrides));
    t.regex(result.lines[0] ?? "", /^wiki: FAILED: .*answered 401/);
    t.regex(result.lines[0] ?? "", hint);
    const output = result.lines.join("\n");
    t.false(output.includes(wiki.credentials.token) || output.includes("wrong-token-777"));
  }
});

test("exit 1 before any request: partly configured, origin not allowlisted, bad tenant", async (t) => {
  const wiki = await givenFakeWiki(t);
  const partly = await runPreflight({ VENDOR_API_KEY: "x", SVC_ALLOWED_ORIGINS: wiki.origin });
  t.is(partly.code, 1);
  t.is(partly.lines[0], "wiki: FAILED: partly configured; missing VENDOR_EMAIL, SVC_WIKI_TENANT");

  const denied = await runPreflight({ ...wikiTarget(wiki), SVC_ALLOWED_ORIGINS: "http://localhost:1" });
  t.is(denied.code, 1);
  t.regex(denied.lines[0] ?? "", /^wiki: FAILED: origin not allowlisted: /);

  for (const tenant of ["Acme.corp", "a".repeat(64)]) {
    const bad = await runPreflight({ ...wikiTarget(wiki), SVC_WIKI_TENANT: tenant });
    t.is(bad.code, 1, tenant);
    t.regex(bad.lines[0] ?? "", /^wiki: FAILED: invalid wiki tenant subdomain: /);
  }
  t.is(wiki.requests.length, 0);
});

test("exit 1 when one of two configured targets fails, and the other is still checked", async (t) => {
  const wiki = await givenFakeWiki(t);
  const result = await runPreflight({
    ...wikiTarget(wiki),
    FORGE_TOKEN: "forge-secret-token",
    // Nothing listens on port 1: the forge target cannot be reached.
    SVC_FORGE_BASE_URL: "http://127.0.0.1:1",
    SVC_ALLOWED_ORIGINS: `${wiki.origin},http://127.0.0.1:1`,
  });
  t.is(result.code, 1);
  t.is(result.lines[0], "wiki: ok: space SVC found");
  t.regex(result.lines[1] ?? "", /^forge: FAILED: cannot reach the backend/);
  t.false(result.lines.join("\n").includes("forge-secret-token"));
});

test("the script reads .env from its folder; variables already set win", async (t) => {
  const wiki = await givenFakeWiki(t);
  const env = givenGitEnv(t);
  const script = join(repoRoot, "dist", "scripts", "preflight.js");

  const none = await run(env, process.execPath, [script]);
  t.is(none.code, 2, none.stdout + none.stderr);

  const vars = { ...wikiTarget(wiki, "NOPE") };
  writeFileSync(
    join(env.dir, ".env"),
    `# svc real-backend targets\n${Object.entries(vars)
      .map(([name, value]) => `${name}="${value}"`)
      .join("\n")}\n`,
  );
  const fromFile = await run(env, process.execPath, [script]);
  t.is(fromFile.code, 1, fromFile.stdout + fromFile.stderr);
  t.regex(fromFile.stdout, /space NOPE not found/);

  const overridden = await run(env, process.execPath, [script], { env: { SVC_WIKI_TEST_SPACE: "SVC" } });
  t.is(overridden.code, 0, overridden.stdout + overridden.stderr);
  t.regex(overridden.stdout, /^wiki: ok: space SVC found$/m);
  t.false(overridden.stdout.includes(wiki.credentials.token));
});

/**
 * A loopback stand-in for the forge's REST API (GET /user, GET /repos/{owner}/{repo} with `archived`) and the
 * tracker's (GET /rest/api/3/project/{key}), answering only the configured bearer token / Basic credentials.
 */
async function givenForgeAndTracker(t: ExecutionContext) {
  const seen: { path: string; authorization: string | undefined }[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    seen.push({ path, authorization: req.headers.authorization });
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (path.startsWith("/rest/api/3/")) {
      if (
        req.headers.authorization !==
        `Basic ${Buffer.from("me@example.test:tracker-secret").toString("base64")}`
      ) {
        return json(401, {
          errorMessages: ["Client must be authenticated to access this resource."],
          errors: {},
        });
      }
      const key = /^\/rest\/api\/3\/project\/([^/?]+)$/.exec(path)?.[1];
      return key === "TEST" || key === "OPS"
        ? json(200, { id: "10000", key, name: `${key} project` })
        : json(404, { errorMessages: [`No project could be found with key '${key}'.`], errors: {} });
    }
    if (req.headers.authorization !== "Bearer forge-secret") {
      return json(401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" });
    }
    if (path === "/user") return json(200, { login: "svc-bot", id: 1 });
    const repos: Record<string, unknown> = {
      "/repos/acme/svc": { full_name: "acme/svc", archived: false },
      "/repos/acme/scratch": { full_name: "acme/scratch", archived: true },
    };
    const repo = repos[path];
    return repo
      ? json(200, repo)
      : json(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = {
    SVC_ALLOWED_ORIGINS: url,
    SVC_FORGE_BASE_URL: url,
    SVC_TRACKER_BASE_URL: url,
    FORGE_TOKEN: "forge-secret",
    TRACKER_EMAIL: "me@example.test",
    TRACKER_API_TOKEN: "tracker-secret",
    SVC_TRACKER_INSTANCE: "acme",
  };
  return { url, seen, env };
}

test("forge, scratch repository and tracker: one GET each with their credentials, archived scratch noted", async (t) => {
  const fake = await givenForgeAndTracker(t);
  const result = await runPreflight({
    ...fake.env,
    SVC_FORGE_REPO: "acme/svc",
    SVC_SCRATCH_REPO: "acme/scratch",
  });
  t.is(result.code, 0, result.lines.join("\n"));
  t.deepEqual(result.lines, [
    "wiki: not configured",
    "forge: ok: repository acme/svc found",
    "scratch repository: ok: found, but archived: unarchive it through the forge API before use",
    "tracker: ok: project TEST found",
  ]);
  t.deepEqual(
    fake.seen.map((request) => request.path),
    ["/repos/acme/svc", "/repos/acme/scratch", "/rest/api/3/project/TEST"],
  );
});

test("tracker project precedence: TRACKER_TEST_PROJECT, then SVC_TRACKER_PROJECT, then TEST", async (t) => {
  const fake = await givenForgeAndTracker(t);
  const tracker = { ...fake.env, FORGE_TOKEN: "" };
  await runPreflight({ ...tracker, TRACKER_TEST_PROJECT: "OPS", SVC_TRACKER_PROJECT: "NOPE" });
  await runPreflight({ ...tracker, SVC_TRACKER_PROJECT: "OPS" });
  const missing = await runPreflight({ ...tracker, SVC_TRACKER_PROJECT: "NOPE" });
  t.deepEqual(
    fake.seen.map((request) => request.path),
    ["/rest/api/3/project/OPS", "/rest/api/3/project/OPS", "/rest/api/3/project/NOPE"],
  );
  t.is(missing.code, 1);
  t.regex(missing.lines.at(-1) ?? "", /^tracker: FAILED: .*answered 404; no such project/);
});

test("refused forge and tracker credentials say what to fix and print no secret", async (t) => {
  const fake = await givenForgeAndTracker(t);
  const result = await runPreflight({
    ...fake.env,
    FORGE_TOKEN: "stale-forge-token",
    TRACKER_API_TOKEN: "stale-tracker",
  });
  t.is(result.code, 1);
  t.regex(result.lines[1] ?? "", /^forge: FAILED: .*answered 401; FORGE_TOKEN was refused/);
  t.regex(result.lines[3] ?? "", /^tracker: FAILED: .*answered 401; TRACKER_API_TOKEN was refused/);
  const output = result.lines.join("\n");
  t.false(output.includes("stale-forge-token") || output.includes("stale-tracker"));
  const unknownRepo = await runPreflight({
    ...fake.env,
    TRACKER_EMAIL: "",
    TRACKER_API_TOKEN: "",
    SVC_TRACKER_INSTANCE: "",
    SVC_FORGE_REPO: "acme/gone",
  });
  t.regex(unknownRepo.lines[1] ?? "", /^forge: FAILED: .*answered 404; the repository does not exist/);
});
