/**
 * Prefetch (issue 12 item 2, DESIGN.md §4): git asks a partial clone's remote for one missing blob at a time
 * in `git grep … HEAD`, and for one commit's blobs at a time in `git log -p`, starting the helper for each
 * request. The helper sends the other record blobs the clone lacks with the first request, up to
 * `svc.prefetchBytes`, so these commands start it once. Helper starts are counted as distinct process ids
 * of `SVC_TRACE` lines.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import {
  auditRows,
  fetchRequests,
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  lastAuditId,
  manyIssues,
  missingObjects,
  patchIssue,
  type RunResult,
  SPARSE_SET,
  svc,
  svcUrl,
  testWithBlobLimit,
} from "../testing/git.js";
import { givenClone, givenSeedFile, issuePath } from "../testing/push.js";
import { givenProject, givenSim, type SeedIssue } from "../testing/sim.js";

/** How many helper processes wrote `SVC_TRACE` lines to `result`'s stderr. */
function helperStarts(result: RunResult): number {
  return new Set([...result.stderr.matchAll(/^svc-trace (\d+) /gm)].map((match) => match[1])).size;
}

/** The `materialize` rows written after audit row `after`: what each lazy fetch wrote and prefetched. */
function materialized(env: GitEnv, after: number): Record<string, unknown>[] {
  return auditRows(env, after)
    .filter((row) => row.op === "materialize")
    .map((row) => row.detail);
}

test("in a sparse 10,000-issue clone, git grep <word> HEAD finds every match with one helper start", async (t) => {
  t.timeout(180_000);
  const count = 10_000;
  const issues: SeedIssue[] = Array.from({ length: count }, (_, index) => ({
    title: `Issue ${index + 1}`,
    body: (index + 1) % 13 === 0 ? `The needle is in issue ${index + 1}.\n` : `Only hay in ${index + 1}.\n`,
  }));
  const sim = await givenSim(t, { seedFile: givenSeedFile(t, "big", issues) });
  const env = givenGitEnv(t);
  await givenClone(t, env, sim.url, "big", "sparse", ["--sparse"]);
  // Without prefetch for this one command, so that the clone lacks what the grep below reads.
  await gitOk(t, env, ["-c", "svc.prefetchBytes=0", ...SPARSE_SET, "issues/00[1-2]*"], {
    cwd: "sparse",
  });
  t.is((await missingObjects(env, "sparse")).length, count - 20);

  const before = lastAuditId(env);
  const grep = await git(env, ["grep", "-l", "needle", "HEAD"], {
    cwd: "sparse",
    env: { SVC_TRACE: "1" },
    timeoutMs: 120_000,
  });
  t.false(grep.timedOut, "git grep did not finish within 120 s");
  t.is(grep.code, 0, grep.stderr.slice(-2000));
  const expected = Array.from(
    { length: Math.floor(count / 13) },
    (_, index) => `HEAD:${issuePath(13 * (index + 1))}`,
  );
  t.deepEqual(grep.stdout.trim().split("\n"), expected);
  t.true(helperStarts(grep) <= 2, `${helperStarts(grep)} helper starts`);
  t.is(helperStarts(grep), 1);
  t.deepEqual(materialized(env, before), [{ blobs: count - 20, wants: 1, prefetched: count - 21 }]);
  t.deepEqual(await missingObjects(env, "sparse"), [], "the prefetched blobs count as present");
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "sparse" }), "");
  const fsck = await git(env, ["fsck", "--connectivity-only"], { cwd: "sparse" });
  t.is(fsck.code, 0, fsck.stderr);
});

/** A clone of a 30-issue project whose `origin/main` then gains 20 sync commits, one server edit each. */
async function givenTwentySyncCommits(t: Parameters<typeof givenClone>[0], env: GitEnv): Promise<string> {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(30));
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", svcUrl(sim.url, "demo"), "d"]);
  for (let edit = 1; edit <= 20; edit++) {
    await patchIssue(sim.url, "demo", edit, { body: `Edit number ${edit} on the server.\n` });
    // Without prefetch: a fetch into this clone (whole since its checkout) would bring the edited versions.
    await gitOk(t, env, ["-c", "svc.prefetchBytes=0", "fetch", "-q"], { cwd: "d" });
  }
  t.is(await gitOk(t, env, ["rev-list", "--count", "origin/main"], { cwd: "d" }), "21");
  return sim.url;
}

test("git log -p over 20 sync commits starts the helper once, not once per commit", async (t) => {
  const env = givenGitEnv(t);
  await givenTwentySyncCommits(t, env);
  t.is((await missingObjects(env, "d")).length, 20, "the edited versions are not in the clone yet");

  const before = lastAuditId(env);
  const log = await git(env, ["log", "-p", "origin/main"], { cwd: "d", env: { SVC_TRACE: "1" } });
  t.is(log.code, 0, log.stderr);
  for (let edit = 1; edit <= 20; edit++) t.true(log.stdout.includes(`+Edit number ${edit} on the server.`));
  t.is(helperStarts(log), 1);
  t.is(materialized(env, before).length, 1);
  t.deepEqual(await missingObjects(env, "d"), []);
});

test("svc.prefetchBytes limits what comes beside the wanted blobs; 0 turns prefetch off", async (t) => {
  const env = givenGitEnv(t);
  await givenTwentySyncCommits(t, env);

  // Without prefetch git fetches once per commit: what prefetch saves.
  const off = await git(env, ["-c", "svc.prefetchBytes=0", "log", "-p", "origin/main"], {
    cwd: "d",
    env: { SVC_TRACE: "1" },
  });
  t.is(off.code, 0, off.stderr);
  t.is(helperStarts(off), 20);
  t.deepEqual(await missingObjects(env, "d"), []);

  // A budget of 2,000 bytes (each file here is about 200): every lazy fetch of git grep in a sparse clone
  // brings its one wanted blob and what fits beside it, so a few fetches read all 30 files.
  const url = await gitOk(t, env, ["config", "remote.origin.url"], { cwd: "d" });
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", "--sparse", url, "s"]);
  const before = lastAuditId(env);
  const grep = await git(env, ["grep", "-l", "^id: ", "HEAD"], {
    cwd: "s",
    env: { SVC_TRACE: "1", SVC_PREFETCH_BYTES: "2000" },
  });
  t.is(grep.code, 0, grep.stderr);
  t.is(grep.stdout.trim().split("\n").length, 30);
  const fetches = fetchRequests(auditRows(env, before));
  t.true(fetches.length >= 3 && fetches.length <= 6, `${fetches.length} fetches`);
  t.is(helperStarts(grep), fetches.length);
  t.true(fetches.every((row) => row.detail.wants === 1));
  const prefetches = [...grep.stderr.matchAll(/ prefetch: (\d+) blobs, (\d+) bytes$/gm)];
  t.is(prefetches.length, fetches.length);
  for (const [line, blobs, bytes] of prefetches) {
    t.true(Number(blobs) >= 5, line);
    t.true(Number(bytes) <= 2000, line);
  }
});

/** The numbers of `prefetch: looked at <n> blobs stored after #<mark>` lines in `result`'s trace. */
function lookedAt(result: RunResult): { blobs: number; after: number }[] {
  return [...result.stderr.matchAll(/ prefetch: looked at (\d+) blobs stored after #(\d+)$/gm)].map(
    (match) => ({
      blobs: Number(match[1]),
      after: Number(match[2]),
    }),
  );
}

/** A 30-issue project cloned with svc init into the folder `d` (its own pack: every blob, and the mark). */
async function givenSvcInit(t: ExecutionContext): Promise<{ sim: { url: string }; env: GitEnv }> {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(30));
  const env = givenGitEnv(t);
  const init = await svc(env, ["init", "sim::demo", "d", "--origin", sim.url]);
  t.is(init.code, 0, init.stderr);
  return { sim, env };
}

test("after svc init a fetch brings the files changed on the server along, looking only at the blobs stored since; the pull starts the helper once", async (t) => {
  const { sim, env } = await givenSvcInit(t);

  await patchIssue(sim.url, "demo", 1, { body: "Edit of 1 on the server.\n" });
  const fetch = await git(env, ["fetch", "-q"], { cwd: "d", env: { SVC_TRACE: "1" } });
  t.is(fetch.code, 0, fetch.stderr);
  t.deepEqual(lookedAt(fetch), [{ blobs: 1, after: 30 }], "the 30 blobs of the clone were not looked at");
  t.deepEqual(await missingObjects(env, "d"), [], "the new version came with the fetch");

  await patchIssue(sim.url, "demo", 2, { body: "Edit of 2 on the server.\n" });
  const pull = await git(env, ["pull", "-q"], { cwd: "d", env: { SVC_TRACE: "1" } });
  t.is(pull.code, 0, pull.stderr);
  t.is(helperStarts(pull), 1, "no lazy fetch for the merge's checkout");
  t.deepEqual(lookedAt(pull), [{ blobs: 1, after: 31 }]);
  t.regex(readFileSync(join(env.dir, "d", issuePath(1)), "utf8"), /Edit of 1 on the server\./);
  t.regex(readFileSync(join(env.dir, "d", issuePath(2)), "utf8"), /Edit of 2 on the server\./);
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  const fsck = await git(env, ["fsck", "--connectivity-only"], { cwd: "d" });
  t.is(fsck.code, 0, fsck.stderr);
});

test("a clone made anew where a deleted one was is not taken for it: its fetches bring no files until a lazy fetch has looked at every blob", async (t) => {
  const { sim, env } = await givenSvcInit(t);
  rmSync(join(env.dir, "d"), { recursive: true, force: true });
  // Same path, often the same inode for its objects folder: a clone that lacks the files.
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", "--no-checkout", svcUrl(sim.url, "demo"), "d"]);
  t.is((await missingObjects(env, "d")).length, 30);
  await patchIssue(sim.url, "demo", 1, { body: "Edit of 1 on the server.\n" });
  const fetch = await git(env, ["fetch", "-q"], { cwd: "d", env: { SVC_TRACE: "1" } });
  t.is(fetch.code, 0, fetch.stderr);
  t.deepEqual(lookedAt(fetch), [], "a clone svc has not seen whole gets commits and trees only");
  t.is((await missingObjects(env, "d")).length, 31);

  const grep = await git(env, ["grep", "-l", "^id: ", "origin/main"], { cwd: "d", env: { SVC_TRACE: "1" } });
  t.is(grep.code, 0, grep.stderr);
  t.is(grep.stdout.trim().split("\n").length, 30);
  t.is(helperStarts(grep), 1);
  t.deepEqual(lookedAt(grep), [{ blobs: 31, after: 0 }]);
  t.deepEqual(await missingObjects(env, "d"), []);
});

testWithBlobLimit(
  "under a blob limit a fetch brings no files along: the checkout's lazy fetch still wants them all at once, and the limit counts them",
  async (t) => {
    const { sim, env } = await givenSvcInit(t);
    for (const id of [1, 2])
      await patchIssue(sim.url, "demo", id, { body: `Edit of ${id} on the server.\n` });
    const fetch = await git(env, ["fetch", "-q"], { cwd: "d", env: { SVC_TRACE: "1", SVC_BLOB_LIMIT: "1" } });
    t.is(fetch.code, 0, fetch.stderr);
    t.deepEqual(lookedAt(fetch), []);
    t.is((await missingObjects(env, "d")).length, 2);
    const merge = await git(env, ["merge", "-q", "--no-edit", "origin/main"], {
      cwd: "d",
      env: { SVC_BLOB_LIMIT: "1" },
    });
    t.not(merge.code, 0);
    t.regex(merge.stderr, /svc: this fetch wants 2 record files, more than SVC_BLOB_LIMIT=1/);
  },
);
