/**
 * Three-way merge of one record for `svc.autoMerge` (DESIGN.md §4): frontmatter field by field, the body
 * line by line with node-diff3. Two edits of different fields, or of different parts of the body, merge;
 * two different edits of the same field or the same lines do not. Field equality is the record diff's
 * (`backends/record-diff.ts`), so a removed `assignee:` line is an edit to "none" here as in every write.
 */
import { createRequire } from "node:module";
import type { FieldValue, RecordContent, RecordSchema } from "../backends/record.js";
import { sameField } from "../backends/record-diff.js";

/** node-diff3, loaded on the first merge: most pushes merge nothing, and the helper starts once per push. */
let diff3: typeof import("node-diff3") | undefined;

/** Splits text into lines that keep their line ends, so joining them gives the text back. */
function lines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export function mergeBody(base: string, ours: string, theirs: string): string | undefined {
  if (ours === base) return theirs;
  if (theirs === base || theirs === ours) return ours;
  diff3 ??= createRequire(import.meta.url)("node-diff3") as typeof import("node-diff3");
  const regions = diff3.diff3Merge(lines(ours), lines(base), lines(theirs), { excludeFalseConflicts: true });
  let merged = "";
  for (const region of regions) {
    if (region.conflict) return undefined;
    merged += (region.ok ?? []).join("");
  }
  return merged;
}

/** The merge of `ours` and `theirs` (writable fields and body) over `base`, or undefined on a conflict. */
export function mergeRecord(
  schema: RecordSchema,
  base: RecordContent,
  ours: RecordContent,
  theirs: RecordContent,
): RecordContent | undefined {
  const fields: Record<string, FieldValue> = {};
  for (const spec of schema.fields) {
    if (spec.serverControlled) continue;
    let value: FieldValue | undefined;
    if (sameField(spec, ours, base)) value = theirs.fields[spec.name];
    else if (sameField(spec, theirs, base) || sameField(spec, theirs, ours)) value = ours.fields[spec.name];
    else return undefined;
    if (value !== undefined) fields[spec.name] = value;
  }
  const body = mergeBody(base.body, ours.body, theirs.body);
  return body === undefined ? undefined : { fields, body };
}
