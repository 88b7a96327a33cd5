/**
 * What a mirror run tells about the records folder: the files a new commit adds, changes and removes (read
 * from `git diff-tree`, git/plumbing.ts), its commit message, and what the verification found different.
 * Pure functions; the words are the ones the run prints.
 */
import { parseRawDiff } from "../../git/plumbing.js";

/** At most this many names per list in a message. */
const NAMES_SHOWN = 20;

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

export function describeCounts(counts: ChangeCounts): string {
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
