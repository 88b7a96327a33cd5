/**
 * The one place that runs `git` on a cache repository (STYLE.md rule 6).
 *
 * The remote helper inherits the user's environment, including `GIT_DIR` (a relative `.git` during lazy
 * fetches) and the other repository-locating variables: a git command run on the cache with them would read
 * and write the user's repository instead. Every command here runs with them removed (the list is what
 * `git rev-parse --local-env-vars` prints, plus the numbered `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { SvcError } from "../core/errors.js";

const LOCAL_ENV_VARS = [
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_CONFIG",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  "GIT_OBJECT_DIRECTORY",
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_IMPLICIT_WORK_TREE",
  "GIT_GRAFT_FILE",
  "GIT_INDEX_FILE",
  "GIT_NO_REPLACE_OBJECTS",
  "GIT_REPLACE_REF_BASE",
  "GIT_PREFIX",
  "GIT_INTERNAL_SUPER_PREFIX",
  "GIT_SHALLOW_FILE",
  "GIT_COMMON_DIR",
  "GIT_PROTOCOL",
  "GIT_QUARANTINE_PATH",
  "GIT_NAMESPACE",
];

/** The environment for git commands aimed at the cache: the user's, without the repository-locating variables. */
export function scrubbedEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of LOCAL_ENV_VARS) delete env[name];
  for (const name of Object.keys(env)) {
    if (/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name)) delete env[name];
  }
  return { ...env, ...extra };
}

export class GitCommandError extends SvcError {
  constructor(args: readonly string[], code: number | null, stderr: string) {
    super("SVC_STORE", `git ${args.join(" ")} failed (exit ${code}): ${stderr.trim().slice(0, 2000)}`, {
      data: { args, code },
    });
  }
}

export interface GitRun {
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** Spawns `git --git-dir=<repo> <args>` with the scrubbed environment. */
export function spawnGit(
  repo: string,
  args: readonly string[],
  options: { env?: Record<string, string>; stdio?: ("pipe" | "inherit" | "ignore")[] } = {},
): ChildProcess {
  return spawn("git", [`--git-dir=${repo}`, ...args], {
    env: scrubbedEnv(options.env),
    stdio: options.stdio ?? ["pipe", "pipe", "pipe"],
  });
}

/** Runs git on the cache repo to completion, feeding `input`; rejects with its stderr on a non-zero exit. */
export function runGit(
  repo: string,
  args: readonly string[],
  options: { input?: Buffer | string; env?: Record<string, string> } = {},
): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(repo, args, { env: options.env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) =>
      reject(new SvcError("SVC_STORE", `cannot run git: ${error.message}`, { cause: error })),
    );
    child.on("close", (code) => {
      const stderr = Buffer.concat(err).toString("utf8");
      if (code === 0) resolve({ stdout: Buffer.concat(out), stderr });
      else reject(new GitCommandError(args, code, stderr));
    });
    child.stdin?.on("error", () => {
      // git exited before reading all input; the exit code tells what happened.
    });
    child.stdin?.end(options.input);
  });
}

/** The contents of `oids` from one `git cat-file --batch`; missing objects are left out of the map. */
export async function readObjects(repo: string, oids: readonly string[]): Promise<Map<string, Buffer>> {
  const objects = new Map<string, Buffer>();
  if (oids.length === 0) return objects;
  const { stdout } = await runGit(repo, ["cat-file", "--batch"], { input: `${oids.join("\n")}\n` });
  let offset = 0;
  for (const oid of oids) {
    const newline = stdout.indexOf(0x0a, offset);
    const header = stdout.subarray(offset, newline).toString("utf8").split(" ");
    const size = Number(header[2]);
    if (header[1] === "missing" || Number.isNaN(size)) {
      offset = newline + 1;
      continue;
    }
    objects.set(oid, stdout.subarray(newline + 1, newline + 1 + size));
    offset = newline + 1 + size + 1;
  }
  return objects;
}
