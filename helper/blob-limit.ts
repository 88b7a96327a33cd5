/**
 * The blob limit (DESIGN.md §4): opt-in `SVC_BLOB_LIMIT`, off by default, since in svc it protects no
 * server (every blob comes from the local cache). A fetch that wants more record files than the limit is
 * refused with two commands, each runnable as printed from where the user stands: a sparse checkout whose
 * pattern matches no more files than the limit, and the way to fetch everything instead.
 *
 * A refusal in a clone's checkout would leave the new repository without an index (git writes none when
 * its checkout fails), and `git status` would show every file as a staged deletion. So before answering,
 * the refusal writes that index itself: HEAD's tree with every entry outside a sparse checkout of no files
 * (`git read-tree` and `git sparse-checkout set --no-cone` on a temporary index, renamed into place). The
 * failing git holds `index.lock` and, as it dies, removes only that lock (measured with git 2.39): the
 * index stays, and the two commands work from that state.
 */
import { existsSync, renameSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { shellWord, UserFacingError } from "../core/errors.js";
import { envCount } from "../core/settings.js";
import {
  ancestorCommandLines,
  cdPrefix,
  gitSubcommand,
  type HelperPlace,
  subcommandIndex,
  userGitCommand,
  userGitDir,
  userWorkTree,
} from "../git/user-command.js";
import { gitAtLeast, userGit, userGitVersion } from "../git/user-git.js";

/** `SVC_BLOB_LIMIT`: off (0) unless set. */
export function blobLimit(env: NodeJS.ProcessEnv = process.env): number {
  return envCount("SVC_BLOB_LIMIT", { fallback: 0, zero: "no limit" }, env);
}

/**
 * `SVC_BLOB_LIMIT` for a fetch of the git on PATH: a limit needs git 2.39 or later. Before it git does not
 * give up when a checkout's lazy fetch fails: it fetches the files again one at a time (each under the
 * limit, so each served), and before 2.33 even `git read-tree` fetches every file one by one (both fixed
 * in git's 2.33 and 2.39 release notes, and seen with Debian's 2.30.2); no limit holds there, and a refusal
 * would say "none was fetched" of a checkout that got every file. So under an older git a set limit is
 * refused with the command to run without it, and nothing is fetched.
 */
export async function usableBlobLimit(
  env: NodeJS.ProcessEnv = process.env,
  /** For tests: the git version, and the user's git command (read from the process table otherwise). */
  given: { version?: readonly [number, number]; command?: string[] } = {},
): Promise<number> {
  const limit = blobLimit(env);
  if (limit === 0) return 0;
  const version = given.version ?? (await userGitVersion());
  if (gitAtLeast(version, 2, 39)) return limit;
  const command = given.command ?? userGitCommand(ancestorCommandLines());
  const again = command ? `SVC_BLOB_LIMIT=0 ${command.map(shellWord).join(" ")}` : "unset SVC_BLOB_LIMIT";
  throw new UserFacingError(
    "SVC_USAGE",
    `SVC_BLOB_LIMIT=${limit} needs git 2.39 or later, and this is git ${version?.join(".")}: an older git fetches ` +
      `a refused checkout again file by file, so no limit holds; nothing was fetched. Run it without the limit: ${again}`,
    { data: { limit } },
  );
}

/** A refused fetch. Its message was written to stderr before git was answered (`data.reported`). */
export class BlobLimitError extends UserFacingError {
  constructor(message: string, wanted: number, limit: number) {
    super("SVC_USAGE", message, { data: { wanted, limit, reported: true } });
  }
}

/** `*`, `?`, `[` and `\` are pattern characters in a sparse-checkout line: matched literally here. */
function literal(text: string): string {
  return text.replace(/[*?[\\]/g, "\\$&");
}

/**
 * A `--no-cone` pattern matching between 1 and `limit` of `paths` (the records' files, all in `folder`):
 * the shortest prefix whose first few next characters, taken in order, name no more than `limit` files,
 * e.g. `issues/000[1-5]*` for 5 of `issues/0001.md`…`issues/0012.md`.
 */
export function limitGlob(paths: readonly string[], folder: string, limit: number): string {
  let prefix = `${folder}/`;
  let matching = [...paths].filter((path) => path.startsWith(prefix)).sort();
  while (matching.length > 0) {
    const counts = new Map<string, number>();
    for (const path of matching) {
      const next = path.charAt(prefix.length);
      counts.set(next, (counts.get(next) ?? 0) + 1);
    }
    const chars = [...counts.keys()].filter((char) => char !== "");
    const taken: string[] = [];
    let total = counts.get("") ?? 0;
    for (const char of chars) {
      if (total + (counts.get(char) ?? 0) > limit) break;
      taken.push(char);
      total += counts.get(char) ?? 0;
    }
    const [first, last] = [taken[0], taken.at(-1)];
    if (first !== undefined && last !== undefined) {
      const range = first === last ? literal(first) : `[${first}-${last}]`;
      return `${literal(prefix)}${range}*`;
    }
    const next = chars[0];
    if (next === undefined) break;
    prefix += next;
    matching = matching.filter((path) => path.startsWith(prefix));
  }
  return `${literal(folder)}/*`;
}

/**
 * When the user's repository has a working tree but no index (a clone's checkout), writes the index of a
 * sparse checkout of no files; returns whether it did. Never throws: a refusal is reported either way.
 */
export async function leaveIndexClean(place: HelperPlace): Promise<boolean> {
  const gitDir = userGitDir(place);
  const workTree = userWorkTree(place);
  if (gitDir === undefined || workTree === undefined || existsSync(join(gitDir, "index"))) return false;
  const temporary = join(gitDir, `index.svc-${process.pid}`);
  const env = { GIT_DIR: gitDir, GIT_WORK_TREE: workTree, GIT_INDEX_FILE: temporary };
  try {
    const read = await userGit(["read-tree", "HEAD"], { env, cwd: workTree });
    if (read.code !== 0) return false;
    // Without patterns git writes its default (`/*`, `!/*/`): top-level files only, and a record is never one.
    const sparse = await userGit(["sparse-checkout", "set", "--no-cone"], { env, cwd: workTree });
    if (sparse.code !== 0) return false;
    renameSync(temporary, join(gitDir, "index"));
    return true;
  } catch {
    return false;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Whether the user's repository is a sparse checkout. */
async function isSparse(place: HelperPlace): Promise<boolean> {
  const result = await userGit(["config", "--bool", "core.sparseCheckout"], { cwd: place.cwd });
  return result.stdout.trim() === "true";
}

/**
 * The refusal's message, after leaving the index clean where the refused command left none: why, then a
 * sparse checkout that fits the limit, then how to fetch everything: the user's own command again with
 * the limit lifted when it is known (and not the clone, whose folder now exists), else turning the sparse
 * checkout off. A fetch without a blob filter (`git clone` without `--filter`) gets its own advice.
 */
export async function refusalMessage(options: {
  readonly wanted: number;
  readonly limit: number;
  /** Whether the refused fetch had a blob filter (a partial clone's fetch). */
  readonly filtered: boolean;
  readonly paths: readonly string[];
  readonly folder: string;
  readonly place: HelperPlace;
  readonly ancestors?: readonly (readonly string[])[];
}): Promise<string> {
  const { wanted, limit, place } = options;
  const command = userGitCommand(options.ancestors ?? ancestorCommandLines());
  const why = `this fetch wants ${wanted} record files, more than SVC_BLOB_LIMIT=${limit}, so none was fetched`;
  const glob = shellWord(limitGlob(options.paths, options.folder, limit));
  const again = command && `SVC_BLOB_LIMIT=0 ${command.map(shellWord).join(" ")}`;
  const cd = cdPrefix(place);
  if (!options.filtered) return unfilteredAdvice({ why, limit, glob, command, again, cd });
  const madeSparse = await leaveIndexClean(place);
  let everything: string;
  if (!madeSparse && again !== undefined && gitSubcommand(command ?? []) !== "clone") everything = again;
  else if (madeSparse || (await isSparse(place)))
    everything = `${cd}SVC_BLOB_LIMIT=0 git sparse-checkout disable`;
  else everything = "run your git command again with SVC_BLOB_LIMIT=0 in front of it";
  const workTree = userWorkTree(place);
  const state =
    madeSparse && workTree ? `; ${basename(workTree)} is a sparse checkout of no files until then` : "";
  return (
    `${why}${state}. Check out at most ${limit} of them, e.g.:\n` +
    `  ${cd}git sparse-checkout set --no-cone ${glob} && git checkout main\n` +
    `or fetch every file:\n  ${everything}`
  );
}

/**
 * A fetch without a blob filter wants every file (a clone without `--filter`, a fetch into a full clone):
 * a clone can be made partial and sparse instead; anything else can only lift the limit.
 */
function unfilteredAdvice(options: {
  readonly why: string;
  readonly limit: number;
  readonly glob: string;
  readonly command: string[] | undefined;
  readonly again: string | undefined;
  readonly cd: string;
}): string {
  const { why, command, again } = options;
  const at = command ? subcommandIndex(command) : -1;
  if (command && again && command[at] === "clone") {
    const partial = [...command.slice(0, at + 1), "--filter=blob:none", "--sparse", ...command.slice(at + 1)];
    return (
      `${why}. Clone partially and check out at most ${options.limit} of them, e.g.:\n` +
      `  ${partial.map(shellWord).join(" ")} && ${options.cd}git sparse-checkout set --no-cone ${options.glob}\n` +
      `or fetch every file:\n  ${again}`
    );
  }
  return `${why}; a fetch without --filter=blob:none brings every file. To fetch them:\n  ${again ?? "run your git command again with SVC_BLOB_LIMIT=0 in front of it"}`;
}
