/**
 * Fixtures for the cache's unit tests, which run the cache in-process against a scripted backend: a sim
 * issue as the backend lists it, and the user's repository of a clone being made (no server commit yet).
 */
import type { BackendRecord } from "../backends/backend.js";
import type { UserRepository } from "../git/user-git.js";

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
