/**
 * Fixtures for the cache's unit tests, which run the cache in-process against a scripted backend: a sim
 * issue as the backend lists it, the user's repository of a clone being made (no server commit yet), and a
 * new cache of project `demo` built from the backend's first listing.
 */
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import type { Backend, BackendRecord } from "../backends/backend.js";
import type { ProjectCache } from "../cache/cache.js";
import { openProjectCache } from "../cache/open.js";
import { parseRemoteUrl } from "../core/remote-url.js";
import type { UserRepository } from "../git/user-git.js";
import { isolateWorkerGit } from "./git.js";

/** Issue `id` as the sim backend lists it: version 1, open, created and updated at `updatedAt`. */
export function issueRecord(id: number, updatedAt: string, body = ""): BackendRecord {
  return {
    key: String(id),
    path: `issues/${String(id).padStart(4, "0")}.md`,
    version: 1,
    updatedAt,
    content: {
      fields: {
        id,
        title: `Issue ${id}`,
        status: "open",
        labels: [],
        created_at: updatedAt,
        updated_at: updatedAt,
        version: 1,
      },
      body,
    },
    raw: {},
  };
}

/** A user repository without any server commit: a clone being made; it has nothing to copy. */
export const NO_HISTORY: UserRepository = {
  serverRefs: ["refs/remotes/origin/main"],
  gitOutput: async () => undefined,
  spawnGit: () => {
    throw new Error("nothing to copy");
  },
};

/** The remote the cache tests' caches are for. */
export const CACHE_TEST_REMOTE = parseRemoteUrl("svc::http://127.0.0.1:1/projects/demo");

/** A new cache of `CACHE_TEST_REMOTE` built from `backend`'s first listing, in a temporary folder; closed at teardown. */
export async function givenScriptedCache(
  t: ExecutionContext,
  backend: Backend,
  prefix: string,
): Promise<ProjectCache> {
  const temp = isolateWorkerGit(t, prefix);
  const { cache } = await openProjectCache({
    remote: CACHE_TEST_REMOTE,
    agent: "test",
    backend,
    user: NO_HISTORY,
    log: () => {},
    root: join(temp, "cache"),
  });
  t.teardown(() => cache.close());
  return cache;
}
