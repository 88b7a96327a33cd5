/**
 * The per-project cache (DESIGN.md §3): `<cache root>/<kind>-<host>-<project>/` with a bare `repo.git` and
 * `cache.db`. It is shared by every working tree of the project on the machine.
 *
 * Writers (sync, materialization) hold SQLite's write lock for their whole critical section, so two helpers
 * of two working trees never interleave their commits or ref updates; readers (upload-pack) only see
 * objects and refs that were complete before they were published (objects by rename, refs by `.lock` file
 * and rename, as git itself does).
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { SvcError, shellWord, UserFacingError } from "../core/errors.js";
import type { RemoteUrl } from "../core/remote-url.js";
import { hasObject } from "../git/object-store.js";
import { writeLooseObject } from "../git/objects.js";
import { writeBlobPack } from "../git/pack.js";
import { GitCommandError, parseGitVersion, readObjects, runGit, spawnGit } from "../git/plumbing.js";
import { CacheDb, type TipOp } from "./db.js";

/** `sim-127.0.0.1_7878-demo`: one folder per (backend, origin, project), safe as a single path segment. */
export function cacheFolderName(remote: RemoteUrl): string {
  const url = new URL(remote.origin);
  const host = url.port ? `${url.hostname}_${url.port}` : url.hostname;
  const safe = (text: string) =>
    text.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return `${remote.kind}-${safe(host)}-${safe(remote.project)}`;
}

export interface CacheIdentity {
  readonly backend: string;
  readonly project: string;
  /** Who writes the audit rows: `git-remote-svc-<pid>`, `svc-<pid>`. */
  readonly agent: string;
}

/**
 * A cache folder someone else can change: another user owns it, or its group or others may write to it.
 * svc runs git in its `repo.git` (a `config` there can name programs git runs) and serves its records as the
 * server's, so it uses no such folder; the message says how to make it the user's alone. `fix` is that
 * command, for callers that add the command to run after it.
 */
export class CacheUnsafeError extends UserFacingError {
  constructor(
    readonly dir: string,
    /** `owner`: another user's folder (the fix is a folder of one's own); `mode`: writable by others. */
    readonly kind: "owner" | "mode",
    readonly fix: string,
    readonly problem: string,
    /** The command to run after `fix`, when the caller knows it. */
    rerun?: string,
  ) {
    super(
      "SVC_STORE",
      `the cache folder ${dir} ${problem}; svc runs git in it and serves its records as the server's, so it ` +
        `must be yours alone, and nothing was read from it. Run: ${fix}${rerun ? ` && ${rerun}` : ", then the command again"}`,
    );
  }
}

/**
 * Refuses a cache folder another user owns or may write to (as ssh refuses such a ~/.ssh), naming the fix:
 * `chmod 700` for one of the user's own, a cache folder of the user's own otherwise.
 */
export function checkCacheOwner(dir: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const stat = statSync(dir);
  if (stat.uid !== uid) {
    throw new CacheUnsafeError(
      dir,
      "owner",
      `export SVC_CACHE_DIR="$HOME/.cache/svc-$(id -u)"`,
      `belongs to another user (uid ${stat.uid}, you are ${uid})`,
    );
  }
  if ((stat.mode & 0o022) !== 0) {
    throw new CacheUnsafeError(
      dir,
      "mode",
      ["chmod", "700", dir].map(shellWord).join(" "),
      `can be written by ${(stat.mode & 0o020) !== 0 ? "its group" : "others"} (mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")})`,
    );
  }
}

export type CacheCheck =
  | { readonly state: "healthy"; readonly cache: ProjectCache }
  | { readonly state: "absent" }
  | { readonly state: "broken"; readonly why: string };

/**
 * SQLite's message when `error` (or its cause) says the database file is not a database or is damaged:
 * those are the cache's to rebuild. Other SQLite errors (busy, read-only, …) are not.
 */
function sqliteCorruption(error: unknown): string | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const code = (current as Error & { code?: unknown }).code;
    if (code === "SQLITE_NOTADB" || (typeof code === "string" && code.startsWith("SQLITE_CORRUPT")))
      return current.message;
  }
  return undefined;
}

/**
 * The oldest git svc runs with: the oldest the test matrix proves (`npm run test:matrix`: Debian bullseye's
 * 2.30.2). Nothing older can work: 2.28 added the protocol v2 response-end packet the tunnel relies on.
 */
export const MIN_GIT = [2, 30] as const;

/** Why `MIN_GIT`, as messages say it. */
export const MIN_GIT_REASON = "the oldest git svc is tested with";

/**
 * Why the `git` svc runs cannot serve a cache (it does not start, or is older than `MIN_GIT`), or undefined
 * when it can (or names a version svc cannot read). Never rejects. Checked once, when a cache is made (not
 * on every helper start: git starts one per fetch), beside the first listing.
 */
export async function gitTooOld(dir: string): Promise<UserFacingError | undefined> {
  let text: string;
  try {
    text = (await runGit(dir, ["version"])).stdout.toString("utf8");
  } catch (error) {
    return new UserFacingError(
      "SVC_USAGE",
      `svc could not run git version (${(error as Error).message.trim().slice(0, 300)}); install git ${MIN_GIT.join(".")} or newer and put it on PATH`,
      { cause: error },
    );
  }
  const version = parseGitVersion(text);
  if (!version || version[0] > MIN_GIT[0] || (version[0] === MIN_GIT[0] && version[1] >= MIN_GIT[1]))
    return undefined;
  return new UserFacingError(
    "SVC_USAGE",
    `git ${version.join(".")} is too old for svc: it needs git ${MIN_GIT.join(".")} or newer (${MIN_GIT_REASON}); install a newer git and put it first on PATH, then run the same command again`,
  );
}

/**
 * The commit `refs/heads/main` of the cache repository `repo` points at, or undefined when it has none. Only
 * svc moves it, always as a loose ref (never packed: the cache is never `gc`'d).
 */
export function cacheTip(repo: string): string | undefined {
  const path = join(repo, "refs", "heads", "main");
  if (!existsSync(path)) return undefined;
  const oid = readFileSync(path, "utf8").trim();
  return /^[0-9a-f]{40}$/.test(oid) ? oid : undefined;
}

/**
 * After this many state commits the cache's loose objects are packed. Each commit leaves a tree of every
 * record as a loose object (~250 KB at 10,000 records): without packing, the cache grew by that much per
 * push or changed fetch; packed, consecutive trees are deltas of a few hundred bytes.
 */
export const PACK_AFTER_COMMITS = 50;

/** The `[core]` section `git init --bare` writes on a file system with executable bits. */
const CACHE_REPO_CORE = `[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = true
`;

/**
 * The cache repository's own settings, after its `[core]` section: filtered fetches and
 * wants of any object (lazy fetches of older versions), svc's private refs hidden, and nothing that would
 * walk history on its own (gc dies on the absent blobs).
 */
const CACHE_REPO_CONFIG = `[uploadpack]
\tallowFilter = true
\tallowAnySHA1InWant = true
\thideRefs = refs/svc/
[gc]
\tauto = 0
[receive]
\tautogc = false
[core]
\tlogAllRefUpdates = false
`;

/** Blob batches smaller than this are written as loose objects in-process; larger ones as one pack. */
const LOOSE_BATCH_LIMIT = 64;

export class ProjectCache {
  readonly dir: string;
  readonly repo: string;
  readonly db: CacheDb;

  private constructor(dir: string, db: CacheDb) {
    this.dir = dir;
    this.repo = join(dir, "repo.git");
    this.db = db;
  }

  /**
   * Opens the cache in `dir`, creating whatever is missing (folder, database, bare repo). Only for a folder
   * no other process uses yet: a cache being built (cache/open.ts renames it into place when it is
   * complete), or a test's. A cache in place is opened with `check`. `building`: see `CacheDb`.
   */
  static async openAt(
    dir: string,
    identity: CacheIdentity,
    options: { building?: boolean } = {},
  ): Promise<ProjectCache> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const cache = new ProjectCache(dir, new CacheDb(join(dir, "cache.db"), identity, options));
    try {
      cache.ensureRepo();
    } catch (error) {
      cache.close();
      throw error;
    }
    return cache;
  }

  /**
   * Opens the cache in `dir` as it is, creating nothing, or says why it cannot serve: absent, or broken
   * (its repository or database missing, the database not SQLite, its `main` or the commit `main` names
   * gone). Cheap enough for every helper start: a few `stat`s, the database's open, and the tip's lookup
   * (a file, or a binary search in the pack indexes). Other failures (a locked or newer database) throw.
   */
  static check(dir: string, identity: CacheIdentity): CacheCheck {
    if (!existsSync(dir)) return { state: "absent" };
    checkCacheOwner(dir);
    const broken = (why: string): CacheCheck => ({ state: "broken", why });
    if (!existsSync(join(dir, "repo.git", "HEAD"))) return broken("its repository repo.git is missing");
    const dbPath = join(dir, "cache.db");
    if (!existsSync(dbPath)) return broken("its database cache.db is missing");
    let db: CacheDb;
    try {
      db = new CacheDb(dbPath, identity);
    } catch (error) {
      const corrupt = sqliteCorruption(error);
      if (corrupt) return broken(`its database cache.db is corrupt (${corrupt})`);
      throw error;
    }
    const cache = new ProjectCache(dir, db);
    const tip = cache.tip();
    let why: string | undefined;
    if (tip === undefined) {
      // Every sync leaves main set; a cache that synced and has no main lost it.
      if (db.syncState().last_sync_ms > 0) why = "its branch main is missing";
    } else if (!cache.hasObject(tip)) {
      why = `its tip commit ${tip.slice(0, 12)} is missing from repo.git`;
    }
    if (why === undefined) return { state: "healthy", cache };
    cache.close();
    return broken(why);
  }

  /**
   * A bare repo that serves `--filter=blob:none` fetches and is never garbage-collected: its trees name blobs
   * that are only written when git asks for them, and `gc`/`repack` die on absent blobs. Written in-process
   * as `git init --bare --initial-branch=main --template=` lays it out (HEAD, config, objects/, refs/), with
   * the cache's settings in its config, and always SHA-1 (svc writes SHA-1 objects; `git init` would follow
   * a `GIT_DEFAULT_HASH` or `init.defaultObjectFormat` of the user's). Starting git for it kept the first
   * listing waiting ~15 ms at every new cache (issue 18). Made in a folder beside and renamed into place.
   */
  private ensureRepo(): void {
    if (existsSync(join(this.repo, "HEAD"))) return;
    const temp = `${this.repo}.init-${process.pid}`;
    rmSync(temp, { recursive: true, force: true });
    try {
      for (const folder of ["objects/info", "objects/pack", "refs/heads", "refs/tags"])
        mkdirSync(join(temp, folder), { recursive: true });
      writeFileSync(join(temp, "config"), `${CACHE_REPO_CORE}${CACHE_REPO_CONFIG}`);
      writeFileSync(join(temp, "HEAD"), "ref: refs/heads/main\n");
      renameSync(temp, this.repo);
    } catch (error) {
      // Another process created it first; theirs is as good as ours.
      rmSync(temp, { recursive: true, force: true });
      if (!existsSync(join(this.repo, "HEAD"))) throw error;
    }
  }

  /** The commit `refs/heads/main` points at, or undefined before the first sync. */
  tip(): string | undefined {
    return cacheTip(this.repo);
  }

  /**
   * Moves `refs/heads/main` the way git does: create `main.lock` exclusively, write, rename. Callers hold
   * the database's write lock (`db.exclusive`), and only svc moves this ref, so a `main.lock` found here was
   * left by a process killed between the two steps: it is removed and the move goes on. The move is noted in
   * `tip_history` with `op` (and the user's commit, for a push), in the caller's transaction.
   */
  setTip(oid: string, op: TipOp, pushedCommit?: string): void {
    const dir = join(this.repo, "refs", "heads");
    mkdirSync(dir, { recursive: true });
    const lock = join(dir, "main.lock");
    let fd: number;
    try {
      fd = openSync(lock, "wx");
    } catch (first) {
      if ((first as NodeJS.ErrnoException).code !== "EEXIST" || !this.db.db.inTransaction) {
        throw new SvcError(
          "SVC_STORE",
          `cannot lock ${lock} (${(first as NodeJS.ErrnoException).code}); if no svc or git process is running, remove that file`,
          { cause: first },
        );
      }
      rmSync(lock, { force: true });
      fd = openSync(lock, "wx");
    }
    try {
      writeSync(fd, `${oid}\n`);
    } finally {
      closeSync(fd);
    }
    this.db.noteTip(oid, op, pushedCommit);
    renameSync(lock, join(dir, "main"));
  }

  /** Whether the cache's repository has the object `oid` (in-process: no git is started). */
  hasObject(oid: string): boolean {
    return hasObject(this.repo, oid);
  }

  writeObject(type: "tree" | "commit", content: Buffer): string {
    return writeLooseObject(this.repo, type, content);
  }

  /**
   * Writes the blobs named by `oids` that the cache knows and has not written yet; returns how many it
   * wrote. Unknown OIDs (commits, trees, anything else) are left to upload-pack.
   */
  async materialize(oids: Iterable<string>): Promise<{ written: number; bytes: number }> {
    return this.writeBlobs(this.db.classifyWants([...new Set(oids)]).unwritten);
  }

  /**
   * The contents of the blobs `oids`: from the database, else from the repo (a blob the user's commits
   * brought, which the database never held); an OID in neither is left out of the map.
   */
  async blobContents(oids: Iterable<string>): Promise<Map<string, Buffer>> {
    const contents = new Map<string, Buffer>();
    const fromRepo: string[] = [];
    for (const oid of oids) {
      const blob = this.db.blob(oid);
      if (blob) contents.set(oid, blob.content);
      else fromRepo.push(oid);
    }
    for (const [oid, content] of await readObjects(this.repo, fromRepo)) contents.set(oid, content);
    return contents;
  }

  /** Every blob the cache knows but has not written: what a fetch without a blob filter needs. */
  unwrittenBlobs(): string[] {
    return this.db.unwrittenBlobOids();
  }

  /** Writes the known blobs `oids`: loose objects for a few, else one pack streamed into `git index-pack`. */
  async writeBlobs(oids: readonly string[]): Promise<{ written: number; bytes: number }> {
    if (oids.length === 0) return { written: 0, bytes: 0 };
    let bytes = 0;
    const db = this.db;
    function* contents(): Generator<Buffer> {
      let count = 0;
      for (const blob of db.blobContents(oids)) {
        bytes += blob.content.length;
        count++;
        yield blob.content;
      }
      if (count !== oids.length) {
        throw new SvcError(
          "SVC_STORE",
          `${oids.length - count} blobs vanished from the cache database while being written`,
        );
      }
    }
    if (oids.length < LOOSE_BATCH_LIMIT) {
      for (const content of contents()) writeLooseObject(this.repo, "blob", content);
    } else {
      const child = spawnGit(this.repo, ["index-pack", "--stdin"], { stdio: ["pipe", "ignore", "pipe"] });
      let stderr = "";
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (chunk: string) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve, reject) => {
        child.on("error", reject);
        child.on("close", resolve);
      });
      const stdin = child.stdin;
      if (!stdin) throw new SvcError("SVC_STORE", "git index-pack has no stdin");
      stdin.on("error", () => {});
      try {
        await writeBlobPack(contents(), oids.length, stdin);
      } catch (error) {
        child.kill();
        await exited.catch(() => undefined);
        throw error;
      }
      const code = await exited;
      if (code !== 0) throw new GitCommandError(["index-pack", "--stdin"], code, stderr);
    }
    this.db.markWritten(oids);
    return { written: oids.length, bytes };
  }

  /**
   * Packs the loose objects once `PACK_AFTER_COMMITS` state commits have been written since the last time
   * (DESIGN.md §3: `git maintenance run --task=loose-objects`, then `git prune-packed`; neither walks
   * history, so absent blobs do not matter). Call it outside the write lock. A failure (git before 2.30
   * has no loose-objects task) is only reported: the objects stay loose and readable, and the next try
   * comes after another PACK_AFTER_COMMITS commits.
   */
  async consolidateIfDue(log?: (message: string) => void): Promise<boolean> {
    if (this.db.commitsSincePack() < PACK_AFTER_COMMITS) return false;
    this.db.markPacked();
    try {
      await runGit(this.repo, ["maintenance", "run", "--task=loose-objects", "--quiet"]);
      await runGit(this.repo, ["prune-packed", "--quiet"]);
      return true;
    } catch (error) {
      log?.(`svc: warning: could not pack the cache's loose objects (${(error as Error).message})`);
      return false;
    }
  }

  close(): void {
    this.db.close();
  }
}
