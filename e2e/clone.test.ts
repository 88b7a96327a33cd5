/**
 * Cloning (issue 3): `svc init`, lazy and sparse partial clones (one helper fetch request per checkout),
 * protocol v0 through `import`, and a full clone without a filter. Real git, a real simulator per test.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import {
  auditRows,
  expectedIssueFile,
  fetchRequests,
  git,
  gitOk,
  givenGitEnv,
  lastAuditId,
  manyIssues,
  missingObjects,
  objectTypes,
  SPARSE_SET,
  svc,
  svcUrl,
} from "../testing/git.js";
import { givenProject, givenSim, type SeedIssue } from "../testing/sim.js";

/** Bodies and titles that break naive renderers or git's line handling. */
const TRICKY_ISSUES: SeedIssue[] = [
  { title: "Plain issue", body: "Just a body.\n" },
  { title: "Colon: and 'quotes' and \"double\"", status: "in_progress", labels: ["bug", "p1"], body: "" },
  { title: "No final newline", body: "line one\nline two" },
  { title: "Windows line ends", body: "first\r\nsecond\r\n" },
  { title: "Looks like frontmatter", body: "---\ntitle: fake\n---\nstill body\n" },
  {
    title: "Ünïcödé 🚀 and tabs\there",
    labels: ["über", "yes", "null"],
    assignee: "dana",
    body: "Emoji 🎉\n\n\n",
  },
  { title: "true", status: "done", body: "# Heading\n\n- [ ] task\n\n```yaml\na: b\n```\n" },
  { title: "  leading spaces", status: "wont_fix", body: "  indented\n\ttabbed\n" },
];

test("svc init checks out every issue with its canonical bytes, a clean status and main tracking origin/main", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", TRICKY_ISSUES);
  const env = givenGitEnv(t);

  const init = await svc(env, ["init", "sim::demo", "d", "--origin", sim.url], { env: { SVC_TRACE: "1" } });
  t.is(init.code, 0, init.stderr);
  t.is(init.stdout, "", "svc init writes nothing but errors and notes, on stderr");
  // The new cache's helper sends the files it rendered while building it, not read back from its database.
  t.regex(
    init.stderr,
    /clone: answering with every record file, in svc's own pack, of the files the build kept/,
  );

  for (let id = 1; id <= TRICKY_ISSUES.length; id++) {
    const name = `issues/${String(id).padStart(4, "0")}.md`;
    const actual = readFileSync(join(env.dir, "d", name));
    t.deepEqual(actual, Buffer.from(await expectedIssueFile(sim.url, "demo", id)), name);
  }
  t.deepEqual((await gitOk(t, env, ["ls-files"], { cwd: "d" })).split("\n"), [
    "issues/0001.md",
    "issues/0002.md",
    "issues/0003.md",
    "issues/0004.md",
    "issues/0005.md",
    "issues/0006.md",
    "issues/0007.md",
    "issues/0008.md",
  ]);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  t.is(await gitOk(t, env, ["rev-parse", "--abbrev-ref", "HEAD"], { cwd: "d" }), "main");
  t.is(await gitOk(t, env, ["rev-parse", "--abbrev-ref", "main@{upstream}"], { cwd: "d" }), "origin/main");
  t.is(await gitOk(t, env, ["config", "remote.origin.url"], { cwd: "d" }), svcUrl(sim.url, "demo"));
  t.is(await gitOk(t, env, ["config", "remote.origin.promisor"], { cwd: "d" }), "true");
  // The record files came with the clone's one fetch (within the blob limit): no lazy fetch for the
  // checkout, and the clone is still partial for whatever comes later.
  const fetches = fetchRequests(auditRows(env));
  t.is(fetches.length, 1, JSON.stringify(fetches));
  t.deepEqual(await missingObjects(env, "d"), []);
  t.is(await gitOk(t, env, ["config", "remote.origin.partialclonefilter"], { cwd: "d" }), "blob:none");
});

test("clone --filter=blob:none --no-checkout has no blobs; checkout fetches all of them in one request", async (t) => {
  const sim = await givenSim(t);
  const count = 12;
  await givenProject(sim.url, "demo", manyIssues(count));
  const env = givenGitEnv(t);

  await gitOk(t, env, ["clone", "--filter=blob:none", "--no-checkout", svcUrl(sim.url, "demo"), "d2"]);
  t.is((await missingObjects(env, "d2")).length, count);
  const types = await objectTypes(env, "d2");
  t.false("blob" in types, JSON.stringify(types));
  t.is(types.commit, 1);
  t.is(types.tree, 2);

  const afterClone = lastAuditId(env);
  t.true(afterClone > 0);
  await gitOk(t, env, ["checkout", "main"], { cwd: "d2" });
  const fetches = fetchRequests(auditRows(env, afterClone));
  t.is(fetches.length, 1, JSON.stringify(fetches));
  t.is(fetches[0]?.detail.wants, count);
  t.deepEqual(await missingObjects(env, "d2"), []);
  t.is((await objectTypes(env, "d2")).blob, count);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d2" }), "");
  t.is(
    readFileSync(join(env.dir, "d2", "issues", "0007.md"), "utf8"),
    await expectedIssueFile(sim.url, "demo", 7),
  );
});

test("a sparse clone checks out only what its --no-cone pattern matches, in one request; with svc.prefetchBytes=0 it fetches only that", async (t) => {
  const sim = await givenSim(t);
  const count = 40;
  await givenProject(sim.url, "demo", manyIssues(count));
  const env = givenGitEnv(t);
  const matching = Array.from({ length: 20 }, (_, index) => `issues/00${10 + index}.md`);
  const present = async (dir: string) =>
    (await gitOk(t, env, ["ls-files", "-t"], { cwd: dir }))
      .split("\n")
      .filter((line) => line.startsWith("H "))
      .map((line) => line.slice(2));

  // By default the one request also brings the files outside the pattern (prefetch), not checked out.
  await gitOk(t, env, ["clone", "--filter=blob:none", "--sparse", svcUrl(sim.url, "demo"), "d3"]);
  t.is((await missingObjects(env, "d3")).length, count, "a sparse clone of a tree without top-level files");
  let afterClone = lastAuditId(env);
  await gitOk(t, env, [...SPARSE_SET, "issues/00[1-2]*"], { cwd: "d3" });
  t.deepEqual(
    fetchRequests(auditRows(env, afterClone)).map((row) => row.detail.wants),
    [20],
  );
  t.deepEqual(await present("d3"), matching);
  t.deepEqual(await missingObjects(env, "d3"), []);
  t.throws(() => readFileSync(join(env.dir, "d3", "issues", "0001.md")), { code: "ENOENT" });

  // Without prefetch only the matching blobs come.
  await gitOk(t, env, ["clone", "--filter=blob:none", "--sparse", svcUrl(sim.url, "demo"), "d4"]);
  await gitOk(t, env, ["config", "svc.prefetchBytes", "0"], { cwd: "d4" });
  afterClone = lastAuditId(env);
  await gitOk(t, env, [...SPARSE_SET, "issues/00[1-2]*"], { cwd: "d4" });
  const fetches = fetchRequests(auditRows(env, afterClone));
  t.is(fetches.length, 1, JSON.stringify(fetches));
  t.is(fetches[0]?.detail.wants, 20);
  t.is((await missingObjects(env, "d4")).length, count - 20);
  t.deepEqual(await present("d4"), matching);
  t.is(
    readFileSync(join(env.dir, "d4", "issues", "0015.md"), "utf8"),
    await expectedIssueFile(sim.url, "demo", 15),
  );
  // Looked up without a lazy fetch on every git: rev-parse reads the tree only (GIT_NO_LAZY_FETCH is 2.45+).
  const outside = (await gitOk(t, env, ["rev-parse", "HEAD:issues/0001.md"], { cwd: "d4" })).trim();
  t.true(
    (await missingObjects(env, "d4")).includes(outside),
    "the blob of issues/0001.md, outside the pattern, was never fetched",
  );
  t.throws(() => readFileSync(join(env.dir, "d4", "issues", "0001.md")), { code: "ENOENT" });
});

test("protocol v0 clones through import with the commit id of a v2 clone; a clone without a filter has every blob", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", TRICKY_ISSUES);
  const env = givenGitEnv(t);
  const url = svcUrl(sim.url, "demo");

  const v0 = await git(env, ["-c", "protocol.version=0", "clone", url, "d6"]);
  t.is(v0.code, 0, v0.stderr);
  t.true(
    auditRows(env).some((row) => row.op === "import"),
    "the v0 clone went through import",
  );
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d6" }), "");
  for (const id of [1, 4, 6]) {
    const name = `${String(id).padStart(4, "0")}.md`;
    t.is(
      readFileSync(join(env.dir, "d6", "issues", name), "utf8"),
      await expectedIssueFile(sim.url, "demo", id),
      name,
    );
  }

  await gitOk(t, env, ["clone", "--filter=blob:none", url, "v2"]);
  const v0Head = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "d6" });
  t.is(v0Head, await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "v2" }));

  await gitOk(t, env, ["clone", url, "full"]);
  t.is(await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: "full" }), v0Head);
  t.deepEqual(await missingObjects(env, "full"), []);
  t.is((await objectTypes(env, "full")).blob, TRICKY_ISSUES.length);
  t.is(
    await gitOk(t, env, ["config", "--default", "none", "remote.origin.promisor"], { cwd: "full" }),
    "none",
  );
  const fsck = await git(env, ["fsck", "--strict"], { cwd: "full" });
  t.is(fsck.code, 0, fsck.stderr);
  t.is(fsck.stdout, "");
});
