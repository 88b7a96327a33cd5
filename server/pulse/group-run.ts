/**
 * Runs one program as the leader of its own process group, for the daemon's two kinds of child: the runner
 * of a pulse (executor.ts) and a credential provider (keepalive.ts). No shell: argv goes to the program as
 * given.
 *
 * - A timeout or an abort sends SIGTERM to the whole group, then SIGKILL after `killGraceMs`. The SIGKILL
 *   is sent even when the leader has exited on SIGTERM by then: whatever it started that ignores SIGTERM
 *   (a grandchild with `trap '' TERM`) still goes.
 * - stdout and stderr are kept interleaved, as they arrived, and only their last `tailBytes`.
 * - A grandchild that keeps the pipes open does not hold the result up: after the leader exits, the pipes
 *   are waited for `lingerMs` at most.
 * - It never rejects; a program that cannot be started comes back with `spawnError` (ENOENT, EACCES,
 *   ENOEXEC for a script without `#!`, …).
 */
import { spawn } from "node:child_process";

export interface GroupRunRequest {
  readonly path: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  /** Between SIGTERM and SIGKILL of the process group. */
  readonly killGraceMs: number;
  /** Aborting stops the run as a timeout does (cancel, lost lease, shutdown). */
  readonly signal?: AbortSignal;
  readonly onSpawn?: (pid: number) => void;
  readonly tailBytes: number;
  /** How long to wait for the pipes to close after the leader exited. */
  readonly lingerMs: number;
}

export interface GroupRunResult {
  /** null when it was ended by a signal or never started. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last `tailBytes` of stdout and stderr, cut at a character boundary. */
  readonly outputTail: string;
  /** Everything written to stdout and stderr, of which `outputTail` is the end. */
  readonly outputBytes: number;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /** The program could not be started at all. */
  readonly spawnError?: string;
  readonly durationMs: number;
}

/** Keeps the last `limit` bytes of everything written to it. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    this.total += chunk.length;
    while (this.chunks.length > 1 && this.size - (this.chunks[0]?.length ?? 0) >= this.limit) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    // Cut at a UTF-8 boundary so the tail never starts with half a character.
    let start = Math.max(0, all.length - this.limit);
    while (start < all.length && ((all[start] ?? 0) & 0xc0) === 0x80) start++;
    return all.subarray(start).toString("utf8");
  }
}

/** Signals process group `pid`; a group that is gone already is not an error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

export function runProcessGroup(request: GroupRunRequest): Promise<GroupRunResult> {
  const started = performance.now();
  const tail = new Tail(request.tailBytes);
  return new Promise<GroupRunResult>((resolveRun) => {
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let stopping = false;
    const timers: NodeJS.Timeout[] = [];
    const child = spawn(request.path, [...request.args], {
      cwd: request.cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: request.env,
    });
    const onAbort = (): void => {
      aborted = true;
      stop();
    };
    const finish = (result: {
      exitCode: number | null;
      signal: NodeJS.Signals | null;
      spawnError?: string;
    }) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      resolveRun({
        ...result,
        timedOut,
        aborted,
        outputTail: tail.text(),
        outputBytes: tail.total,
        durationMs: Math.round(performance.now() - started),
      });
    };
    const stop = (): void => {
      if (child.pid === undefined || stopping) return;
      stopping = true;
      const pid = child.pid;
      signalGroup(pid, "SIGTERM");
      // Not cleared by finish(): members of the group that ignore SIGTERM outlive the leader.
      setTimeout(() => signalGroup(pid, "SIGKILL"), request.killGraceMs).unref();
    };
    child.stdout.on("data", (chunk: Buffer) => tail.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => tail.push(chunk));
    child.once("error", (error: NodeJS.ErrnoException) => {
      finish({ exitCode: null, signal: null, spawnError: error.code ?? error.message });
    });
    child.once("spawn", () => {
      if (child.pid !== undefined) request.onSpawn?.(child.pid);
      timers.push(
        setTimeout(() => {
          timedOut = true;
          stop();
        }, request.timeoutMs),
      );
      if (request.signal?.aborted) onAbort();
      else request.signal?.addEventListener("abort", onAbort, { once: true });
    });
    child.once("exit", (code, signal) => {
      // Output still in the pipes arrives before "close"; a grandchild holding the pipes open must not
      // hold the result up, so wait for "close" only briefly.
      const done = () => finish({ exitCode: code, signal });
      child.once("close", done);
      timers.push(
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          done();
        }, request.lingerMs),
      );
    });
  });
}
