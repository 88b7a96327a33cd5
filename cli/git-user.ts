/**
 * Running git for the user (in their working tree, with their environment), as `svc init` and `svc sync`
 * do. Git's own output goes to our stderr; only what we parse is captured.
 */
import { execFile, spawn } from "node:child_process";
import { accessSync, constants, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { UserRepository } from "../cache/open.js";
import { cacheRoot } from "../cache/root.js";

export interface UserGitResult {
  readonly code: number | null;
  readonly stdout: string;
}

/** Runs git; its stderr (progress, errors) is passed to `stderr`, stdout is captured or passed on. */
export function runUserGit(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; stderr: NodeJS.WritableStream; captureStdout?: boolean },
): Promise<UserGitResult> {
  return new Promise((resolve) => {
    const child = spawn("git", args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (options.captureStdout) stdout += chunk;
      else options.stderr.write(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => options.stderr.write(chunk));
    child.on("error", (error) => {
      options.stderr.write(`svc: cannot run git: ${error.message}\n`);
      resolve({ code: null, stdout });
    });
    child.on("close", (code) => resolve({ code, stdout }));
  });
}

/** The folder of svc's own bins (`git-remote-svc` beside `svc`). */
const checkoutBinDir = fileURLToPath(new URL("../../bin/", import.meta.url));
const helperScript = fileURLToPath(new URL("../helper/bin.js", import.meta.url));

/**
 * A folder holding `git-remote-svc`: the checkout's `bin/`, or (in an installed package, which ships no
 * `bin/` folder) a folder in the cache root with a link to the compiled helper.
 */
export function ownBinDir(): string {
  if (existsSync(join(checkoutBinDir, "git-remote-svc"))) return checkoutBinDir;
  const dir = join(cacheRoot(), "bin");
  const link = join(dir, "git-remote-svc");
  if (!existsSync(link)) {
    mkdirSync(dir, { recursive: true });
    try {
      symlinkSync(helperScript, link);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  return dir;
}

function onPath(name: string, path: string | undefined): boolean {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/**
 * The environment for git commands that reach the helper: PATH gains svc's bin folder when `git-remote-svc`
 * is not on it, and `helperOnPath` says whether the user's own PATH has it (later `git pull`s need that).
 */
export function helperEnvironment(): { env: NodeJS.ProcessEnv; helperOnPath: boolean } {
  const helperOnPath = onPath("git-remote-svc", process.env.PATH);
  if (helperOnPath) return { env: process.env, helperOnPath };
  return {
    env: { ...process.env, PATH: `${ownBinDir()}${delimiter}${process.env.PATH ?? ""}` },
    helperOnPath,
  };
}

/**
 * The working tree `dir` as cache/open.ts reaches it; `remote` names the git remote whose `main` holds the
 * last server commit (`refs/remotes/<remote>/main`, else the helper's `refs/svc/<remote>/main`).
 */
export function userRepositoryIn(dir: string, remote: string): UserRepository {
  return {
    serverRefs: [`refs/remotes/${remote}/main`, `refs/svc/${remote}/main`],
    gitOutput: (args) =>
      new Promise((resolve) => {
        execFile("git", args, { cwd: dir }, (error, stdout) => resolve(error ? undefined : stdout));
      }),
    spawnGit: (args, env) =>
      spawn("git", args, { cwd: dir, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] }),
  };
}
