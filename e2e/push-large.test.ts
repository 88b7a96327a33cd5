/**
 * Pushing one file in a 10,000-issue project (issue 4, DESIGN.md §4, notes/push-and-lazy-cache.md C): from a
 * partial clone with every file checked out, from a sparse clone, and from clones behind the server on other
 * issues, the push fetches no blob lazily, copies exactly the user's new objects (one blob), lands the user's
 * commit in the cache byte for byte, and a push with nothing new prints `Everything up-to-date`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { RunningSim } from "../server/sim/server.js";
import {
  auditRows,
  cacheGit,
  fetchRequests,
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  lastAuditId,
  manyIssues,
  missingObjects,
  patchIssue,
  SPARSE_SET,
} from "../testing/git.js";
import {
  editWorkFile,
  givenClone,
  givenSeedFile,
  issueOnServer,
  issuePath,
  lastSimAuditId,
  setField,
  simWrites,
} from "../testing/push.js";
import { givenSim, givenTempDir } from "../testing/sim.js";

const ISSUES = 10_000;

/** A message git's default cleanup would change: blank lines, trailing spaces, a tab, a `#` line. */
const ODD_MESSAGE = "Close it  \n\n\n\tIndented line\n# not a comment here\nTrailer: value\n\n";

/** The `write_pack_file/wrote` counts of every `git pack-objects` that ran under a trace2 event log. */
function packObjectsWrote(traceFile: string): number[] {
  let text: string;
  try {
    text = readFileSync(traceFile, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { event: string; category?: string; key?: string; value?: string })
    .filter((event) => event.event === "data" && event.category === "pack-objects")
    .filter((event) => event.key === "write_pack_file/wrote")
    .map((event) => Number(event.value));
}

interface OnePushFacts {
  readonly head: string;
  readonly blob: string;
}

/**
 * Edits `id`'s status in `dir`, commits it with an odd committer timezone and a verbatim multi-line
 * message, pushes, and checks that the push fetched nothing, sent one commit, two trees and one blob, put
 * the very same commit into the cache, and wrote one PATCH.
 */
async function pushOneFile(
  t: ExecutionContext,
  env: GitEnv,
  sim: RunningSim,
  dir: string,
  id: number,
  status: string,
  tz: string,
): Promise<OnePushFacts> {
  const path = issuePath(id);
  editWorkFile(env, dir, path, (text) => setField(text, "status", status));
  await gitOk(t, env, ["add", path], { cwd: dir });
  await gitOk(t, env, ["commit", "-q", "--cleanup=verbatim", "-F", "-"], {
    cwd: dir,
    input: ODD_MESSAGE,
    env: { GIT_COMMITTER_DATE: `1700000000 ${tz}`, GIT_AUTHOR_DATE: `1600000000 ${tz}` },
  });
  const head = await gitOk(t, env, ["rev-parse", "HEAD"], { cwd: dir });
  const blob = await gitOk(t, env, ["rev-parse", `HEAD:${path}`], { cwd: dir });
  const missingBefore = (await missingObjects(env, dir)).length;
  const auditBefore = lastAuditId(env);
  const simBefore = lastSimAuditId(sim);
  const trace = join(givenTempDir(t, "svc-trace2-"), "events.json");

  const push = await git(env, ["push"], {
    cwd: dir,
    env: { GIT_TRACE2_EVENT: trace, SVC_TRACE: "1" },
    timeoutMs: 60_000,
  });
  t.is(push.code, 0, `${dir}: ${push.stderr}`);
  t.regex(push.stderr, /0 created, 1 updated, 0 deleted/);

  // Nothing fetched lazily: the same blobs are missing, and the helper served no fetch request.
  t.is((await missingObjects(env, dir)).length, missingBefore, `${dir}: missing blobs`);
  const rows = auditRows(env, auditBefore);
  t.deepEqual(fetchRequests(rows), [], `${dir}: fetch requests during the push`);
  t.false(
    rows.some((row) => row.op === "materialize"),
    `${dir}: blobs written for git`,
  );
  // The commit, the root and issues/ trees and the one changed blob, copied in-process: no pack is made.
  t.regex(push.stderr, /svc-trace \d+ \+\d+ms copied 4 objects into the cache\n/, `${dir}: objects copied`);
  t.deepEqual(packObjectsWrote(trace), [], `${dir}: objects packed during the push`);
  t.is((await cacheGit(env, ["cat-file", "-t", blob])).stdout.trim(), "blob");

  // The cache holds the user's commit byte for byte, as a parent of its new main.
  const parents = (await cacheGit(env, ["rev-list", "--parents", "-n", "1", "main"])).stdout
    .trim()
    .split(" ");
  t.true(parents.slice(1).includes(head), `${dir}: ${head} is not a parent of the cache's main ${parents}`);
  const cached = await cacheGit(env, ["cat-file", "commit", head]);
  t.is(cached.code, 0, cached.stderr);
  t.is(cached.stdout, await git(env, ["cat-file", "commit", head], { cwd: dir }).then((r) => r.stdout));
  t.true(cached.stdout.includes(`1700000000 ${tz}\n`));
  t.true(cached.stdout.endsWith(ODD_MESSAGE));

  t.deepEqual(simWrites(sim, simBefore), [
    { method: "PATCH", path: `/projects/big/issues/${id}`, status: 200, body: { status } },
  ]);

  const again = await git(env, ["push"], { cwd: dir });
  t.is(again.code, 0, again.stderr);
  t.regex(again.stderr, /Everything up-to-date/);
  return { head, blob };
}

test("in a 10,000-issue project, pushing one file fetches nothing and sends one blob, from full, sparse and stale clones", async (t) => {
  t.timeout(120_000);
  const seedFile = givenSeedFile(t, "big", manyIssues(ISSUES));
  const sim = await givenSim(t, { seedFile });
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });

  await givenClone(t, { ...env, env: { ...env.env, SVC_BLOB_LIMIT: "0" } }, sim.url, "big", "full");
  t.deepEqual(await missingObjects(env, "full"), []);
  await givenClone(t, env, sim.url, "big", "sparse", ["--sparse"]);
  // Without prefetch (on by default, it would bring the other 9,980 files too): a clone that lacks blobs.
  await gitOk(t, env, ["config", "svc.prefetchBytes", "0"], { cwd: "sparse" });
  await gitOk(t, env, [...SPARSE_SET, "issues/00[1-2]*"], { cwd: "sparse" });
  t.is(
    (await gitOk(t, env, ["ls-files", "-t"], { cwd: "sparse" })).split("\n").filter((l) => l.startsWith("H "))
      .length,
    20,
  );
  t.is((await missingObjects(env, "sparse")).length, ISSUES - 20);

  // The full partial clone, up to date.
  await pushOneFile(t, env, sim, "full", 100, "done", "+0545");

  // The sparse clone, now behind the server on issue 100.
  await pushOneFile(t, env, sim, "sparse", 15, "in_review", "-1130");

  // The full clone again, behind on issues the server changed meanwhile (and on issue 15).
  await patchIssue(sim.url, "big", 200, { title: "Changed on the server" });
  await patchIssue(sim.url, "big", 9_999, { status: "wont_fix" });
  await pushOneFile(t, env, sim, "full", 101, "in_progress", "+1400");

  for (const [id, field, value] of [
    [100, "status", "done"],
    [15, "status", "in_review"],
    [101, "status", "in_progress"],
    [200, "title", "Changed on the server"],
  ] as const) {
    const issue = await issueOnServer(sim.url, "big", id);
    t.is(issue.frontmatter[field], value, `issue ${id}`);
  }

  // Both clones then fast-forward to everything.
  for (const dir of ["full", "sparse"]) {
    const pull = await git(env, ["pull", "--ff-only"], { cwd: dir, timeoutMs: 60_000 });
    t.is(pull.code, 0, `${dir}: ${pull.stderr}`);
  }
  t.regex(readFileSync(join(env.dir, "full", issuePath(200)), "utf8"), /^title: "Changed on the server"$/m);
  t.regex(readFileSync(join(env.dir, "sparse", issuePath(15)), "utf8"), /^version: 2$/m);
});
