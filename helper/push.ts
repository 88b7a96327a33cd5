/**
 * `push` (DESIGN.md §4; notes/push-and-lazy-cache.md C): the user's commits go into the cache byte for byte
 * with a real `git push`, the planner turns the changed record files into REST writes, and the cache's
 * `main` moves to a commit on top of the user's that carries what the server assigned.
 *
 * Nothing decides a conflict from shared cache state: the base is the newest cache commit the pushed
 * history contains (its merge-base with the cache's `main`), or the commit a push of it produced. A record
 * whose server version differs from that base is stale, and the push is rejected with git's own
 * `fetch first` before anything is written (unless `svc.autoMerge` merges it cleanly).
 */
import type { RecordChanges, WritableBackend } from "../backends/backend.js";
import { SvcError } from "../backends/errors.js";
import { parseRecordFile, type RecordContent } from "../backends/record.js";
import type { ProjectCache } from "../cache/cache.js";
import { readObjects, runGit } from "../cache/git.js";
import { rememberRecord, syncCache, writeStateCommit } from "../cache/sync.js";
import { mergeRecord } from "./merge.js";
import { type DiffEntry, type PlannedWrite, planPush, problemSummary } from "./push-plan.js";
import { userGit } from "./user-git.js";

export type PushReply =
  | { readonly ok: true; readonly oldOid: string | undefined }
  | { readonly ok: false; readonly reason: string };

export interface PushContext {
  readonly cache: ProjectCache;
  readonly backend: WritableBackend;
  /** The git remote's name in the user's repository (for its remote-tracking ref). */
  readonly remote: string;
  readonly autoMerge: boolean;
  readonly bulkDeleteLimit: number;
  readonly maxFileBytes: number;
  readonly log: (message: string) => void;
  readonly trace: (message: string) => void;
}

export const ALLOW_BULK_DELETE = "[allow-bulk-delete]";

async function isAncestor(cache: ProjectCache, ancestor: string, descendant: string): Promise<boolean> {
  return runGit(cache.repo, ["merge-base", "--is-ancestor", ancestor, descendant]).then(
    () => true,
    () => false,
  );
}

/** Parses `git diff-tree -r -z --raw` output into entries. */
export function parseRawDiff(output: Buffer): DiffEntry[] {
  const tokens = output.toString("utf8").split("\0");
  const entries: DiffEntry[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] ?? "";
    if (!token.startsWith(":")) continue;
    const [oldMode = "", newMode = "", oldOid = "", newOid = "", status = ""] = token.slice(1).split(" ");
    entries.push({ status: status.slice(0, 1), path: tokens[++i] ?? "", oldMode, newMode, oldOid, newOid });
  }
  return entries;
}

/** path → blob oid of the files `paths` in `treeish` (only those: a tree may have 10,000 entries). */
async function listTree(
  cache: ProjectCache,
  treeish: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  if (paths.length === 0) return new Map();
  const { stdout } = await runGit(cache.repo, ["ls-tree", "-z", "--full-tree", treeish, "--", ...paths]);
  const files = new Map<string, string>();
  for (const line of stdout.toString("utf8").split("\0")) {
    const tab = line.indexOf("\t");
    if (tab === -1) continue;
    const [, type, oid] = line.slice(0, tab).split(" ");
    if (type === "blob" && oid) files.set(line.slice(tab + 1), oid);
  }
  return files;
}

interface Stale {
  readonly key: string;
  readonly path: string;
  readonly why: string;
}

function describeWrite(write: PlannedWrite): string {
  if (write.kind === "create") return `create from ${write.path}`;
  if (write.kind === "update") return `update of record ${write.key} (${write.path})`;
  return `delete of record ${write.key} (${write.path})`;
}

export async function pushMain(context: PushContext, src: string): Promise<PushReply> {
  const { cache, backend, trace } = context;
  const [resolved, tracking] = await Promise.all([
    userGit(["rev-parse", "--verify", "-q", `${src}^{commit}`]),
    userGit(["rev-parse", "--verify", "-q", `refs/remotes/${context.remote}/main^{commit}`]),
  ]);
  const commit = resolved.stdout.trim();
  if (resolved.code !== 0 || !/^[0-9a-f]{40}$/.test(commit)) {
    return { ok: false, reason: `cannot resolve ${src} to a commit` };
  }
  cache.db.audit({ op: "push-start", oid: commit });

  const incomingRef = `refs/svc/incoming/${process.pid}`;
  const baseRef = `refs/svc/base/${process.pid}`;
  try {
    // The newest server state (staleness is judged against it) and the copy of the user's commits into the
    // cache do not depend on each other: both at once. Both settle before anything else happens, so a
    // failed sync never leaves a copy running that would recreate the refs deleted below.
    const [synced, refused] = await Promise.allSettled([
      syncCache(cache, backend, { trace }),
      copyIntoCache(context, commit, tracking.stdout.trim(), { incomingRef, baseRef }),
    ]);
    if (synced.status === "rejected") throw synced.reason;
    if (refused.status === "rejected") throw refused.reason;
    if (refused.value) return refused.value;
    trace(`pushed ${commit} into the cache`);
    const tipBefore = cache.tip();
    if (!tipBefore) return { ok: false, reason: "the cache has no server state yet; run git fetch first" };
    const mergeBase = await runGit(cache.repo, ["merge-base", commit, tipBefore]).then(
      (result) => result.stdout.toString("utf8").trim(),
      () => "",
    );
    // The user's commit is in the server's history already.
    if (mergeBase === commit) return { ok: false, reason: "up to date" };
    return await integrate(context, commit, tipBefore, mergeBase);
  } finally {
    await runGit(cache.repo, ["update-ref", "--stdin"], {
      input: `delete ${baseRef}\ndelete ${incomingRef}\n`,
    }).catch(() => undefined);
  }
}

/**
 * Copies the user's commits into the cache byte for byte (`git push` to `incomingRef`). The base ref (the
 * user's remote-tracking commit, when the cache has it) tells send-pack what the cache already has, so only
 * new objects travel, and nothing is fetched lazily in a partial clone. The caller deletes both refs.
 * Returns the refusal when the copy failed, else nothing.
 */
async function copyIntoCache(
  context: PushContext,
  commit: string,
  tracking: string,
  refs: { incomingRef: string; baseRef: string },
): Promise<PushReply | undefined> {
  const { cache, log } = context;
  // git refuses a ref to an object the cache does not have: then there is no base, and that is all.
  if (tracking) await runGit(cache.repo, ["update-ref", refs.baseRef, tracking]).catch(() => undefined);
  const pushed = await userGit([
    "push",
    "--porcelain",
    "--no-verify",
    "--quiet",
    cache.repo,
    `${commit}:${refs.incomingRef}`,
  ]);
  if (pushed.code !== 0) {
    log(`svc: could not copy your commits into the cache ${cache.repo}:\n${pushed.stderr.trim()}`);
    return { ok: false, reason: "svc could not store your commits in its cache (see above)" };
  }
  return undefined;
}

async function integrate(
  context: PushContext,
  commit: string,
  tipBefore: string,
  mergeBase: string,
): Promise<PushReply> {
  const { cache, backend, log } = context;
  const schema = backend.schema;
  if (!mergeBase) {
    log(
      "svc: your history shares no commit with the server's; start from a clone (svc init) and copy your files over",
    );
    return { ok: false, reason: "unrelated history" };
  }
  // Tokens (versions) come from the state the user last saw: the commit a push of the base produced, if
  // the base is a pushed commit, else the base itself.
  const tokenTree = cache.db.pushResult(mergeBase) ?? mergeBase;
  context.trace(`base ${mergeBase}, tokens from ${tokenTree}`);
  const diff = parseRawDiff(
    (await runGit(cache.repo, ["diff-tree", "-r", "-z", "--raw", "--no-renames", mergeBase, commit])).stdout,
  );
  const oids = new Set<string>();
  for (const entry of diff)
    for (const oid of [entry.oldOid, entry.newOid]) if (!/^0+$/.test(oid)) oids.add(oid);
  const contents = new Map<string, Buffer>();
  const fromRepo: string[] = [];
  for (const oid of oids) {
    const blob = cache.db.blob(oid);
    if (blob) contents.set(oid, blob.content);
    else fromRepo.push(oid);
  }
  // The token tree's files are asked for by record key below; a changed file is almost always its own
  // record's file, so those are listed at once, beside reading the blobs, and only the rest later.
  const changedPaths = new Set(diff.map((entry) => entry.path));
  const [read, listed] = await Promise.all([
    readObjects(cache.repo, fromRepo),
    listTree(cache, tokenTree, [...changedPaths]),
  ]);
  for (const [oid, content] of read) contents.set(oid, content);

  // The files of the token tree the plan can ask about: the records the changed files name.
  const keys = new Set<string>();
  for (const entry of diff) {
    for (const oid of [entry.oldOid, entry.newOid]) {
      const id = /^id: *"?([^"\n]+)"?$/m.exec(contents.get(oid)?.toString("utf8").slice(0, 4096) ?? "")?.[1];
      if (id) keys.add(id);
      const created = cache.db.createdKey(entry.path, oid);
      if (created) keys.add(created);
    }
  }
  const unlisted = [...keys].map((key) => schema.fileName(key)).filter((path) => !changedPaths.has(path));
  const tokenFiles =
    unlisted.length === 0 ? listed : new Map([...listed, ...(await listTree(cache, tokenTree, unlisted))]);
  const tokenOf = (key: string) => {
    const oid = tokenFiles.get(schema.fileName(key));
    const content = oid ? (cache.db.blob(oid)?.content ?? contents.get(oid)) : undefined;
    if (!oid || !content) return undefined;
    const record = parseRecordFile(schema, schema.fileName(key), content.toString("utf8"));
    const version =
      schema.tokenFields.version === undefined ? undefined : record.fields[schema.tokenFields.version];
    const updatedAt = record.fields[schema.tokenFields.updatedAt];
    return {
      version: typeof version === "number" ? version : null,
      updatedAt: typeof updatedAt === "string" ? updatedAt : "",
    };
  };
  const plan = planPush({
    schema,
    entries: diff,
    read: (oid) => {
      const content = contents.get(oid);
      if (!content)
        throw new SvcError("SVC_STORE", `blob ${oid} of the pushed commits is missing from the cache`);
      return content;
    },
    baseToken: tokenOf,
    journal: (path, oid) => cache.db.createdKey(path, oid),
    maxFileBytes: context.maxFileBytes,
  });

  context.trace(`planned ${plan.writes.length} writes, ${plan.problems.length} problems`);
  for (const ignored of plan.ignoredEdits) {
    log(
      `svc: ${ignored.path}: ${ignored.fields.join(", ")} ${ignored.fields.length === 1 ? "is" : "are"} set by the server; your edit of ${ignored.fields.length === 1 ? "it" : "them"} is not sent`,
    );
  }
  if (plan.problems.length > 0) {
    log("svc: push rejected, nothing was written:");
    for (const problem of plan.problems)
      log(`  ${problem.path}: ${problem.message.replace(/\n/g, "\n    ")}`);
    cache.db.audit({ op: "push-reject", oid: commit, detail: { problems: plan.problems.length } });
    return { ok: false, reason: problemSummary(plan.problems) };
  }

  const deletes = plan.writes.filter((write) => write.kind === "delete").length;
  if (context.bulkDeleteLimit > 0 && deletes > context.bulkDeleteLimit) {
    const messages = (
      await runGit(cache.repo, ["log", "--format=%B", `${mergeBase}..${commit}`])
    ).stdout.toString("utf8");
    if (!messages.includes(ALLOW_BULK_DELETE)) {
      log(
        `svc: this push deletes ${deletes} records, more than SVC_BULK_DELETE_LIMIT=${context.bulkDeleteLimit}; nothing was written.\n` +
          `  If you mean it, say so in the commit message: git commit --amend -m "<message> ${ALLOW_BULK_DELETE}", then push again.`,
      );
      cache.db.audit({ op: "push-reject", oid: commit, detail: { deletes } });
      return {
        ok: false,
        reason: `${deletes} deletes; add ${ALLOW_BULK_DELETE} to the commit message to allow`,
      };
    }
  }

  // Staleness per record, against the server state the sync just brought.
  const stale: Stale[] = [];
  const writes: PlannedWrite[] = [];
  for (const write of plan.writes) {
    if (write.kind === "create") {
      if (write.createdKey === undefined) writes.push(write);
      continue;
    }
    const current = cache.db.record(write.key);
    if (write.kind === "delete") {
      if (!current) continue; // already deleted on the server: nothing left to do
      if (current.version !== write.base.version) {
        stale.push({
          key: write.key,
          path: write.path,
          why: `version ${current.version} on the server, your base has ${write.base.version}`,
        });
      } else writes.push(write);
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
    if (theirs && sameContent(theirs, write.desired)) continue; // an interrupted push already wrote it
    if (context.autoMerge && theirs) {
      const merged = mergeRecord(schema, write.original, write.desired, theirs);
      if (merged) {
        const changes = diffContent(schema.fields, theirs, merged);
        log(
          `svc: ${write.path} changed on the server too; the edits merge cleanly (svc.autoMerge), writing the merge`,
        );
        if (Object.keys(changes.fields).length > 0 || changes.body !== undefined) {
          writes.push({
            ...write,
            base: { version: current.version, updatedAt: current.updated_at },
            changes,
            desired: merged,
          });
        }
        continue;
      }
    }
    stale.push({
      key: write.key,
      path: write.path,
      why: `version ${current.version} on the server, your base has ${write.base.version}`,
    });
  }
  if (stale.length > 0) {
    log(
      "svc: these records changed on the server since the state your commits are based on; nothing was written:",
    );
    for (const item of stale) log(`  ${item.path} (record ${item.key}): ${item.why}`);
    log("  run git pull, resolve any conflicts, commit, and push again");
    cache.db.audit({ op: "push-reject", oid: commit, detail: { stale: stale.length } });
    return { ok: false, reason: "fetch first" };
  }

  const done = await applyWrites(context, writes, commit);
  if (done.failure) return done.failure;
  context.trace(`wrote ${writes.length}`);

  // The cache's main: on top of the user's commit (a merge when the user was behind), with the tree of
  // the server state after the writes. `git pull` then fast-forwards.
  const tipSeen = cache.tip() ?? tipBefore;
  // The merge-base already says whether the user's commit contains the tip it was compared with.
  const containsTip =
    tipSeen === tipBefore && mergeBase === tipBefore ? true : await isAncestor(cache, tipSeen, commit);
  const parentsSeen = containsTip ? [commit] : [tipSeen, commit];
  const counts = { create: 0, update: 0, delete: 0 };
  for (const write of writes) counts[write.kind]++;
  const message =
    `svc: push to ${backend.kind} project ${backend.project}\n\n` +
    `${counts.create} created, ${counts.update} updated, ${counts.delete} deleted\n`;
  const result = cache.db.exclusive(() => {
    // Another working tree's push or fetch may have moved main since tipSeen was read (every writer moves
    // it under this lock): then build on the tip as it is now, or that commit would drop out of main.
    const tip = cache.tip() ?? tipBefore;
    const parents = tip === tipSeen ? parentsSeen : [tip, commit];
    const written = writeStateCommit(cache, parents, message);
    cache.setTip(written);
    cache.db.recordPush(commit, written);
    return written;
  });
  cache.db.audit({ op: "push-accept", oid: commit, detail: { ...counts, result } });
  // Here, not in the sync above: that one runs beside the copy of the user's commits into the cache.
  await cache.consolidateIfDue(log);
  context.trace(`result commit ${result}`);
  log(
    `svc: ${backend.description}: ${counts.create} created, ${counts.update} updated, ${counts.delete} deleted` +
      `${writes.length > 0 ? "; git pull brings the server's versions and ids" : ""}`,
  );
  return { ok: true, oldOid: tipBefore };
}

function currentContent(context: PushContext, key: string): RecordContent | undefined {
  const current = context.cache.db.record(key);
  const blob = current && context.cache.db.blob(current.rendered_oid);
  return blob
    ? parseRecordFile(context.backend.schema, current.path, blob.content.toString("utf8"))
    : undefined;
}

function sameContent(server: RecordContent, desired: RecordContent): boolean {
  for (const [name, value] of Object.entries(desired.fields)) {
    if (JSON.stringify(server.fields[name] ?? null) !== JSON.stringify(value ?? null)) return false;
  }
  return (
    server.body === desired.body || server.body === `${desired.body}\n` || desired.body === `${server.body}\n`
  );
}

function diffContent(
  specs: readonly { name: string; serverControlled: boolean }[],
  from: RecordContent,
  to: RecordContent,
): RecordChanges {
  const fields: Record<string, RecordContent["fields"][string]> = {};
  for (const spec of specs) {
    if (spec.serverControlled) continue;
    const value = to.fields[spec.name];
    if (value !== undefined && JSON.stringify(value) !== JSON.stringify(from.fields[spec.name] ?? null))
      fields[spec.name] = value;
  }
  return from.body === to.body ? { fields } : { fields, body: to.body };
}

/** A test-only switch: the helper kills itself after this many successful writes (a crash mid-push). */
function dieAfterWrites(): number | undefined {
  const value = Number(process.env.SVC_TEST_DIE_AFTER_WRITES);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

async function applyWrites(
  context: PushContext,
  writes: readonly PlannedWrite[],
  commit: string,
): Promise<{ failure?: PushReply }> {
  const { cache, backend, log } = context;
  const order = { create: 0, update: 1, delete: 2 } as const;
  const sorted = [...writes].sort((a, b) => order[a.kind] - order[b.kind]);
  const dieAfter = dieAfterWrites();
  let done = 0;
  for (const write of sorted) {
    try {
      if (write.kind === "create") {
        cache.db.journalCreate(write.path, write.oid);
        const record = await backend.create(write.changes);
        cache.db.exclusive(() => {
          cache.db.journalCreated(write.path, write.oid, record.key);
          rememberRecord(cache, backend, record);
        });
        log(`svc: created record ${record.key} from ${write.path} (it becomes ${record.path})`);
      } else if (write.kind === "update") {
        const outcome = await backend.update(write.key, write.changes, write.base, write.desired);
        if (outcome.kind === "gone") recordServerDeletion(context, write.key);
        if (outcome.kind !== "ok")
          return {
            failure: conflictAt(
              context,
              write,
              done,
              outcome.kind === "gone" ? "deleted on the server" : outcome.current,
            ),
          };
        rememberRecord(cache, backend, outcome.record);
      } else {
        const outcome = await backend.remove(write.key, write.base);
        if (outcome.kind === "conflict")
          return { failure: conflictAt(context, write, done, outcome.current) };
        cache.db.markDeleted(write.key);
      }
      done++;
      cache.db.audit({
        op: "write",
        key: write.kind === "create" ? undefined : write.key,
        oid: commit,
        detail: { kind: write.kind, path: write.path },
      });
      if (dieAfter !== undefined && done >= dieAfter) process.kill(process.pid, "SIGKILL");
    } catch (error) {
      if (!(error instanceof SvcError)) throw error;
      log(
        `svc: the ${describeWrite(write)} failed: ${error.message}\n` +
          `  ${done} of ${sorted.length} writes were done and are kept; push again to finish the rest (nothing is written twice)`,
      );
      cache.db.audit({ op: "push-partial", oid: commit, detail: { done, planned: sorted.length } });
      return {
        failure: {
          ok: false,
          reason: `partial: ${done} of ${sorted.length} writes done; push again to finish`,
        },
      };
    }
  }
  return {};
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
    cache.setTip(commit);
  });
}

function conflictAt(context: PushContext, write: PlannedWrite, done: number, current: string): PushReply {
  context.log(
    `svc: ${write.path} changed on the server while this push was writing (${current}); ` +
      `${done} earlier writes were done and are kept. Run git pull, resolve, and push again.`,
  );
  context.cache.db.audit({ op: "push-reject", detail: { conflict: write.path, done } });
  return { ok: false, reason: "fetch first" };
}
