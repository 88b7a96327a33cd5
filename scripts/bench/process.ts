/**
 * The commands a benchmark times (git, svc, node), each run to its end as a child process: how long it took,
 * its exit code and its stderr.
 */
import { spawn } from "node:child_process";

export interface Timed {
  readonly ms: number;
  readonly code: number | null;
  readonly stderr: string;
}

/** Runs `command` with `input` on its stdin (none: closed at once), stdout ignored; never rejects. */
export function timedRun(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { readonly input?: string; readonly cwd?: string } = {},
): Promise<Timed> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(command, args, { env, cwd: options.cwd, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("close", (code) => resolve({ ms: performance.now() - started, code, stderr }));
    child.stdin.end(options.input);
  });
}

/** `timedRun`, rejecting with the command and its stderr unless it exits 0. */
export async function checkedRun(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<Timed> {
  const result = await timedRun(command, args, env, { cwd });
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.code}):\n${result.stderr}`);
  }
  return result;
}
