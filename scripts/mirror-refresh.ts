/**
 * `scripts/mirror-refresh <svc-remote-url> <mirror-git-url> [--branch main] [--dry-run]` (DESIGN.md §8;
 * Document 3 wiki-adapter.md "Rules for test fixtures" 6): overlays the records folder of a project's cache
 * (`pages/` for a wiki, `issues/` for the others: the schema's folder) onto a plain git repository and
 * fast-forwards its branch. It never writes to the backend and never force-pushes.
 *
 * One run:
 * 1. syncs the remote's cache as `svc sync --reconcile` does (a full listing, so records deleted on the
 *    server leave the mirror too; a cache built by this run is not listed twice);
 * 2. reads the mirror's branch tip (`git fetch --depth=1`) into a temporary bare repository whose
 *    alternates are the cache's objects, so no record tree or blob is copied;
 * 3. replaces the records folder of the tip's tree with the cache tip's and keeps every other entry (a
 *    README, CI files); commits on the tip only when the tree changed, with a fixed identity and time (the
 *    later of the cache tip's and the mirror tip's), so the same records on the same tip give the same
 *    commit id; an absent branch gets a first commit;
 * 4. pushes with a plain `git push <url> <commit>:refs/heads/<branch>`. A mirror that moved since it was
 *    read fails git's own fast-forward check: exit 1, nothing overwritten; the next run builds on the new tip;
 * 5. fetches the branch again into a second temporary repository that shares nothing with the cache and
 *    compares every file of its records folder byte for byte with the cache's.
 *
 * For the wiki test space (`SVC_WIKI_TEST_SPACE`) it refuses, before any push, unless both durable fixture
 * pages (`SVC_WIKI_DURABLE_PARENT_ID`, `SVC_WIKI_DURABLE_CHILD_ID`) are in the listing and labelled
 * `svc-durable-fixture` (Document 3 "Rules for test fixtures" 1 and 6).
 *
 * Exit codes: 0 up to date or fast-forwarded (and verified), or a dry run; 1 the mirror refused the push or
 * the verification found a difference; 2 bad arguments or URLs, missing credentials, an unreachable
 * backend or mirror, the wiki test space without its durable pages.
 *
 * Every git command here runs through git/plumbing.ts (the scrubbed environment). The temporary repositories
 * are made without templates and with `core.hooksPath` pointing at an empty folder, and the push passes
 * `--no-verify`: no hook of the user's runs in them.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Backend } from "../backends/backend.js";
import { createBackend } from "../backends/create.js";
import { WikiBackend } from "../backends/wiki/backend.js";
import type { ProjectCache } from "../cache/cache.js";
import { openProjectCache } from "../cache/open.js";
import { spliceTree } from "../cache/state-tree.js";
import { type SyncResult, syncCache } from "../cache/sync.js";
import { excerpt, failureReport, SvcError, shellWord, UserFacingError } from "../core/errors.js";
import { parseRemoteUrl, type RemoteUrl } from "../core/remote-url.js";
import { SVC_VERSION } from "../core/version.js";
import {
  type Commit,
  encodeCommit,
  parseCommit,
  parseCommitObject,
  writeLooseObject,
} from "../git/objects.js";
import {
  gitOutcome,
  parseLsTree,
  parseRawDiff,
  readObjects,
  runGit,
  type TreeListing,
} from "../git/plumbing.js";
import type { UserRepository } from "../git/user-git.js";

export const MIRROR_EXIT = {
  /** Up to date, fast-forwarded and verified, or a dry run. */
  ok: 0,
  /** The mirror refused the push (it moved, a hook declined, …) or the verification found a difference. */
  refused: 1,
  /** Bad arguments or URLs, missing credentials, an unreachable backend or mirror, the test-space guard. */
  broken: 2,
} as const;

/** Author and committer of every mirror commit. */
export const MIRROR_IDENTITY = "svc mirror <svc@localhost>";

/** The label that marks the wiki test space's durable fixture pages (Document 3 "Rules for test fixtures" 1). */
export const DURABLE_LABEL = "svc-durable-fixture";

/** Git's empty tree: `git diff-tree` knows it without the object. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** At most this many files' bytes are held in memory at once while verifying. */
const VERIFY_BATCH = 500;

/** At most this many names per list in a message. */
const NAMES_SHOWN = 20;

const USAGE = "scripts/mirror-refresh <svc-remote-url> <mirror-git-url> [--branch main] [--dry-run]";
const EXAMPLE = "scripts/mirror-refresh svc::http://127.0.0.1:7878/projects/demo /srv/git/demo-mirror.git";

export const HELP = `usage: ${USAGE}
       npm run mirror-refresh -- <svc-remote-url> <mirror-git-url> [--branch main] [--dry-run]

Overlays the records folder of an svc project (pages/ for a wiki, issues/ for the others) onto a plain git
repository and fast-forwards its branch. The mirror's other files (a README, CI files) stay as they are.
It never writes to the backend and never force-pushes.

  <svc-remote-url>  the project's svc remote as \`git remote -v\` shows it, with or without svc::, e.g.
                    svc::http://127.0.0.1:7878/projects/demo or
                    svc::https://acme.atlassian.net/wiki/projects/DOCS; credentials come from the
                    environment, as for svc (VENDOR_EMAIL and VENDOR_API_KEY for a wiki, …)
  <mirror-git-url>  any URL git can push to: a bare repository on disk, a forge, an internal host
  --branch <name>   the mirror's branch (default main); a branch that does not exist gets a first commit
  --dry-run         lists on stdout the files of the records folder that would be added (A), changed (M)
                    and removed (D), and pushes nothing; it still syncs the project's cache

Each run syncs the project's cache with a full listing (as svc sync --reconcile does, so records deleted on
the server leave the mirror), commits the records on the mirror's tip only if they changed (the same records
on the same tip give the same commit id), pushes with plain git push, then fetches the branch back and
compares every file of the records folder with the cache byte for byte. A mirror that moved since it was
read refuses the push; nothing is overwritten, and the next run builds on its new tip.

For the wiki test space (SVC_WIKI_TEST_SPACE) it refuses unless the two durable fixture pages
SVC_WIKI_DURABLE_PARENT_ID and SVC_WIKI_DURABLE_CHILD_ID are in the listing and labelled ${DURABLE_LABEL}.

Exit codes: 0 up to date or fast-forwarded, and verified (or a dry run); 1 the mirror refused the push, or
the verification found a difference; 2 bad arguments or URLs, missing credentials, an unreachable backend
or mirror, or the test space without its durable pages.

Example: ${EXAMPLE}
`;

export interface MirrorArgs {
  readonly remote: string;
  readonly mirror: string;
  readonly branch: string;
  readonly dryRun: boolean;
}

function usageError(problem: string): UserFacingError {
  return new UserFacingError(
    "SVC_USAGE",
    `${problem}\nusage: ${USAGE}\nfor example: ${EXAMPLE}\n(scripts/mirror-refresh --help says more)`,
  );
}

/** The command line; `"help"` for `--help`. Throws a usage error naming what is wrong. */
export function parseMirrorArgs(argv: readonly string[]): MirrorArgs | "help" {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    throw usageError((error as Error).message);
  }
  if (parsed.values.help) return "help";
  const [remote, mirror, ...rest] = parsed.positionals;
  if (remote === undefined || mirror === undefined)
    throw usageError("mirror-refresh needs two arguments: the svc remote URL and the mirror's git URL");
  if (rest.length > 0) throw usageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  checkMirrorUrl(mirror, (clean) => rerunCommand(argv.map((arg) => (arg === mirror ? clean : arg))));
  return {
    remote,
    mirror,
    branch: parsed.values.branch ?? "main",
    dryRun: parsed.values["dry-run"] ?? false,
  };
}

function parseOptions(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      branch: { type: "string" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: true,
  });
}

/**
 * Refuses a mirror URL that is not a plain git URL this script may push to: empty, an option, an svc remote
 * (a push there would write to the backend), or a URL carrying a password (it would end up in messages;
 * `rerunWith` gives the command with the URL without it).
 */
export function checkMirrorUrl(mirror: string, rerunWith: (clean: string) => string): void {
  if (mirror === "") throw usageError("the mirror's git URL is empty");
  if (mirror.startsWith("-"))
    throw usageError(`the mirror's git URL ${JSON.stringify(mirror)} starts with -`);
  if (mirror.startsWith("svc::")) {
    throw usageError(
      `the mirror ${mirror} is an svc remote; a push there would write to the backend. The mirror must be a plain git repository (for one on disk: git init --bare /srv/git/mirror.git)`,
    );
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(mirror)) {
    let url: URL | undefined;
    try {
      url = new URL(mirror);
    } catch {
      url = undefined;
    }
    if (url?.password) {
      url.password = "";
      throw new UserFacingError(
        "SVC_USAGE",
        `the mirror's git URL must not carry a password (it would show in messages and logs): let git's credential helper hold it ` +
          `(git config --global credential.helper store; git asks for it once), or use an SSH URL. Then run: ${rerunWith(url.href)}`,
      );
    }
  }
}

export interface FolderChange {
  /** A added, M changed (content or mode), D removed. */
  readonly status: "A" | "M" | "D";
  readonly path: string;
}

/** Parses `git diff-tree -r -z --no-renames` output (git/plumbing.ts `parseRawDiff`) into folder changes. */
export function parseTreeDiff(output: Buffer): FolderChange[] {
  return parseRawDiff(output).map(({ status, path }) => ({
    status: status === "A" || status === "D" ? status : "M",
    path,
  }));
}

export interface ChangeCounts {
  readonly added: number;
  readonly changed: number;
  readonly removed: number;
}

export function countChanges(changes: readonly FolderChange[]): ChangeCounts {
  const count = (status: FolderChange["status"]) =>
    changes.filter((change) => change.status === status).length;
  return { added: count("A"), changed: count("M"), removed: count("D") };
}

function describeCounts(counts: ChangeCounts): string {
  return `${counts.added} added, ${counts.changed} changed, ${counts.removed} removed`;
}

/** The mirror commit's message: deterministic for the same project, changes and cache commit. */
export function mirrorCommitMessage(
  kind: string,
  project: string,
  counts: ChangeCounts,
  cacheCommit: string,
): string {
  return `svc: mirror ${kind} project ${project}\n\n${describeCounts(counts)}\n\nsvc-cache-commit: ${cacheCommit}\n`;
}

export type PushOutcome =
  | { readonly kind: "pushed" }
  /** git's own fast-forward check failed: the branch is not where it was read. */
  | { readonly kind: "moved"; readonly reason: string }
  | { readonly kind: "refused"; readonly reason: string };

/**
 * What `git push --porcelain` printed on stdout for `ref`: a line `<flag> TAB <src>:<dst> TAB <summary>`,
 * the flag `!` for a refused ref, the reason in parentheses (`[rejected] (fetch first)`,
 * `[remote rejected] (pre-receive hook declined)`). Git writes these words untranslated. No line for the
 * ref (the push failed before it got that far) is a refusal with no reason.
 */
export function parsePushPorcelain(stdout: string, ref: string): PushOutcome {
  for (const line of stdout.split("\n")) {
    const [flag, refs, summary = ""] = line.split("\t");
    if (refs === undefined || !refs.endsWith(`:${ref}`)) continue;
    if (flag !== "!") return { kind: "pushed" };
    const reason = /\(([^)]*)\)\s*$/.exec(summary)?.[1] ?? summary;
    return /non-fast-forward|fetch first|stale info/.test(reason)
      ? { kind: "moved", reason }
      : { kind: "refused", reason: summary };
  }
  return { kind: "refused", reason: "" };
}

export interface FolderComparison {
  /** In the cache, not in the mirror. */
  readonly missing: readonly string[];
  /** In the mirror, not in the cache. */
  readonly extra: readonly string[];
  /** In both, with other bytes (or not a plain file in the mirror). */
  readonly different: readonly string[];
}

/** The names in `names`, at most NAMES_SHOWN of them, then how many more. */
function someNames(names: readonly string[]): string {
  const shown = names.slice(0, NAMES_SHOWN).join(", ");
  return names.length > NAMES_SHOWN ? `${shown} and ${names.length - NAMES_SHOWN} more` : shown;
}

export function describeComparison(comparison: FolderComparison): string {
  const parts: string[] = [];
  if (comparison.different.length > 0)
    parts.push(`${comparison.different.length} with other bytes: ${someNames(comparison.different)}`);
  if (comparison.missing.length > 0)
    parts.push(`${comparison.missing.length} missing: ${someNames(comparison.missing)}`);
  if (comparison.extra.length > 0)
    parts.push(`${comparison.extra.length} not in the cache: ${someNames(comparison.extra)}`);
  return parts.join("; ");
}

/** What a run needs besides its arguments. */
export interface MirrorIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** The command that runs this again, as printed in messages. */
  readonly rerun: string;
}

/** The script as a user runs it: parses `argv`, refreshes, reports; resolves with the exit code. */
export async function main(argv: readonly string[], io: Partial<MirrorIo> = {}): Promise<number> {
  const full: MirrorIo = {
    stdout: io.stdout ?? ((text) => process.stdout.write(text)),
    stderr: io.stderr ?? ((text) => process.stderr.write(text)),
    env: io.env ?? process.env,
    rerun: io.rerun ?? rerunCommand(argv),
  };
  try {
    const args = parseMirrorArgs(argv);
    if (args === "help") {
      full.stdout(HELP);
      return MIRROR_EXIT.ok;
    }
    return await refreshMirror(args, full);
  } catch (error) {
    full.stderr(failureReport(error, SVC_VERSION));
    return MIRROR_EXIT.broken;
  }
}

/** The shipped shim, by its absolute path, with `argv` quoted: runnable as printed from any folder. */
export function rerunCommand(argv: readonly string[]): string {
  const shim = fileURLToPath(new URL("../../scripts/mirror-refresh", import.meta.url));
  return [shim, ...argv].map(shellWord).join(" ");
}

/** `git <args>` on `repo` (scrubbed environment); resolves with its exit code and output, never rejects on a non-zero exit. */
async function gitRun(
  repo: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await gitOutcome(repo, args);
  return { code, stdout: stdout.toString("utf8"), stderr };
}

/** git's own lines, shortened, for a message. */
function gitSaid(stderr: string): string {
  const text = stderr
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("hint:"))
    .join(" / ");
  return text === "" ? "git printed nothing" : text.slice(0, 1000);
}

/** A bare repository in `dir` with no template (no hooks) and hooks looked up in an empty folder. */
async function makeScratchRepo(dir: string): Promise<void> {
  await runGit(dir, ["init", "--quiet", "--bare", "--template=", dir]);
  await runGit(dir, ["config", "core.hooksPath", join(dir, "no-hooks")]);
  await runGit(dir, ["config", "gc.auto", "0"]);
}

/** The commit's tree and committer time (seconds), from its raw object. */
function commitFacts(raw: Buffer | undefined, oid: string): { tree: string; time: number } {
  let commit: Commit | undefined;
  try {
    commit = raw === undefined ? undefined : parseCommit(raw);
  } catch {
    commit = undefined;
  }
  // A commit without a committer line has no time to take (git would read 0).
  if (commit?.time === undefined || !parseCommitObject(raw as Buffer).committer)
    throw new SvcError("SVC_STORE", `commit ${oid} could not be read`);
  return { tree: commit.tree, time: commit.time };
}

/** The branch tip `git ls-remote` reports, or undefined when the mirror has no such branch. */
async function remoteTip(
  repo: string,
  mirror: string,
  ref: string,
  rerun: string,
): Promise<string | undefined> {
  const listed = await gitRun(repo, ["ls-remote", mirror, ref]);
  if (listed.code !== 0) {
    throw new UserFacingError(
      "SVC_USAGE",
      `cannot read the mirror ${mirror}: git ls-remote exited ${listed.code} (${gitSaid(listed.stderr)}). ` +
        `Check the URL and your access until \`git ls-remote ${shellWord(mirror)}\` works from here ` +
        `(a new mirror on disk: git init --bare <path>), then run: ${rerun}`,
    );
  }
  for (const line of listed.stdout.split("\n")) {
    const [oid, name] = line.split("\t");
    if (name === ref && oid && /^[0-9a-f]{40}$/.test(oid)) return oid;
  }
  return undefined;
}

/** Fetches `ref` of the mirror (its tip commit and tree only) into `repo` as `into`; returns the commit. */
async function fetchTip(repo: string, mirror: string, ref: string, into: string): Promise<string> {
  await runGit(repo, ["fetch", "--quiet", "--no-tags", "--depth=1", mirror, `${ref}:${into}`]);
  return (await runGit(repo, ["rev-parse", "--verify", `${into}^{commit}`])).stdout.toString("utf8").trim();
}

/** A user repository for `openProjectCache` that has no server commit: the cache never copies history. */
const NO_USER_REPOSITORY: UserRepository = {
  serverRefs: [],
  gitOutput: async () => undefined,
  spawnGit: () => {
    throw new SvcError("SVC_STORE", "mirror-refresh has no user repository to copy history from");
  },
};

/** The cache of `remote`, synced with a full listing; prints the sync line as `svc sync` does. */
async function syncedCache(
  remote: RemoteUrl,
  backend: Backend,
  agent: string,
  log: (message: string) => void,
): Promise<{ cache: ProjectCache; result: SyncResult }> {
  const { cache, built } = await openProjectCache({ remote, agent, backend, user: NO_USER_REPOSITORY, log });
  try {
    const result = built ?? (await syncCache(cache, backend, { reconcile: true }));
    if (result.commit) await cache.consolidateIfDue(log);
    log(
      `svc: ${result.full ? "full" : "delta"} sync: ${result.changed} changed, ${result.deleted} removed` +
        `${result.commit ? ` (cache commit ${result.commit.slice(0, 12)})` : ", nothing new"}`,
    );
    return { cache, result };
  } catch (error) {
    cache.close();
    throw error;
  }
}

/** Whether the wiki remote names the space `SVC_WIKI_TEST_SPACE` names: the same words, or the same space id. */
async function isWikiTestSpace(
  remote: RemoteUrl,
  backend: Backend,
  testSpace: string,
  env: NodeJS.ProcessEnv,
): Promise<boolean> {
  if (remote.project === testSpace) return true;
  if (!(backend instanceof WikiBackend)) return false;
  const other = await createBackend({ ...remote, project: testSpace }, `svc-mirror-${process.pid}`, env);
  if (!(other instanceof WikiBackend)) return false;
  try {
    return (await other.resolveSpace()) === (await backend.resolveSpace());
  } catch (error) {
    // No readable space by that name: then it is not this one (which was just listed). Refusals with a
    // status (401, 403) and other failures are reported.
    if (error instanceof UserFacingError && error.data.status === undefined) return false;
    throw error;
  }
}

/**
 * Refuses the wiki test space unless both durable fixture pages are among `paths` (the cache tip's
 * records folder) and labelled DURABLE_LABEL (one read-only GET of each page's labels).
 */
async function checkDurableFixtures(
  remote: RemoteUrl,
  backend: Backend,
  paths: ReadonlySet<string>,
  io: MirrorIo,
): Promise<void> {
  const testSpace = io.env.SVC_WIKI_TEST_SPACE;
  if (remote.kind !== "wiki" || !testSpace || !(await isWikiTestSpace(remote, backend, testSpace, io.env)))
    return;
  const where = `${remote.project} is the wiki test space (SVC_WIKI_TEST_SPACE=${testSpace})`;
  const variables = ["SVC_WIKI_DURABLE_PARENT_ID", "SVC_WIKI_DURABLE_CHILD_ID"] as const;
  const unset = variables.filter((name) => !io.env[name]);
  if (unset.length > 0) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${where}, and its mirror must hold the two durable fixture pages (Document 3 "Rules for test fixtures" 1), but ${unset.join(" and ")} ${unset.length === 1 ? "is" : "are"} not set; nothing was pushed. ` +
        `Export both, set to the ids of the parent and the child page labelled ${DURABLE_LABEL}, then run: ${io.rerun}`,
    );
  }
  for (const name of variables) {
    const id = io.env[name] as string;
    if (!/^[0-9]+$/.test(id)) {
      throw new UserFacingError(
        "SVC_USAGE",
        `${name}=${excerpt(id, 40)} is not a page id (digits); set it to the durable page's id, then run: ${io.rerun}`,
      );
    }
    if (!paths.has(backend.schema.fileName(id))) {
      throw new UserFacingError(
        "SVC_USAGE",
        `${where}, and its durable fixture page ${id} (${name}) is not in the listing of the space: it was deleted, trashed or moved; nothing was pushed. ` +
          `Restore it (Document 3: the durable pages are never deleted), or set ${name} to the durable page's id; then run: ${io.rerun}`,
      );
    }
    const labels = backend instanceof WikiBackend ? await backend.pageLabels(id) : [];
    if (!labels.includes(DURABLE_LABEL)) {
      throw new UserFacingError(
        "SVC_USAGE",
        `${where}, and page ${id} (${name}) is not labelled ${DURABLE_LABEL} (its labels: ${labels.length === 0 ? "none" : labels.join(", ")}); nothing was pushed. ` +
          `If it is the durable page, label it ${DURABLE_LABEL} in the wiki; else set ${name} to the durable page's id. Then run: ${io.rerun}`,
      );
    }
  }
}

/** The cache tip's records folder: its tree (undefined without records) and its files, by full path. */
async function cacheRecords(
  cache: ProjectCache,
  tip: string,
  folder: string,
): Promise<{ tree: string | undefined; files: TreeListing[] }> {
  const [top] = parseLsTree((await runGit(cache.repo, ["ls-tree", "-z", tip, "--", folder])).stdout);
  if (top?.type !== "tree") return { tree: undefined, files: [] };
  const files = parseLsTree((await runGit(cache.repo, ["ls-tree", "-r", "-z", top.oid])).stdout).map(
    (entry) => ({ ...entry, path: `${folder}/${entry.path}` }),
  );
  return { tree: top.oid, files };
}

interface Refresh {
  readonly args: MirrorArgs;
  readonly io: MirrorIo;
  readonly remote: RemoteUrl;
  readonly backend: Backend;
  readonly cache: ProjectCache;
  readonly cacheTip: string;
  readonly folder: string;
  readonly records: { tree: string | undefined; files: TreeListing[] };
  /** The temporary folder of this run. */
  readonly scratch: string;
}

/**
 * One run (the steps in this file's header); resolves with the exit code of a push refused or a
 * verification failed, throws for the rest (usage, configuration, backend). Its temporary folder is removed
 * at the end, on an error, and on SIGINT/SIGTERM.
 */
export async function refreshMirror(args: MirrorArgs, io: MirrorIo): Promise<number> {
  const scratch = mkdtempSync(join(tmpdir(), "svc-mirror-"));
  const removeScratch = () => rmSync(scratch, { recursive: true, force: true });
  const onSignal = (signal: NodeJS.Signals) => {
    removeScratch();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const work = join(scratch, "work.git");
    await makeScratchRepo(work);
    const ref = `refs/heads/${args.branch}`;
    if ((await gitRun(work, ["check-ref-format", ref])).code !== 0)
      throw usageError(`--branch ${JSON.stringify(args.branch)} is not a valid branch name`);
    const remote = parseRemoteUrl(args.remote);
    const agent = `svc-mirror-${process.pid}`;
    const backend = await createBackend(remote, agent, io.env);
    // Before the listing: an unreachable mirror is found in a second, not after a long sync.
    await remoteTip(work, args.mirror, ref, io.rerun);
    const log = (message: string) => io.stderr(`${message}\n`);
    const { cache, result } = await syncedCache(remote, backend, agent, log);
    try {
      const folder = backend.schema.folder;
      const records = await cacheRecords(cache, result.tip, folder);
      await checkDurableFixtures(remote, backend, new Set(records.files.map((file) => file.path)), io);
      const refresh: Refresh = {
        args,
        io,
        remote,
        backend,
        cache,
        cacheTip: result.tip,
        folder,
        records,
        scratch,
      };
      const pushed = await buildAndPush(refresh, work, ref);
      if (pushed !== MIRROR_EXIT.ok || args.dryRun) return pushed;
      return await verifyMirror(refresh, ref);
    } finally {
      cache.close();
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    removeScratch();
  }
}

/** The mirror's branch tip as read into the work repository. */
interface MirrorTip {
  readonly commit: string;
  readonly tree: string;
  /** Committer time, seconds. */
  readonly time: number;
  /** The tree object's raw content. */
  readonly treeContent: Buffer;
}

/**
 * Makes `work` see the cache's objects (alternates) and writes the records' blobs there: the cache's trees
 * name blobs it writes only when git asks for them, and the push needs exactly those.
 */
async function shareCacheObjects(refresh: Refresh, work: string): Promise<void> {
  const { cache, records } = refresh;
  const materialized = await cache.materialize(records.files.map((file) => file.oid));
  if (materialized.written > 0) {
    cache.db.audit({
      op: "materialize",
      bytes: materialized.bytes,
      detail: { blobs: materialized.written, wants: records.files.length, mirror: true },
    });
  }
  mkdirSync(join(work, "objects", "info"), { recursive: true });
  writeFileSync(join(work, "objects", "info", "alternates"), `${join(cache.repo, "objects")}\n`);
}

/** Reads the branch tip (the commit and its tree only) into `work`; undefined when the branch is absent. */
async function readMirrorTip(refresh: Refresh, work: string, ref: string): Promise<MirrorTip | undefined> {
  const { args, io } = refresh;
  if ((await remoteTip(work, args.mirror, ref, io.rerun)) === undefined) return undefined;
  let commit: string;
  try {
    commit = await fetchTip(work, args.mirror, ref, "refs/mirror/base");
  } catch (error) {
    throw new UserFacingError(
      "SVC_USAGE",
      `cannot fetch ${args.branch} of the mirror ${args.mirror} (${(error as Error).message}); nothing was pushed. ` +
        `Check that \`git fetch --depth=1 ${shellWord(args.mirror)} ${ref}\` works from here, then run: ${io.rerun}`,
      { cause: error },
    );
  }
  const facts = commitFacts((await readObjects(work, [commit])).get(commit), commit);
  const treeContent = (await readObjects(work, [facts.tree])).get(facts.tree);
  if (treeContent === undefined) throw new SvcError("SVC_STORE", `the tree of ${commit} was not fetched`);
  return { commit, ...facts, treeContent };
}

/**
 * The tip's tree with the records folder replaced by the cache's (removed when the cache has no records),
 * written into `work`, and the files that differ. A file (or link) named like the folder goes too: a tree
 * cannot hold both.
 */
async function overlayRecords(
  refresh: Refresh,
  work: string,
  tip: MirrorTip | undefined,
): Promise<{ tree: string; changes: FolderChange[] }> {
  const edits = new Map([
    [refresh.folder, undefined],
    [`${refresh.folder}/`, refresh.records.tree],
  ]);
  const tree = writeLooseObject(work, "tree", spliceTree(tip?.treeContent ?? Buffer.alloc(0), edits));
  const diff = await runGit(work, ["diff-tree", "-r", "-z", "--no-renames", tip?.tree ?? EMPTY_TREE, tree]);
  return { tree, changes: parseTreeDiff(diff.stdout) };
}

/** The mirror commit: fixed identity, time the later of the cache tip's and the mirror tip's, parent the tip. */
async function writeMirrorCommit(
  refresh: Refresh,
  work: string,
  tree: string,
  tip: MirrorTip | undefined,
  counts: ChangeCounts,
): Promise<string> {
  const { cache, cacheTip, remote } = refresh;
  const cacheFacts = commitFacts((await readObjects(cache.repo, [cacheTip])).get(cacheTip), cacheTip);
  return writeLooseObject(
    work,
    "commit",
    encodeCommit({
      tree,
      parents: tip === undefined ? [] : [tip.commit],
      identity: MIRROR_IDENTITY,
      time: Math.max(cacheFacts.time, tip?.time ?? 0),
      message: mirrorCommitMessage(remote.kind, remote.project, counts, cacheTip),
    }),
  );
}

/**
 * Reads the mirror's tip, builds the commit that overlays the records folder and pushes it (for a dry run:
 * lists what would change). Returns the exit code so far.
 */
async function buildAndPush(refresh: Refresh, work: string, ref: string): Promise<number> {
  const { args, io } = refresh;
  await shareCacheObjects(refresh, work);
  const tip = await readMirrorTip(refresh, work, ref);
  const { tree, changes } = await overlayRecords(refresh, work, tip);
  const counts = countChanges(changes);
  const where = `${args.mirror} ${args.branch}`;
  const upToDate = tip !== undefined && tip.tree === tree;
  if (args.dryRun) {
    for (const change of changes) io.stdout(`${change.status}\t${change.path}\n`);
    const would =
      tip === undefined ? "get its first commit" : `be fast-forwarded from ${tip.commit.slice(0, 12)}`;
    io.stderr(
      upToDate
        ? `svc: dry run: ${where} is up to date (${tip.commit.slice(0, 12)}); nothing was pushed\n`
        : `svc: dry run: ${where} would ${would} (${describeCounts(counts)}); nothing was pushed\n`,
    );
    return MIRROR_EXIT.ok;
  }
  if (upToDate) {
    io.stderr(`svc: ${where} is up to date (${tip.commit.slice(0, 12)})\n`);
    return MIRROR_EXIT.ok;
  }
  const commit = await writeMirrorCommit(refresh, work, tree, tip, counts);
  return pushMirrorCommit(refresh, work, ref, commit, tip, counts);
}

/** `git push <mirror> <commit>:<ref>`, and what came of it, on stderr. */
async function pushMirrorCommit(
  refresh: Refresh,
  work: string,
  ref: string,
  commit: string,
  tip: MirrorTip | undefined,
  counts: ChangeCounts,
): Promise<number> {
  const { args, io } = refresh;
  const where = `${args.mirror} ${args.branch}`;
  // No --force and no `+`: git refuses anything but a fast-forward (or a new branch).
  const push = await gitRun(work, ["push", "--porcelain", "--no-verify", args.mirror, `${commit}:${ref}`]);
  const outcome = push.code === 0 ? ({ kind: "pushed" } as const) : parsePushPorcelain(push.stdout, ref);
  if (outcome.kind === "moved") {
    io.stderr(
      `svc: ${where} moved since it was read (it was ${tip === undefined ? "absent" : `at ${tip.commit.slice(0, 12)}`}); ` +
        `git refused the push (${outcome.reason}) and nothing was overwritten. Run the same command again to build on its new tip: ${io.rerun}\n`,
    );
    return MIRROR_EXIT.refused;
  }
  if (outcome.kind === "refused") {
    io.stderr(
      `svc: ${where} refused the push of ${commit.slice(0, 12)}${outcome.reason ? ` (${outcome.reason})` : ""}: ${gitSaid(push.stderr)}; ` +
        `nothing was overwritten. Fix what git says, then run: ${io.rerun}\n`,
    );
    return MIRROR_EXIT.refused;
  }
  io.stderr(
    tip === undefined
      ? `svc: ${where}: created at ${commit.slice(0, 12)} (${describeCounts(counts)})\n`
      : `svc: ${where}: ${tip.commit.slice(0, 12)}..${commit.slice(0, 12)} fast-forwarded (${describeCounts(counts)})\n`,
  );
  return MIRROR_EXIT.ok;
}

/**
 * Fetches the branch into a fresh repository with no alternates (nothing shared with the cache) and
 * compares every file of its records folder with the cache's, byte for byte.
 */
async function verifyMirror(refresh: Refresh, ref: string): Promise<number> {
  const { args, io, cache, folder, records } = refresh;
  const verify = join(refresh.scratch, "verify.git");
  await makeScratchRepo(verify);
  const failed = (what: string) => {
    io.stderr(
      `svc: verification failed: ${what}. The mirror changed after the push (a hook on it, or another writer); ` +
        `run the same command again to overlay the cache's records on its tip: ${io.rerun}\n`,
    );
    return MIRROR_EXIT.refused;
  };
  let tip: string;
  try {
    tip = await fetchTip(verify, args.mirror, ref, "refs/mirror/verify");
  } catch (error) {
    return failed(`could not fetch ${args.mirror} ${args.branch} back (${(error as Error).message})`);
  }
  const mirrored = parseLsTree(
    (await runGit(verify, ["ls-tree", "-r", "-z", tip, "--", folder])).stdout,
  ).filter((entry) => entry.path === folder || entry.path.startsWith(`${folder}/`));
  const comparison = await compareWithCache(cache, records.files, verify, mirrored);
  const problems = describeComparison(comparison);
  if (problems !== "") {
    return failed(
      `${folder}/ of ${args.mirror} ${args.branch} (${tip.slice(0, 12)}) does not match the cache (${refresh.cacheTip.slice(0, 12)}): ${problems}`,
    );
  }
  io.stderr(
    `svc: verified: ${records.files.length} files in ${folder}/ of ${args.mirror} match the cache byte for byte\n`,
  );
  return MIRROR_EXIT.ok;
}

/** Compares the mirror's files with the cache's: by path, then by bytes, VERIFY_BATCH files at a time. */
async function compareWithCache(
  cache: ProjectCache,
  expected: readonly TreeListing[],
  repo: string,
  actual: readonly TreeListing[],
): Promise<FolderComparison> {
  const theirs = new Map(actual.map((entry) => [entry.path, entry]));
  const ours = new Set(expected.map((entry) => entry.path));
  const missing = expected.filter((entry) => !theirs.has(entry.path)).map((entry) => entry.path);
  const extra = actual.filter((entry) => !ours.has(entry.path)).map((entry) => entry.path);
  const different: string[] = [];
  const common = expected.filter((entry) => theirs.has(entry.path));
  for (let start = 0; start < common.length; start += VERIFY_BATCH) {
    const batch = common.slice(start, start + VERIFY_BATCH);
    const pairs = batch.map((entry) => ({ entry, mirror: theirs.get(entry.path) as TreeListing }));
    const cacheBytes = await cache.blobContents(batch.map((entry) => entry.oid));
    const mirrorBytes = await readObjects(
      repo,
      pairs.filter(({ mirror }) => mirror.type === "blob").map(({ mirror }) => mirror.oid),
    );
    for (const { entry, mirror } of pairs) {
      const want = cacheBytes.get(entry.oid);
      const got = mirror.type === "blob" ? mirrorBytes.get(mirror.oid) : undefined;
      if (want === undefined)
        throw new SvcError(
          "SVC_STORE",
          `the cache ${cache.dir} lacks the contents of ${entry.path} (${entry.oid})`,
        );
      if (mirror.mode !== entry.mode || got === undefined || !got.equals(want)) different.push(entry.path);
    }
  }
  return { missing, extra, different };
}

// Run as a program (`node dist/scripts/mirror-refresh.js`, what `npm run mirror-refresh` does), not when the
// shim or a test imports it. npm runs it in the package's folder: relative paths are the caller's.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  if (process.env.npm_lifecycle_event === "mirror-refresh" && process.env.INIT_CWD)
    process.chdir(process.env.INIT_CWD);
  process.exitCode = await main(process.argv.slice(2));
}
