/**
 * Whether a process still runs, for every part that finds a pid left behind: a push's journal rows and
 * ref names (helper/), a lock file's holder and a daemon's row (server/pulse/).
 */
import { readFileSync } from "node:fs";

/**
 * Whether process `pid` on this host still runs. EPERM means it exists but belongs to someone else:
 * running. A process killed while its parent was gone too can stay a zombie for a while where nothing
 * reaps orphans (PID 1 of some containers); on Linux its state in /proc says so, and a zombie does not run.
 * Where /proc cannot be read (not Linux), the signal's answer stands.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX]/s.test(stat);
  } catch {
    return true;
  }
}
