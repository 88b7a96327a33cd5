/**
 * One helper run's connection to a project: the parsed remote, its backend, the cache, and the policy of
 * when to sync (on every explicit fetch, unless an opt-in `svc.syncInterval` says the cached state is recent
 * enough, which is then said on stderr; never for lazy blob fetches; with the cached state, and its age,
 * when the backend cannot be reached but the cache has one).
 */
import { resolve } from "node:path";
import type { Writable } from "node:stream";
import { type Backend, isWritable } from "../backends/backend.js";
import { createBackend } from "../backends/create.js";
import { CacheUnsafeError } from "../cache/cache.js";
import type { FirstStateBlobs } from "../cache/first-state.js";
import { isLocalFault } from "../cache/local-fault.js";
import {
  auditExistingCache,
  COPYING_HISTORY_VARIABLE,
  continueUserHistory,
  type OpenedCache,
  openProjectCache,
} from "../cache/open.js";
import { pushGitsFrom } from "../cache/push-gits.js";
import { DEFAULT_RECONCILE_INTERVAL_MS, syncCache } from "../cache/sync.js";
import { EgressDeniedError } from "../core/allowlist.js";
import { formatAge } from "../core/duration.js";
import { SvcError, terminalSafe, UserFacingError } from "../core/errors.js";
import { BackendUnreachableError, isServerFault } from "../core/http.js";
import { initCommandFor, parseRemoteUrlLookingUp, type RemoteUrl } from "../core/remote-url.js";
import { CLONE_WITH_BLOBS_VARIABLE, envCount, readDurationMs, readFlag } from "../core/settings.js";
import { cdPrefix, pullCommand, rerunCommand, userObjectsDir } from "../git/user-command.js";
import { type UserRepository, userGit, userGitOutput, userRepository } from "../git/user-git.js";
import { refusalMessage, usableBlobLimit } from "./blob-limit.js";
import type { ByteReader } from "./pktline.js";
import { readPrefetchBytes } from "./prefetch.js";
import type { PushReply } from "./push.js";
import { whenAgain } from "./server-fault.js";
import { serveUploadPack } from "./stateless-connect.js";

/** No debounce unless the user asks for one: every explicit fetch makes one delta request. */
const DEFAULT_SYNC_INTERVAL_MS = 0;

/** `svc.syncInterval` (git config wins) or `SVC_SYNC_INTERVAL`, and how to name it in a message. */
function readSyncInterval(settings: ReadonlyMap<string, string>): { ms: number; shown: string } {
  const fromConfig = settings.get("svc.syncinterval");
  const [name, raw] =
    fromConfig !== undefined
      ? ["git config svc.syncInterval", fromConfig]
      : ["SVC_SYNC_INTERVAL", process.env.SVC_SYNC_INTERVAL];
  const ms = readDurationMs(name, raw, { unit: "s", fallbackMs: DEFAULT_SYNC_INTERVAL_MS });
  const shown =
    fromConfig !== undefined ? `svc.syncInterval=${fromConfig.trim()}` : `SVC_SYNC_INTERVAL=${raw?.trim()}`;
  return { ms, shown };
}

/**
 * Whether the user chose to work from the cache (`svc.offline` in git's config, else `SVC_OFFLINE`): a fetch
 * then serves the cached state without asking the server, and says so. Without it a fetch that cannot
 * sync fails, as git does with an unreachable remote (issue 31).
 */
function readOffline(settings: ReadonlyMap<string, string>): { on: boolean; shown: string } {
  const fromConfig = settings.get("svc.offline");
  if (fromConfig !== undefined) {
    return {
      on: readFlag("git config svc.offline", fromConfig, false),
      shown: `svc.offline=${fromConfig.trim()}`,
    };
  }
  const raw = process.env.SVC_OFFLINE;
  return { on: readFlag("SVC_OFFLINE", raw, false), shown: `SVC_OFFLINE=${raw?.trim()}` };
}

/** ` from 1.4 s ago` for the cache's last sync, or "" when it has none on record. */
function cachedAge(cache: OpenedCache["cache"]): string {
  const last = cache.db.syncState().last_sync_ms;
  return last > 0 ? ` from ${formatAge(Date.now() - last)} ago` : "";
}

/**
 * The command that fetches again, as the user can run it from where they stand: the user's own
 * `git pull …` when the helper serves a pull, a pull in the new folder after a clone, else a fetch.
 * `options` go before the subcommand.
 */
function fetchAgainCommand(options = ""): string {
  const place = { env: process.env, cwd: process.cwd() };
  const cd = cdPrefix(place);
  const pull = pullCommand(process.env) ?? (cd === "" ? undefined : "pull");
  return `${cd}git ${options}${pull ?? "fetch"}`;
}

/** The command that fetches again from the cache on purpose: `-c svc.offline=true` (issue 31). */
function offlineCommand(): string {
  return fetchAgainCommand("-c svc.offline=true ");
}

/**
 * The command that fetches again without the debounce: `-c svc.syncInterval=0` wins over both the
 * configured value and `SVC_SYNC_INTERVAL`.
 */
function askServerCommand(): string {
  return fetchAgainCommand("-c svc.syncInterval=0 ");
}

/** `svc.*` and `pull.*` settings of the user's repository, from one `git config --get-regexp`. */
async function readSettings(): Promise<Map<string, string>> {
  const text = (await userGitOutput(["config", "--get-regexp", "^(svc|pull)\\."])) ?? "";
  const settings = new Map<string, string>();
  for (const line of text.split("\n")) {
    const space = line.indexOf(" ");
    if (space > 0) settings.set(line.slice(0, space).toLowerCase(), line.slice(space + 1));
  }
  return settings;
}

function capitalized(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/**
 * A clone or fetch that met a server fault with no cached state to serve: the fault, then what to do and
 * the git command the user ran, to run again.
 */
function nothingToServe(error: SvcError, description: string, remote: RemoteUrl): UserFacingError {
  const what =
    error instanceof BackendUnreachableError && !error.sent
      ? `start the server or check the URL ${remote.url}, then`
      : `${whenAgain(error)},`;
  return new UserFacingError(
    "SVC_BACKEND",
    `${error.message}\nno cached copy of ${description} is there to serve instead; ${what} run: ${rerunCommand()}`,
    { cause: error },
  );
}

/**
 * The backend of `remote`, then its cache: built (after a first successful listing) when absent, rebuilt
 * when broken (cache/open.ts). Nothing is created before the backend has answered; an egress refusal is
 * recorded only in a cache that is already there.
 */
async function connect(
  remote: RemoteUrl,
  agent: string,
  user: UserRepository,
  log: (message: string) => void,
  trace: (message: string) => void,
  comments: boolean,
): Promise<{ backend: Backend; opened: OpenedCache }> {
  let backend: Backend;
  try {
    backend = await createBackend(remote, agent, process.env, { comments });
    trace(`backend ${backend.kind} ready`);
  } catch (error) {
    if (error instanceof EgressDeniedError)
      auditExistingCache(remote, agent, { op: "egress-denied", detail: { origin: remote.origin } });
    throw error;
  }
  try {
    // svc init's clone is answered with every file (`serve`): the build keeps them for that answer.
    const keepFirstBlobs = process.env[CLONE_WITH_BLOBS_VARIABLE] === "1";
    return {
      backend,
      opened: await openProjectCache({
        remote,
        agent,
        backend,
        user,
        log,
        trace,
        keepFirstBlobs,
        withoutComments: !comments,
      }),
    };
  } catch (error) {
    if (error instanceof CacheUnsafeError) {
      throw new CacheUnsafeError(error.dir, error.kind, error.fix, error.problem, rerunCommand());
    }
    if (!(error instanceof SvcError) || !isServerFault(error)) throw error;
    throw nothingToServe(error, backend.description, remote);
  }
}

/** A `push` command's refspec, `[+]<src>:<dst>` (gitremote-helpers(7) "push"): an empty `src` deletes `dst`. */
export interface PushSpec {
  readonly src: string;
  readonly dst: string;
  /** `+`: git was told to force the update. */
  readonly forced: boolean;
}

/** Reads a refspec as git writes it; text without a `:` has an empty `dst` (refused by the push). Never throws. */
export function parsePushSpec(spec: string): PushSpec {
  const [src = "", dst = ""] = spec.replace(/^\+/, "").split(":");
  return { src, dst, forced: spec.startsWith("+") };
}

export interface Session {
  /** Syncs if due, returns the cache tip to advertise. */
  prepare(options: { sync: boolean }): Promise<string>;
  serve(input: ByteReader, output: Writable): Promise<void>;
  importRefs(ref: string, output: Writable): Promise<void>;
  /**
   * Carries out `push` commands (`[+]<src>:<dst>`); returns one `ok`/`error` reply (with options) each, and
   * whether one stopped at a local fault (a full or read-only cache: the helper exits 2).
   */
  push(specs: readonly string[]): Promise<{ replies: string[]; broken: boolean }>;
  close(): void;
}

interface SessionOptions {
  remote: string;
  url: string;
  /** `refs/svc/<remote>`: where the helper's refspec puts the server's branches in the user's repository. */
  privateRefPrefix: string;
  log: (message: string) => void;
  trace: (message: string) => void;
}

export async function openSession(options: SessionOptions): Promise<Session> {
  if (process.env[COPYING_HISTORY_VARIABLE]) {
    throw new UserFacingError(
      "SVC_STORE",
      "git asked svc for a missing object while svc was copying this repository's history into its cache; nothing was fetched",
    );
  }
  const remote = await parseRemoteUrlLookingUp(options.url);
  const agent = `git-remote-svc-${process.pid}`;
  const user = userRepository([`refs/remotes/${options.remote}/main`, `${options.privateRefPrefix}/main`]);
  // Nearly every command reads them (a fetch before it syncs, a lazy fetch for the prefetch, a push): the
  // git that reads them runs while the backend and the cache are opened.
  const settings = readSettings();
  // Comments are listed unless `svc.comments` is false (`svc init --no-comments` sets it): the backend and
  // the cache depend on it, so it is read first.
  const comments = readFlag("git config svc.comments", (await settings).get("svc.comments"), true);
  const { backend, opened } = await connect(remote, agent, user, options.log, options.trace, comments);
  options.trace(`cache ${opened.cache.dir}`);
  return new CacheSession(options, remote, user, backend, opened, settings);
}

/** A session over one opened cache and its backend; each git command is one method. */
class CacheSession implements Session {
  private readonly cache: OpenedCache["cache"];
  private readonly log: (message: string) => void;
  private readonly trace: (message: string) => void;
  /** The user's svc.* and pull.* settings, read by one git spawn started when the session opened. */
  private readonly settingsRead: Promise<Map<string, string>>;
  private pullConfigured = false;
  /** A cache built just now holds a full listing: the first ls-refs needs no sync. */
  private justBuilt: boolean;
  /** The record files of the cache built just now, for the clone's pack. */
  private readonly firstBlobs: FirstStateBlobs | undefined;

  constructor(
    private readonly options: SessionOptions,
    private readonly remote: RemoteUrl,
    private readonly user: UserRepository,
    private readonly backend: Backend,
    opened: OpenedCache,
    settings: Promise<Map<string, string>>,
  ) {
    this.settingsRead = settings;
    this.cache = opened.cache;
    this.log = options.log;
    this.trace = options.trace;
    this.justBuilt = opened.built !== undefined;
    this.firstBlobs = opened.firstBlobs;
  }

  private userSettings(): Promise<Map<string, string>> {
    return this.settingsRead;
  }

  async prepare({ sync }: { sync: boolean }): Promise<string> {
    const { cache, backend, log, trace } = this;
    let tip = cache.tip();
    if (!sync && tip) return tip;
    const settings = await this.userSettings();
    trace("settings read");
    await this.configurePull(settings);
    const syncInterval = readSyncInterval(settings);
    const reconcileIntervalMs = readDurationMs(
      "git config svc.reconcileInterval",
      settings.get("svc.reconcileinterval"),
      { unit: "s", fallbackMs: DEFAULT_RECONCILE_INTERVAL_MS },
    );
    const offline = readOffline(settings);
    if (await continueUserHistory(cache, backend, this.user, log)) tip = cache.tip();
    if (tip && this.justBuilt) {
      this.justBuilt = false;
      trace("sync skipped: the cache was just built from a full listing");
      return tip;
    }
    const age = Date.now() - cache.db.syncState().last_sync_ms;
    if (tip && offline.on) {
      log(
        `svc: warning: working offline (${offline.shown}): served the cached state of ${backend.description}` +
          `${cachedAge(cache)}; the server was not asked`,
      );
      return tip;
    }
    if (tip && syncInterval.ms > 0 && age < syncInterval.ms) {
      // Opt-in only (DESIGN.md §4): an explicit fetch asks the server unless the user chose otherwise.
      log(
        `svc: served the cached state of ${backend.description} from ${formatAge(age)} ago (${syncInterval.shown}); ` +
          `run ${askServerCommand()} to ask the server`,
      );
      return tip;
    }
    try {
      const result = await syncCache(cache, backend, { reconcileIntervalMs, trace });
      trace(`synced: ${JSON.stringify(result)}`);
      if (result.deletions === "unchecked") this.sayDeletionsUnchecked(reconcileIntervalMs);
      if (result.commit) await cache.consolidateIfDue(log);
      return result.tip;
    } catch (error) {
      return this.syncFailed(error, tip);
    }
  }

  /**
   * After a delta sync that could not look for deletions (a backend with no cheap count: the forge), or
   * looked at only part of them (a wiki space keeping more removed pages than one answer holds), when they
   * were last looked for and how to look now: a record deleted on the server stays in the working tree until
   * then (issue 31).
   */
  private sayDeletionsUnchecked(reconcileIntervalMs: number): void {
    const last = this.cache.db.syncState().last_full_ms;
    const when = last > 0 ? `${formatAge(Date.now() - last)} ago` : "never";
    const cd = cdPrefix({ env: process.env, cwd: process.cwd() });
    // svc sync fetches; a pull's working tree shows what it found only after a pull of its own.
    const pull = pullCommand(process.env);
    this.log(
      `svc: records deleted on ${this.backend.description} are seen only by a full listing, made at most every ` +
        `${formatAge(reconcileIntervalMs)} (svc.reconcileInterval); the last was ${when}. To look now, run: ` +
        `${cd}svc sync --reconcile${pull === undefined ? "" : ` && git ${pull}`}`,
    );
  }

  /**
   * git 2.27+ stops `git pull` on divergent branches until `pull.rebase` or `pull.ff` is chosen; svc's flow
   * is the merge (a record changed on both sides becomes conflict markers), so a clone that has no choice
   * at any level gets `pull.rebase=false` in its own config. A user's own choice is left alone.
   */
  private async configurePull(settings: ReadonlyMap<string, string>): Promise<void> {
    if (settings.has("pull.rebase") || settings.has("pull.ff") || this.pullConfigured) return;
    this.pullConfigured = true;
    await userGit(["config", "pull.rebase", "false"]);
  }

  /**
   * A sync that failed fails the fetch, as git does with an unreachable remote: nothing is fetched, the
   * message says how old the cache's state is, the command to run when the server works again (for a
   * server fault) and the one that works from the cache on purpose (`svc.offline`). Serving the cached
   * state instead let `git pull` say "Already up to date." and exit 0 while the server had changed.
   */
  private syncFailed(error: unknown, tip: string | undefined): never {
    const { cache, backend } = this;
    // A full or read-only cache is not served around (nor can it take the audit row): the failure report
    // names it (exit 2).
    if (isLocalFault(error)) throw error;
    cache.db.audit({ op: "sync-failed", detail: { reason: (error as Error).message.slice(0, 500) } });
    if (!(error instanceof SvcError)) throw error;
    const fault = isServerFault(error);
    if (!tip) throw fault ? nothingToServe(error, backend.description, this.remote) : error;
    const age = cachedAge(cache);
    throw new UserFacingError(
      "SVC_BACKEND",
      `cannot sync with ${backend.description} (${error.message}); nothing was fetched\n` +
        (fault ? `${capitalized(whenAgain(error))}, run: ${fetchAgainCommand()}\n` : "") +
        `To work from the cache's state${age} on purpose, run: ${offlineCommand()}`,
      { cause: error },
    );
  }

  async serve(input: ByteReader, output: Writable): Promise<void> {
    const { cache, backend } = this;
    const limit = await usableBlobLimit();
    return serveUploadPack({
      cache,
      input,
      output,
      limit,
      cloneWithBlobs: process.env[CLONE_WITH_BLOBS_VARIABLE] === "1",
      firstBlobs: this.firstBlobs,
      explainRefusal: (wanted, limit, filtered) =>
        refusalMessage({
          wanted,
          limit,
          filtered,
          paths: cache.db.treeEntries().map((entry) => entry.path),
          folder: backend.schema.folder,
          place: { env: process.env, cwd: process.cwd() },
        }),
      log: this.log,
      trace: this.trace,
      prefetchBytes: async () => readPrefetchBytes(await this.userSettings()),
      userObjects: userObjectsDir({ env: process.env, cwd: process.cwd() }),
      beforeListRefs: () => this.prepare({ sync: true }),
    });
  }

  async importRefs(ref: string, output: Writable): Promise<void> {
    const { cache } = this;
    const have = (await userGitOutput(["rev-parse", "--verify", "-q", `${ref}^{commit}`]))?.trim();
    // Loaded on use (as is push.js): a fetch or a lazy blob batch, the common starts, needs neither.
    const { writeImportStream } = await import("./import.js");
    const result = await writeImportStream({ cache, ref, have: have || undefined, output, log: this.log });
    cache.db.audit({ op: "import", detail: { commits: result.commits, blobs: result.blobs } });
  }

  async push(specs: readonly string[]): Promise<{ replies: string[]; broken: boolean }> {
    const replies: string[] = [];
    let broken = false;
    const [settings, { pushMain }, { removeStaleRefLocks }] = await Promise.all([
      this.userSettings(),
      import("./push.js"),
      import("../git/ref-locks.js"),
    ]);
    const at = settings.get("svc.at");
    if (at !== undefined) {
      const reason = `read-only: this working tree shows the records as svc saw them at ${at} (svc init --at)`;
      this.log(
        `svc: this working tree shows ${this.backend.description} as this machine's cache saw it at ${at} (made by svc init --at); it is read-only, and nothing was written.\n` +
          `  To change records, make a working tree of the current state and edit there:\n  ${initCommandFor(this.remote, `${resolve(process.cwd())}-now`)}`,
      );
      return { replies: specs.map((spec) => `error ${parsePushSpec(spec).dst} ${reason}`), broken };
    }
    await continueUserHistory(this.cache, this.backend, this.user, this.log);
    for (const spec of specs) {
      const { src, dst, forced } = parsePushSpec(spec);
      const { backend } = this;
      const refused = this.refusedPush(src, dst);
      if (refused !== undefined || !isWritable(backend)) {
        replies.push(`error ${dst} ${refused ?? `the ${backend.kind} backend does not accept writes`}`);
        continue;
      }
      const reply = await pushMain(
        {
          cache: this.cache,
          backend,
          remote: this.options.remote,
          autoMerge: /^(true|yes|on|1)$/i.test(settings.get("svc.automerge") ?? ""),
          bulkDeleteLimit: envCount("SVC_BULK_DELETE_LIMIT", { fallback: 5, zero: "no limit" }),
          forced,
          log: this.log,
          trace: this.trace,
        },
        src,
      ).catch((error: unknown): PushReply => {
        // A failure with a message for people still gets git's `[remote rejected]` line, not a bare exit.
        if (!(error instanceof SvcError)) throw error;
        this.log(`svc: ${error.message}`);
        return { ok: false, reason: error.message.split("\n")[0] ?? "" };
      });
      if (reply.ok) {
        // git moves refs/svc/<remote>/main as soon as it hears `ok`, and cannot while a lock is there.
        const db = this.cache.db.db;
        removeStaleRefLocks((commit) => pushGitsFrom(db)(commit), this.options.privateRefPrefix, this.log);
        replies.push(`ok ${dst}${reply.oldOid ? `\noption old-oid ${reply.oldOid}` : ""}`);
      } else {
        // git prints the reason raw: a file name's escape sequence must not reach the terminal.
        replies.push(`error ${dst} ${terminalSafe(reply.reason.replace(/[\r\n]+/g, " "))}`);
        if (reply.broken) broken = true;
      }
    }
    return { replies, broken };
  }

  /** Why a push of `src` to `dst` is refused whatever the backend, undefined when it may go on. */
  private refusedPush(src: string, dst: string): string | undefined {
    if (dst.startsWith("refs/tags/")) {
      return `svc keeps records, not tags: the tag stays in your clone; push commits with git push ${this.options.remote} HEAD:main`;
    }
    if (dst !== "refs/heads/main")
      return `svc keeps one branch, main; push to it with git push ${this.options.remote} HEAD:main`;
    if (src === "") return "the server's main cannot be deleted";
    return undefined;
  }

  close(): void {
    this.cache.close();
  }
}
