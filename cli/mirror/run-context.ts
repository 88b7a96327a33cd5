/**
 * What one mirror run (cli/mirror/refresh.ts) knows and hands to its steps: its arguments, where it writes
 * and how it names itself in messages, and, once the cache is synced, the project, its cache and its
 * records. Also the run's exit codes.
 */
import type { Backend } from "../../backends/backend.js";
import type { ProjectCache } from "../../cache/cache.js";
import type { RemoteUrl } from "../../core/remote-url.js";
import type { MirrorArgs, MirrorUsage } from "./command-line.js";
import type { CacheRecords } from "./project-cache.js";

export const MIRROR_EXIT = {
  /** Up to date, fast-forwarded and verified, or a dry run. */
  ok: 0,
  /** The mirror refused the push (it moved, a hook declined, …) or the verification found a difference. */
  refused: 1,
  /** Bad arguments or URLs, missing credentials, an unreachable backend or mirror, the test-space guard. */
  broken: 2,
} as const;

/** What a run needs besides its arguments. */
export interface MirrorIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** The command that runs this again, as printed in messages. */
  readonly rerun: string;
  /** The front end's usage, for a refusal of the command line. */
  readonly usage: MirrorUsage;
}

/** A run once the project's cache is synced. */
export interface Refresh {
  readonly args: MirrorArgs;
  readonly io: MirrorIo;
  readonly remote: RemoteUrl;
  readonly backend: Backend;
  readonly cache: ProjectCache;
  readonly cacheTip: string;
  readonly folder: string;
  readonly records: CacheRecords;
  /** The temporary folder of this run. */
  readonly scratch: string;
}
