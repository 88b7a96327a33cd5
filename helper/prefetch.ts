/**
 * Prefetch (DESIGN.md §4): a lazy fetch that wants some record blobs also gets the other record blobs the
 * user's repository lacks, in the same pack, up to a byte budget. git itself asks for one blob at a time in
 * `git grep … HEAD`, `git log -p` (one batch per commit) and `git restore`, and starts this helper for each
 * request; the cache holds every blob locally, so sending more costs little and saves those starts.
 *
 * git accepts what it did not ask for: the extra blobs arrive as `want` lines added to the request
 * (`uploadpack.allowAnySHA1InWant`; explicitly wanted blobs pass a `blob:none` filter), land in the same
 * promisor pack and count as present afterwards (measured with git 2.39: `git rev-list --objects
 * --missing=print` no longer lists them, and no later command fetches them). What the user has is read from
 * the user's objects folder (git sets `GIT_DIR` for the helper); a blob only an alternate holds is sent again.
 */
import { readCount } from "../core/settings.js";

/** `svc.prefetchBytes` when neither git config nor `SVC_PREFETCH_BYTES` says otherwise: 32 MiB. */
export const DEFAULT_PREFETCH_BYTES = 32 * 1024 * 1024;

/** `git config svc.prefetchBytes` (it wins) or `SVC_PREFETCH_BYTES`: bytes; 0 turns prefetch off. */
export function readPrefetchBytes(settings: ReadonlyMap<string, string>, env = process.env): number {
  const fromConfig = settings.get("svc.prefetchbytes");
  return fromConfig !== undefined
    ? readCount("git config svc.prefetchBytes", fromConfig, {
        fallback: DEFAULT_PREFETCH_BYTES,
        zero: "no prefetch",
      })
    : readCount("SVC_PREFETCH_BYTES", env.SVC_PREFETCH_BYTES, {
        fallback: DEFAULT_PREFETCH_BYTES,
        zero: "no prefetch",
      });
}

export interface PrefetchChoice {
  readonly oids: string[];
  readonly bytes: number;
  /** Whether every candidate neither wanted nor present was taken (none was left out by the budget or limit). */
  readonly complete: boolean;
}

/**
 * The blobs to send beside `wanted`: `candidates` in their order (best first), leaving out the wanted ones
 * and those `present` says the user has, while their sizes fit in `budgetBytes` and their number in
 * `maxBlobs` (what a blob limit leaves). A candidate too large for what is left of the budget is skipped,
 * so smaller ones after it may still go.
 */
export function choosePrefetch(options: {
  readonly candidates: Iterable<{ readonly oid: string; readonly bytes: number }>;
  readonly wanted: ReadonlySet<string>;
  readonly present: (oid: string) => boolean;
  readonly budgetBytes: number;
  readonly maxBlobs: number;
}): PrefetchChoice {
  const oids: string[] = [];
  let bytes = 0;
  let complete = true;
  if (options.budgetBytes <= 0 || options.maxBlobs <= 0) return { oids, bytes, complete: false };
  for (const candidate of options.candidates) {
    if (options.wanted.has(candidate.oid) || options.present(candidate.oid)) continue;
    if (oids.length >= options.maxBlobs) {
      complete = false;
      break;
    }
    if (bytes + candidate.bytes > options.budgetBytes) {
      complete = false;
      continue;
    }
    oids.push(candidate.oid);
    bytes += candidate.bytes;
  }
  return { oids, bytes, complete };
}
