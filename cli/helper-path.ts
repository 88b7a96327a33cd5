/**
 * Where `git-remote-svc` is for the git commands `svc init` and `svc sync` run (git itself is run by
 * `helper/user-git.ts`).
 */
import { accessSync, constants, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheRoot } from "../cache/root.js";

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
