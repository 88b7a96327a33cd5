/**
 * Servers the scripts start as child processes (`npm run demo`, the benchmarks, where a measured server gets
 * its own event loop and the load generator's work is not counted against it). Each announces its URL on
 * stderr; `stop()` signals that one pid and waits for it to exit, escalating to SIGKILL if it does not
 * within the grace period.
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface ListeningChild {
  readonly url: string;
  readonly pid: number;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (null when killed by a signal). */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Spawns `node <args>` and waits (at most `startTimeoutMs`) for a stderr line matching `listening`, whose
 * first capture group is the URL.
 */
export async function spawnListening(
  args: readonly string[],
  listening: RegExp,
  startTimeoutMs = 10_000,
): Promise<ListeningChild> {
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const stop = async (graceMs = 5000) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    }
    return exited;
  };
  const command = args.join(" ");
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`${command} did not announce its URL within ${startTimeoutMs} ms:\n${stderr}`)),
        startTimeoutMs,
      );
      child.stderr?.on("data", () => {
        const match = listening.exec(stderr);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${command} exited with ${code} before listening:\n${stderr}`));
      });
    });
    return { url, pid: child.pid ?? -1, stderr: () => stderr, stop };
  } catch (error) {
    await stop(1000);
    throw error;
  }
}
