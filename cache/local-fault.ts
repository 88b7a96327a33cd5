/**
 * Tells a local fault (a full, read-only or failing file system, a place this user may not write) from a
 * bug, for an error met while svc reads or writes its cache, and turns it into a `LocalFaultError`
 * (cache/root.ts words it). The helper's and the CLI's failure reports pass what reaches them through
 * `asLocalFault`; a push does it first, to say which writes reached the server (helper/push-writes.ts); svc doctor
 * looks at the file system with `probeStorage`.
 *
 * The error alone does not always say which fault it is: SQLite reports a `-shm` file it could not size on
 * a full tmpfs as SQLITE_IOERR_SHMSIZE, and a database in a folder it cannot write (a read-only file system,
 * or another user's) as SQLITE_CANTOPEN or SQLITE_READONLY; Node's `mkdirSync(…, {recursive: true})`
 * reports a read-only file system as ENOENT; git says "No space left on device" on its stderr. For those the
 * file system is looked at after the fact: its free space (statfs) and access(2), which answers EROFS for a
 * read-only file system and EACCES for permission bits. An error that names none of these stays a bug.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { UserFacingError } from "../core/errors.js";
import {
  cacheRoot,
  existingFolder,
  type FaultContext,
  fileSystemFull,
  type LocalFault,
  LocalFaultError,
} from "./root.js";

/** A failed file operation as the error says it: a code, the path when it names one, the system's words. */
interface StorageFailure {
  readonly code: string;
  readonly path: string | undefined;
  readonly said: string;
}

/** Codes that say "no space" whatever the file system looks like afterwards (a failed build frees its space). */
const FULL_CODES = new Set(["ENOSPC", "EDQUOT", "SQLITE_FULL"]);

const DENIED_CODES = new Set(["EACCES", "EPERM", "SQLITE_PERM"]);

/** errno codes of file operations that may be a local fault; ENOENT, ENOTDIR and EEXIST only if probing finds one. */
const ERRNO_CODES = new Set([
  "ENOSPC",
  "EDQUOT",
  "EROFS",
  "EACCES",
  "EPERM",
  "EIO",
  "ENOENT",
  "ENOTDIR",
  "EEXIST",
]);

/** System calls of node:fs errors: an EACCES of a socket (`connect`) or of `spawn` is no storage fault. */
const FILE_SYSCALLS = new Set([
  "open",
  "close",
  "read",
  "write",
  "mkdir",
  "mkdtemp",
  "rename",
  "unlink",
  "rmdir",
  "rm",
  "link",
  "symlink",
  "copyfile",
  "ftruncate",
  "fsync",
  "fdatasync",
  "futime",
  "utime",
  "chmod",
  "access",
  "scandir",
  "opendir",
  "stat",
  "lstat",
  "fstat",
]);

/** SQLite's result codes (and their extended forms, `SQLITE_IOERR_WRITE`) that may be a local fault. */
const SQLITE_CODES = ["SQLITE_FULL", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_PERM"];

/** strerror(3)'s words for those errno codes, as git prints them. */
const SYSTEM_WORDS: readonly (readonly [RegExp, string])[] = [
  [/No space left on device/, "ENOSPC"],
  [/Disk quota exceeded/, "EDQUOT"],
  [/Read-only file system/, "EROFS"],
  [/Permission denied/, "EACCES"],
];

/** `no space left on device` from node's `ENOSPC: no space left on device, write`. */
function systemWords(message: string): string {
  return /^[A-Z0-9]+: ([^,]+)/.exec(message)?.[1] ?? message;
}

/** The failed file operation in `error` or its causes, if one is. */
function storageFailure(error: unknown): StorageFailure | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++, current = current.cause) {
    const { code, path, syscall } = current as { code?: unknown; path?: unknown; syscall?: unknown };
    const at = typeof path === "string" ? path : undefined;
    if (typeof code !== "string") continue;
    if (code.startsWith("SQLITE_")) {
      if (SQLITE_CODES.some((name) => code === name || code.startsWith(`${name}_`)))
        return { code, path: at, said: `${code} (${current.message})` };
    } else if (ERRNO_CODES.has(code) && typeof syscall === "string" && FILE_SYSCALLS.has(syscall)) {
      return { code, path: at, said: `${code} (${systemWords(current.message)}, ${syscall})` };
    } else if (code === "SVC_STORE") {
      // A git command on the cache, or the copy of the user's history: git's own words on its stderr.
      for (const [words, errno] of SYSTEM_WORDS) {
        const line = current.message.split("\n").find((text) => words.test(text));
        if (line !== undefined) return { code: errno, path: undefined, said: line.trim().slice(0, 300) };
      }
    }
  }
  return undefined;
}

/**
 * What stops this process from writing at `path` (a file or folder; the nearest existing folder when it is
 * not there), looked at now: a full file system, a read-only one (access(2): EROFS), or permission bits
 * (EACCES), with the path that showed it. Undefined when nothing does. For a database file its `-wal` and
 * `-shm` files count too: SQLite makes them with the database's mode, so a database that was read-only
 * once leaves a `-shm` no one can write.
 */
export function probeStorage(
  path: string,
): { kind: "full" | "read-only" | "denied"; path: string } | undefined {
  const folder = existingFolder(path);
  if (fileSystemFull(folder)) return { kind: "full", path: folder };
  const files =
    path === folder ? [] : [path, `${path}-wal`, `${path}-shm`].filter((file) => existsSync(file));
  for (const candidate of [...files, folder]) {
    try {
      accessSync(candidate, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EROFS") return { kind: "read-only", path: candidate };
      if (code === "EACCES" || code === "EPERM") return { kind: "denied", path: candidate };
    }
  }
  return undefined;
}

/**
 * The local fault `error` is, or undefined when it is none (a bug, or a fault of the server). `fallback`
 * is where svc was writing when the error names no path (the cache root).
 */
export function findLocalFault(error: unknown, fallback: string): LocalFault | undefined {
  const failure = storageFailure(error);
  if (failure === undefined) return undefined;
  const path = failure.path !== undefined && isAbsolute(failure.path) ? failure.path : fallback;
  const said = failure.said;
  if (FULL_CODES.has(failure.code)) return { kind: "full", path, said };
  if (failure.code === "EROFS") return { kind: "read-only", path, said };
  // Permission bits by the code only where it names the path: git's "Permission denied" may be about
  // another repository (the user's), so that one the cache's own files must show.
  if (DENIED_CODES.has(failure.code) && failure.path !== undefined) return { kind: "denied", path, said };
  const probed = probeStorage(path);
  if (probed)
    return { kind: probed.kind, path: probed.path === existingFolder(path) ? path : probed.path, said };
  if (failure.code.startsWith("SQLITE_") || failure.code === "EIO") return { kind: "io", path, said };
  return undefined;
}

/**
 * `error` said as a local fault for `context` (what the command had done, the command to run again), or
 * undefined when it is none. A `LocalFaultError` gets the context; any other `UserFacingError` already
 * says what to do and is left alone.
 */
export function asLocalFault(error: unknown, context: FaultContext): LocalFaultError | undefined {
  if (error instanceof LocalFaultError) return error.in(context);
  if (error instanceof UserFacingError) return undefined;
  let root = context.root;
  try {
    root ??= cacheRoot(context.env);
  } catch {
    // a relative SVC_CACHE_DIR: the error names its path, or there is none to name
  }
  const fault = findLocalFault(error, root ?? process.cwd());
  return fault && new LocalFaultError(fault, { ...context, root }, { cause: error });
}

/** Whether `error` is a local fault, which the failure report (not the code that met it) says. */
export function isLocalFault(error: unknown): boolean {
  return asLocalFault(error, {}) !== undefined;
}
