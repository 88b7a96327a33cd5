/**
 * The one way to run git on the user's repository, for the helper and for the CLI (`svc init`, `svc sync`):
 * with the inherited environment (under the helper, git set `GIT_DIR` for us), the opposite of
 * `git/plumbing.ts`, which scrubs that environment to reach the cache. Never throws; the exit code says how it
 * went (null when git could not be started).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ObjectReader } from "./object-store.js";
import { parseGitVersion } from "./plumbing.js";
import { type HelperPlace, userCommonDir, userGitDir, userObjectsDir } from "./user-command.js";

/** The user's repository, as the caller reaches it (the helper: git's environment; `svc sync`: a folder). */
export interface UserRepository {
  /**
   * Refs that hold the user's last known server commit, best first: the remote-tracking `main`, then the
   * helper's private `refs/svc/<remote>/main`.
   */
  readonly serverRefs: readonly string[];
  /**
   * The commit the first of `serverRefs` that exists names, read without starting git (a file or two):
   * null when none exists, undefined when it cannot be read that way (then `gitOutput` is asked).
   */
  readonly serverCommitInProcess?: () => string | null | undefined;
  /** `git <args>` in the user's repository: its stdout when it exits 0, else undefined. */
  gitOutput(args: readonly string[]): Promise<string | undefined>;
  /** Starts `git <args>` in the user's repository with `env` added, all three stdio streams piped. */
  spawnGit(args: readonly string[], env: Readonly<Record<string, string>>): ChildProcess;
}

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

let versionRead: Promise<readonly [number, number] | undefined> | undefined;

/** [major, minor] of the git on PATH (`git version`), read once per process; undefined when unreadable. */
export function userGitVersion(): Promise<readonly [number, number] | undefined> {
  versionRead ??= userGit(["version"]).then((result) => parseGitVersion(result.stdout));
  return versionRead;
}

/** Whether `version` (undefined: unknown, taken as new) is at least `major.minor`. */
export function gitAtLeast(
  version: readonly [number, number] | undefined,
  major: number,
  minor: number,
): boolean {
  return version === undefined || version[0] > major || (version[0] === major && version[1] >= minor);
}

/**
 * The words of `git sparse-checkout set` for `mode`'s patterns, as the git on PATH takes them: `--cone` and
 * `--no-cone` arrived with git 2.35 (which merged `init` into `set`); before it `set` takes no mode, keeps
 * the mode the sparse checkout was started in (`init`, `clone --sparse`: non-cone unless `--cone`), and reads
 * `--no-cone` as a pattern.
 */
export async function sparseSetWords(mode: "cone" | "no-cone"): Promise<string[]> {
  return gitAtLeast(await userGitVersion(), 2, 35)
    ? ["sparse-checkout", "set", `--${mode}`]
    : ["sparse-checkout", "set"];
}

/** The standard output of a git command that succeeded, else undefined. */
export async function userGitOutput(
  args: readonly string[],
  options: Pick<UserGitOptions, "cwd"> = {},
): Promise<string | undefined> {
  const result = await userGit(args, options);
  return result.code === 0 ? result.stdout : undefined;
}

/** The URL of remote `name` in the repository at `cwd` (else the current folder); undefined when it has none. */
export async function remoteUrlOf(name: string, cwd?: string): Promise<string | undefined> {
  const url = (await userGitOutput(["config", "--get", `remote.${name}.url`], { cwd }))?.trim();
  return url === "" ? undefined : url;
}

/**
 * The user's repository (in `cwd`, else the current folder) as cache/open.ts reaches it, with the refs that
 * hold its last server commit.
 */
export function userRepository(serverRefs: readonly string[], cwd?: string): UserRepository {
  return {
    serverRefs,
    serverCommitInProcess: () => {
      const place = { env: process.env, cwd: cwd ?? process.cwd() };
      for (const ref of serverRefs) {
        const oid = userRefOid(ref, place);
        if (oid !== null) return oid;
      }
      return null;
    },
    gitOutput: (args) => userGitOutput(args, { cwd }),
    spawnGit: (args, env) =>
      spawn("git", args, { cwd, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] }),
  };
}

/** Refs git keeps per working tree (in the worktree's own git dir), gitglossary(7) "per-worktree ref". */
const PER_WORKTREE = /^refs\/(bisect|worktree|rewritten)\//;

/**
 * The commit the ref `name` of the user's repository names, as `git rev-parse --verify -q <name>^{commit}`
 * prints it, read in-process (a push resolves two refs, each a git process otherwise): a loose ref file, a
 * symbolic ref (`ref: …`), or a line of `packed-refs`, in the repository git's environment names (`GIT_DIR`,
 * a linked worktree's common dir). null: the ref does not exist. undefined: ask git (no `GIT_DIR`, a
 * namespace, the reftable format, a name git would read differently, a tag to peel, an object not found).
 */
export function userRefCommit(name: string, place: HelperPlace): string | null | undefined {
  const oid = userRefOid(name, place);
  if (oid === null || oid === undefined) return oid;
  const objects = userObjectsDir(place);
  let type: string | undefined;
  try {
    type = objects === undefined ? undefined : new ObjectReader(objects).read(oid)?.type;
  } catch {
    type = undefined;
  }
  return type === "commit" ? oid : undefined;
}

/**
 * The object id the ref `name` of the user's repository holds, read in-process as `userRefCommit` reads it,
 * without reading the object (no zlib on a fetch). null: the ref does not exist. undefined: ask git.
 */
export function userRefOid(name: string, place: HelperPlace): string | null | undefined {
  const gitDir = userGitDir(place);
  if (gitDir === undefined || place.env.GIT_NAMESPACE || place.env.GIT_COMMON_DIR) return undefined;
  const common = userCommonDir(place) ?? gitDir;
  if (existsSync(join(common, "reftable"))) return undefined;
  return refValue(name, gitDir, common, 0);
}

function refValue(name: string, gitDir: string, common: string, depth: number): string | null | undefined {
  if (depth > 5 || !/^refs\/[A-Za-z0-9._/-]+$/.test(name) || /(^|\/)\.|\.\.|\/\/|\.lock(\/|$)|\/$/.test(name))
    return undefined;
  let text: string | undefined;
  try {
    text = readFileSync(join(PER_WORKTREE.test(name) ? gitDir : common, name), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") return undefined;
  }
  if (text !== undefined) {
    const oid = /^([0-9a-f]{40})\n?$/.exec(text)?.[1];
    if (oid) return oid;
    const target = /^ref: (\S+)\n?$/.exec(text)?.[1];
    return target === undefined ? undefined : refValue(target, gitDir, common, depth + 1);
  }
  let packed: string;
  try {
    packed = readFileSync(join(common, "packed-refs"), "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
  }
  for (const line of packed.split("\n")) {
    if (line.length === 41 + name.length && line.endsWith(` ${name}`) && /^[0-9a-f]{40} /.test(line))
      return line.slice(0, 40);
  }
  return null;
}
