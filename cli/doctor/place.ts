/**
 * Fix commands as the user runs them, from the folder `svc doctor` ran in (pure): git reaches the working
 * tree with `git -C <dir>` when a folder was named, svc with its `[dir]` argument and `--remote`; every word
 * is shell-quoted.
 */
import { shellWord } from "../../core/errors.js";

/** Where the checked working tree is, as the user named it. */
export interface Place {
  /** The `[dir]` argument; undefined for the current folder. */
  readonly dir: string | undefined;
  /** The git remote checked (`--remote`, default origin). */
  readonly remote: string;
}

export function words(argv: readonly string[]): string {
  return argv.map(shellWord).join(" ");
}

/** `git -C <dir> <args>`, or `git <args>` for the current folder. */
export function gitIn(place: Place, args: readonly string[]): string {
  return words(["git", ...(place.dir === undefined ? [] : ["-C", place.dir]), ...args]);
}

/** `svc sync [<dir>] [--remote <name>]`: rebuilds an absent or broken cache, then runs git fetch. */
export function svcSync(place: Place): string {
  return words([
    "svc",
    "sync",
    ...(place.dir === undefined ? [] : [place.dir]),
    ...(place.remote === "origin" ? [] : ["--remote", place.remote]),
  ]);
}

/** `export PATH="<dir>:$PATH"`: `dir` first on PATH, escaped for the double quotes that keep `$PATH` expanding. */
export function prependToPath(dir: string): string {
  return `export PATH="${dir.replace(/["$`\\]/g, (c) => `\\${c}`)}:$PATH"`;
}

/** `svc doctor [<dir>] [--remote <name>]`: the check again, after a fix only the user can make. */
export function svcDoctor(place: Place): string {
  return words([
    "svc",
    "doctor",
    ...(place.dir === undefined ? [] : [place.dir]),
    ...(place.remote === "origin" ? [] : ["--remote", place.remote]),
  ]);
}

/** `export NAME=value …`, each value shell-quoted. */
export function exportCommand(variables: readonly (readonly [string, string])[]): string {
  return `export ${variables.map(([name, value]) => `${name}=${shellWord(value)}`).join(" ")}`;
}
