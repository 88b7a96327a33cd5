/**
 * The mirror's update: the commit that overlays the records folder on the branch tip, pushed with a plain
 * `git push <url> <commit>:refs/heads/<branch>` (no `--force`, no `+`, `--no-verify`), or for a dry run the
 * list of what would change. A mirror that moved since it was read fails git's own fast-forward check:
 * exit 1, nothing overwritten; the next run builds on the new tip.
 */
import { parsePushPorcelain } from "../../git/remote-output.js";
import { type ChangeCounts, countChanges, describeCounts } from "./changes.js";
import { gitRun, gitSaid } from "./mirror-git.js";
import {
  type MirrorTip,
  overlayRecords,
  readMirrorTip,
  shareCacheObjects,
  writeMirrorCommit,
} from "./overlay.js";
import { MIRROR_EXIT, type Refresh } from "./run-context.js";

/**
 * Reads the mirror's tip, builds the commit that overlays the records folder and pushes it (for a dry run:
 * lists what would change). Returns the exit code so far.
 */
export async function buildAndPush(refresh: Refresh, work: string, ref: string): Promise<number> {
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
