/**
 * What the benchmarks that drive git share: git's isolated environment (a private
 * HOME and global config, no system config, svc's bins first on PATH), and the plain-git baseline of a
 * clone: a bare copy of svc's work tree served over `file://` and cloned `--filter=blob:none` with checkout.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkedRun } from "./process.js";

export const BIN = fileURLToPath(new URL("../../../bin/", import.meta.url));
export const SVC_BIN = join(BIN, "svc");

/** git with no user or system configuration (HOME and the global config under `root`), svc's bins on PATH. */
export function gitEnv(root: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const home = join(root, "home");
  mkdirSync(home, { recursive: true });
  const config = join(home, ".gitconfig"); // gits before 2.32 read $HOME/.gitconfig, not GIT_CONFIG_GLOBAL
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
 * allows filters, and returns what clones it with `git clone --filter=blob:none file://…` (checkout
 * included) into `<root>/plain-<label>-<i>`, in ms; a benchmark interleaves those clones with its own runs.
 */
export async function plainPartialClone(
  root: string,
  label: string,
  workTree: string,
  env: NodeJS.ProcessEnv,
): Promise<(run: number) => Promise<{ ms: number; dir: string }>> {
  const bare = join(root, `plain-${label}.git`);
  await checkedRun("git", ["clone", "--quiet", "--bare", "--no-local", workTree, bare], env);
  await checkedRun("git", ["--git-dir", bare, "config", "uploadpack.allowFilter", "true"], env);
  return async (run) => {
    const dir = join(root, `plain-${label}-${run}`);
    const { ms } = await checkedRun(
      "git",
      ["clone", "--quiet", "--filter=blob:none", `file://${bare}`, dir],
      env,
    );
    return { ms, dir };
  };
}

/** `plainPartialClone`'s clones `runs` times in a row. */
export async function plainPartialClones(
  root: string,
  label: string,
  workTree: string,
  env: NodeJS.ProcessEnv,
  runs: number,
  progress: (line: string) => void,
): Promise<PlainClones> {
  const clone = await plainPartialClone(root, label, workTree, env);
  const times: number[] = [];
  let dir = "";
  for (let i = 0; i < runs; i++) {
    progress(`plain git clone, run ${i + 1}`);
    const run = await clone(i);
    times.push(run.ms);
    dir = run.dir;
  }
  return { times, dir };
}
