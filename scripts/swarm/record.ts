/**
 * What a swarm agent writes about each operation, one JSON object a line, and the orchestrator reads back.
 * An operation is one edit, create or delete: one commit and the `git push` attempts (with the pulls and
 * scripted resolutions between them) until a push is accepted or the agent gives up.
 */
import { readFileSync } from "node:fs";

export type Action = "edit" | "create" | "delete";

export interface PushAttempt {
  /** `Date.now()` when `git push` started. */
  readonly at: number;
  readonly ms: number;
  /** `accepted` (exit 0), `fetch-first` (svc's pull advice), or `failed` (anything else). */
  readonly result: "accepted" | "fetch-first" | "failed";
}

export interface OpRecord {
  readonly agent: number;
  /** 1, 2, … per agent. */
  readonly op: number;
  /** Null when the operation failed before it chose (its first `git pull`). */
  readonly action: Action | null;
  /** The issue edited or deleted. */
  readonly issue?: number;
  /** The line an edit appended to the issue's body, or a create put in its body: `agent-<i> op-<n>`. */
  readonly line: string;
  /** A frontmatter field the edit also changed. */
  readonly field?: string;
  /** A create's title token, `swarm-a<i>-n<n>`. */
  readonly token?: string;
  /** The record a create made, from svc's `created record <id> from …` line. */
  readonly createdId?: number;
  /**
   * `accepted`: a push carrying the operation was accepted; `abandoned`: it was still refused with fetch
   * first after the agent's attempts; `failed`: a git or svc command failed in another way (`error`).
   */
  readonly outcome: "accepted" | "abandoned" | "failed";
  /**
   * The accepted push still carried the change: false when the merge before it accepted a deletion of the
   * issue the operation edited (a modify/delete conflict).
   */
  readonly carried: boolean;
  readonly pushes: readonly PushAttempt[];
  /** Files resolved by the script: content conflicts and modify/delete conflicts. */
  readonly resolvedContent: number;
  readonly resolvedDeletes: number;
  /** `git pull`s run for this operation (before it, and after each fetch first). */
  readonly pulls: number;
  /** The failing command and what it printed, for `failed`. */
  readonly error?: string;
}

/** Every record in `file` (none when the agent wrote none). */
export function readOpRecords(file: string): OpRecord[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as OpRecord);
}
