/**
 * git run on the user's repository, with the helper's inherited environment (git set `GIT_DIR` for us):
 * the opposite of `cache/git.ts`, which scrubs that environment to reach the cache. Never throws; the exit
 * code says how it went.
 */
import { spawn } from "node:child_process";
import type { UserRepository } from "../cache/open.js";

export interface UserGitResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `options.env` is added to the inherited environment; `options.cwd` replaces the helper's folder. */
export function userGit(
  args: readonly string[],
  options: { env?: Readonly<Record<string, string>>; cwd?: string } = {},
): Promise<UserGitResult> {
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
      stdout += chunk;
    });
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", (error) => resolve({ code: null, stdout, stderr: error.message }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The standard output of a git command that succeeded, else undefined. */
export async function userGitOutput(args: readonly string[]): Promise<string | undefined> {
  const result = await userGit(args);
  return result.code === 0 ? result.stdout : undefined;
}

/** The user's repository as cache/open.ts reaches it, with the refs that hold its last server commit. */
export function userRepository(serverRefs: readonly string[]): UserRepository {
  return {
    serverRefs,
    gitOutput: userGitOutput,
    spawnGit: (args, env) =>
      spawn("git", args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] }),
  };
}
