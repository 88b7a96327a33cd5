/**
 * What the benchmarks that drive git share: running a command timed, git's isolated environment (a private
 * HOME and global config, no system config, svc's bins first on PATH), and the plain-git baseline of a
 * clone: a bare copy of svc's work tree served over `file://` and cloned `--filter=blob:none` with checkout.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../../bin/", import.meta.url));
export const SVC_BIN = join(BIN, "svc");

export interface Timed {
  readonly ms: number;
  readonly code: number | null;
  readonly stderr: string;
}

export function run(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  input?: string,
  cwd?: string,
): Promise<Timed> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(command, args, { env, cwd, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("close", (code) => resolve({ ms: performance.now() - started, code, stderr }));
    child.stdin.end(input);
  });
}

/** `run`, throwing with the command's stderr when it exits non-zero. */
export async function checked(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<Timed> {
  const result = await run(command, args, env, undefined, cwd);
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(" ")} failed (${result.code}):\n${result.stderr}`);
  return result;
}

/** git with no user or system configuration (HOME and the global config under `root`), svc's bins on PATH. */
export function gitEnv(root: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const home = join(root, "home");
  mkdirSync(home, { recursive: true });
  const config = join(home, "gitconfig");
  writeFileSync(
    config,
    "[user]\n\tname = Bench\n\temail = bench@localhost\n[advice]\n\tdetachedHead = false\n",
  );
  return {
    PATH: `${BIN}${delimiter}${process.env.PATH ?? ""}`,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: config,
    SVC_BLOB_LIMIT: "0",
    ...extra,
  };
}

export interface PlainClones {
  /** Each `git clone --filter=blob:none` (with checkout), in ms. */
  readonly times: number[];
  /** The last plain clone's work tree. */
  readonly dir: string;
}

/**
 * The baseline of an init: copies `workTree`'s history into a bare repo `<root>/plain-<label>.git` that
 * allows filters, then clones it `runs` times with `git clone --filter=blob:none file://…` (checkout
 * included) into `<root>/plain-<label>-<i>`.
 */
export async function plainPartialClones(
  root: string,
  label: string,
  workTree: string,
  env: NodeJS.ProcessEnv,
  runs: number,
  progress: (line: string) => void,
): Promise<PlainClones> {
  const bare = join(root, `plain-${label}.git`);
  await checked("git", ["clone", "--quiet", "--bare", "--no-local", workTree, bare], env);
  await checked("git", ["--git-dir", bare, "config", "uploadpack.allowFilter", "true"], env);
  const times: number[] = [];
  let dir = "";
  for (let i = 0; i < runs; i++) {
    dir = join(root, `plain-${label}-${i}`);
    progress(`plain git clone, run ${i + 1}`);
    times.push(
      (await checked("git", ["clone", "--quiet", "--filter=blob:none", `file://${bare}`, dir], env)).ms,
    );
  }
  return { times, dir };
}
