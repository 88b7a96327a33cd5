/**
 * Where caches live, and what svc says when it cannot use that place: the cache root is not a folder, is
 * named by a relative path, or its file system is full, read-only, not writable by this user or failing
 * (DESIGN.md §4: exit 2, "a local fault such as a full disk or a read-only cache, each named"). The faults
 * are found by cache/local-fault.ts; each is worded here, once, by `LocalFaultError`.
 *
 * Apart from cache.ts so that what needs only the folder (svc init's helper link) does not load SQLite and
 * the git object code.
 */
import { accessSync, constants, statfsSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { shellWord, UserFacingError } from "../core/errors.js";

/** `$XDG_CACHE_HOME/svc`, else `~/.cache/svc`: where caches live when `SVC_CACHE_DIR` is not set. */
export function defaultCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  // The XDG Base Directory specification: a relative path in XDG_CACHE_HOME is invalid and is ignored.
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) return join(env.XDG_CACHE_HOME, "svc");
  return join(homedir(), ".cache", "svc");
}

/**
 * `$SVC_CACHE_DIR`, else `defaultCacheRoot`. A relative `SVC_CACHE_DIR` is refused, not resolved: git starts
 * the helper in the folder of a `git clone` but at the top of the working tree for a fetch, a pull, a push
 * and a lazy fetch, so one relative value names another folder per command, one of them inside the working
 * tree, where `git add -A` would stage the cache's private `cache.db` and `repo.git` into the user's
 * commits. Resolving it against a fixed folder (the home folder, say) would put the cache where whoever set
 * the variable did not look; the refusal names the default folder and the command that uses it.
 */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.SVC_CACHE_DIR;
  if (!chosen) return defaultCacheRoot(env);
  if (!isAbsolute(chosen)) throw new LocalFaultError({ kind: "relative", path: chosen, said: "" }, { env });
  return chosen;
}

/**
 * Refuses a cache root that is a file, or lies under one (`SVC_CACHE_DIR=/home/me/notes.txt/svc`): no cache
 * folder can be made there. Reads only; a root that does not exist yet is fine.
 */
export function checkCacheRootFolder(root: string, env: NodeJS.ProcessEnv = process.env): void {
  for (let path = root; ; path = dirname(path)) {
    let isFolder: boolean;
    try {
      isFolder = statSync(path).isDirectory();
    } catch {
      if (dirname(path) === path) return;
      continue;
    }
    if (!isFolder) throw new LocalFaultError({ kind: "not-a-folder", path, said: "" }, { env, root });
    return;
  }
}

/**
 * What went wrong with the cache's storage:
 * - `full`: no space (or no inodes) left on its file system;
 * - `read-only`: its file system is mounted read-only;
 * - `denied`: this user may not write there (file permissions);
 * - `io`: the file system reported an I/O error (a failing disk) that none of the above explains;
 * - `not-a-folder`: the cache root, or a folder above it, is a file;
 * - `relative`: `SVC_CACHE_DIR` is a relative path (`path` is its value).
 */
export type LocalFaultKind = "full" | "read-only" | "denied" | "io" | "not-a-folder" | "relative";

export interface LocalFault {
  readonly kind: LocalFaultKind;
  /** The file or folder that could not be written (or read), absolute; `relative`: the variable's value. */
  readonly path: string;
  /** What the system said, e.g. `SQLITE_FULL (database or disk is full)`; "" when it said nothing useful. */
  readonly said: string;
}

/** Where and when a fault was met, for its message. */
export interface FaultContext {
  /**
   * What the command had done when it stopped, e.g. `nothing was fetched`, `2 of 5 writes reached the server
   * and are kept`. Default: `nothing was changed`.
   */
  readonly outcome?: string;
  /** The command to run once the fault is fixed: the user's own, as printed. Default: prose. */
  readonly rerun?: string;
  /** The cache root in use (for the folder `chmod` fixes). Default: `cacheRoot`'s, if it has one. */
  readonly root?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * A fault of the machine, not of svc: printed without a stack (a `UserFacingError`), naming the path, what
 * the system said, what the command had done, and what to run. `in()` says the same fault for the place it
 * is reported from, which knows what was written and the user's command.
 */
export class LocalFaultError extends UserFacingError {
  constructor(
    readonly fault: LocalFault,
    readonly context: FaultContext = {},
    options: { cause?: unknown } = {},
  ) {
    super("SVC_LOCAL_FAULT", renderLocalFault(fault, context), {
      data: { kind: fault.kind, path: fault.path },
      cause: options.cause,
    });
  }

  in(context: FaultContext): LocalFaultError {
    return new LocalFaultError(this.fault, { ...this.context, ...context }, { cause: this.cause });
  }

  /** The fault in a few words, for git's one-line `[remote rejected]` reason. */
  get summary(): string {
    return SUMMARIES[this.fault.kind];
  }
}

const SUMMARIES: Readonly<Record<LocalFaultKind, string>> = {
  full: "the cache's file system is full",
  "read-only": "the cache's file system is read-only",
  denied: "svc may not write its cache",
  io: "the cache's file system failed",
  "not-a-folder": "svc's cache folder is a file",
  relative: "SVC_CACHE_DIR is a relative path",
};

/** Below this much free space a file system counts as full: a sync or a push needs more than that. */
export const FULL_BELOW_BYTES = 64 * 1024;

/** The folder that holds `path`, or `path` itself when it is a folder: the nearest that exists. */
export function existingFolder(path: string): string {
  for (let at = path; ; at = dirname(at)) {
    try {
      if (statSync(at).isDirectory()) return at;
    } catch {
      // not there (yet): its parent
    }
    if (dirname(at) === at) return at;
  }
}

/** Whether the file system of the existing folder `folder` has less than FULL_BELOW_BYTES (or no inode) left. */
export function fileSystemFull(folder: string): boolean {
  try {
    const stat = statfsSync(folder);
    // root may use the blocks a file system reserves for it; everyone else only the available ones.
    const blocks = process.getuid?.() === 0 ? stat.bfree : stat.bavail;
    return blocks * stat.bsize < FULL_BELOW_BYTES || (stat.files > 0 && stat.ffree === 0);
  } catch {
    return false;
  }
}

/** Whether `path` is `folder` or inside it. */
function within(path: string, folder: string): boolean {
  const inside = relative(folder, path);
  return inside === "" || (!inside.startsWith("..") && !isAbsolute(inside));
}

/** Whether this process could make a folder at `path` or write in it: its nearest folder is writable and not full. */
function writablePlace(path: string): boolean {
  const folder = existingFolder(path);
  try {
    accessSync(folder, constants.W_OK);
  } catch {
    return false;
  }
  return !fileSystemFull(folder);
}

/**
 * A command that points svc at another cache root it can write, and that root: svc's default folder
 * (`unset SVC_CACHE_DIR`) when `SVC_CACHE_DIR` names another one and the default is usable; else a fresh
 * private folder (`mktemp -d`: a fixed name under /tmp could be made first by someone else). Undefined when
 * neither is usable. A cache made there starts from a full listing.
 */
export function otherCacheRoot(
  env: NodeJS.ProcessEnv,
  avoid?: string,
): { readonly command: string; readonly root: string } | undefined {
  const fallback = defaultCacheRoot(env);
  if (env.SVC_CACHE_DIR && (avoid === undefined || !within(fallback, avoid)) && writablePlace(fallback)) {
    return { command: "unset SVC_CACHE_DIR", root: fallback };
  }
  const temp = tmpdir();
  if (writablePlace(temp)) return { command: `export SVC_CACHE_DIR="$(mktemp -d)"`, root: temp };
  return undefined;
}

/** `unset SVC_CACHE_DIR && <rerun>`, said for people, or how to do it when there is no such command. */
function elsewhere(env: NodeJS.ProcessEnv, avoid: string | undefined, rerun: string): string {
  const other = otherCacheRoot(env, avoid);
  if (!other) return `set SVC_CACHE_DIR to a folder you can write on another file system, then run: ${rerun}`;
  const where =
    other.command === "unset SVC_CACHE_DIR"
      ? `svc's default folder ${other.root}`
      : `a new private folder under ${other.root}`;
  return `to use ${where}, run: ${other.command} && ${rerun}`;
}

/** The folder `chmod -R` should make writable: the project cache folder `path` is in, else `path`'s folder. */
function folderToFix(path: string, root: string | undefined): string {
  if (root !== undefined && path !== root && within(path, root)) {
    return join(root, relative(root, path).split(sep)[0] ?? "");
  }
  return existingFolder(path);
}

/**
 * For `path`, which this user may not write: `chmod -R u+rwX <folder>` when that folder (its project cache
 * folder, else its own) is the user's, with `command`; else who owns it. Only the owner's bits change: the
 * cache stays the user's alone (cache.ts `checkCacheOwner`).
 */
export function permissionFix(
  path: string,
  root: string | undefined,
): { readonly command: string } | { readonly folder: string; readonly owner: number | undefined } {
  const folder = folderToFix(path, root);
  let owner: number | undefined;
  try {
    owner = statSync(folder).uid;
  } catch {
    owner = undefined;
  }
  if (owner !== undefined && owner === process.getuid?.())
    return { command: ["chmod", "-R", "u+rwX", folder].map(shellWord).join(" ") };
  return { folder, owner };
}

/** What to do about a path this user may not write: chmod when it is theirs, else another cache root. */
function deniedRemedy(path: string, context: FaultContext, env: NodeJS.ProcessEnv, rerun: string): string {
  const fix = permissionFix(path, context.root);
  if ("command" in fix) return `Make it writable again, run: ${fix.command} && ${rerun}`;
  const whose = fix.owner === undefined ? "" : `${fix.folder} belongs to uid ${fix.owner}; `;
  const inCache = context.root !== undefined && within(path, context.root);
  return `${whose}ask its owner to let you write there${inCache ? `, or ${elsewhere(env, fix.folder, rerun)}` : `, then run: ${rerun}`}`;
}

function renderLocalFault(fault: LocalFault, context: FaultContext): string {
  const env = context.env ?? process.env;
  const rerun = context.rerun ?? "the same command again";
  const outcome = context.outcome ?? "nothing was changed";
  const said = fault.said === "" ? "" : `: ${fault.said}`;
  switch (fault.kind) {
    case "relative":
      return (
        `SVC_CACHE_DIR=${shellWord(fault.path)} is a relative path, which names another folder for each folder ` +
        "svc runs in (git starts it in the folder of a git clone, at the top of the working tree for a fetch or " +
        `a push), one of them inside your working tree, where git add -A would stage the cache's files; ${outcome}. ` +
        `Set SVC_CACHE_DIR to an absolute path outside your working trees, or ${elsewhere(env, undefined, rerun)}`
      );
    case "not-a-folder": {
      const name = env.SVC_CACHE_DIR ? `SVC_CACHE_DIR=${shellWord(env.SVC_CACHE_DIR)}` : "svc's cache folder";
      const below =
        context.root === undefined || context.root === fault.path
          ? ""
          : `, so no folder ${context.root} can be made`;
      return (
        `${name} cannot be used: ${fault.path} is a file, not a folder${below}; ${outcome}. ` +
        `Move that file away, or ${elsewhere(env, fault.path, rerun)}`
      );
    }
    case "full": {
      const folder = existingFolder(fault.path);
      return (
        `the file system of ${folder} is full: ${fault.path}${said}; ${outcome}. ` +
        `Free space on it (${["df", "-h", folder].map(shellWord).join(" ")} shows how much is left), then run: ${rerun}`
      );
    }
    case "read-only": {
      const folder = existingFolder(fault.path);
      const inCache = context.root !== undefined && within(fault.path, context.root);
      return (
        `the file system of ${folder} is read-only: ${fault.path}${said}; ${outcome}. ` +
        `Once it is writable again, run: ${rerun}` +
        (inCache
          ? `\n  or keep svc's caches on another file system (a new cache is built there from a full listing; it ` +
            `does not know the creates of a push that was cut off before): ${elsewhere(env, folder, rerun)}`
          : "")
      );
    }
    case "denied":
      return (
        `permission denied: svc cannot write ${fault.path}${said}; ${outcome}. ` +
        deniedRemedy(fault.path, context, env, rerun)
      );
    case "io":
      return (
        `the file system failed on ${fault.path}${said}; ${outcome}. ` +
        `svc doctor tells a damaged cache from a failing disk; once the disk works, run: ${rerun}`
      );
  }
}
