/**
 * The mirror (DESIGN.md §1 and §8; Document 3 wiki-adapter.md "Rules for test fixtures" 6): overlays the
 * records folder of a project's cache (`pages/` for a wiki, `issues/` for the others: the schema's folder)
 * onto a plain git repository and fast-forwards its branch. It never writes to the backend and never
 * force-pushes. Two front ends run it with the same arguments: `svc mirror` (cli/commands/mirror.ts) and
 * the `scripts/mirror-refresh` launcher.
 *
 * One run:
 * 1. syncs the remote's cache as `svc sync --reconcile` does (cli/mirror/project-cache.ts);
 * 2. reads the mirror's branch tip (`git fetch --depth=1`) into a temporary bare repository whose
 *    alternates are the cache's objects, so no record tree or blob is copied (cli/mirror/overlay.ts);
 * 3. replaces the records folder of the tip's tree with the cache tip's and keeps every other entry (a
 *    README, CI files); commits on the tip only when the tree changed, with a fixed identity and time (the
 *    later of the cache tip's and the mirror tip's), so the same records on the same tip give the same
 *    commit id; an absent branch gets a first commit;
 * 4. pushes with a plain `git push <url> <commit>:refs/heads/<branch>`. A mirror that moved since it was
 *    read fails git's own fast-forward check: exit 1, nothing overwritten; the next run builds on the new tip
 *    (cli/mirror/push.ts);
 * 5. fetches the branch again into a second temporary repository that shares nothing with the cache and
 *    compares every file of its records folder byte for byte with the cache's (cli/mirror/verify.ts).
 *
 * For the wiki test space (`SVC_WIKI_TEST_SPACE`) it refuses, before any push, unless both durable fixture
 * pages are in the listing and labelled `svc-durable-fixture` (cli/mirror/wiki-fixtures.ts).
 *
 * Exit codes (MIRROR_EXIT): 0 up to date or fast-forwarded (and verified), or a dry run; 1 the mirror refused
 * the push or the verification found a difference; 2 bad arguments or URLs, missing credentials, an
 * unreachable backend or mirror, the wiki test space without its durable pages. `refreshMirror` resolves
 * with 0 or 1 and throws for the rest; each front end prints what it throws (core/errors.ts `failureReport`)
 * and exits 2.
 *
 * Every git command here runs through git/plumbing.ts (the scrubbed environment); no hook of the user's runs
 * in the temporary repositories (cli/mirror/mirror-git.ts), and the push passes `--no-verify`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBackend } from "../../backends/create.js";
import { parseRemoteUrl } from "../../core/remote-url.js";
import { type MirrorArgs, usageError } from "./command-line.js";
import { gitRun, makeScratchRepo, remoteTip } from "./mirror-git.js";
import { cacheRecords, syncedCache } from "./project-cache.js";
import { buildAndPush } from "./push.js";
import { MIRROR_EXIT, type MirrorIo, type Refresh } from "./run-context.js";
import { verifyMirror } from "./verify.js";
import { checkDurableFixtures } from "./wiki-fixtures.js";

/**
 * One run (the steps in this file's header); resolves with the exit code of a push refused or a
 * verification failed, throws for the rest (usage, configuration, backend). Its temporary folder is removed
 * at the end, on an error, and on SIGINT/SIGTERM.
 */
export async function refreshMirror(args: MirrorArgs, io: MirrorIo): Promise<number> {
  const scratch = mkdtempSync(join(tmpdir(), "svc-mirror-"));
  const removeScratch = () => rmSync(scratch, { recursive: true, force: true });
  const onSignal = (signal: NodeJS.Signals) => {
    removeScratch();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await refreshIn(scratch, args, io);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    removeScratch();
  }
}

/** The run in its temporary folder `scratch`: checks, sync, the durable-page guard, push, verification. */
async function refreshIn(scratch: string, args: MirrorArgs, io: MirrorIo): Promise<number> {
  const work = join(scratch, "work.git");
  await makeScratchRepo(work);
  const ref = `refs/heads/${args.branch}`;
  if ((await gitRun(work, ["check-ref-format", ref])).code !== 0)
    throw usageError(io.usage, `--branch ${JSON.stringify(args.branch)} is not a valid branch name`);
  const remote = parseRemoteUrl(args.remote);
  const agent = `svc-mirror-${process.pid}`;
  const backend = await createBackend(remote, agent, io.env);
  // Before the listing: an unreachable mirror is found in a second, not after a long sync.
  await remoteTip(work, args.mirror, ref, io.rerun);
  const log = (message: string) => io.stderr(`${message}\n`);
  const { cache, result } = await syncedCache(remote, backend, agent, log);
  try {
    const folder = backend.schema.folder;
    const records = await cacheRecords(cache, result.tip, folder);
    await checkDurableFixtures(remote, backend, new Set(records.files.map((file) => file.path)), io);
    const refresh: Refresh = {
      args,
      io,
      remote,
      backend,
      cache,
      cacheTip: result.tip,
      folder,
      records,
      scratch,
    };
    const pushed = await buildAndPush(refresh, work, ref);
    if (pushed !== MIRROR_EXIT.ok || args.dryRun) return pushed;
    return await verifyMirror(refresh, ref);
  } finally {
    cache.close();
  }
}
