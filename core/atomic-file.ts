/**
 * The one way svc replaces a file's content: write a sibling temporary file, fsync it, rename it over the
 * target, fsync the directory. A reader sees the old file or the new one, never a part of either, even across
 * a power cut. Users: the pulse listener's offset and the agent's OAuth credentials (mode 0600), and git's
 * loose objects (git/objects.ts: mode 0444, and not synced, as git itself does not sync a loose object).
 *
 * Not here, because they are other mechanisms: a directory made beside its place and renamed into it
 * (cache/open.ts, cache/cache.ts), a symbolic link renamed over another (cli/helper-path.ts), a ref's lock
 * file renamed into the ref (cache/cache.ts), a file git writes that is renamed into place
 * (helper/blob-limit.ts), a backup published without ever replacing one (server/pulse/backup.ts, which
 * syncs with `fsyncPath`), and the code cache of the start-up loader (core/load-bundle.cts: CommonJS,
 * which cannot load this module without an experimental warning on Node 22, and a cache whose loss costs
 * nothing but time).
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fchownSync,
  fsyncSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

export interface AtomicWriteOptions {
  /** Keep the current owner of `path` (meaningful when running as root, e.g. a file belonging to the agent's user). */
  readonly keepOwner?: boolean;
  /** The new file's mode, exactly (the umask does not narrow it); default 0600. */
  readonly mode?: number;
  /**
   * Whether the new content must survive a power cut once this returns (default true): the file and its
   * directory are fsynced. Without, a crash may leave the old file or none, but never a part of the new one.
   */
  readonly durable?: boolean;
}

/** Replaces the content of `path` (or creates it) with `data`, atomically; see the module's comment. */
export function writeFileAtomically(
  path: string,
  data: string | Buffer,
  options: AtomicWriteOptions = {},
): void {
  const durable = options.durable ?? true;
  const directory = dirname(path);
  const temporary = join(
    directory,
    `.${basename(path)}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`,
  );
  let owner: { uid: number; gid: number } | undefined;
  if (options.keepOwner && process.getuid?.() === 0) {
    try {
      const info = statSync(path);
      owner = { uid: info.uid, gid: info.gid };
    } catch {
      // A new file stays root's.
    }
  }
  const mode = options.mode ?? 0o600;
  const fd = openSync(temporary, "wx", mode);
  try {
    // The umask can narrow the mode given to open; set it exactly.
    fchmodSync(fd, mode);
    if (owner !== undefined) fchownSync(fd, owner.uid, owner.gid);
    writeFileSync(fd, data);
    if (durable) fsyncSync(fd);
    closeSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  if (!durable) return;
  // The rename is durable only once the directory entry is on disk. Some file systems refuse to open or
  // fsync a directory; the file is in place then, so that is not an error.
  try {
    fsyncPath(directory);
  } catch {
    // best effort, see above
  }
}

/** fsyncs the file or directory `path`: its content, or its entries, are on disk when this returns. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
