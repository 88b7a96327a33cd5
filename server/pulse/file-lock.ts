/**
 * A lock file beside the file it guards, for read-check-write cycles across processes (the OAuth
 * provider's `<credentials>.lock`).
 *
 * The lock is a regular file created with O_EXCL holding its holder's pid, host, start time and a nonce;
 * the holder touches it every quarter of `staleMs` while held. A lock whose holder is not running (same
 * host) or that was not touched for `staleMs` is taken over; release removes the file only while it is
 * still ours.
 *
 * Not proper-lockfile (4.1.2, measured on Node 20.20 with an ESM import, which works): its lock is a
 * directory with no holder inside, so (1) a lock left by a holder that died on this host is only taken over
 * once its mtime is stale (it answered ELOCKED at once for a fresh lock of a dead pid), and the wait
 * callback and the timeout message cannot name the holder; (2) it cannot take over a lock file in this
 * format, which svc versions before it leave behind: a stale one failed with ENOTDIR from rmdir and stayed
 * in place; (3) by default it refuses to lock a file that does not exist yet (ENOENT from lstat).
 */
import { randomBytes } from "node:crypto";
import { open, readFile, rm, stat, unlink, utimes } from "node:fs/promises";
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import { formatDuration } from "../../core/duration.js";
import { isRunning } from "../../core/process.js";

export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** RFC 3339, when the lock was taken. */
  readonly since: string;
  readonly nonce: string;
}

export interface LockOptions {
  readonly waitMs: number;
  readonly staleMs: number;
  readonly now?: () => number;
  readonly pollMs?: number;
  readonly onWait?: ((holder: LockHolder | undefined) => void) | undefined;
  readonly onTakeover?: (reason: string) => void;
}

export interface HeldLock {
  readonly path: string;
  release(): Promise<void>;
}

/** `acquireLock` waited `waitMs` and the lock was still held (by `holder`, when its file could be read). */
export class LockWaitTimeoutError extends Error {
  constructor(
    readonly path: string,
    readonly holder: LockHolder | undefined,
    readonly waitMs: number,
  ) {
    super(`${path} is still held after ${formatDuration(waitMs)}`);
  }
}

interface LockState {
  readonly text: string;
  readonly holder: LockHolder | undefined;
  readonly mtimeMs: number;
  readonly ino: number;
}

/** A lock file whose content cannot be read yet is being written; give its creator this long. */
const UNREADABLE_LOCK_GRACE_MS = 5_000;
/** The lock that guards taking over a stale lock; held for a few ms, so older means its holder died. */
const BREAK_LOCK_STALE_MS = 10_000;

function parseHolder(text: string): LockHolder | undefined {
  try {
    // Not an object, or an array: the field checks below fail for it, so no separate shape check is needed.
    const value = JSON.parse(text) as Partial<Record<keyof LockHolder, unknown>> | null;
    if (
      typeof value === "object" &&
      value !== null &&
      Number.isSafeInteger(value.pid) &&
      typeof value.host === "string" &&
      typeof value.since === "string" &&
      typeof value.nonce === "string"
    ) {
      return value as LockHolder;
    }
  } catch {
    // Being written, or not ours.
  }
  return undefined;
}

async function inspectLock(path: string): Promise<LockState | undefined> {
  try {
    const info = await stat(path);
    const text = await readFile(path, "utf8");
    return { text, holder: parseHolder(text), mtimeMs: info.mtimeMs, ino: info.ino };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Why the lock is abandoned, or undefined while its holder may still be at work. */
function staleReason(state: LockState, nowMs: number, staleMs: number): string | undefined {
  const age = nowMs - state.mtimeMs;
  if (state.holder === undefined) {
    return age > UNREADABLE_LOCK_GRACE_MS
      ? `unreadable lock file, last touched ${formatDuration(age)} ago`
      : undefined;
  }
  if (state.holder.host === hostname() && state.holder.pid !== process.pid && !isRunning(state.holder.pid)) {
    return `its holder, pid ${state.holder.pid}, is not running`;
  }
  return age > staleMs
    ? `its holder, pid ${state.holder.pid}, has not touched it for ${formatDuration(age)}`
    : undefined;
}

/**
 * Takes `path` with O_EXCL, waiting at most `waitMs`; then throws `LockWaitTimeoutError`. A failure to
 * create the file other than "it exists" is thrown as node:fs threw it (ENOENT: no such directory). A stale
 * lock is removed under a second, short-lived lock (`<path>.break`) after checking it is still the same
 * file, so two waiters that both judged it stale cannot remove each other's fresh lock.
 */
export async function acquireLock(path: string, options: LockOptions): Promise<HeldLock> {
  const now = options.now ?? Date.now;
  const pollMs = options.pollMs ?? 50;
  const deadline = performance.now() + options.waitMs;
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    since: new Date(now()).toISOString(),
    nonce: randomBytes(8).toString("hex"),
  };
  const text = `${JSON.stringify(holder)}\n`;
  let waited = false;
  for (;;) {
    try {
      const handle = await open(path, "wx", 0o600);
      try {
        await handle.writeFile(text, "utf8");
      } finally {
        await handle.close();
      }
      return heldLock(path, text, options.staleMs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const state = await inspectLock(path);
    if (state === undefined) continue;
    const reason = staleReason(state, now(), options.staleMs);
    if (reason !== undefined && (await breakStaleLock(path, state))) {
      options.onTakeover?.(reason);
      continue;
    }
    if (!waited) {
      waited = true;
      options.onWait?.(state.holder);
    }
    if (performance.now() >= deadline) throw new LockWaitTimeoutError(path, state.holder, options.waitMs);
    await sleep(pollMs + Math.floor(Math.random() * pollMs));
  }
}

async function breakStaleLock(path: string, judged: LockState): Promise<boolean> {
  const breakPath = `${path}.break`;
  try {
    await (await open(breakPath, "wx", 0o600)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
    try {
      const info = await stat(breakPath);
      // Its holder died between two syscalls: the tiny window in which two removers race is accepted.
      if (Date.now() - info.mtimeMs > BREAK_LOCK_STALE_MS) await rm(breakPath, { force: true });
    } catch {
      // Gone already.
    }
    return false;
  }
  try {
    const current = await inspectLock(path);
    if (current === undefined) return true;
    if (current.ino !== judged.ino || current.mtimeMs !== judged.mtimeMs || current.text !== judged.text)
      return false;
    await rm(path, { force: true });
    return true;
  } finally {
    await rm(breakPath, { force: true });
  }
}

function heldLock(path: string, text: string, staleMs: number): HeldLock {
  // Touch the lock while held, so a slow grant (429 waits, a slow server) is not mistaken for a dead holder.
  const heartbeat = setInterval(
    () => {
      const t = new Date();
      utimes(path, t, t).catch(() => undefined);
    },
    Math.max(10, Math.floor(staleMs / 4)),
  );
  heartbeat.unref();
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      try {
        // Only our own: if we were taken over as stale, the file is someone else's now.
        if ((await readFile(path, "utf8")) === text) await unlink(path);
      } catch {
        // Already gone.
      }
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
