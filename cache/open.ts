/**
 * Opening a project's cache, and making it when it is absent or broken (DESIGN.md §3, last paragraph).
 *
 * The cache is a cache: when its folder, repository or database is missing, the database is not SQLite, or
 * its `main` or the commit `main` names is gone, the next fetch or push builds it again from a full
 * listing. The user's repository still holds the commits and trees the old cache served (its
 * `origin/main` and everything before), so those are copied into the new cache's repository and its first
 * state commit has the user's last server commit as its parent: `git pull` then fast-forwards, and a push
 * based on that commit finds its base (helper/push.ts: the merge-base with the cache's `main`). What is
 * lost: blobs of old versions that neither the user's repository nor the new database has, and the create
 * journal of an interrupted push.
 *
 * A cache folder appears only after the backend's first successful answer: the listing's first batch is
 * read before anything is written, so a denied origin or a missing project leaves nothing behind. The rest
 * of the listing goes into the database as it arrives (memory does not grow with the project). The cache
 * is built in a folder of its own, deleted if the build fails, and renamed into place complete, under a
 * lock (SQLite's, on a file beside the folder: the system releases it when its process dies), so two
 * helpers of two working trees never build it twice or replace each other's; the second waits and opens
 * the first one's. One that finds the lock held before it starts makes no listing at all.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Backend } from "../backends/backend.js";
import { SvcError } from "../core/errors.js";
import type { RemoteUrl } from "../core/remote-url.js";
import { Database, SqliteError } from "../core/sqlite.js";
import { spawnGit } from "../git/plumbing.js";
import type { UserRepository } from "../git/user-git.js";
import { type CacheIdentity, cacheFolderName, gitTooOld, ProjectCache } from "./cache.js";
import type { AuditEvent } from "./db.js";
import { FirstStateBlobs } from "./first-state.js";
import { FullListing, importListing } from "./first-sync.js";
import { cacheRoot, checkCacheRootFolder } from "./root.js";
import { type SyncResult, writeStateCommit } from "./sync.js";

/**
 * Set for the git that packs the user's history: with it, the helper refuses to start. That git is told
 * never to fetch a missing object (`--missing=allow-any`); if one ever did, it would start this helper
 * again, for this same cache, while it is being built.
 */
export const COPYING_HISTORY_VARIABLE = "SVC_COPYING_HISTORY";

/**
 * A file in a rebuilt cache's folder: when and why. Its presence makes fetches check the user's history
 * with git where the user's ref cannot be read in-process (`continueUserHistory`), and names the lost
 * versions in upload-pack's errors (`lostVersionsHint`).
 */
export const REBUILT_MARKER = "rebuilt";

/**
 * Ends the folder name of a cache without comments (`OpenCacheOptions.withoutComments`); `cacheFolderName`
 * escapes a `+` in a project's name, so no project's folder ends so.
 */
export const COMMENTLESS_SUFFIX = "+no-comments";

/** How long a process waits for another one that is building the same cache. */
const BUILD_LOCK_WAIT_MS = 5 * 60 * 1000;

export interface OpenCacheOptions {
  readonly remote: RemoteUrl;
  readonly agent: string;
  readonly backend: Backend;
  readonly user: UserRepository;
  readonly log: (message: string) => void;
  readonly trace?: (message: string) => void;
  readonly root?: string;
  /**
   * The user turned comments off (`git config svc.comments false`): such a repository is served by a cache
   * of its own (`COMMENTLESS_SUFFIX`), whose state tree holds no comments; a cache's commits are one state
   * tree each, so one cache cannot serve both.
   */
  readonly withoutComments?: boolean;
  /** A cache this call builds keeps its first state's files for the clone's pack (`OpenedCache.firstBlobs`). */
  readonly keepFirstBlobs?: boolean;
}

export interface OpenedCache {
  readonly cache: ProjectCache;
  /** The first sync (a full listing) of a cache this call built; undefined when the cache was there. */
  readonly built: SyncResult | undefined;
  /** The record files of the first state this call built, while kept for the clone's pack. */
  readonly firstBlobs?: FirstStateBlobs;
}

function identityOf(remote: RemoteUrl, agent: string): CacheIdentity {
  return { backend: remote.kind, project: remote.project, agent };
}

/** The user's last known server commit and the ref that holds it, if the repository has one. */
export async function lastServerCommit(
  user: UserRepository,
): Promise<{ commit: string; ref: string } | undefined> {
  // None of the refs exists (a clone being made): no git is started to say so.
  if (user.serverCommitInProcess?.() === null) return undefined;
  // Each ref is read at once; the first in `serverRefs`' order that names a commit wins.
  const commits = await Promise.all(
    user.serverRefs.map(async (ref) => ({
      ref,
      commit: (await user.gitOutput(["rev-parse", "--verify", "-q", `${ref}^{commit}`]))?.trim(),
    })),
  );
  const found = commits.find(({ commit }) => commit !== undefined && /^[0-9a-f]{40}$/.test(commit));
  return found ? { commit: found.commit as string, ref: found.ref } : undefined;
}

/** `origin/main` for `refs/remotes/origin/main`; other refs in full. */
function shortRef(ref: string): string {
  return ref.startsWith("refs/remotes/") ? ref.slice("refs/remotes/".length) : ref;
}

/**
 * Opens the cache of `options.remote`; builds it when it is absent and rebuilds it when it is broken (one
 * line on stderr says so and why). Throws what the first listing throws, before creating anything.
 */
export async function openProjectCache(options: OpenCacheOptions): Promise<OpenedCache> {
  const root = options.root ?? cacheRoot();
  const dir = join(
    root,
    cacheFolderName(options.remote) + (options.withoutComments ? COMMENTLESS_SUFFIX : ""),
  );
  const identity = identityOf(options.remote, options.agent);
  const found = ProjectCache.check(dir, identity);
  if (found.state === "healthy") return { cache: found.cache, built: undefined };
  // A root that is a file is refused before the listing: no request is sent for a cache that cannot be made.
  checkCacheRootFolder(root);
  // Another process building it now (a swarm of clones of one project): its cache is waited for instead
  // of a listing of this one's own, which would only be thrown away.
  const waited = await afterOtherBuild(`${dir}.lock`, dir, identity, options.trace);
  if (waited) return { cache: waited, built: undefined };

  const listing = new FullListing(options.backend);
  // The user's refs are read while the server starts answering (in-process where they can be: at a clone,
  // which has none yet, no git is started).
  const [, known] = await Promise.all([listing.started(), lastServerCommit(options.user)]);
  // A missing folder is a new cache, unless the user's repository was served by one: then it was lost.
  const why = found.state === "broken" ? found.why : known ? "its folder is missing" : undefined;
  options.trace?.(`cache ${dir}: ${why ?? "new"}; the listing has begun`);
  mkdirSync(root, { recursive: true });
  try {
    return await withBuildLock(`${dir}.lock`, async () => {
      // Another process may have built it while this one waited.
      options.trace?.("build lock held");
      const again = ProjectCache.check(dir, identity);
      if (again.state === "healthy") {
        await listing.cancel();
        return { cache: again.cache, built: undefined };
      }
      const { built, firstBlobs } = await buildCache({ ...options, dir, identity, listing, known, why });
      options.trace?.("built cache in place");
      const opened = ProjectCache.check(dir, identity);
      if (opened.state !== "healthy") {
        const problem = opened.state === "broken" ? opened.why : "it is missing";
        throw new SvcError("SVC_STORE", `the cache ${dir} was just built and is not usable: ${problem}`);
      }
      if (why) {
        options.log(
          `svc: rebuilt the cache ${dir}: ${why}` +
            (known
              ? `; the server state continues your ${shortRef(known.ref)} (${known.commit.slice(0, 7)}), so git pull fast-forwards`
              : ""),
        );
      }
      return { cache: opened.cache, built, firstBlobs };
    });
  } catch (error) {
    // Nothing was built (or another process's cache was opened): the rest of the listing is not read.
    await listing.cancel();
    throw error;
  }
}

/**
 * When another process holds the build lock `lockPath` (it is building the cache in `dir` right now), waits
 * for it and returns the cache it built. Undefined when no one holds the lock (it is taken and released at
 * once; no file is made where none was), or when the other build left no usable cache (it failed: the
 * caller then lists and builds itself, as it would have).
 */
async function afterOtherBuild(
  lockPath: string,
  dir: string,
  identity: CacheIdentity,
  trace: ((message: string) => void) | undefined,
): Promise<ProjectCache | undefined> {
  if (!existsSync(lockPath)) return undefined;
  const probe = new Database(lockPath);
  try {
    probe.pragma("busy_timeout = 0");
    try {
      probe.exec("BEGIN EXCLUSIVE");
      return undefined;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_BUSY") throw error;
    }
  } finally {
    probe.close();
  }
  trace?.("another process is building the cache; waiting for it");
  return withBuildLock(lockPath, async () => {
    const built = ProjectCache.check(dir, identity);
    return built.state === "healthy" ? built.cache : undefined;
  });
}

/**
 * Runs `work` holding an exclusive lock on the SQLite file `path` (created if needed; never removed, so
 * every process locks the same file). The system releases the lock when its process dies: no stale lock.
 */
async function withBuildLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const lock = new Database(path);
  try {
    lock.pragma(`busy_timeout = ${BUILD_LOCK_WAIT_MS}`);
    try {
      lock.exec("BEGIN EXCLUSIVE");
    } catch (error) {
      // Only a lock held elsewhere is another process's build; a full or read-only disk is said as such.
      if (!(error instanceof SqliteError) || !error.code.startsWith("SQLITE_BUSY")) throw error;
      throw new SvcError(
        "SVC_STORE",
        `another svc process has been building the cache beside ${path} for ${BUILD_LOCK_WAIT_MS / 60000} minutes (${(error as Error).message}); if none is running, run the command again`,
        { cause: error },
      );
    }
    return await work();
  } finally {
    lock.close();
  }
}

interface BuildPlan extends OpenCacheOptions {
  readonly dir: string;
  readonly identity: CacheIdentity;
  readonly listing: FullListing;
  readonly known: { commit: string; ref: string } | undefined;
  readonly why: string | undefined;
}

/**
 * Builds the cache in a folder of its own, then puts it in place of the broken one (moved aside first,
 * then deleted). Call it holding the build lock.
 */
async function buildCache(plan: BuildPlan): Promise<{ built: SyncResult; firstBlobs?: FirstStateBlobs }> {
  const { dir } = plan;
  const root = dirname(dir);
  const name = basename(dir);
  // What a process that died holding the lock left behind.
  for (const entry of readdirSync(root)) {
    if (entry.startsWith(`${name}.build-`) || entry.startsWith(`${name}.broken-`))
      rmSync(join(root, entry), { recursive: true, force: true });
  }
  const temp = `${dir}.build-${process.pid}`;
  // git's version is read while the listing goes in; a git too old to serve the cache leaves none behind.
  const tooOld = gitTooOld(root);
  let cache: ProjectCache;
  try {
    cache = await ProjectCache.openAt(temp, plan.identity, { building: true });
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
  plan.trace?.("new database and repository made");
  let result: SyncResult;
  // A first state with no history before it is what a clone's pack sends (cache/first-state.ts `firstState`).
  const firstBlobs = plan.keepFirstBlobs && !plan.known ? new FirstStateBlobs() : undefined;
  try {
    if (plan.known) await copyHistory(cache, plan.user, plan.known.commit);
    result = await importListing(cache, plan.backend, plan.listing, {
      continues: plan.known?.commit,
      trace: plan.trace,
      kept: firstBlobs,
    });
    if (plan.why) writeFileSync(join(temp, REBUILT_MARKER), `${new Date().toISOString()} ${plan.why}\n`);
    const refusal = await tooOld;
    if (refusal) throw refusal;
  } catch (error) {
    cache.close();
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
  plan.trace?.("first state commit written");
  cache.close();
  const aside = `${dir}.broken-${process.pid}`;
  const broken = existsSync(dir);
  if (broken) renameSync(dir, aside);
  renameSync(temp, dir);
  if (broken) rmSync(aside, { recursive: true, force: true });
  return { built: result, firstBlobs };
}

/** Resolves with the exit code and stderr of `child` once it has exited and its streams are closed. */
function exited(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    child.on("error", (error) => resolve({ code: null, stderr: `${stderr}${error.message}` }));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/**
 * Copies `commit` and everything before it that the user's repository has (commits, trees, and the blobs
 * it holds; a partial clone lacks most) into the cache's repository: `git pack-objects` there, piped into
 * `git index-pack` here. `--missing=allow-any` skips absent objects and, measured with git 2.39, also
 * keeps pack-objects from fetching them (without it, one helper start per batch of missing blobs).
 */
export async function copyHistory(cache: ProjectCache, user: UserRepository, commit: string): Promise<void> {
  const packArgs = ["pack-objects", "--revs", "--stdout", "--quiet", "--missing=allow-any"];
  const pack = user.spawnGit(packArgs, { [COPYING_HISTORY_VARIABLE]: "1" });
  const index = spawnGit(cache.repo, ["index-pack", "--stdin"], { stdio: ["pipe", "ignore", "pipe"] });
  const [packed, indexed] = [exited(pack), exited(index)];
  pack.stdin?.on("error", () => {});
  index.stdin?.on("error", () => {});
  if (pack.stdout && index.stdin) pack.stdout.pipe(index.stdin);
  pack.stdin?.end(`${commit}\n`);
  const [packResult, indexResult] = await Promise.all([packed, indexed]);
  // When one side fails the other dies of the broken pipe (early EOF, SIGPIPE): say what both said.
  if (packResult.code !== 0 || indexResult.code !== 0) {
    throw new SvcError(
      "SVC_STORE",
      `could not copy the history of your repository into the cache ${cache.repo}: ` +
        `git ${packArgs.join(" ")} in your repository exited ${packResult.code} (${packResult.stderr.trim().slice(0, 1000)}); ` +
        `git index-pack --stdin in the cache exited ${indexResult.code} (${indexResult.stderr.trim().slice(0, 1000)})`,
    );
  }
  if (!cache.hasObject(commit))
    throw new SvcError(
      "SVC_STORE",
      `the commit ${commit} was copied into the cache ${cache.repo} and is not there`,
    );
}

/**
 * Makes sure the history of this user's repository continues in the cache. A rebuilt cache (it has the
 * marker) may have been rebuilt by another working tree's helper from an older or newer `origin/main`; a
 * cache whose folder was deleted may have been made anew by a clone that had no history at all (`svc init`,
 * `git clone`), and then every older working tree's `git pull` would refuse "unrelated histories". When the
 * cache lacks the user's last server commit, copies that history in and writes a state commit with parents
 * (cache tip, that commit), so this user's `git pull` fast-forwards too. Returns whether it did.
 *
 * The usual fetch costs a read of the user's ref file and a lookup in the cache, no git process. Where the
 * ref cannot be read in-process (a reftable repository, a namespace), only a rebuilt cache is checked, with
 * git.
 */
export async function continueUserHistory(
  cache: ProjectCache,
  backend: Backend,
  user: UserRepository,
  log: (message: string) => void,
): Promise<boolean> {
  const seen = user.serverCommitInProcess?.();
  if (seen === null || (seen !== undefined && cache.hasObject(seen))) return false;
  const rebuilt = existsSync(join(cache.dir, REBUILT_MARKER));
  if (seen === undefined && !rebuilt) return false;
  const known = await lastServerCommit(user);
  if (!known || cache.hasObject(known.commit)) return false;
  await copyHistory(cache, user, known.commit);
  cache.db.exclusive(() => {
    const tip = cache.tip();
    const parents = tip === undefined ? [known.commit] : [tip, known.commit];
    const message = `svc: continue the history of a working tree in the ${rebuilt ? "rebuilt " : ""}cache of ${backend.kind} project ${backend.project}\n`;
    cache.setTip(writeStateCommit(cache, parents, message), "continue");
  });
  const why = rebuilt
    ? "was rebuilt since your last fetch"
    : `did not hold your ${shortRef(known.ref)} (it was made anew since your last fetch, or your working tree was cloned through another cache)`;
  log(
    `svc: the cache ${cache.dir} ${why}; the server state continues your ${shortRef(known.ref)} (${known.commit.slice(0, 7)}), so git pull fast-forwards`,
  );
  return true;
}

/**
 * For an error of upload-pack on a rebuilt cache: the likely cause, and what to run. A lazy fetch there may
 * want a version of a file that only the lost cache held (the file at the user's old commit, which the
 * user's clone never fetched and the server no longer has); after `git pull` git asks for the current one.
 * Empty for a cache that was never rebuilt.
 */
export function lostVersionsHint(cache: ProjectCache): string {
  let marker: string;
  try {
    marker = readFileSync(join(cache.dir, REBUILT_MARKER), "utf8").trim();
  } catch {
    return "";
  }
  const [when = "", ...why] = marker.split(" ");
  return (
    `; the cache was rebuilt at ${when} (${why.join(" ")}), and versions of files that only the lost cache held ` +
    "cannot be served: run git pull to get the server's current versions, then try again"
  );
}

/**
 * Writes `event` to the audit table of the cache of `remote` if a healthy one is there; creates nothing and
 * never throws (it records a refusal that is being reported anyway).
 */
export function auditExistingCache(
  remote: RemoteUrl,
  agent: string,
  event: AuditEvent,
  root = cacheRoot(),
): void {
  try {
    const found = ProjectCache.check(join(root, cacheFolderName(remote)), identityOf(remote, agent));
    if (found.state !== "healthy") return;
    try {
      found.cache.db.audit(event);
    } finally {
      found.cache.close();
    }
  } catch {
    // no cache to record it in
  }
}
