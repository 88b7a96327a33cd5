/**
 * The one way to run git on the user's repository, for the helper and for the CLI (`svc init`, `svc sync`):
 * with the inherited environment (under the helper, git set `GIT_DIR` for us), the opposite of
 * `cache/git.ts`, which scrubs that environment to reach the cache. Never throws; the exit code says how it
 * went (null when git could not be started).
 */
import { spawn } from "node:child_process";
import type { UserRepository } from "../cache/open.js";

export interface UserGitResult {
  readonly code: number | null;
  /** What git printed on stdout, unless it was streamed (`stream` without `captureStdout`). */
  readonly stdout: string;
  /** What git printed on stderr, unless it was streamed; when git could not be started, why. */
  readonly stderr: string;
}

export interface UserGitOptions {
  /** Added to the inherited environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Replaces the current folder. */
  readonly cwd?: string;
  /**
   * Show git's own output to the user as it comes (progress, errors): its stderr, and its stdout unless
   * `captureStdout`, are written here instead of being captured; a git that cannot be started is said here.
   */
  readonly stream?: NodeJS.WritableStream;
  /** With `stream`: capture stdout (to parse it) rather than stream it. */
  readonly captureStdout?: boolean;
}

export function userGit(args: readonly string[], options: UserGitOptions = {}): Promise<UserGitResult> {
  const { stream } = options;
  return new Promise((resolve) => {
    const child = spawn("git", args, {
      stdio: ["ignore", "pipe", "pipe"],
      cwd: options.cwd,
      env: options.env ? { ...process.env, ...options.env } : process.env,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (stream && !options.captureStdout) stream.write(chunk);
      else stdout += chunk;
    });
    child.stderr.on("data", (chunk: string) => {
      if (stream) stream.write(chunk);
      else stderr += chunk;
    });
    child.on("error", (error) => {
      stream?.write(`svc: cannot run git: ${error.message}\n`);
      resolve({ code: null, stdout, stderr: error.message });
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The standard output of a git command that succeeded, else undefined. */
export async function userGitOutput(
  args: readonly string[],
  options: Pick<UserGitOptions, "cwd"> = {},
): Promise<string | undefined> {
  const result = await userGit(args, options);
  return result.code === 0 ? result.stdout : undefined;
}

/**
 * The user's repository (in `cwd`, else the current folder) as cache/open.ts reaches it, with the refs that
 * hold its last server commit.
 */
export function userRepository(serverRefs: readonly string[], cwd?: string): UserRepository {
  return {
    serverRefs,
    gitOutput: (args) => userGitOutput(args, { cwd }),
    spawnGit: (args, env) =>
      spawn("git", args, { cwd, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] }),
  };
}
