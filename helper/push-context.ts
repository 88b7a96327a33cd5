/**
 * What every step of a push (helper/push.ts) is handed and answers with: the push's context, how far its
 * writes got, the objects it reads in-process, and the reply git hears. Types and one constructor only, so
 * the step files import this and not each other's callers.
 */

import { join } from "node:path";
import type { WritableBackend } from "../backends/backend.js";
import type { CommentIdentity } from "../backends/comment.js";
import type { ProjectCache } from "../cache/cache.js";
import { ObjectReader } from "../git/object-store.js";
import { Trees } from "../git/tree-diff.js";
import { userObjectsDir } from "../git/user-command.js";
import type { PlannedWrite } from "./push-plan.js";

export type PushReply =
  | { readonly ok: true; readonly oldOid: string | undefined }
  /** `broken`: stopped by a local fault (a full or read-only cache), not refused: the helper exits 2. */
  | { readonly ok: false; readonly reason: string; readonly broken?: boolean };

export interface PushContext {
  readonly cache: ProjectCache;
  readonly backend: WritableBackend;
  /** The git remote's name in the user's repository (for its remote-tracking ref). */
  readonly remote: string;
  readonly autoMerge: boolean;
  readonly bulkDeleteLimit: number;
  readonly log: (message: string) => void;
  readonly trace: (message: string) => void;
  /** The push was forced (`+src:dst`). */
  readonly forced?: boolean;
  /** Who pushes, as comments name authors: set when the push has comment files (push-comments.ts). */
  readonly me?: CommentIdentity;
}

/**
 * How far a push's writes got, for the message of a local fault that stops it (`localFaultReply` in
 * push-writes.ts): a full disk can stop the cache from noting a write the server has already answered.
 */
export interface WriteTally {
  /** The writes planned; 0 before the plan. */
  total: number;
  /** Writes the server answered and the cache noted. */
  done: number;
  /** The write the server answered that the cache has not noted yet. */
  answered: PlannedWrite | undefined;
}

/** A push under way: its context and how far its writes got. */
export interface PushRun extends PushContext {
  readonly tally: WriteTally;
}

/** The objects a push reads in-process (git/object-store.ts). */
export interface PushObjects {
  readonly cache: ObjectReader;
  /** The user's repository's objects, where git's environment says where they are. */
  readonly user: ObjectReader | undefined;
  /** Commits and trees of the cache, else of the user's repository; each tree parsed once. */
  readonly trees: Trees;
}

export function pushObjects(cache: ProjectCache): PushObjects {
  const cacheObjects = new ObjectReader(join(cache.repo, "objects"));
  const userFolder = userObjectsDir({ env: process.env, cwd: process.cwd() });
  const user = userFolder === undefined ? undefined : new ObjectReader(userFolder);
  return { cache: cacheObjects, user, trees: new Trees((oid) => cacheObjects.read(oid) ?? user?.read(oid)) };
}
