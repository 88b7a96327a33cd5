/**
 * `svc log` and the state `svc init --at` checks out: the project's history as this machine's cache saw it
 * (cache/history.ts), read from the working tree's or the remote's cache without asking the server.
 */
import { join, relative, resolve, sep } from "node:path";
import { schemaOf } from "../backends/create.js";
import { cacheFolderName, ProjectCache } from "../cache/cache.js";
import type { TipRow } from "../cache/db.js";
import { type HistoryEntry, type RecordChange, readHistory, stateAt } from "../cache/history.js";
import { validatorStore } from "../cache/listing.js";
import { COMMENTLESS_SUFFIX } from "../cache/open.js";
import { cacheRoot } from "../cache/root.js";
import { shellWord, UserFacingError } from "../core/errors.js";
import type { RemoteUrl } from "../core/remote-url.js";
import { readFlag } from "../core/settings.js";
import { parseTimeArgument } from "../core/time-arg.js";
import { userGit, userGitOutput } from "../git/user-git.js";
import { svcRemoteOf } from "./working-tree.js";

/**
 * The healthy cache of `remote` on this machine (`withoutComments`: the one a clone with `svc.comments`
 * false uses, cache/open.ts `COMMENTLESS_SUFFIX`); refuses an absent or broken one, naming `fix` (the
 * command that makes one, whose history begins then).
 */
export function existingCache(remote: RemoteUrl, fix: string, withoutComments = false): ProjectCache {
  const dir = join(cacheRoot(), cacheFolderName(remote) + (withoutComments ? COMMENTLESS_SUFFIX : ""));
  const found = ProjectCache.check(dir, {
    backend: remote.kind,
    project: remote.project,
    agent: `svc-${process.pid}`,
  });
  if (found.state === "healthy") return found.cache;
  const what = `${remote.kind} project ${remote.project} at ${remote.origin}`;
  throw new UserFacingError(
    "SVC_USAGE",
    found.state === "absent"
      ? `this machine has no cache of ${what} (looked in ${dir}), so it has no history of it; ${fix} makes one, and its history begins then`
      : `the cache of ${what} in ${dir} is broken (${found.why}), so its history cannot be read; ${fix} rebuilds it, and its history begins again`,
  );
}

/**
 * Whether a clone lists comments: `git config svc.comments` (on unless false) as git reads it in the clone
 * at `dir`, or for a clone not made yet (`undefined`) the user's global setting, which its helper will read.
 */
export async function commentsOn(dir: string | undefined): Promise<boolean> {
  const args =
    dir === undefined ? ["config", "--global", "--get", "svc.comments"] : ["config", "--get", "svc.comments"];
  return readFlag("git config svc.comments", (await userGitOutput(args, { cwd: dir }))?.trim(), true);
}

export interface LogRequest {
  readonly dir: string;
  readonly files: readonly string[];
  readonly since: string | undefined;
  readonly json: boolean;
  readonly remote: string;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

export async function showLog(request: LogRequest): Promise<void> {
  const { dir } = request;
  const remote = await svcRemoteOf(dir, request.remote, "svc log");
  const sinceMs = request.since === undefined ? undefined : parseTimeArgument("--since", request.since);
  const paths = await treePaths(dir, request.files);
  const syncCommand = `svc sync${dir === "." ? "" : ` ${shellWord(dir)}`}`;
  const cache = existingCache(remote, syncCommand, !(await commentsOn(dir)));
  try {
    const schema = await schemaOf(remote.kind, validatorStore(cache));
    const entries = await readHistory(cache, schema, { sinceMs, paths });
    const lastSyncMs = cache.db.syncState().last_sync_ms;
    if (request.json) {
      request.stdout.write(
        `${JSON.stringify({
          remote: `svc::${remote.url}`,
          lastSyncAt: lastSyncMs > 0 ? new Date(lastSyncMs).toISOString() : null,
          states: entries.map(jsonEntry),
        })}\n`,
      );
      return;
    }
    for (const entry of entries) request.stdout.write(textEntry(entry));
    // The summary follows the states once a reader took them: one that hung up (`svc log | head -1`) ends
    // svc quietly instead (cli/main.ts).
    await flushed(request.stdout);
    const seen = lastSyncMs > 0 ? `last synced ${new Date(lastSyncMs).toISOString()}` : "never synced";
    request.stderr.write(
      `svc log: ${entries.length === 0 ? "no changes" : entries.length === 1 ? "1 state" : `${entries.length} states`} of ${remote.kind} project ${remote.project} as this machine's cache saw ${entries.length === 1 ? "it" : "them"}; ${seen}; ${syncCommand} brings what changed since\n`,
    );
  } finally {
    cache.close();
  }
}

/** Resolves once everything written to `stream` so far has gone out. */
function flushed(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => stream.write("", () => resolve()));
}

const OPS: Record<TipRow["op"], string> = {
  import: "first listing",
  sync: "sync",
  push: "push from this machine",
  continue: "continued a working tree's history in a rebuilt cache",
  "found-deleted": "a push found a record deleted on the server",
};

function textEntry(entry: HistoryEntry): string {
  const head = [
    `state ${entry.commit.slice(0, 12)}`,
    `seen ${new Date(entry.seenMs).toISOString()}`,
    entry.continues === undefined
      ? OPS[entry.op]
      : `${entry.op === "import" ? "first listing of a rebuilt cache" : OPS[entry.op]}, continuing state ${entry.continues.slice(0, 12)}`,
    ...(entry.pushedBy ? [`by ${entry.pushedBy}`] : []),
    ...(entry.records === undefined ? [] : [`${entry.records} records`]),
  ].join("  ");
  return `${head}\n${entry.changes.map((change) => `  ${textChange(change)}\n`).join("")}`;
}

function textChange(change: RecordChange): string {
  const what = change.detailed
    ? [...change.fields, ...(change.bodyChanged ? ["body"] : [])].join(", ")
    : "(the earlier version is not in this cache)";
  return [
    change.change.padEnd(7),
    change.path,
    ...(change.change === "changed" && what ? [what] : []),
    ...(change.updatedAt ? [`at ${change.updatedAt}`] : []),
    ...(change.changedBy ? [`by ${change.changedBy}`] : []),
  ].join("  ");
}

function jsonEntry(entry: HistoryEntry) {
  return {
    commit: entry.commit,
    op: entry.op,
    seenAt: new Date(entry.seenMs).toISOString(),
    pushedBy: entry.pushedBy ?? null,
    records: entry.records ?? null,
    continues: entry.continues ?? null,
    changes: entry.changes.map((change) => ({
      path: change.path,
      change: change.change,
      fields: change.detailed ? change.fields : null,
      bodyChanged: change.detailed ? change.bodyChanged : null,
      updatedAt: change.updatedAt ?? null,
      changedBy: change.changedBy ?? null,
    })),
  };
}

/**
 * `files` as paths from the top of the working tree `dir`: relative to the current folder when they lie
 * inside the tree (as git reads paths), else relative to its top.
 */
async function treePaths(dir: string, files: readonly string[]): Promise<string[]> {
  if (files.length === 0) return [];
  const top = await userGit(["rev-parse", "--show-toplevel"], { cwd: dir });
  const root = top.stdout.trim();
  if (top.code !== 0 || root === "") {
    throw new UserFacingError(
      "SVC_USAGE",
      `${dir} is not a git working tree; run svc log inside a folder made by svc init`,
    );
  }
  return files.map((file) => {
    const inside = relative(root, resolve(file));
    const path = inside.startsWith("..") || inside === "" ? file : inside;
    return path.split(sep).join("/").replace(/^\.\//, "");
  });
}

/**
 * The state of `remote` that this machine's cache held at `at` (svc init --at), or a refusal naming the times
 * it can show.
 */
export function stateOfCacheAt(
  remote: RemoteUrl,
  at: string,
  fix: string,
  withoutComments: boolean,
): { tip: TipRow; atMs: number } {
  const atMs = parseTimeArgument("--at", at);
  const cache = existingCache(remote, fix, withoutComments);
  try {
    const tips = cache.db.tips();
    const tip = stateAt(tips, atMs);
    if (tip) return { tip, atMs };
    const first = tips[0];
    throw new UserFacingError(
      "SVC_USAGE",
      first
        ? `this machine's cache first saw ${remote.kind} project ${remote.project} at ${new Date(first.at_ms).toISOString()}, after ${new Date(atMs).toISOString()}; it shows only states it saw: pick a time from then on, e.g. --at ${new Date(first.at_ms).toISOString()}`
        : `this machine's cache of ${remote.kind} project ${remote.project} has noted no state yet; ${fix} makes its first`,
    );
  } finally {
    cache.close();
  }
}
