/**
 * Where `git-remote-svc` is for the git commands `svc init` and `svc sync` run (git itself is run by
 * `git/user-git.ts`).
 */
import { accessSync, constants, existsSync, mkdirSync, readlinkSync, renameSync, symlinkSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheRoot } from "../cache/root.js";

/**
 * This module's folder, `dist/cli/`: `import.meta.url` is its URL as tsc's output, and the path of
 * `dist/cli/bundle.cjs` in the CLI's bundle (scripts/bundle.ts, which allows this one use), in that folder
 * as well.
 */
const here = import.meta.url;
const cliDir = dirname(here.startsWith("file:") ? fileURLToPath(here) : here);

/** The folder of svc's own bins (`git-remote-svc` beside `svc`). */
const checkoutBinDir = join(cliDir, "../../bin/");
const helperScript = join(cliDir, "../helper/bin.cjs");

/**
 * A folder holding `git-remote-svc`: the checkout's `bin/`, or (in an installed package, which ships no
 * `bin/` folder) a folder in the cache root with a link to the compiled helper.
 */
export function ownBinDir(): string {
  const { dir, link } = ownBinDirPlan();
  if (link) {
    mkdirSync(dir, { recursive: true });
    // Made beside it and renamed over it: a link another process reads is never missing.
    const temp = `${link}.${process.pid}`;
    symlinkSync(helperScript, temp);
    renameSync(temp, link);
  }
  return dir;
}

/**
 * The folder `ownBinDir()` returns, creating nothing (for `svc doctor`): when `git-remote-svc` is not in it
 * yet, or links to another file (an older svc's helper, which was `helper/bin.js`), `link` is the symbolic
 * link `ownBinDir()` would make there and `target` the helper it points to.
 */
export function ownBinDirPlan(): { dir: string; link?: string; target: string } {
  if (existsSync(join(checkoutBinDir, "git-remote-svc")))
    return { dir: checkoutBinDir, target: helperScript };
  const dir = join(cacheRoot(), "bin");
  const link = join(dir, "git-remote-svc");
  return linksTo(link) === helperScript ? { dir, target: helperScript } : { dir, link, target: helperScript };
}

/** Where the symbolic link `path` points, or undefined when it is none. */
function linksTo(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/** The first executable `name` in the folders of `path` (a `PATH` value), as the shell would find it. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/**
 * The environment for git commands that reach the helper: PATH gains svc's bin folder when `git-remote-svc`
 * is not on it, and `helperOnPath` says whether the user's own PATH has it (later `git pull`s need that).
 */
export function helperEnvironment(): { env: NodeJS.ProcessEnv; helperOnPath: boolean } {
  const helperOnPath = findOnPath("git-remote-svc", process.env.PATH) !== undefined;
  if (helperOnPath) return { env: process.env, helperOnPath };
  return {
    env: { ...process.env, PATH: `${ownBinDir()}${delimiter}${process.env.PATH ?? ""}` },
    helperOnPath,
  };
}
