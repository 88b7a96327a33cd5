/**
 * `stateless-connect git-upload-pack`: protocol v2 tunnelled to `git upload-pack --stateless-rpc` on the
 * cache repo (DESIGN.md §4; notes/git-protocol-and-deps.md §2). The capability advertisement and `ls-refs`
 * are answered here, from the cache's own state (its one branch, `main`, and `HEAD` naming it): a no-op
 * `git fetch` starts no upload-pack at all. upload-pack serves `fetch`, the one command that needs objects.
 *
 * Wire rules, each one measured: the capability advertisement is written without a response-end packet
 * (git dies with "expected flush after ref listing" if one follows); a request runs up to a flush `0000`
 * (`0001` is a delimiter inside it); after each response we write `0002`, without which git hangs. Before a
 * `fetch` is forwarded, the blobs it wants are written to the cache (upload-pack only serves objects that
 * exist), subject to the blob limit; a fetch without a blob filter needs every blob written first. A lazy
 * fetch (one that wants record blobs) is answered with more than it asked for: the prefetch
 * (helper/prefetch.ts) adds `want` lines for the other record blobs the user's repository lacks. It looks
 * only at the blobs the cache stored since the last prefetch that left the user lacking nothing
 * (`prefetch_marks`; svc init's own pack sets it too), not at every blob the cache holds. A fetch of commits
 * into a repository that has such a mark gets the blobs stored since as well, so the checkout after it
 * needs no lazy fetch.
 */
import { once } from "node:events";
import { statSync } from "node:fs";
import type { Writable } from "node:stream";
import type { ProjectCache } from "../cache/cache.js";
import { type FirstState, type FirstStateBlobs, firstState, streamFirstState } from "../cache/first-state.js";
import { lostVersionsHint } from "../cache/open.js";
import { SvcError, UserFacingError } from "../core/errors.js";
import { SVC_VERSION } from "../core/version.js";
import { ObjectLookup } from "../git/object-store.js";
import { spawnGit } from "../git/plumbing.js";
import { BlobLimitError } from "./blob-limit.js";
import { type ByteReader, encodePkt, FLUSH, MAX_PKT_LENGTH, pktText, RESPONSE_END } from "./pktline.js";
import { choosePrefetch, type PrefetchChoice } from "./prefetch.js";

export interface FetchRequest {
  readonly command: string | undefined;
  readonly wants: string[];
  readonly filter: string | undefined;
}

/** Reads the command and the `want`/`filter` arguments of one v2 request (its pkt-line payloads). */
export function parseRequest(lines: readonly string[]): FetchRequest {
  let command: string | undefined;
  const wants: string[] = [];
  let filter: string | undefined;
  for (const line of lines) {
    if (line.startsWith("command=")) command = line.slice("command=".length);
    else if (line.startsWith("want ")) wants.push(line.slice(5).trim());
    else if (line.startsWith("filter ")) filter = line.slice(7).trim();
  }
  return { command, wants, filter };
}

/**
 * The protocol v2 capability advertisement (gitprotocol-v2 "Capability Advertisement"), ended by a flush and
 * no response-end. It offers what git's upload-pack (2.28 and later, with `uploadpack.allowFilter`) serves
 * for a `fetch` forwarded to it — `shallow` and `filter` — and `ls-refs`, answered by `listRefsAnswer`.
 * Nothing newer: git asks only for what is advertised, and the installed upload-pack must know it.
 */
export const CAPABILITY_ADVERTISEMENT = Buffer.concat([
  ...[
    "version 2\n",
    `agent=git-remote-svc/${SVC_VERSION}\n`,
    "ls-refs\n",
    "fetch=shallow filter\n",
    "server-option\n",
    "object-format=sha1\n",
  ].map((line) => encodePkt(line)),
  FLUSH,
]);

/**
 * The answer to an `ls-refs` request whose arguments are `lines` (gitprotocol-v2 "ls-refs"): `HEAD`, a
 * symbolic ref to `refs/heads/main` (named so with `symrefs`), then `refs/heads/main`, both at `tip`; with
 * `ref-prefix` arguments, only the refs that start with one of them. The cache keeps no tags, so `peel`
 * adds nothing. Ended by a flush.
 */
export function listRefsAnswer(lines: readonly string[], tip: string): Buffer {
  const prefixes = lines.filter((line) => line.startsWith("ref-prefix ")).map((line) => line.slice(11));
  const symrefs = lines.includes("symrefs");
  const refs = [
    { name: "HEAD", line: `${tip} HEAD${symrefs ? " symref-target:refs/heads/main" : ""}\n` },
    { name: "refs/heads/main", line: `${tip} refs/heads/main\n` },
  ];
  const shown = refs.filter(
    (ref) => prefixes.length === 0 || prefixes.some((prefix) => ref.name.startsWith(prefix)),
  );
  return Buffer.concat([...shown.map((ref) => encodePkt(ref.line)), FLUSH]);
}

/** Filters under which upload-pack never reads a blob: `blob:none`, and `tree:<depth>`. */
export function filterOmitsBlobs(filter: string | undefined): boolean {
  return filter === "blob:none" || (filter !== undefined && /^tree:\d+$/.test(filter));
}

/**
 * Configuration for upload-pack on the cache, given on the command line because `packObjectsHook` is only
 * honoured from protected configuration: pack-objects recompresses (`--no-reuse-object`, level 1) instead
 * of copying the cache's stored-block entries verbatim into the user's repository.
 *
 * The hook also undoes a quoting bug of git 2.28 to 2.30 (fixed in 2.31.0, "upload-pack-filter-spec-
 * quotefix"; seen with Debian's 2.30.2, not with 2.39.5 or 2.47.3): with a hook configured, upload-pack
 * shell-quotes the client's filter (`--filter='blob:none'`) although the hook receives its arguments as
 * `"$@"`, never re-read by a shell, so pack-objects died on `invalid filter-spec ''blob:none''` and every
 * partial clone, fetch and push failed. A filter spec begins with a lowercase letter (`blob:`, `tree:`,
 * `sparse:`, `object:`, `combine:`); one that does not is git's quoting, which `eval` undoes exactly (that
 * is what it quotes for). Newer gits pass the spec as it is, and nothing is changed.
 */
export const UPLOAD_PACK_CONFIG = [
  "-c",
  "pack.compression=1",
  "-c",
  `uploadpack.packObjectsHook=sh -c 'for a in "$@"; do shift; case $a in --filter=[!a-z]*) eval "a=--filter=\${a#--filter=}";; esac; set -- "$@" "$a"; done; exec "$@" --no-reuse-object' sh`,
];

/** Runs upload-pack on the cache with `input` and copies its output to `out`, respecting backpressure. */
function runUploadPack(
  cache: ProjectCache,
  args: readonly string[],
  input: Buffer | undefined,
  out: Writable,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(
      cache.repo,
      [...UPLOAD_PACK_CONFIG, "upload-pack", "--stateless-rpc", ...args, cache.repo],
      {
        env: { GIT_PROTOCOL: "version=2" },
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    child.on("error", reject);
    child.stdout?.on("data", (chunk: Buffer) => {
      if (!out.write(chunk)) {
        child.stdout?.pause();
        out.once("drain", () => child.stdout?.resume());
      }
    });
    child.on("close", (code) => {
      if (code === 0) resolve();
      else
        reject(
          new UserFacingError(
            "SVC_STORE",
            `git upload-pack on the cache ${cache.repo} failed (exit ${code})${lostVersionsHint(cache)}`,
          ),
        );
    });
    child.stdin?.on("error", () => {});
    child.stdin?.end(input);
  });
}

export interface TunnelOptions {
  readonly cache: ProjectCache;
  readonly input: ByteReader;
  readonly output: Writable;
  /** `SVC_BLOB_LIMIT`; 0 for none. */
  readonly limit: number;
  /** The message of a refusal by the blob limit (helper/blob-limit.ts), written before git is answered. */
  readonly explainRefusal: (wanted: number, limit: number, filtered: boolean) => Promise<string>;
  readonly log: (message: string) => void;
  readonly trace: (message: string) => void;
  /**
   * Runs before an `ls-refs` is answered: the sync; returns the tip to list. Lazy blob fetches (checkout,
   * `git log -p`) send only `fetch`, so they never wait for the server; `git fetch`/`pull`/`clone` always
   * list refs first. (git also sends `option from-promisor` on ordinary fetches in a partial clone, so that
   * cannot tell them apart.)
   */
  readonly beforeListRefs: () => Promise<string>;
  /**
   * The clone's own fetch of `main` is answered with the record files too, within the blob limit: `svc
   * init` checks out every file at once, and git would otherwise start the helper a second time, list the
   * missing blobs and fetch them in another round trip. Lazy fetches (they want blobs, never the tip)
   * and every fetch after the clone keep the filter.
   */
  readonly cloneWithBlobs?: boolean;
  /** The record files of a cache this process built just now, for that pack; let go once it is sent. */
  readonly firstBlobs?: FirstStateBlobs;
  /** `svc.prefetchBytes`: read only when a lazy fetch comes (a fetch of commits needs no settings). */
  readonly prefetchBytes: () => Promise<number>;
  /** The user's objects folder, where prefetch looks for what the user has; undefined: unknown. */
  readonly userObjects: string | undefined;
}

/** Whether `request` is the clone's fetch of the tip that may be answered with every blob. */
function sendsAllBlobs(options: TunnelOptions, request: FetchRequest): boolean {
  if (!options.cloneWithBlobs || request.command !== "fetch" || request.filter !== "blob:none") return false;
  const tip = options.cache.tip();
  if (tip === undefined || !request.wants.includes(tip)) return false;
  return options.limit === 0 || options.cache.db.liveCount() <= options.limit;
}

/** Serves requests until git closes stdin. A refused request is answered with an ERR packet, then thrown. */
export async function serveUploadPack(options: TunnelOptions): Promise<void> {
  const { cache, input, output } = options;
  cache.db.audit({ op: "connect", detail: { service: "git-upload-pack" } });
  output.write(CAPABILITY_ADVERTISEMENT);
  options.trace("advertised");
  for (;;) {
    const raw: { bytes: Buffer; text: string | undefined }[] = [];
    for (;;) {
      const next = await input.readPkt();
      if (!next) {
        if (raw.length === 0) return;
        throw new UserFacingError("SVC_USAGE", "git closed the connection in the middle of a request");
      }
      raw.push({ bytes: next.raw, text: pktText(next.pkt) });
      if (next.pkt.type === "flush") break;
    }
    const lines = raw.flatMap((pkt) => (pkt.text === undefined ? [] : [pkt.text]));
    let request = parseRequest(lines);
    let body = raw;
    let state: FirstState | undefined;
    if (sendsAllBlobs(options, request)) {
      body = raw.filter((pkt) => pkt.text?.trim() !== `filter ${request.filter}`);
      request = { ...request, filter: undefined };
      state = asksForFirstState(lines)
        ? firstState(cache, cache.tip() as string, options.firstBlobs)
        : undefined;
      const own = state?.blobs ? ", in svc's own pack, of the files the build kept" : ", in svc's own pack";
      options.trace(`clone: answering with every record file${state ? own : ""}`);
    }
    options.trace(`request ${request.command} wants=${request.wants.length}`);
    cache.db.audit({
      op: "rpc",
      detail: {
        command: request.command ?? null,
        wants: request.wants.length,
        filter: request.filter ?? null,
      },
    });
    if (request.command === "ls-refs") {
      let tip: string;
      try {
        tip = await options.beforeListRefs();
      } catch (error) {
        // svc's lines first, then git's `fatal: remote error:` that points at them: git prints the ERR as
        // soon as it reads it, before a message written after it.
        const first = (error as Error).message.split("\n")[0]?.slice(0, 1000);
        if (error instanceof SvcError) {
          options.log(`svc: ${error.message}`);
          error.data.reported = true;
        }
        output.write(
          encodePkt(
            `ERR ${first}${error instanceof SvcError ? "; the svc: lines above say what to run" : ""}\n`,
          ),
        );
        output.write(RESPONSE_END);
        throw error;
      }
      output.write(listRefsAnswer(lines, tip));
      options.trace("answered ls-refs");
      output.write(RESPONSE_END);
      continue;
    }
    if (state !== undefined) {
      await answerWithFirstState(cache, state, output);
      options.firstBlobs?.release();
      // The first state holds every blob the cache has: a lazy fetch in this clone looks at none of them.
      const folder = markedFolder(options);
      if (folder) cache.db.setPrefetchMark(folder.objects, folder.repo, cache.db.lastBlobId());
      options.trace(`answered fetch: ${state.blobCount} blobs`);
      output.write(RESPONSE_END);
      continue;
    }
    let answered: (() => void) | undefined;
    if (request.command === "fetch") {
      const prepared = await prepareFetch(options, request);
      const extra = prepared.extra;
      answered = prepared.answered;
      // The request ends with its flush; the prefetched blobs are asked for as arguments before it.
      if (extra.length > 0) body = [...body.slice(0, -1), ...extra.map(wantPkt), ...body.slice(-1)];
    }
    await runUploadPack(cache, [], Buffer.concat(body.map((pkt) => pkt.bytes)), output);
    answered?.();
    options.trace(`answered ${request.command}`);
    output.write(RESPONSE_END);
  }
}

/**
 * Whether a clone's fetch (already known to want the tip and all blobs) can be answered by svc itself: it
 * sends `done` (no negotiation: git 2.39 does when it has nothing) and asks nothing but what a plain pack
 * answers. Anything else (shallow, `want-ref`, packfile URIs, …) goes to upload-pack.
 */
export function asksForFirstState(lines: readonly string[]): boolean {
  const plain =
    /^(command=fetch|agent=.*|object-format=sha1|session-id=.*|thin-pack|no-progress|ofs-delta|include-tag|filter .*|want [0-9a-f]{40}|done)$/;
  return lines.includes("done") && lines.every((line) => plain.test(line));
}

/** Side-band data packets carry at most this many pack bytes (a 4-byte length and the band byte before). */
const SIDE_BAND_DATA = MAX_PKT_LENGTH - 5;

/**
 * Answers a clone's fetch with the pack of the cache's first state (git/pack.ts), made here: the blobs
 * are read from the database on the way, never written into the cache's repository (they stay unwritten
 * there, for a later lazy fetch, as before the clone), and sent uncompressed (git/pack.ts says why).
 * gitprotocol-v2 "fetch": the `packfile` section, its bytes on side band 1, then a flush.
 */
async function answerWithFirstState(cache: ProjectCache, state: FirstState, output: Writable): Promise<void> {
  const send = async (pkt: Buffer) => {
    if (!output.write(pkt)) await once(output, "drain");
  };
  await send(encodePkt("packfile\n"));
  // Pieces of one packet's size (SIDE_BAND_DATA): each is one packet; only an entry larger than that is split.
  await streamFirstState(
    cache,
    state,
    async (data) => {
      for (let at = 0; at < data.length; at += SIDE_BAND_DATA) {
        const piece = data.subarray(at, at + SIDE_BAND_DATA);
        const pkt = Buffer.allocUnsafe(5 + piece.length);
        pkt.write(pkt.length.toString(16).padStart(4, "0"), 0, "latin1");
        pkt[4] = 1;
        piece.copy(pkt, 5);
        await send(pkt);
      }
    },
    SIDE_BAND_DATA,
  );
  await send(FLUSH);
}

function wantPkt(oid: string): { bytes: Buffer; text: string } {
  const text = `want ${oid}\n`;
  return { bytes: encodePkt(text), text };
}

/**
 * Refuses a fetch over the blob limit, else writes the blobs it wants that are not written yet, with the
 * blobs a lazy fetch prefetches (helper/prefetch.ts); returns those, for the request's `want` lines, and
 * what to do once the fetch is answered (move the prefetch's mark).
 */
async function prepareFetch(
  options: TunnelOptions,
  request: FetchRequest,
): Promise<{ extra: string[]; answered?: () => void }> {
  const { cache, limit } = options;
  let pending: string[];
  let wanted: number;
  let extra: Prefetch = { oids: [], bytes: 0, complete: false };
  if (filterOmitsBlobs(request.filter)) {
    const unique = [...new Set(request.wants)];
    const wants = cache.db.classifyWants(unique);
    wanted = wants.known;
    pending = wants.unwritten;
    // A fetch that wants record blobs is a lazy fetch (a fetch of commits wants none).
    if (wanted > 0 && (limit === 0 || wanted <= limit)) {
      extra = await choosePrefetchFor(options, new Set(unique), limit === 0 ? Infinity : limit - wanted);
      pending = [...pending, ...cache.db.classifyWants(extra.oids).unwritten];
    } else if (wanted === 0 && limit === 0) {
      // A fetch of commits (`git fetch`, `git pull`) into a clone that lacked nothing at its last lazy fetch
      // (or since svc init) also brings the files changed since: the merge or checkout that follows then
      // finds them, instead of starting the helper again for a lazy fetch. A clone svc has not seen whole
      // (a plain partial clone, a sparse one before its first lazy fetch) gets commits and trees only, and so
      // does every clone under a blob limit: the checkout's lazy fetch then wants all the changed files at
      // once and is refused over the limit, as before (two fetches of up to the limit each would not be).
      extra = await choosePrefetchFor(options, new Set(), Infinity, { wholeOnly: true });
      pending = [...pending, ...cache.db.classifyWants(extra.oids).unwritten];
    }
  } else {
    pending = cache.unwrittenBlobs();
    wanted = pending.length;
  }
  if (limit > 0 && wanted > limit) {
    cache.db.audit({ op: "blob-limit-refused", detail: { wanted, limit } });
    const message = await options.explainRefusal(wanted, limit, filterOmitsBlobs(request.filter));
    // Written before the ERR packet: git prints its own lines after it, and they then read in order.
    options.log(`svc: ${message}`);
    options.output.write(
      encodePkt(
        `ERR ${wanted} record files wanted, more than SVC_BLOB_LIMIT=${limit}; the svc: lines above say what to run\n`,
      ),
    );
    options.output.write(RESPONSE_END);
    throw new BlobLimitError(message, wanted, limit);
  }
  if (extra.oids.length > 0) options.trace(`prefetch: ${extra.oids.length} blobs, ${extra.bytes} bytes`);
  const answered = extra.answered;
  if (pending.length === 0) return { extra: extra.oids, answered };
  const result = await cache.writeBlobs(pending);
  options.trace(`wrote ${result.written} blobs into the cache`);
  cache.db.audit({
    op: "materialize",
    bytes: result.bytes,
    detail: { blobs: result.written, wants: request.wants.length, prefetched: extra.oids.length },
  });
  return { extra: extra.oids, answered };
}

/** A prefetch's choice, and what moves its mark once the fetch that carries it is answered. */
interface Prefetch extends PrefetchChoice {
  readonly answered?: () => void;
}

/**
 * Device, inode and birth time (ns) of the folder `objects`, so that a folder made anew at the same path
 * (`rm -rf` and clone again) is another repository: its inode is often the old one's again, its birth time
 * is not. Undefined where the file system keeps no birth time (node then reports 0): no mark is kept, and
 * each prefetch looks at every blob, as before marks. (Without statx node reports the change time, which
 * moves as objects are added: marks then rarely apply.)
 */
export function folderIdentity(objects: string): string | undefined {
  try {
    const stat = statSync(objects, { bigint: true });
    return stat.birthtimeNs === 0n ? undefined : `${stat.dev}:${stat.ino}:${stat.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * The prefetch of a fetch that wants the blobs `wanted` (a lazy fetch; none for a fetch of commits) and may
 * add at most `maxBlobs` blobs. `wholeOnly`: only where a mark says the repository lacked nothing before.
 */
async function choosePrefetchFor(
  options: TunnelOptions,
  wanted: ReadonlySet<string>,
  maxBlobs: number,
  only: { wholeOnly?: boolean } = {},
): Promise<Prefetch> {
  const none = { oids: [], bytes: 0, complete: false };
  const { cache, userObjects } = options;
  // The blobs stored up to the mark were in this repository, or sent to it, when a lazy fetch last looked.
  const folder = markedFolder(options);
  const mark = folder ? cache.db.prefetchMark(folder.objects, folder.repo) : 0;
  if (only.wholeOnly && mark === 0) return none;
  const budgetBytes = await options.prefetchBytes();
  if (budgetBytes === 0 || maxBlobs <= 0) return none;
  const candidates = cache.db.prefetchCandidates(mark);
  // The user's pack indexes are read only when a candidate is to be looked up (after a mark, often none is).
  let user: ObjectLookup | undefined;
  const choice = choosePrefetch({
    candidates,
    wanted,
    present: (oid) => {
      if (userObjects === undefined) return false;
      user ??= new ObjectLookup(userObjects);
      return user.has(oid);
    },
    budgetBytes,
    maxBlobs,
  });
  options.trace(`prefetch: looked at ${candidates.length} blobs stored after #${mark}`);
  if (!choice.complete || !folder || candidates.length === 0) return choice;
  // Every blob looked at is there, or is in this answer once git has it: the next lazy fetch starts after.
  let through = mark;
  for (const candidate of candidates) through = Math.max(through, candidate.id);
  return { ...choice, answered: () => cache.db.setPrefetchMark(folder.objects, folder.repo, through) };
}

/** The user's objects folder and its identity (`folderIdentity`), which marks are kept for; undefined: none. */
function markedFolder(options: TunnelOptions): { objects: string; repo: string } | undefined {
  const objects = options.userObjects;
  const repo = objects === undefined ? undefined : folderIdentity(objects);
  return objects !== undefined && repo !== undefined ? { objects, repo } : undefined;
}
