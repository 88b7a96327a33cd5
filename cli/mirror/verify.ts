/**
 * The mirror's verification after a push: the branch fetched into a second temporary repository that shares
 * nothing with the cache (no alternates), and every file of its records folder compared byte for byte with
 * the cache's. A difference (a hook on the mirror, another writer) is exit 1, naming the files.
 */
import { join } from "node:path";
import type { ProjectCache } from "../../cache/cache.js";
import { SvcError } from "../../core/errors.js";
import { parseLsTree, readObjects, runGit, type TreeListing } from "../../git/plumbing.js";
import { describeComparison, type FolderComparison } from "./changes.js";
import { fetchTip, makeScratchRepo } from "./mirror-git.js";
import { MIRROR_EXIT, type Refresh } from "./run-context.js";

/** At most this many files' bytes are held in memory at once while verifying. */
const VERIFY_BATCH = 500;

/**
 * Fetches the branch into a fresh repository with no alternates (nothing shared with the cache) and
 * compares every file of its records folder with the cache's, byte for byte.
 */
export async function verifyMirror(refresh: Refresh, ref: string): Promise<number> {
  const { args, io, cache, folder, records } = refresh;
  const verify = join(refresh.scratch, "verify.git");
  await makeScratchRepo(verify);
  const failed = (what: string) => {
    io.stderr(
      `svc: verification failed: ${what}. The mirror changed after the push (a hook on it, or another writer); ` +
        `run the same command again to overlay the cache's records on its tip: ${io.rerun}\n`,
    );
    return MIRROR_EXIT.refused;
  };
  let tip: string;
  try {
    tip = await fetchTip(verify, args.mirror, ref, "refs/mirror/verify");
  } catch (error) {
    return failed(`could not fetch ${args.mirror} ${args.branch} back (${(error as Error).message})`);
  }
  const mirrored = parseLsTree(
    (await runGit(verify, ["ls-tree", "-r", "-z", tip, "--", folder])).stdout,
  ).filter((entry) => entry.path === folder || entry.path.startsWith(`${folder}/`));
  const comparison = await compareWithCache(cache, records.files, verify, mirrored);
  const problems = describeComparison(comparison);
  if (problems !== "") {
    return failed(
      `${folder}/ of ${args.mirror} ${args.branch} (${tip.slice(0, 12)}) does not match the cache (${refresh.cacheTip.slice(0, 12)}): ${problems}`,
    );
  }
  io.stderr(
    `svc: verified: ${records.files.length} files in ${folder}/ of ${args.mirror} match the cache byte for byte\n`,
  );
  return MIRROR_EXIT.ok;
}

/** Compares the mirror's files with the cache's: by path, then by bytes, VERIFY_BATCH files at a time. */
async function compareWithCache(
  cache: ProjectCache,
  expected: readonly TreeListing[],
  repo: string,
  actual: readonly TreeListing[],
): Promise<FolderComparison> {
  const theirs = new Map(actual.map((entry) => [entry.path, entry]));
  const ours = new Set(expected.map((entry) => entry.path));
  const missing = expected.filter((entry) => !theirs.has(entry.path)).map((entry) => entry.path);
  const extra = actual.filter((entry) => !ours.has(entry.path)).map((entry) => entry.path);
  const different: string[] = [];
  const common = expected.filter((entry) => theirs.has(entry.path));
  for (let start = 0; start < common.length; start += VERIFY_BATCH) {
    const batch = common.slice(start, start + VERIFY_BATCH);
    const pairs = batch.map((entry) => ({ entry, mirror: theirs.get(entry.path) as TreeListing }));
    const cacheBytes = await cache.blobContents(batch.map((entry) => entry.oid));
    const mirrorBytes = await readObjects(
      repo,
      pairs.filter(({ mirror }) => mirror.type === "blob").map(({ mirror }) => mirror.oid),
    );
    for (const { entry, mirror } of pairs) {
      const want = cacheBytes.get(entry.oid);
      const got = mirror.type === "blob" ? mirrorBytes.get(mirror.oid) : undefined;
      if (want === undefined)
        throw new SvcError(
          "SVC_STORE",
          `the cache ${cache.dir} lacks the contents of ${entry.path} (${entry.oid})`,
        );
      if (mirror.mode !== entry.mode || got === undefined || !got.equals(want)) different.push(entry.path);
    }
  }
  return { missing, extra, different };
}
