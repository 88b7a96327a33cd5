/**
 * The mirror's source: the project's cache, synced with a full listing as `svc sync --reconcile` does (so
 * records deleted on the server leave the mirror too; a cache built by this run is not listed twice), and
 * the records folder of its tip.
 */
import type { Backend } from "../../backends/backend.js";
import type { ProjectCache } from "../../cache/cache.js";
import { openProjectCache } from "../../cache/open.js";
import { type SyncResult, syncCache } from "../../cache/sync.js";
import { SvcError } from "../../core/errors.js";
import type { RemoteUrl } from "../../core/remote-url.js";
import { parseLsTree, runGit, type TreeListing } from "../../git/plumbing.js";
import type { UserRepository } from "../../git/user-git.js";

/** A user repository for `openProjectCache` that has no server commit: the cache never copies history. */
const NO_USER_REPOSITORY: UserRepository = {
  serverRefs: [],
  gitOutput: async () => undefined,
  spawnGit: () => {
    throw new SvcError("SVC_STORE", "the mirror has no user repository to copy history from");
  },
};

/** The cache of `remote`, synced with a full listing; prints the sync line as `svc sync` does. */
export async function syncedCache(
  remote: RemoteUrl,
  backend: Backend,
  agent: string,
  log: (message: string) => void,
): Promise<{ cache: ProjectCache; result: SyncResult }> {
  const { cache, built } = await openProjectCache({ remote, agent, backend, user: NO_USER_REPOSITORY, log });
  try {
    const result = built ?? (await syncCache(cache, backend, { reconcile: true }));
    if (result.commit) await cache.consolidateIfDue(log);
    log(
      `svc: ${result.full ? "full" : "delta"} sync: ${result.changed} changed, ${result.deleted} removed` +
        `${result.commit ? ` (cache commit ${result.commit.slice(0, 12)})` : ", nothing new"}`,
    );
    return { cache, result };
  } catch (error) {
    cache.close();
    throw error;
  }
}

/** The records folder of a cache commit: its tree (undefined without records) and its files, by full path. */
export interface CacheRecords {
  readonly tree: string | undefined;
  readonly files: TreeListing[];
}

/** The cache tip's records folder. */
export async function cacheRecords(cache: ProjectCache, tip: string, folder: string): Promise<CacheRecords> {
  const [top] = parseLsTree((await runGit(cache.repo, ["ls-tree", "-z", tip, "--", folder])).stdout);
  if (top?.type !== "tree") return { tree: undefined, files: [] };
  const files = parseLsTree((await runGit(cache.repo, ["ls-tree", "-r", "-z", top.oid])).stdout).map(
    (entry) => ({ ...entry, path: `${folder}/${entry.path}` }),
  );
  return { tree: top.oid, files };
}
