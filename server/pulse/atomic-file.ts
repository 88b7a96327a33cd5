/**
 * The one way the pulse parts replace a small file (the listener's offset, the agent's OAuth credentials):
 * write a sibling temporary file (mode 0600), fsync it, rename it over the target, fsync the directory. A
 * reader sees the old file or the new one, never a part of either, even across a power cut.
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
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

export interface AtomicWriteOptions {
  /** Keep the current owner of `path` (meaningful when running as root, e.g. a file belonging to the agent's user). */
  readonly keepOwner?: boolean;
}

export function writeFileAtomically(path: string, text: string, options: AtomicWriteOptions = {}): void {
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
  const fd = openSync(temporary, "wx", 0o600);
  try {
    // The umask can narrow the mode given to open; set it exactly.
    fchmodSync(fd, 0o600);
    if (owner !== undefined) fchownSync(fd, owner.uid, owner.gid);
    writeSync(fd, text);
    fsyncSync(fd);
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
  // The rename is durable only once the directory entry is on disk. Some file systems refuse to open or
  // fsync a directory; the file is in place then, so that is not an error.
  try {
    const dirFd = openSync(directory, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // best effort, see above
  }
}
