/**
 * Fixtures for end-to-end tests that drive the real `git` binary against `git-remote-svc` (STYLE.md rule 8).
 *
 * Every process gets an environment built from scratch, never the user's: `HOME` and the global config file
 * are in a temp folder, the system config is off (`GIT_CONFIG_NOSYSTEM`), identities are fixed, `PATH`
 * starts with the project's `bin/` (so git finds `git-remote-svc`) and `SVC_CACHE_DIR` is a temp folder.
 * Nothing from the caller's environment leaks in except `PATH` (after our folders), so a `GIT_DIR` set by a
 * git hook that runs the tests cannot redirect them. Every command is killed (with its process group:
 * git and the helper it started) after a timeout, and `git()` never throws on a non-zero exit: tests
 * assert on failures as much as on successes.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { type FieldValue, renderRecordFile } from "../backends/record.js";
import { SIM_SCHEMA } from "../backends/sim/schema.js";
import { Database } from "../core/sqlite.js";
import { repoRoot } from "./paths.js";
import { givenTempDir, type SeedIssue } from "./sim.js";
import { callSim } from "./sim-http.js";

/**
 * A home folder that does not exist: gits older than 2.32 ignore `GIT_CONFIG_GLOBAL` and read
 * `$HOME/.gitconfig` (and `$XDG_CONFIG_HOME/git/config`), which must not be the user's.
 */
const NO_HOME = "/nonexistent/svc-test-home";

/**
 * For unit tests that run git synchronously on scratch repositories in a temporary folder: no system or
 * global configuration (on every git: `GIT_CONFIG_GLOBAL` for 2.32 and later, an empty `HOME` before), and
 * a fixed author and committer (`t <t@x>`).
 */
export const SCRATCH_GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  HOME: NO_HOME,
  XDG_CONFIG_HOME: NO_HOME,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@x",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@x",
};

/**
 * For unit tests whose git runs in this worker with its environment (the cache's): a temp folder (`prefix`)
 * whose `.gitconfig` becomes the worker's only git configuration, through `HOME` (what gits before 2.32
 * read) and `GIT_CONFIG_GLOBAL`, with the system's off. Returns the folder, removed by the teardown.
 */
export function isolateWorkerGit(t: ExecutionContext, prefix: string): string {
  const folder = givenTempDir(t, prefix);
  const config = join(folder, ".gitconfig");
  writeFileSync(config, "[init]\n\tdefaultBranch = main\n");
  process.env.HOME = folder;
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  process.env.GIT_CONFIG_GLOBAL = config;
  return folder;
}

/** [major, minor] of the git on PATH: the git the tests run (`npm run test:matrix` runs several). */
export const GIT_VERSION: readonly [number, number] = (() => {
  const match = /git version (\d+)\.(\d+)/.exec(execFileSync("git", ["version"], { encoding: "utf8" }));
  return [Number(match?.[1] ?? 0), Number(match?.[2] ?? 0)] as const;
})();

/** Whether the tests' git is `major.minor` or newer. */
export function gitAtLeast(major: number, minor: number): boolean {
  return GIT_VERSION[0] > major || (GIT_VERSION[0] === major && GIT_VERSION[1] >= minor);
}

/**
 * `git sparse-checkout set` for non-cone patterns as the tests' git takes it (what svc prints too,
 * git/user-git.ts `sparseSetWords`): `--no-cone` arrived in git 2.35; before it `set` reads it as a
 * pattern and keeps the non-cone mode `clone --sparse` and `init` start in.
 */
export const SPARSE_SET: readonly string[] = gitAtLeast(2, 35)
  ? ["sparse-checkout", "set", "--no-cone"]
  : ["sparse-checkout", "set"];

/**
 * `test` for a test that sets `SVC_BLOB_LIMIT`, which needs git 2.39 (helper/blob-limit.ts
 * `usableBlobLimit`); under an older git it is skipped, and e2e/limits.test.ts checks the refusal instead.
 */
export const testWithBlobLimit = gitAtLeast(2, 39) ? test : test.skip;

export interface GitEnv {
  /** The complete environment of every process the fixtures start. */
  readonly env: Readonly<Record<string, string>>;
  /** A temp folder for working trees; the default `cwd` of `git()` and `svc()`. */
  readonly dir: string;
  /** `SVC_CACHE_DIR`. */
  readonly cacheRoot: string;
  readonly home: string;
  /** Processes started through this environment and still running; killed by the test's teardown. */
  readonly running: Set<ChildProcess>;
}

/** Kills `child` and everything it started (it leads its own process group). */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

/**
 * A fresh, isolated environment for git and svc: its own HOME, global config, cache folder and work folder,
 * all removed by the test's teardown. `extra` is merged last (e.g. `{SVC_BLOB_LIMIT: "5"}`).
 */
export function givenGitEnv(t: ExecutionContext, extra: Readonly<Record<string, string>> = {}): GitEnv {
  const root = givenTempDir(t, "svc-e2e-");
  const home = join(root, "home");
  const dir = join(root, "work");
  const cacheRoot = join(root, "cache");
  for (const folder of [home, dir, cacheRoot]) mkdirSync(folder, { recursive: true });
  // `$HOME/.gitconfig`, named by `GIT_CONFIG_GLOBAL` as well: gits older than 2.32 ignore the variable and
  // read that file, so every git reads the same configuration.
  const globalConfig = join(home, ".gitconfig");
  // git 2.39 warns about the default branch name on every `init` without it; nothing else is configured.
  writeFileSync(globalConfig, "[init]\n\tdefaultBranch = main\n");
  const path = [join(repoRoot, "bin"), dirname(process.execPath), process.env.PATH ?? "/usr/bin:/bin"].join(
    delimiter,
  );
  const env: Record<string, string> = {
    PATH: path,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: globalConfig,
    GIT_AUTHOR_NAME: "Test Author",
    GIT_AUTHOR_EMAIL: "author@example.com",
    GIT_COMMITTER_NAME: "Test Committer",
    GIT_COMMITTER_EMAIL: "committer@example.com",
    GIT_TERMINAL_PROMPT: "0",
    LANG: "C",
    LC_ALL: "C",
    TZ: "UTC",
    SVC_CACHE_DIR: cacheRoot,
    ...extra,
  };
  const running = new Set<ChildProcess>();
  t.teardown(() => {
    for (const child of running) killGroup(child);
  });
  return { env, dir, cacheRoot, home, running };
}

/** The same environment with `cacheRoot` (and `SVC_CACHE_DIR`) replaced: a second, empty cache. */
export function withCacheRoot(gitEnv: GitEnv, cacheRoot: string): GitEnv {
  mkdirSync(cacheRoot, { recursive: true });
  return { ...gitEnv, cacheRoot, env: { ...gitEnv.env, SVC_CACHE_DIR: cacheRoot } };
}

export interface RunResult {
  /** Exit code; null when the process was killed (see `timedOut`). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stdoutBytes: Buffer;
  readonly stderr: string;
  readonly timedOut: boolean;
}

export interface RunOptions {
  /** Working directory, relative to the environment's work folder; default the work folder itself. */
  readonly cwd?: string;
  /** Variables added to (or, with `undefined`, removed from) the environment for this one command. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly input?: string | Buffer;
  /** Default 30 s; the process group is killed after it. */
  readonly timeoutMs?: number;
  /** Close our end of the child's stdout at once, as a reader that hangs up does (`git` dying, `| head`). */
  readonly closeStdout?: boolean;
  /** SIGKILL the whole process group when this settles (e.g. when a proxy saw the request to cut off). */
  readonly killWhen?: Promise<unknown>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** Runs `command` to its exit in the fixture environment; never throws on a non-zero exit. */
export function run(
  gitEnv: GitEnv,
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const env: Record<string, string> = { ...gitEnv.env };
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const cwd = options.cwd === undefined ? gitEnv.dir : join(gitEnv.dir, options.cwd);
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout also kills the helper git started (and anything it started).
    const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    gitEnv.running.add(child);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    options.killWhen?.then(
      () => killGroup(child),
      () => killGroup(child),
    );
    if (options.closeStdout) child.stdout.destroy();
    else child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      gitEnv.running.delete(child);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      gitEnv.running.delete(child);
      const stdoutBytes = Buffer.concat(out);
      resolve({
        code,
        stdout: stdoutBytes.toString("utf8"),
        stdoutBytes,
        stderr: Buffer.concat(err).toString("utf8"),
        timedOut,
      });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(options.input);
  });
}

/** `git <args>`. */
export function git(gitEnv: GitEnv, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return run(gitEnv, "git", args, options);
}

/** `git <args>`, failing the test with git's stderr unless it exits 0; returns stdout, trimmed. */
export async function gitOk(
  t: ExecutionContext,
  gitEnv: GitEnv,
  args: readonly string[],
  options: RunOptions = {},
): Promise<string> {
  const result = await git(gitEnv, args, options);
  if (result.code !== 0) {
    t.log(`git ${args.join(" ")} (cwd ${options.cwd ?? "."}) exited ${result.code}:\n${result.stderr}`);
    throw new Error(`git ${args.join(" ")} exited ${result.code}: ${result.stderr.slice(0, 2000)}`);
  }
  return result.stdout.trim();
}

/** `node bin/svc <args>`: the CLI as a user runs it. */
export function svc(gitEnv: GitEnv, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return run(gitEnv, process.execPath, [join(repoRoot, "bin", "svc"), ...args], options);
}

/** `node bin/git-remote-svc <args>`: the remote helper run directly, as git runs it. */
export function remoteHelper(
  gitEnv: GitEnv,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  return run(gitEnv, process.execPath, [join(repoRoot, "bin", "git-remote-svc"), ...args], options);
}

/** `svc::http://127.0.0.1:<port>/projects/<slug>`. */
export function svcUrl(simUrl: string, slug: string): string {
  return `svc::${simUrl}/projects/${slug}`;
}

/** The folders under `SVC_CACHE_DIR` that hold a project cache. */
export function cacheFolders(gitEnv: GitEnv): string[] {
  if (!existsSync(gitEnv.cacheRoot)) return [];
  return readdirSync(gitEnv.cacheRoot)
    .map((name) => join(gitEnv.cacheRoot, name))
    .filter((folder) => existsSync(join(folder, "cache.db")));
}

/** The one project cache under `SVC_CACHE_DIR`; throws when there is none or more than one. */
export function cacheFolder(gitEnv: GitEnv): string {
  const folders = cacheFolders(gitEnv);
  if (folders.length !== 1) {
    throw new Error(`expected one project cache under ${gitEnv.cacheRoot}, found ${folders.length}`);
  }
  return folders[0] as string;
}

/** `git --git-dir=<cache>/repo.git <args>` on the one project cache. */
export function cacheGit(gitEnv: GitEnv, args: readonly string[]): Promise<RunResult> {
  return git(gitEnv, [`--git-dir=${join(cacheFolder(gitEnv), "repo.git")}`, ...args]);
}

export interface AuditRow {
  readonly id: number;
  readonly ts: string;
  readonly op: string;
  readonly backend: string;
  readonly project: string;
  readonly key: string | null;
  readonly oid: string | null;
  readonly bytes: number | null;
  readonly agent: string;
  /** The `detail` column parsed from JSON (`{}` when it is null). */
  readonly detail: Record<string, unknown>;
}

/** Opens the one project cache's `cache.db`; read-only unless `writable`. The caller closes it. */
export function openCacheDb(gitEnv: GitEnv, options: { writable?: boolean } = {}): Database {
  const db = new Database(join(cacheFolder(gitEnv), "cache.db"), {
    readonly: !options.writable,
    fileMustExist: true,
  });
  db.pragma("busy_timeout = 10000");
  return db;
}

/** Every row of `audit_events_cache` in id order, or only those with an id above `afterId`. */
export function auditRows(gitEnv: GitEnv, afterId = 0): AuditRow[] {
  const db = openCacheDb(gitEnv);
  try {
    const rows = db
      .prepare(
        "SELECT id, ts, op, backend, project, key, oid, bytes, agent, detail FROM audit_events_cache WHERE id > ? ORDER BY id",
      )
      .all(afterId) as (Omit<AuditRow, "detail"> & { detail: string | null })[];
    return rows.map((row) => ({
      ...row,
      detail: row.detail === null ? {} : (JSON.parse(row.detail) as Record<string, unknown>),
    }));
  } finally {
    db.close();
  }
}

/** The id of the newest audit row (0 when the cache has none or does not exist yet). */
export function lastAuditId(gitEnv: GitEnv): number {
  if (cacheFolders(gitEnv).length === 0) return 0;
  const rows = auditRows(gitEnv);
  return rows.length === 0 ? 0 : (rows[rows.length - 1] as AuditRow).id;
}

/** The `rpc` rows whose request was a `fetch`. */
export function fetchRequests(rows: readonly AuditRow[]): AuditRow[] {
  return rows.filter((row) => row.op === "rpc" && row.detail.command === "fetch");
}

/** Blob ids `git rev-list --objects --missing=print --all` reports missing (the `?<oid>` lines). */
export async function missingObjects(gitEnv: GitEnv, cwd: string): Promise<string[]> {
  const result = await git(gitEnv, ["rev-list", "--objects", "--missing=print", "--all"], { cwd });
  if (result.code !== 0) throw new Error(`git rev-list failed: ${result.stderr}`);
  return result.stdout
    .split("\n")
    .filter((line) => line.startsWith("?"))
    .map((line) => line.slice(1));
}

/** Object types present in the repository: `git cat-file --batch-all-objects --batch-check`, counted by type. */
export async function objectTypes(gitEnv: GitEnv, cwd: string): Promise<Record<string, number>> {
  const result = await git(gitEnv, ["cat-file", "--batch-all-objects", "--batch-check"], { cwd });
  if (result.code !== 0) throw new Error(`git cat-file failed: ${result.stderr}`);
  const counts: Record<string, number> = {};
  for (const line of result.stdout.split("\n")) {
    const type = line.split(" ")[1];
    if (type) counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}

/**
 * The bytes `issues/<id>.md` must have: the canonical rendering of the issue as
 * `GET /projects/<slug>/issues/<id>` returns it now (an unset assignee is left out, DESIGN.md §2).
 */
export async function expectedIssueFile(simUrl: string, slug: string, id: number): Promise<string> {
  const response = await callSim(simUrl, "GET", `/projects/${slug}/issues/${id}`);
  if (response.status !== 200) throw new Error(`GET issue ${id}: ${response.status} ${response.text}`);
  const issue = response.json<{ frontmatter: Record<string, FieldValue>; body: string }>();
  const fields = { ...issue.frontmatter };
  if (fields.assignee === null) delete fields.assignee;
  return renderRecordFile(SIM_SCHEMA, { fields, body: issue.body });
}

/** `PATCH /projects/<slug>/issues/<id>` with `changes`; returns the updated issue. */
export async function patchIssue(
  simUrl: string,
  slug: string,
  id: number,
  changes: Readonly<Record<string, unknown>>,
): Promise<unknown> {
  const response = await callSim(simUrl, "PATCH", `/projects/${slug}/issues/${id}`, {
    json: changes,
    agent: "test-fixture",
  });
  if (response.status !== 200) throw new Error(`PATCH issue ${id}: ${response.status} ${response.text}`);
  return response.json();
}

/** `DELETE /projects/<slug>/issues/<id>`. */
export async function deleteIssue(simUrl: string, slug: string, id: number): Promise<void> {
  const response = await callSim(simUrl, "DELETE", `/projects/${slug}/issues/${id}`, {
    agent: "test-fixture",
  });
  if (response.status !== 204 && response.status !== 200) {
    throw new Error(`DELETE issue ${id}: ${response.status} ${response.text}`);
  }
}

/** `count` plain issues titled `Issue <n>`, for projects where only the number of files matters. */
export function manyIssues(count: number): SeedIssue[] {
  return Array.from({ length: count }, (_, index) => ({
    title: `Issue ${index + 1}`,
    body: `Body ${index + 1}\n`,
  }));
}
