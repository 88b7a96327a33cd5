/**
 * `push` (DESIGN.md §4; notes/push-and-lazy-cache.md C): the user's commits go into the cache byte for byte
 * with a real `git push`, the planner turns the changed record files into REST writes, and the cache's
 * `main` moves to a commit on top of the user's that carries what the server assigned.
 *
 * Nothing decides a conflict from shared cache state: the base is the newest cache commit the pushed
 * history contains (its merge-base with the cache's `main`), or the commit a push of it produced. A record
 * whose server version differs from that base is stale, and the push is rejected with git's own
 * `fetch first` before anything is written (unless `svc.autoMerge` merges it cleanly).
 *
 * The steps, each a function below: copy and sync (`pushMain`), load what changed (`loadChanges`), plan
 * (`push-plan.ts`), refuse what must not be written (`refusal`), judge staleness and merge (`judge`), write
 * (`applyWrites`), commit the result (`commitResult`). Creates go through the create journal
 * (`create-journal.ts`) so that none is ever sent twice.
 */

import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { WritableBackend } from "../backends/backend.js";
import { parseRecordFile, type RecordContent, recordKeyOf } from "../backends/record.js";
import { isNoChange, recordChanges } from "../backends/record-diff.js";
import type { ProjectCache } from "../cache/cache.js";
import type { JournalRow } from "../cache/db.js";
import { asLocalFault, isLocalFault } from "../cache/local-fault.js";
import { rememberRecord, syncCache, writeStateCommit } from "../cache/sync.js";
import { formatCount } from "../core/count.js";
import { SvcError, shellWord, terminalSafe } from "../core/errors.js";
import { BackendUnreachableError, isServerFault, RedirectError, RetryLaterError } from "../core/http.js";
import { progress } from "../core/progress.js";
import { copyNewObjects } from "../git/copy.js";
import { findMergeBase } from "../git/merge-base.js";
import { ObjectReader } from "../git/object-store.js";
import { parseLsTree, parseRawDiff, readObjects, runGit } from "../git/plumbing.js";
import { staleTemporaryRefs } from "../git/refs.js";
import { filesAt, NotInProcessError, Trees, treeDiff } from "../git/tree-diff.js";
import { rerunCommand, userObjectsDir } from "../git/user-command.js";
import { userGit, userRefCommit } from "../git/user-git.js";
import {
  journalCreate,
  journalCreated,
  journalLookup,
  resolveUnfinishedCreates,
  settleCreates,
  worktreeId,
} from "./create-journal.js";
import { mergeRecord } from "./merge.js";
import {
  type DiffEntry,
  isUnsafePath,
  type NextCommand,
  nextCommand,
  type Plan,
  type PlannedWrite,
  pathFrom,
  planPush,
  problemSummary,
} from "./push-plan.js";
import { respelledBodies, respelledNotes } from "./push-respelled.js";
import { whenAgain } from "./server-fault.js";

export type PushReply =
  | { readonly ok: true; readonly oldOid: string | undefined }
  /** `broken`: stopped by a local fault (a full or read-only cache), not refused: the helper exits 2. */
  | { readonly ok: false; readonly reason: string; readonly broken?: boolean };

export interface PushContext {
  readonly cache: ProjectCache;
  readonly backend: WritableBackend;
  /** The git remote's name in the user's repository (for its remote-tracking ref). */
  readonly remote: string;
  readonly autoMerge: boolean;
  readonly bulkDeleteLimit: number;
  readonly log: (message: string) => void;
  readonly trace: (message: string) => void;
  /** The push was forced (`+src:dst`). */
  readonly forced?: boolean;
}

export const ALLOW_BULK_DELETE = "[allow-bulk-delete]";

/**
 * How far a push's writes got, for the message of a local fault that stops it (`localFaultReply`): a full
 * disk can stop the cache from noting a write the server has already answered.
 */
interface WriteTally {
  /** The writes planned; 0 before the plan. */
  total: number;
  /** Writes the server answered and the cache noted. */
  done: number;
  /** The write the server answered that the cache has not noted yet. */
  answered: PlannedWrite | undefined;
}

/** A push under way: its context and how far its writes got. */
interface PushRun extends PushContext {
  readonly tally: WriteTally;
}

/**
 * Test-only crash points (`SVC_TEST_KILL_AT=<step>`): SIGKILL of the whole process group (git push, this
 * helper and its children), as `kill -9` of a push would. Steps: copy, planned, after-create,
 * after-update, after-delete, result (before the result commit), noted (the result commit noted as the
 * push's, main not moved yet), moved (main's ref file moved, its transaction not committed), done (before
 * git hears `ok`). `SVC_TEST_DIE_AFTER_WRITES=<n>` kills this process alone after n writes.
 */
function crashPoint(step: string): void {
  if (process.env.SVC_TEST_KILL_AT === step) process.kill(0, "SIGKILL");
}

function dieAfterWrites(): number | undefined {
  const value = Number(process.env.SVC_TEST_DIE_AFTER_WRITES);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

export async function pushMain(pushContext: PushContext, src: string): Promise<PushReply> {
  const context: PushRun = {
    ...pushContext,
    tally: { total: 0, done: 0, answered: undefined },
  };
  const { cache, backend, trace } = context;
  const [commit, tracking] = await Promise.all([
    userCommit(src),
    userCommit(`refs/remotes/${context.remote}/main`).then((oid) => oid ?? ""),
  ]);
  if (commit === undefined) return { ok: false, reason: `cannot resolve ${src} to a commit` };
  cache.db.audit({ op: "push-start", oid: commit });

  const refs = { incomingRef: `refs/svc/incoming/${process.pid}`, baseRef: `refs/svc/base/${process.pid}` };
  const objects = pushObjects(cache);
  // Before the copy below puts it there: a commit the cache lacks is in none of the cache's histories.
  const commitIsNew = !cache.hasObject(commit);
  const stale = staleTemporaryRefs(cache.repo);
  for (const lock of stale.locks) rmSync(lock, { force: true });
  let madeRefs = false;
  try {
    // The newest server state (staleness is judged against it) and the copy of the user's commits into the
    // cache do not depend on each other: both at once (the copy in-process while the listing is under way).
    // Both settle before anything else happens, so a failed sync never leaves a copy running that would
    // recreate the refs deleted below.
    const [synced, refused] = await Promise.allSettled([
      syncCache(cache, backend, { trace }),
      copyIntoCache(context, objects, commit, tracking, refs, () => {
        madeRefs = true;
      }),
    ]);
    if (synced.status === "rejected") return notReached(context, synced.reason);
    if (refused.status === "rejected") throw refused.reason;
    if (refused.value) return refused.value;
    trace(`pushed ${commit} into the cache`);
    const tipBefore = cache.tip();
    if (!tipBefore) return { ok: false, reason: "the cache has no server state yet; run git fetch first" };
    const history = {
      name: "the cache's history",
      noted: (oid: string, tip: string) => cache.db.notedAncestor(oid, tip),
      isNew: commitIsNew,
    };
    const mergeBase =
      (await findMergeBase(cache.repo, objects.trees.read, commit, tipBefore, history, trace)) ?? "";
    // The user's commit is in the server's history already.
    if (mergeBase === commit) return await alreadyOnServer(context, objects, commit, tipBefore, tracking);
    return await integrate(context, objects, commit, tipBefore, mergeBase);
  } catch (error) {
    return localFaultReply(context, error);
  } finally {
    const deletes = [...(madeRefs ? [refs.baseRef, refs.incomingRef] : []), ...stale.refs];
    if (deletes.length > 0) {
      const input = deletes.map((ref) => `delete ${ref}\n`).join("");
      await runGit(cache.repo, ["update-ref", "--stdin"], { input }).catch(() => undefined);
    }
  }
}

/** The commit `ref` of the user's repository names (in-process where it can be), or undefined. */
async function userCommit(ref: string): Promise<string | undefined> {
  const known = userRefCommit(ref, { env: process.env, cwd: process.cwd() });
  if (known !== undefined) return known ?? undefined;
  const resolved = await userGit(["rev-parse", "--verify", "-q", `${ref}^{commit}`]);
  const oid = resolved.stdout.trim();
  return resolved.code === 0 && /^[0-9a-f]{40}$/.test(oid) ? oid : undefined;
}

/** The objects a push reads in-process (git/object-store.ts). */
interface PushObjects {
  readonly cache: ObjectReader;
  /** The user's repository's objects, where git's environment says where they are. */
  readonly user: ObjectReader | undefined;
  /** Commits and trees of the cache, else of the user's repository; each tree parsed once. */
  readonly trees: Trees;
}

function pushObjects(cache: ProjectCache): PushObjects {
  const cacheObjects = new ObjectReader(join(cache.repo, "objects"));
  const userFolder = userObjectsDir({ env: process.env, cwd: process.cwd() });
  const user = userFolder === undefined ? undefined : new ObjectReader(userFolder);
  return { cache: cacheObjects, user, trees: new Trees((oid) => cacheObjects.read(oid) ?? user?.read(oid)) };
}

/** A redirect's message with the command for the user's remote (a push to a URL has no name to set). */
function redirectMessage(error: RedirectError, remote: string): string {
  if (!error.remoteUrl || remote === "origin") return error.message;
  const advice = RedirectError.advice(error.remoteUrl, "origin");
  const mine = /^[A-Za-z0-9._-]+$/.test(remote) ? RedirectError.advice(error.remoteUrl, remote) : "";
  return error.message.replace(advice, mine);
}

/**
 * The server could not be reached, failed, or redirected, before any write: nothing was written, and the
 * user is told what to run. Any other failure is thrown on.
 */
function notReached(context: PushContext, error: unknown): PushReply {
  if (error instanceof RedirectError) {
    context.log(`svc: ${redirectMessage(error, context.remote)}\n  nothing was written`);
    return { ok: false, reason: "the server answered with a redirect; nothing was written" };
  }
  if (!(error instanceof SvcError) || !isServerFault(error)) throw error;
  context.log(`svc: ${error.message}\n  nothing was written${againWhen(error)}`);
  if (error instanceof BackendUnreachableError)
    return { ok: false, reason: "the server cannot be reached; nothing was written" };
  if (error instanceof RetryLaterError)
    return {
      ok: false,
      reason: `the server asked svc to wait; nothing was written; ${error.after}, push again`,
    };
  return { ok: false, reason: "the server failed (see above); nothing was written" };
}

/**
 * A pushed commit the server's history contains: nothing to write. Up to date when it is the server's tip,
 * what the user last fetched, or a commit an earlier push already carried; an older one would move the user's `origin/main` back (git sets it to
 * what a push says is up to date), so it is refused the way git refuses a push that is behind.
 */
async function alreadyOnServer(
  context: PushContext,
  objects: PushObjects,
  commit: string,
  tip: string,
  tracking: string,
): Promise<PushReply> {
  if (commit === tip || commit === tracking) return { ok: false, reason: "up to date" };
  const carried = context.forced ? undefined : context.cache.db.pushResult(commit);
  if (carried !== undefined) {
    // An earlier push of this very commit wrote everything and made its result, and was killed before git
    // heard `ok` (git's origin/main does not contain the commit): say what it did.
    const heard =
      tracking !== "" &&
      (await findMergeBase(context.cache.repo, objects.trees.read, commit, tracking)) === commit;
    const summary = heard
      ? undefined
      : summaryOfResult(objects.cache.read(carried)?.content.toString("utf8") ?? "");
    if (summary) {
      const how = ` by an earlier push of ${commit.slice(0, 12)}, which was cut off before git heard the answer`;
      const wrote = /(^|, )[1-9]\d* /.test(summary);
      context.log(summaryLine(context.backend, summary, wrote, how));
    }
    return { ok: false, reason: "up to date" };
  }
  if (!context.forced) return { ok: false, reason: "non-fast forward" };
  const short = commit.slice(0, 12);
  const folder = context.backend.schema.folder;
  context.log(
    `svc: ${short} is an older state of the server's main; svc cannot move main back (the server keeps records, not commits), and nothing was written.\n` +
      `  To make the records what they were at ${short}, commit that and push it:\n` +
      `  git restore --source=${short} --staged --worktree -- ${folder} && git commit -m "Restore ${folder} as of ${short}" && git push`,
  );
  return {
    ok: false,
    reason: `svc cannot move main back to ${short}; commit the old state instead (see above)`,
  };
}

/**
 * Copies the user's commits into the cache byte for byte: in-process (git/copy.ts), or, where
 * that leaves it to git, with `git push` to `incomingRef`. The base ref (the user's remote-tracking commit,
 * when the cache has it) tells send-pack what the cache already has, so only new objects travel, and nothing
 * is fetched lazily in a partial clone. `madeRefs` is called before the refs are made; the caller deletes
 * them. Returns the refusal when the copy failed, else nothing.
 */
async function copyIntoCache(
  context: PushContext,
  objects: PushObjects,
  commit: string,
  tracking: string,
  refs: { incomingRef: string; baseRef: string },
  madeRefs: () => void,
): Promise<PushReply | undefined> {
  const { cache, log, trace } = context;
  const { user } = objects;
  if (user !== undefined) {
    const outcome = copyNewObjects({ ...objects, user }, cache.repo, commit, () => crashPoint("copy"));
    if ("copied" in outcome) {
      trace(`copied ${outcome.copied} objects into the cache`);
      return undefined;
    }
    trace(`copying with git push: ${outcome.leftToGit}`);
  }
  madeRefs();
  // git refuses a ref to an object the cache does not have: then there is no base, and that is all.
  if (tracking) await runGit(cache.repo, ["update-ref", refs.baseRef, tracking]).catch(() => undefined);
  // --no-thin: a thin pack may hold deltas against blobs the user has and the cache never wrote (the
  // clone's own pack sends every blob without writing it into the cache), which receive-pack cannot resolve.
  const copying = userGit([
    "push",
    "--porcelain",
    "--no-verify",
    "--quiet",
    "--no-thin",
    cache.repo,
    `${commit}:${refs.incomingRef}`,
  ]);
  if (process.env.SVC_TEST_KILL_AT === "copy") setTimeout(() => crashPoint("copy"), 5);
  const pushed = await copying;
  if (pushed.code !== 0) {
    log(`svc: could not copy your commits into the cache ${cache.repo}:\n${pushed.stderr.trim()}`);
    return { ok: false, reason: "svc could not store your commits in its cache (see above)" };
  }
  return undefined;
}

/** path → blob oid of the files `paths` in `commit` (only those: a tree may have 10,000 entries). */
async function listTree(
  cache: ProjectCache,
  objects: PushObjects,
  commit: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  if (paths.length === 0) return new Map();
  try {
    return filesAt(objects.trees, commit, paths);
  } catch (error) {
    if (!(error instanceof NotInProcessError)) throw error;
  }
  const { stdout } = await runGit(cache.repo, ["ls-tree", "-z", "--full-tree", commit, "--", ...paths]);
  return new Map(
    parseLsTree(stdout).flatMap(({ type, oid, path }) => (type === "blob" ? [[path, oid]] : [])),
  );
}

/** The files that differ between commits `from` and `to` of the cache (`git diff-tree -r --raw`). */
async function diffCommits(
  cache: ProjectCache,
  objects: PushObjects,
  from: string,
  to: string,
): Promise<DiffEntry[]> {
  try {
    return treeDiff(objects.trees, from, to);
  } catch (error) {
    if (!(error instanceof NotInProcessError)) throw error;
  }
  return parseRawDiff(
    (await runGit(cache.repo, ["diff-tree", "-r", "-z", "--raw", "--no-renames", from, to])).stdout,
  );
}

/**
 * The contents of the blobs `oids`: from the database, else from the cache's objects (a blob the user's
 * commits brought, which the database never held); an oid in neither is left out of the map.
 */
async function blobContents(
  cache: ProjectCache,
  objects: PushObjects,
  oids: Iterable<string>,
): Promise<Map<string, Buffer>> {
  const contents = new Map<string, Buffer>();
  const read = (oid: string) => objects.cache.read(oid);
  const rest: string[] = [];
  for (const oid of oids) {
    const known = cache.db.blob(oid)?.content;
    let object: ReturnType<typeof read>;
    try {
      object = known ? undefined : read(oid);
    } catch {
      object = undefined; // git says what is wrong with it
    }
    if (known) contents.set(oid, known);
    else if (object?.type === "blob") contents.set(oid, object.content);
    else rest.push(oid);
  }
  for (const [oid, content] of await readObjects(cache.repo, rest)) contents.set(oid, content);
  return contents;
}

/** What a push changed: the diff from its base, the blobs on both sides, and the base's record tokens. */
interface Changes {
  readonly diff: DiffEntry[];
  readonly contents: Map<string, Buffer>;
  readonly tokenOf: (key: string) => { version: number | null; updatedAt: string } | undefined;
}

/** A record file read with the canonical parser; undefined for a file that does not parse. */
function parsedOrUndefined(
  context: PushContext,
  path: string,
  content: Buffer | undefined,
): RecordContent | undefined {
  if (!content) return undefined;
  try {
    return parseRecordFile(context.backend.schema, path, content.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** The id a record file carries; undefined for a file that does not parse. */
function idOf(context: PushContext, path: string, content: Buffer | undefined): string | undefined {
  const record = parsedOrUndefined(context, path, content);
  return record && recordKeyOf(context.backend.schema, record.fields);
}

/**
 * Open creates of `worktree` whose file the pushed commit no longer has are settled: the user removed the
 * file, or pulled the push that renamed it (a push killed between moving the cache's main and noting it
 * leaves such rows), and a new file at that path later is a new record.
 */
async function settleAbandonedCreates(
  cache: ProjectCache,
  objects: PushObjects,
  worktree: string,
  commit: string,
): Promise<JournalRow[]> {
  const open = cache.db.journalRows(worktree, "created");
  if (open.length === 0) return open;
  const present = await listTree(
    cache,
    objects,
    commit,
    open.map((row) => row.path).filter((path) => !isUnsafePath(path)),
  );
  for (const row of open) if (!present.has(row.path)) cache.db.journalSettle(row.id, row.content_oid);
  return open.filter((row) => present.has(row.path));
}

async function loadChanges(
  context: PushContext,
  objects: PushObjects,
  commit: string,
  mergeBase: string,
  worktree: string,
  open: readonly JournalRow[],
): Promise<Changes> {
  const { cache, backend } = context;
  const schema = backend.schema;
  // Tokens (versions) come from the state the user last saw: the commit a push of the base produced, if
  // the base is a pushed commit, else the base itself.
  const tokenTree = cache.db.pushResult(mergeBase) ?? mergeBase;
  context.trace(`base ${mergeBase}, tokens from ${tokenTree}`);
  const diff = await diffCommits(cache, objects, mergeBase, commit);
  const oids = new Set<string>();
  for (const entry of diff)
    for (const oid of [entry.oldOid, entry.newOid]) if (!/^0+$/.test(oid)) oids.add(oid);
  // The token tree's files are asked for by record key below; a changed file is almost always its own
  // record's file, so those are listed at once, beside reading the blobs, and only the rest later. A path
  // git cannot look up (`..` parts of a crafted tree) is left to the planner, which refuses it.
  const changedPaths = new Set(diff.map((entry) => entry.path));
  const [contents, listed] = await Promise.all([
    blobContents(cache, objects, oids),
    listTree(
      cache,
      objects,
      tokenTree,
      [...changedPaths].filter((path) => !isUnsafePath(path)),
    ),
  ]);

  // The files of the token tree the plan can ask about: the records the changed files name.
  const keys = new Set<string>();
  // Each record's file in the base (the user's own files), by record key.
  const baseFiles = new Map<string, { path: string; oid: string }>();
  for (const entry of diff) {
    for (const oid of [entry.oldOid, entry.newOid]) {
      const id = idOf(context, entry.path, contents.get(oid));
      if (id) keys.add(id);
      const created = cache.db.createdKey(worktree, entry.path, oid);
      if (created) keys.add(created);
      const key = id ?? created;
      if (key && oid === entry.oldOid && !/^0+$/.test(oid)) baseFiles.set(key, { path: entry.path, oid });
    }
  }
  for (const row of open) if (row.created_key) keys.add(row.created_key);
  const unlisted = [...keys].map((key) => schema.fileName(key)).filter((path) => !changedPaths.has(path));
  const tokenFiles =
    unlisted.length === 0
      ? listed
      : new Map([...listed, ...(await listTree(cache, objects, tokenTree, unlisted))]);
  const tokenFrom = (record: RecordContent) => {
    const version =
      schema.tokenFields.version === undefined ? undefined : record.fields[schema.tokenFields.version];
    const updatedAt = record.fields[schema.tokenFields.updatedAt];
    return {
      version: typeof version === "number" ? version : null,
      updatedAt: typeof updatedAt === "string" ? updatedAt : "",
    };
  };
  const tokenOf = (key: string) => {
    // A push's result also holds what that push's sync brought: newer versions of records the push did
    // not write, and deletions, which the user's files do not have. Its token is the user's only where the
    // user's file holds its content (the push wrote it); else the user's own file says which version they
    // edited: an edit of an older version is stale, not a write over the newer one.
    const mine = tokenTree === mergeBase ? undefined : baseFiles.get(key);
    const own = mine && parsedOrUndefined(context, mine.path, contents.get(mine.oid));
    const oid = tokenFiles.get(schema.fileName(key));
    const content = oid ? (cache.db.blob(oid)?.content ?? contents.get(oid)) : undefined;
    if (!oid || !content) return own && tokenFrom(own);
    const record = parseRecordFile(schema, schema.fileName(key), content.toString("utf8"));
    if (own && mine?.oid !== oid && !isNoChange(recordChanges(schema, record, own))) return tokenFrom(own);
    return tokenFrom(record);
  };
  return { diff, contents, tokenOf };
}

async function integrate(
  context: PushRun,
  objects: PushObjects,
  commit: string,
  tipBefore: string,
  mergeBase: string,
): Promise<PushReply> {
  const { cache, backend, log } = context;
  if (!mergeBase) {
    log(
      "svc: your history shares no commit with the server's; start from a clone (svc init) and copy your files over",
    );
    return { ok: false, reason: "unrelated history" };
  }
  const worktree = worktreeId();
  context.trace(`working tree ${worktree}`);
  // Before anything is planned: a create a killed push sent is found on the server, or proven unwritten.
  resolveUnfinishedCreates(cache, backend, worktree, log);
  const open = await settleAbandonedCreates(cache, objects, worktree, commit);
  const changes = await loadChanges(context, objects, commit, mergeBase, worktree, open);
  const plan = planPush({
    schema: backend.schema,
    entries: changes.diff,
    read: (oid) => {
      const content = changes.contents.get(oid);
      if (!content)
        throw new SvcError("SVC_STORE", `blob ${oid} of the pushed commits is missing from the cache`);
      return content;
    },
    baseToken: changes.tokenOf,
    journal: journalLookup(cache, backend, worktree, open, changes.tokenOf),
    maxBodyBytes: backend.maxRecordBytes,
  });
  context.trace(`planned ${plan.writes.length} writes, ${plan.problems.length} problems`);
  crashPoint("planned");
  const refused = await refusal(context, plan, commit, mergeBase);
  if (refused) return refused;

  const judged = judge(context, plan.writes);
  if (judged.stale.length > 0) return await staleRefusal(context, judged.stale, commit);
  const failure = await applyWrites(context, judged.writes, commit, worktree);
  if (failure) return failure;
  context.trace(`wrote ${judged.writes.length}`);
  crashPoint("result");
  await commitResult(context, objects, {
    commit,
    tipBefore,
    mergeBase,
    worktree,
    diff: changes.diff,
    writes: judged.writes,
  });
  reportIgnoredEdits(context, plan.ignoredEdits);
  const respelled = respelledBodies(backend.schema, judged.writes);
  for (const note of respelledNotes(respelled, backend.schema.kind)) context.log(note);
  crashPoint("done");
  return { ok: true, oldOid: tipBefore };
}

/**
 * After an accepted push: the files whose server-controlled fields the user edited, and how to put the
 * server's values back. `git pull`, not a restore and a commit: the push's result commit (cache `main`)
 * sits on top of the pushed one with the server's values, so the pull fast-forwards to them, while a
 * commit restoring the old values would itself be an edit of those fields in the next push (its base is
 * the pushed commit) and warn again. `--ff-only`: whatever pull.ff or pull.rebase say, no editor opens.
 */
function reportIgnoredEdits(context: PushContext, ignored: Plan["ignoredEdits"]): void {
  if (ignored.length === 0) return;
  for (const { path, fields } of ignored) {
    const one = fields.length === 1;
    context.log(
      `svc: ${path}: ${fields.join(", ")} ${one ? "is" : "are"} set by the server; your edit of ${one ? "it" : "them"} was not sent`,
    );
  }
  const these = ignored.length === 1 && ignored[0]?.fields.length === 1 ? "value" : "values";
  context.log(
    `  to put the server's ${these} back in ${ignored.length === 1 ? "the file" : "these files"}, run: git pull --ff-only`,
  );
}

/** The refusal of a plan with problems or too many deletes (nothing written), if it must be refused. */
async function refusal(
  context: PushContext,
  plan: Plan,
  commit: string,
  mergeBase: string,
): Promise<PushReply | undefined> {
  const { cache, log } = context;
  if (plan.problems.length > 0) {
    log("svc: push rejected, nothing was written:");
    for (const problem of plan.problems)
      log(`  ${problem.path}: ${problem.message.replace(/\n/g, "\n    ")}`);
    // The commit the command makes must not fail on a merge of the user's still under way (`git commit`
    // refuses while files hold conflicts): those files are resolved and added as well.
    const unmerged = ((await mergeInProgress())?.unmerged ?? []).map((path) => ({
      path,
      message: "",
      remedy: { kind: "resolve", file: path } as const,
    }));
    if (unmerged.length > 0)
      log(`  your merge under way has conflicts in ${unmerged.map((file) => file.path).join(", ")} too`);
    const next = nextCommand([...plan.problems, ...unmerged], userPrefix());
    if (next) log(describeNext(next));
    cache.db.audit({ op: "push-reject", oid: commit, detail: { problems: plan.problems.length } });
    return { ok: false, reason: problemSummary(plan.problems) };
  }
  const deletes = plan.writes.filter((write) => write.kind === "delete").length;
  if (context.bulkDeleteLimit === 0 || deletes <= context.bulkDeleteLimit) return undefined;
  const messages = (
    await runGit(cache.repo, ["log", "--format=%B", `${mergeBase}..${commit}`])
  ).stdout.toString("utf8");
  if (messages.includes(ALLOW_BULK_DELETE)) return undefined;
  // A new (empty) commit carries the permission: any message of the pushed commits counts, and an amend
  // would open an editor or drop the user's own message.
  log(
    `svc: this push deletes ${deletes} records, more than SVC_BULK_DELETE_LIMIT=${context.bulkDeleteLimit}; nothing was written.\n` +
      `  If you mean it, say so in a commit message and push again:\n` +
      `  git commit --allow-empty -m "Delete ${deletes} records ${ALLOW_BULK_DELETE}" && git push`,
  );
  cache.db.audit({ op: "push-reject", oid: commit, detail: { deletes } });
  return { ok: false, reason: `${deletes} deletes; add ${ALLOW_BULK_DELETE} to the commit message to allow` };
}

/** The user's folder inside the working tree (`sub/`; empty at the top), where printed commands run. */
function userPrefix(): string {
  return process.env.GIT_PREFIX ?? "";
}

/** The lines that tell the user what to fix and the command to run then. */
function describeNext(next: NextCommand): string {
  const fix = next.fix.length === 0 ? "" : `fix ${next.fix.join(", ")} as said above, then `;
  const kept =
    next.untracked.length === 0
      ? ""
      : ` (${next.untracked.join(", ")} ${next.untracked.length === 1 ? "stays" : "stay"} on disk, untracked)`;
  return `  ${fix === "" ? "run" : `${fix}run`}${kept}:\n  ${next.command}`;
}

interface Stale {
  readonly key: string;
  readonly path: string;
  readonly why: string;
  /** The user's edit and the server's merge field by field (`svc.autoMerge` would write the merge). */
  readonly mergeable?: boolean;
}

function currentContent(context: PushContext, key: string): RecordContent | undefined {
  const current = context.cache.db.record(key);
  const blob = current && context.cache.db.blob(current.rendered_oid);
  return blob
    ? parseRecordFile(context.backend.schema, current.path, blob.content.toString("utf8"))
    : undefined;
}

/**
 * Staleness per record, against the server state the sync just brought: the writes to make (merged ones
 * under `svc.autoMerge`; none for a write an interrupted push already made) and the stale records.
 */
function judge(
  context: PushContext,
  planned: readonly PlannedWrite[],
): { writes: PlannedWrite[]; stale: Stale[] } {
  const { cache, backend } = context;
  const stale: Stale[] = [];
  const writes: PlannedWrite[] = [];
  for (const write of planned) {
    if (write.kind === "create") {
      writes.push(write);
      continue;
    }
    const current = cache.db.record(write.key);
    const behind = (version: number | null) => ({
      key: write.key,
      path: write.path,
      why: `version ${version} on the server, your base has ${write.base.version}`,
    });
    if (write.kind === "delete") {
      if (!current) continue; // already deleted on the server: nothing left to do
      if (current.version !== write.base.version) stale.push(behind(current.version));
      else writes.push(write);
      continue;
    }
    if (!current) {
      stale.push({ key: write.key, path: write.path, why: "deleted on the server" });
      continue;
    }
    if (current.version === write.base.version && current.updated_at === write.base.updatedAt) {
      writes.push(write);
      continue;
    }
    const theirs = currentContent(context, write.key);
    if (theirs && isNoChange(recordChanges(backend.schema, theirs, write.desired))) continue; // already written
    const merged = theirs && mergeRecord(backend.schema, write.original, write.desired, theirs);
    if (!merged || !context.autoMerge) {
      stale.push({ ...behind(current.version), mergeable: merged !== undefined });
      continue;
    }
    context.log(
      `svc: ${write.path} changed on the server too; the edits merge cleanly (svc.autoMerge), writing the merge`,
    );
    const changes = recordChanges(backend.schema, theirs, merged);
    if (isNoChange(changes)) continue;
    writes.push({
      ...write,
      base: { version: current.version, updatedAt: current.updated_at },
      changes,
      desired: merged,
    });
  }
  return { writes, stale };
}

async function staleRefusal(
  context: PushContext,
  stale: readonly Stale[],
  commit: string,
): Promise<PushReply> {
  const { log } = context;
  log(
    "svc: these records changed on the server since the state your commits are based on; nothing was written:",
  );
  for (const item of stale) log(`  ${item.path} (record ${item.key}): ${item.why}`);
  log(
    await pullAdvice(
      stale.map((item) => item.path),
      userPrefix(),
    ),
  );
  // svc merges field by field where git merges lines: edits of two adjacent lines conflict in git only.
  if (!context.autoMerge && stale.every((item) => item.mergeable)) {
    log(
      "  these edits merge field by field; to let svc merge them for you from now on: git config svc.autoMerge true && git push",
    );
  }
  context.cache.db.audit({ op: "push-reject", oid: commit, detail: { stale: stale.length } });
  return { ok: false, reason: "fetch first" };
}

/**
 * How to bring the server's changes to `paths` into the user's branch and push again, from where the
 * user stands: `git pull` (a merge: `--no-rebase` whatever pull.rebase says, `--no-edit` so no editor
 * opens for its message), and what to do when it stops at conflicts. A user in the middle of such a merge
 * already (`git push` pushes the commit before it) is told how to finish it: `git commit --no-edit`.
 */
async function pullAdvice(paths: readonly string[], prefix: string): Promise<string> {
  const merging = await mergeInProgress();
  if (merging) {
    const files = merging.unmerged.map((path) => pathFrom(prefix, path)).join(" ");
    const add = files === "" ? "" : `git add ${files} && `;
    const edit =
      files === ""
        ? ""
        : ` with conflicts in ${merging.unmerged.join(", ")}: edit them to keep one version of each conflicting part`;
    return `  you are in the middle of a merge${edit}; to finish it and push: ${add}git commit --no-edit && git push`;
  }
  const files = paths.map((path) => pathFrom(prefix, path)).join(" ");
  return (
    "  to merge the server's changes into yours and push: git pull --no-rebase --no-edit && git push\n" +
    `  if git pull stops at conflicts, edit ${paths.join(", ")} to keep one version of each conflicting part, then: ` +
    `git add ${files} && git commit --no-edit && git push`
  );
}

/** The user's merge under way (`MERGE_HEAD` is there), with the files that still hold conflicts. */
async function mergeInProgress(): Promise<{ unmerged: string[] } | undefined> {
  const head = await userGit(["rev-parse", "-q", "--verify", "MERGE_HEAD"]);
  if (head.code !== 0) return undefined;
  // Paths from the top of the working tree, where git started the helper.
  const diff = await userGit(["diff", "--name-only", "--diff-filter=U", "-z"]);
  return { unmerged: [...new Set(diff.stdout.split("\0").filter((path) => path !== ""))] };
}

function describeWrite(write: PlannedWrite): string {
  if (write.kind === "create") return `create from ${write.path}`;
  if (write.kind === "update") return `update of record ${write.key} (${write.path})`;
  return `delete of record ${write.key} (${write.path})`;
}

/** One write; returns the refusal when the server says the record changed under it. */
async function applyWrite(
  context: PushRun,
  write: PlannedWrite,
  worktree: string,
  done: number,
): Promise<PushReply | undefined> {
  const { cache, backend, log, tally } = context;
  if (write.kind === "create") {
    const row = journalCreate(cache, worktree, write.path, write.oid, write.changes);
    let record: Awaited<ReturnType<typeof backend.create>>;
    try {
      record = await backend.create(write.changes);
    } catch (error) {
      // Proven unwritten: the server answered and refused or redirected, or the request never reached it.
      // No answer (or a 5xx): the next push finds out.
      if (isPermanent(error) || isUnsent(error)) cache.db.journalDrop(row);
      throw error;
    }
    tally.answered = write;
    cache.db.exclusive(() => {
      journalCreated(cache, row, record);
      rememberRecord(cache, backend, record);
    });
    log(`svc: created record ${record.key} from ${write.path} (it becomes ${record.path})`);
    return undefined;
  }
  if (write.kind === "update") {
    const outcome = await backend.update(write.key, write.changes, write.base, write.desired);
    if (outcome.kind === "ok") {
      tally.answered = write;
      rememberRecord(cache, backend, outcome.record);
      return undefined;
    }
    if (outcome.kind === "gone") recordServerDeletion(context, write.key);
    return conflictAt(
      context,
      write,
      done,
      outcome.kind === "gone" ? "deleted on the server" : outcome.current,
    );
  }
  const outcome = await backend.remove(write.key, write.base);
  if (outcome.kind === "conflict") return conflictAt(context, write, done, outcome.current);
  tally.answered = write;
  if (outcome.kind === "ok" && outcome.record) {
    // Not deletable on this server: the record stays, changed (the forge closes it), and comes back on pull.
    rememberRecord(cache, backend, outcome.record);
    if (outcome.note) log(`svc: ${write.path}: ${outcome.note}`);
    return undefined;
  }
  cache.db.markDeleted(write.key);
  return undefined;
}

/** A 4xx answer a retry cannot change (not a timeout, a conflict or a rate limit). */
function isPermanent(error: unknown): boolean {
  const status = error instanceof SvcError ? error.data.status : undefined;
  return (
    typeof status === "number" && status >= 400 && status < 500 && ![408, 409, 425, 429].includes(status)
  );
}

/**
 * A write the server never acted on: the request did not reach it, or it answered with a redirect or with
 * a Retry-After (a 429 or 503: not done, come back later).
 */
function isUnsent(error: unknown): boolean {
  return (
    (error instanceof BackendUnreachableError && !error.sent) ||
    error instanceof RedirectError ||
    error instanceof RetryLaterError
  );
}

/** The writes in order (creates, updates, deletes), with progress on stderr while they last. */
async function applyWrites(
  context: PushRun,
  writes: readonly PlannedWrite[],
  commit: string,
  worktree: string,
): Promise<PushReply | undefined> {
  const order = { create: 0, update: 1, delete: 2 } as const;
  const sorted = [...writes].sort((a, b) => order[a.kind] - order[b.kind]);
  const total = sorted.length;
  context.tally.total = total;
  const phase = progress().start(
    `writing ${formatCount(total)} ${total === 1 ? "change" : "changes"} to ${context.backend.description}`,
    `0 of ${total}`,
  );
  // Lines logged while the progress line is on a terminal go above it.
  const shown = { ...context, log: (message: string) => phase.aside(() => context.log(message)) };
  let done = 0;
  try {
    for (const write of sorted) {
      const failed = await applyOne(shown, write, { worktree, commit, done, total });
      if (failed) return failed;
      phase.update(`${++done} of ${total}`);
    }
    return undefined;
  } finally {
    phase.end(`${done} of ${total} done`);
  }
}

/** One write of a push and its audit row; the refusal when it failed. */
async function applyOne(
  context: PushRun,
  write: PlannedWrite,
  at: { worktree: string; commit: string; done: number; total: number },
): Promise<PushReply | undefined> {
  try {
    const conflict = await applyWrite(context, write, at.worktree, at.done);
    if (conflict) return conflict;
  } catch (error) {
    // A local fault (the cache cannot note the write) is said by pushMain, with how far the writes got.
    if (!(error instanceof SvcError) || isLocalFault(error)) throw error;
    return partialFailure(context, write, error, { done: at.done, total: at.total, commit: at.commit });
  }
  context.cache.db.audit({
    op: "write",
    key: write.kind === "create" ? undefined : write.key,
    oid: at.commit,
    detail: { kind: write.kind, path: write.path },
  });
  context.tally.done++;
  context.tally.answered = undefined;
  crashPoint(`after-${write.kind}`);
  const dieAfter = dieAfterWrites();
  if (dieAfter !== undefined && at.done + 1 >= dieAfter) process.kill(process.pid, "SIGKILL");
  return undefined;
}

/**
 * A write failed after `done` others succeeded. A refusal a retry cannot change (a 4xx) names the file and
 * what to change; anything else (no answer, a 5xx) is finished by pushing again.
 */
function partialFailure(
  context: PushContext,
  write: PlannedWrite,
  error: SvcError,
  progress: { done: number; total: number; commit: string },
): PushReply {
  const { done, total, commit } = progress;
  const kept = `${done} of ${total} writes were done and are kept`;
  context.cache.db.audit({ op: "push-partial", oid: commit, detail: { done, planned: total } });
  if (isPermanent(error)) {
    context.log(
      `svc: the server refused the ${describeWrite(write)}: ${error.message}\n` +
        `  ${kept}; pushing again as it is fails the same way. Change ${write.path} as the server asks, then:\n` +
        `  git commit -am ${shellWord(`Fix ${terminalSafe(write.path)}`)} && git push`,
    );
    return {
      ok: false,
      reason: `${write.path}: refused by the server (${error.data.status}); change the file and push`,
    };
  }
  if (write.kind === "delete" && !isUnsent(error)) listEverythingNext(context.cache);
  const message = error instanceof RedirectError ? redirectMessage(error, context.remote) : error.message;
  if (done === 0 && isUnsent(error)) {
    context.log(
      `svc: the ${describeWrite(write)} failed: ${message}\n  nothing was written${againWhen(error)}`,
    );
    return { ok: false, reason: "nothing was written; push again (see above)" };
  }
  context.log(
    `svc: the ${describeWrite(write)} failed: ${message}\n` +
      `  ${kept}; push again to finish the rest (nothing is written twice)${againWhen(error)}`,
  );
  return { ok: false, reason: `partial: ${done} of ${total} writes done; push again to finish` };
}

/**
 * A local fault (a full or read-only cache) stopped the push: says it, with how far the writes got, and
 * replies `error` (the helper exits 2). The writes the server answered are kept. One it answered that the
 * cache could not note is found by the next push (an update or a delete by its sync, a create by the
 * journal's `sending` row), so pushing again finishes the rest and sends nothing twice. Anything that is
 * no local fault is thrown on.
 */
function localFaultReply(context: PushRun, error: unknown): PushReply {
  const { tally, cache } = context;
  const reached = tally.done + (tally.answered ? 1 : 0);
  const outcome =
    reached === 0
      ? "nothing was written to the server"
      : `${reached} of ${tally.total} writes reached the server and are kept` +
        (tally.answered
          ? ` (the cache could not note the last, the ${describeWrite(tally.answered)}; the next push finds it on the server and does not send it again)`
          : "");
  const fault = asLocalFault(error, { outcome, rerun: rerunCommand(), root: dirname(cache.dir) });
  if (!fault) throw error;
  context.log(`svc: ${fault.message}`);
  const done = reached === 0 ? "nothing was written" : `partial: ${reached} of ${tally.total} writes done`;
  return { ok: false, reason: `${fault.summary}; ${done}`, broken: true };
}

/**
 * A delete the server may have done although no answer said so: a delta listing cannot show a deletion,
 * so the next sync makes a full listing (as `svc sync --reconcile` does) and the cache loses the record.
 */
function listEverythingNext(cache: ProjectCache): void {
  cache.db.exclusive(() => cache.db.setSyncState({ ...cache.db.syncState(), last_full_ms: 0 }));
}

/** When to push again after `error`, and the command. */
function againWhen(error: SvcError): string {
  if (error instanceof RedirectError) return "; once the remote URL is right, run: git push";
  if (isServerFault(error)) return `; ${whenAgain(error)}, run: git push`;
  return ": git push";
}

/** What a push wrote, by kind. */
/** What a push wrote: deletes that left the record on the server (the forge closes an issue) are `kept`. */
interface WriteCounts {
  create: number;
  update: number;
  delete: number;
  kept: number;
}

/** The message of a push's result commit; `summaryOfResult` reads its summary back. */
function resultMessage(backend: WritableBackend, summary: string): string {
  return `svc: push to ${backend.kind} project ${backend.project}\n\n${summary}\n`;
}

/** The summary (`writeSummary`) a result commit's raw object carries, or undefined for another commit. */
export function summaryOfResult(commitObject: string): string | undefined {
  const body = commitObject.slice(commitObject.indexOf("\n\n") + 2);
  if (!body.startsWith("svc: push to ")) return undefined;
  return /^\d+ created, \d+ updated(, \d+ [a-z]+)*$/m.exec(body)?.[0];
}

/** `svc: <backend>: 1 created, 2 updated, 0 deleted<how>`: what a push wrote, as the user is told. */
function summaryLine(backend: WritableBackend, summary: string, wrote: boolean, how = ""): string {
  return `svc: ${backend.description}: ${summary}${how}${wrote ? "; git pull brings the server's versions and ids" : ""}`;
}

/**
 * The cache's main after a push: on top of the user's commit (a merge when the user was behind), with the
 * tree of the server state after the writes, so `git pull` fast-forwards.
 *
 * Two transactions, so that a push killed anywhere in them is finished by the next one: first the result
 * commit and the note that it is this push's result (`pushes`), then the move of main there, with the
 * journal's open creates settled. `setTip` renames the ref file before its transaction commits; when that
 * one transaction also noted the push, a kill between the rename and the commit left a main containing the
 * user's commit while the database had never heard of the push, and the next push of that commit was
 * refused as non-fast-forward (git's bare hint) although every write had landed. Now such a kill leaves the
 * note: the next push finds its commit carried (`alreadyOnServer`), and one killed before the move plans
 * again and finds every write done.
 */
async function commitResult(
  context: PushRun,
  objects: PushObjects,
  push: {
    commit: string;
    tipBefore: string;
    mergeBase: string;
    worktree: string;
    diff: readonly DiffEntry[];
    writes: readonly PlannedWrite[];
  },
): Promise<void> {
  const { cache, backend, log } = context;
  const { commit, tipBefore, mergeBase, writes } = push;
  const tipSeen = cache.tip() ?? tipBefore;
  // The merge base already says whether the user's commit contains the tip it was compared with: a commit
  // is an ancestor of another exactly when it is their merge base. Only a tip moved since needs a walk.
  const containsTip =
    tipSeen === tipBefore
      ? mergeBase === tipBefore
      : (await findMergeBase(cache.repo, objects.trees.read, tipSeen, commit)) === tipSeen;
  const parentsSeen = containsTip ? [commit] : [tipSeen, commit];
  const counts: WriteCounts = { create: 0, update: 0, delete: 0, kept: 0 };
  // A delete the server could not do leaves the record there, changed (the forge closes the issue).
  for (const write of writes)
    counts[write.kind === "delete" && cache.db.record(write.key) ? "kept" : write.kind]++;
  const summary = writeSummary(counts, backend.schema.deleteDoes);
  const message = resultMessage(backend, summary);
  // Another working tree's push or fetch may have moved main since tipSeen was read (every writer moves it
  // under this lock): then build on the tip as it is now, or that commit would drop out of main.
  const build = (tip: string) => {
    const written = writeStateCommit(cache, tip === tipSeen ? parentsSeen : [tip, commit], message);
    cache.db.recordPush(commit, written);
    return written;
  };
  const built = cache.db.exclusive(() => {
    const tip = cache.tip() ?? tipBefore;
    return { tip, written: build(tip) };
  });
  crashPoint("noted");
  const result = cache.db.exclusive(() => {
    const tip = cache.tip() ?? tipBefore;
    const written = tip === built.tip ? built.written : build(tip);
    cache.setTip(written, "push", commit);
    crashPoint("moved");
    settleCreates(cache, push.worktree, push.diff);
    return written;
  });
  // gitPid: the git that hears `ok` and then moves the user's refs/svc/<remote>/main (git/ref-locks.ts).
  cache.db.audit({ op: "push-accept", oid: commit, detail: { ...counts, result, gitPid: process.ppid } });
  // Here, not in the sync above: that one runs beside the copy of the user's commits into the cache.
  await cache.consolidateIfDue(log);
  context.trace(`result commit ${result}`);
  log(summaryLine(backend, summary, writes.length > 0));
}

/**
 * `1 created, 2 updated, 0 deleted`. Where a delete keeps the record (`deleteDoes`), those deletes are
 * counted by that word instead (`0 created, 0 updated, 1 closed`), and deleted ones (a record already gone
 * from the server) only when there are some.
 */
function writeSummary(counts: WriteCounts, deleteDoes: string | undefined): string {
  const parts = [`${counts.create} created`, `${counts.update} updated`];
  if (deleteDoes !== undefined || counts.kept > 0) parts.push(`${counts.kept} ${deleteDoes ?? "kept"}`);
  if (deleteDoes === undefined || counts.delete > 0) parts.push(`${counts.delete} deleted`);
  return parts.join(", ");
}

/**
 * A record the server no longer has, found out at write time (a delta sync cannot see deletions): the
 * cache drops it and its `main` gains a commit without the file, so the `git pull` the message asks for
 * brings the deletion.
 */
function recordServerDeletion(context: PushContext, key: string): void {
  const { cache, backend } = context;
  cache.db.exclusive(() => {
    if (!cache.db.record(key)) return;
    cache.db.markDeleted(key);
    const tip = cache.tip();
    const commit = writeStateCommit(
      cache,
      tip ? [tip] : [],
      `svc: sync ${backend.kind} project ${backend.project}\n\n0 changed, 1 removed\n`,
    );
    cache.setTip(commit, "found-deleted");
  });
}

async function conflictAt(
  context: PushContext,
  write: PlannedWrite,
  done: number,
  current: string,
): Promise<PushReply> {
  context.log(
    `svc: ${write.path} changed on the server while this push was writing (${current}); ` +
      `${done} earlier writes were done and are kept.\n${await pullAdvice([write.path], userPrefix())}`,
  );
  context.cache.db.audit({ op: "push-reject", detail: { conflict: write.path, done } });
  return { ok: false, reason: "fetch first" };
}
