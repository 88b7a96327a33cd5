/**
 * The one place that runs `git` on a cache repository (STYLE.md rule 6).
 *
 * The remote helper inherits the user's environment, including `GIT_DIR` (a relative `.git` during lazy
 * fetches) and the other repository-locating variables: a git command run on the cache with them would read
 * and write the user's repository instead. Every command here runs with them removed (the list is what
 * `git rev-parse --local-env-vars` prints, plus the numbered `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { excerpt, SvcError } from "../core/errors.js";

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

/** `[major, minor]` of `git version` output, or undefined when it names no version svc can read. */
export function parseGitVersion(text: string): [number, number] | undefined {
  const match = /git version (\d+)\.(\d+)/.exec(text);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
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

export interface GitOutcome extends GitRun {
  /** null when git was killed by a signal. */
  readonly code: number | null;
}

/**
 * Runs git on the cache repo (or another repository of svc's own) to completion, feeding `input`; resolves
 * with its exit code and output whatever the code. Rejects only when git cannot be started.
 */
export function gitOutcome(
  repo: string,
  args: readonly string[],
  options: { input?: Buffer | string; env?: Record<string, string> } = {},
): Promise<GitOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(repo, args, { env: options.env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) =>
      reject(new SvcError("SVC_STORE", `cannot run git: ${error.message}`, { cause: error })),
    );
    child.on("close", (code) =>
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }),
    );
    child.stdin?.on("error", () => {
      // git exited before reading all input; the exit code tells what happened.
    });
    child.stdin?.end(options.input);
  });
}

/** Runs git on the cache repo to completion, feeding `input`; rejects with its stderr on a non-zero exit. */
export async function runGit(
  repo: string,
  args: readonly string[],
  options: { input?: Buffer | string; env?: Record<string, string> } = {},
): Promise<GitRun> {
  const { code, stdout, stderr } = await gitOutcome(repo, args, options);
  if (code !== 0) throw new GitCommandError(args, code, stderr);
  return { stdout, stderr };
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

/** One file that differs between two trees, from `git diff-tree -r -z --raw` (or svc's own tree diff). */
export interface DiffEntry {
  /** git's status letter: A, M, D, T (type change). */
  readonly status: string;
  readonly path: string;
  readonly oldMode: string;
  readonly newMode: string;
  readonly oldOid: string;
  readonly newOid: string;
}

/** One file that differs between a commit and the one it is compared with, from `git diff-tree -z --raw`. */
export interface TreeChange {
  readonly mode: string;
  /** The blob before (all zeros for an added file). */
  readonly oldOid: string;
  /** The blob after (all zeros for a deleted file). */
  readonly oid: string;
  /** `A`, `M`, `D`, `T`. */
  readonly status: string;
  readonly path: string;
}

/**
 * Reads `git diff-tree -z --raw` output (`:<old mode> <new mode> <old id> <new id> <status>` NUL `<path>`
 * NUL, after a commit id and NUL for each input line of `--stdin`): each commit id to `commit`, each change to
 * `change`. A path is never taken for a commit id (it follows its header), whatever its bytes.
 */
function readRawDiff(
  output: Buffer,
  commit: (oid: string) => void,
  change: (entry: DiffEntry) => void,
): void {
  const tokens = output.toString("utf8").split("\0");
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] ?? "";
    if (token.startsWith(":")) {
      const [oldMode = "", newMode = "", oldOid = "", newOid = "", status = ""] = token.slice(1).split(" ");
      change({ status: status.slice(0, 1), path: tokens[++i] ?? "", oldMode, newMode, oldOid, newOid });
    } else if (/^[0-9a-f]{40}$/.test(token)) commit(token);
  }
}

/** Parses `git diff-tree -r -z --raw` output of two trees into entries. */
export function parseRawDiff(output: Buffer): DiffEntry[] {
  const entries: DiffEntry[] = [];
  readRawDiff(
    output,
    () => {},
    (entry) => entries.push(entry),
  );
  return entries;
}

/**
 * Parses `git diff-tree --stdin -z -r --raw` output: commit id → its changes against the commit(s) the input
 * line named (its first parent when it named none). A commit without changes may be missing from the map.
 */
export function parseDiffTree(output: Buffer): Map<string, TreeChange[]> {
  const changes = new Map<string, TreeChange[]>();
  let current: TreeChange[] | undefined;
  readRawDiff(
    output,
    (oid) => {
      current = [];
      changes.set(oid, current);
    },
    ({ newMode, oldOid, newOid, status, path }) =>
      current?.push({ mode: newMode, oldOid, oid: newOid, status, path }),
  );
  return changes;
}

/** Parses `git rev-list` output (one commit id a line), in its order. */
export function parseRevList(output: Buffer): string[] {
  return output
    .toString("utf8")
    .split("\n")
    .filter((line) => line !== "");
}

/** One entry of `git ls-tree -z` output. */
export interface TreeListing {
  readonly mode: string;
  readonly type: string;
  readonly oid: string;
  readonly path: string;
}

/** Parses `git ls-tree -z [-r]` output: `<mode> SP <type> SP <oid> TAB <path> NUL`, for any path bytes. */
export function parseLsTree(output: Buffer): TreeListing[] {
  const entries: TreeListing[] = [];
  for (let at = 0; at < output.length; ) {
    const end = output.indexOf(0, at);
    const line = output.subarray(at, end === -1 ? output.length : end).toString("utf8");
    at = end === -1 ? output.length : end + 1;
    const match = /^(\d+) (\w+) ([0-9a-f]{40})\t([\s\S]+)$/.exec(line);
    if (!match) throw new SvcError("SVC_STORE", `git ls-tree printed a line it should not: ${excerpt(line)}`);
    entries.push({
      mode: match[1] as string,
      type: match[2] as string,
      oid: match[3] as string,
      path: match[4] as string,
    });
  }
  return entries;
}
