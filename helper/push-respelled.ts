/**
 * After an accepted push: the files that will read differently after `git pull` although nothing of theirs
 * was lost. A backend that converts bodies (the tracker: Markdown → ADF → Markdown, `schema.canonicalBody`)
 * gives a body back in its own spelling: `*x*` as `_x_`, `+ item` as `- item`, two trailing spaces as a
 * backslash, a wrapped paragraph on one line. Without a word, an agent comparing its file with what the
 * pull brings would take the change for a loss, or for someone else's edit, and "fix" it back.
 *
 * Pure: the push's writes in, the notes out; helper/push.ts prints them.
 */

import type { RecordSchema } from "../backends/record.js";
import { excerpt } from "../core/errors.js";
import type { PlannedWrite } from "./push-plan.js";

export interface Respelled {
  readonly path: string;
  /** The first line that differs (1-based, in the body), as written and as it will read. */
  readonly line: number;
  readonly wrote: string;
  readonly reads: string;
}

/** The written files whose body the server gives back spelled otherwise, with their first such line. */
export function respelledBodies(schema: RecordSchema, writes: readonly PlannedWrite[]): Respelled[] {
  const canonical = schema.canonicalBody;
  if (canonical === undefined) return [];
  const found: Respelled[] = [];
  for (const write of writes) {
    const body = write.kind === "delete" ? undefined : write.changes.body;
    if (body === undefined) continue;
    const reads = canonical(body);
    if (reads === body) continue;
    const mine = body.split("\n");
    const theirs = reads.split("\n");
    let index = 0;
    while (index < mine.length && mine[index] === theirs[index]) index++;
    found.push({ path: write.path, line: index + 1, wrote: mine[index] ?? "", reads: theirs[index] ?? "" });
  }
  return found;
}

/** The lines a push prints for `respelled` (none when it is empty). */
export function respelledNotes(respelled: readonly Respelled[], what: string): string[] {
  if (respelled.length === 0) return [];
  const notes = respelled.map(({ path, line, wrote, reads }) => {
    const example =
      wrote.trimEnd() === reads.trimEnd() && (wrote === "" || reads === "")
        ? "only the line breaks at its end differ"
        : `line ${line} of the body, ${excerpt(wrote, 60)}, reads ${excerpt(reads, 60)}`;
    return (
      `svc: ${path}: the ${what} keeps what you wrote and gives it back in its own Markdown spelling, ` +
      `so after git pull the file reads differently with the same meaning (${example})`
    );
  });
  const these = respelled.length === 1 ? "that spelling" : "those spellings";
  return [...notes, `  nothing was lost and there is nothing to fix: git pull --ff-only brings ${these}`];
}
