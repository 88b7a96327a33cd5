/**
 * Cloning and fetching a forge repository (issue 14, "What it must show" 1, 5, 7): real git against the
 * fake forge. 250 issues with 40 pull requests mixed in give 250 files and no pull request, over three
 * listing pages; a record's bytes are pinned; a no-op `git fetch` spends no quota (only 304 answers);
 * `svc list --backend forge` lists; a `Link` next URL on another origin is refused before any request to
 * it, and a redirect is not followed.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { givenFakeForge } from "../testing/fake-forge.js";
import { forgeRemote, givenForgeEnv } from "../testing/forge.js";
import { git, gitOk, openCacheDb, run, svc } from "../testing/git.js";

test("svc init forge:: clones 250 issues and no pull request, following three listing pages", async (t) => {
  const forge = await givenFakeForge(t);
  const numbers = forge.seed("acme/widgets", 250, { pullRequests: 40 });
  t.is(numbers.length, 250);
  const env = givenForgeEnv(t, forge);

  const init = await svc(env, ["init", "forge::acme/widgets", "d"]);
  t.is(init.code, 0, init.stderr);

  const files = readdirSync(join(env.dir, "d", "issues")).sort();
  t.is(files.length, 250);
  const pullRequests = forge.issues("acme/widgets").filter((issue) => issue.pullRequest);
  t.is(pullRequests.length, 40);
  for (const pr of pullRequests) t.false(files.includes(`${String(pr.number).padStart(4, "0")}.md`));
  const listings = forge.requests.filter(
    (request) =>
      request.method === "GET" && /\/issues\?/.test(request.path) && !request.path.includes("since="),
  );
  t.is(listings.length, 3, listings.map((request) => request.path).join("\n"));
  // One request more: the delta listing the first fetch will make, so that fetch is answered 304.
  t.is(forge.requests.filter((request) => request.path.includes("since=")).length, 1);
  t.true(listings.every((request) => request.status === 200));
  t.true(
    listings.some((request) => request.path.startsWith("/repositories/")),
    "the Link URLs were followed",
  );
  t.regex(listings[0]?.path ?? "", /state=all/);
  t.true(forge.requests.every((request) => request.headers.authorization === `Bearer ${forge.token}`));

  const remote = await gitOk(t, env, ["config", "remote.origin.url"], { cwd: "d" });
  t.is(remote, forgeRemote(forge.url, "acme/widgets"));
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
});

test("golden bytes: one issue's file", async (t) => {
  const forge = await givenFakeForge(t);
  const issue = forge.addIssue("acme/widgets", {
    title: 'Login fails: "quotes" & ünïcödé',
    body: "Steps:\r\n---\n1. open\n",
    labels: ["bug", "status/in-progress", "ui"],
    assignees: ["alice", "bob"],
  });
  const closed = forge.addIssue("acme/widgets", {
    title: "Old",
    body: null,
    state: "closed",
    stateReason: "not_planned",
  });
  const env = givenForgeEnv(t, forge);
  const init = await svc(env, ["init", "forge::acme/widgets", "d"]);
  t.is(init.code, 0, init.stderr);
  const file = readFileSync(
    join(env.dir, "d", "issues", `${String(issue.number).padStart(4, "0")}.md`),
    "utf8",
  );
  t.is(
    file,
    "---\n" +
      `id: ${issue.number}\n` +
      'title: "Login fails: \\"quotes\\" & ünïcödé"\n' +
      "status: in_progress\n" +
      "labels: [bug, ui]\n" +
      "assignees: [alice, bob]\n" +
      `created_at: ${issue.createdAt}\n` +
      `updated_at: ${issue.updatedAt}\n` +
      "---\n" +
      "Steps:\r\n---\n1. open\n",
  );
  const old = readFileSync(
    join(env.dir, "d", "issues", `${String(closed.number).padStart(4, "0")}.md`),
    "utf8",
  );
  t.regex(old, /^status: wont_fix$/m);
  t.true(old.endsWith("---\n"), "a null body is an empty one");
});

test("a no-op git fetch spends no quota: every request answers 304", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 250, { pullRequests: 40 });
  const env = givenForgeEnv(t, forge);
  await gitOk(t, env, ["clone", "-q", forgeRemote(forge.url, "acme/widgets"), "d"]);
  // The clone asked for the delta listing the first fetch makes, so even that fetch is answered 304.
  const used = forge.quotaUsed;
  const from = forge.requests.length;
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  const requests = forge.requests.slice(from);
  t.true(requests.length > 0);
  t.deepEqual(
    requests.map((request) => request.status),
    requests.map(() => 304),
  );
  t.is(forge.quotaUsed, used, "a 304 costs no quota");
  // And the next one too: a 304 keeps its validator (the issues' delta, and the comments' listing: the
  // repository has none, so no cursor, and each fetch asks for all of them, conditionally).
  const second = forge.requests.length;
  await gitOk(t, env, ["fetch", "-q"], { cwd: "d" });
  t.deepEqual(
    forge.requests.slice(second).map((request) => request.status),
    [304, 304],
  );
  t.is(forge.quotaUsed, used);

  // A change on the forge is seen by the next fetch (the validator does not hide it).
  forge.editIssue("acme/widgets", 1, { title: "Changed on the forge" });
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(readFileSync(join(env.dir, "d", "issues", "0001.md"), "utf8"), /^title: "Changed on the forge"$/m);
  // Only the latest delta listing's validator is kept: the table does not grow with every fetch.
  const db = openCacheDb(env);
  try {
    const deltas = db.prepare("SELECT count(*) FROM validators WHERE url LIKE '%since=%'").pluck().get();
    t.is(deltas, 1);
  } finally {
    db.close();
  }
});

test("a reconciling listing of unchanged pages spends no quota and deletes nothing", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 150);
  const env = givenForgeEnv(t, forge, { SVC_RECONCILE_INTERVAL: "0" });
  await gitOk(t, env, ["clone", "-q", forgeRemote(forge.url, "acme/widgets"), "d"]);
  // svc sync ends with a git fetch, whose delta listing is answered 304 too.
  const used = forge.quotaUsed;
  const sync = await svc(env, ["sync", "--reconcile"], { cwd: "d" });
  t.is(sync.code, 0, sync.stderr);
  t.is(forge.quotaUsed, used);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.is(readdirSync(join(env.dir, "d", "issues")).length, 150);

  // An issue deleted on the forge disappears with the next reconciling listing.
  forge.deleteIssue("acme/widgets", 7);
  const again = await svc(env, ["sync", "--reconcile"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.is(readdirSync(join(env.dir, "d", "issues")).length, 149);
  t.false(readdirSync(join(env.dir, "d", "issues")).includes("0007.md"));
});

test("svc list --backend forge lists the issues, pull requests left out", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 12, { pullRequests: 3 });
  const env = givenForgeEnv(t, forge);
  const list = await svc(env, [
    "list",
    "--backend",
    "forge",
    "--project",
    "acme/widgets",
    "--format",
    "json",
  ]);
  t.is(list.code, 0, list.stderr);
  const records = JSON.parse(list.stdout) as { id: number; status: string }[];
  t.is(records.length, 12);
  const table = await svc(env, ["list", "--backend", "forge", "--project", "acme/widgets"]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^ID +VERSION +UPDATED +STATUS +TITLE/);
});

test("a Link next URL on another origin is refused before any request to it; redirects are not followed", async (t) => {
  const forge = await givenFakeForge(t);
  const elsewhere = await givenFakeForge(t);
  forge.seed("acme/widgets", 150);
  forge.setNextOrigin(elsewhere.origin);
  // Both origins are on the allowlist: the refusal is the listing's own rule, not only the allowlist's.
  const env = givenForgeEnv(t, forge, { SVC_ALLOWED_ORIGINS: `${forge.origin},${elsewhere.origin}` });
  const init = await svc(env, ["init", "forge::acme/widgets", "d"]);
  t.not(init.code, 0);
  t.regex(
    init.stderr,
    new RegExp(`points the next result page to ${elsewhere.origin.replace(/[.]/g, "\\.")}`),
  );
  t.is(elsewhere.requests.length, 0);
  t.false(init.stderr.includes(forge.token));

  forge.setNextOrigin(undefined);
  forge.redirect(1, `${elsewhere.url}/repos/acme/widgets/issues`);
  const again = await svc(env, ["init", "forge::acme/widgets", "e"]);
  t.not(again.code, 0);
  t.regex(again.stderr, /never follows redirects/);
  t.is(elsewhere.requests.length, 0);
});

test("a kept validator whose payload is unreadable is ignored: the fetch asks afresh and works", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 20);
  const env = givenForgeEnv(t, forge);
  await gitOk(t, env, ["clone", "-q", forgeRemote(forge.url, "acme/widgets"), "d"]);
  const db = openCacheDb(env, { writable: true });
  try {
    t.true((db.prepare("UPDATE validators SET payload = '{not json'").run().changes as number) > 0);
  } finally {
    db.close();
  }
  forge.editIssue("acme/widgets", 2, { title: "Changed on the forge" });
  const from = forge.requests.length;
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.true(forge.requests.slice(from).every((request) => request.headers["if-none-match"] === undefined));
  t.regex(readFileSync(join(env.dir, "d", "issues", "0002.md"), "utf8"), /^title: "Changed on the forge"$/m);
});

test("the forge gives no count of its issues: a fetch says when deletions were last looked for, and the svc sync --reconcile it prints removes a deleted issue", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 5);
  const env = givenForgeEnv(t, forge);
  await gitOk(t, env, ["clone", "-q", forgeRemote(forge.url, "acme/widgets"), "d"]);
  // Deleted on the forge (an admin in the web interface; REST cannot): a delta listing does not show it.
  forge.deleteIssue("acme/widgets", 3);
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  const line =
    /^svc: records deleted on forge .* are seen only by a full listing, made at most every 10 min \(svc\.reconcileInterval\); the last was \d+\.\d s ago\. To look now, run: (svc sync --reconcile)$/m.exec(
      fetch.stderr,
    );
  t.truthy(line, fetch.stderr);
  const reconcile = await run(env, "sh", ["-c", line?.[1] ?? "false"], { cwd: "d" });
  t.is(reconcile.code, 0, reconcile.stderr);
  t.regex(reconcile.stderr, /full sync: 0 changed, 1 removed/);
  t.is(await gitOk(t, env, ["ls-tree", "origin/main", "issues/0003.md"], { cwd: "d" }), "");
  // In a pull, the command pulls as well, and the working tree shows it.
  forge.deleteIssue("acme/widgets", 4);
  const pull = await git(env, ["pull"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  const printed = /To look now, run: (.+)$/m.exec(pull.stderr)?.[1] ?? "false";
  t.is(printed, "svc sync --reconcile && git pull");
  const looked = await run(env, "sh", ["-c", printed], { cwd: "d" });
  t.is(looked.code, 0, looked.stderr);
  t.false(existsSync(join(env.dir, "d", "issues", "0003.md")));
  t.false(existsSync(join(env.dir, "d", "issues", "0004.md")));
});
