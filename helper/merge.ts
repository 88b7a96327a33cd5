/**
 * Three-way merge of one record for `svc.autoMerge` (DESIGN.md §4): frontmatter field by field, the body
 * line by line with node-diff3. Two edits of different fields, or of different parts of the body, merge;
 * two different edits of the same field or the same lines do not.
 */
import { diff3Merge } from "node-diff3";
import type { FieldValue, RecordContent, RecordSchema } from "../backends/record.js";

function same(a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Splits text into lines that keep their line ends, so joining them gives the text back. */
function lines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export function mergeBody(base: string, ours: string, theirs: string): string | undefined {
  if (ours === base) return theirs;
  if (theirs === base || theirs === ours) return ours;
  const regions = diff3Merge(lines(ours), lines(base), lines(theirs), { excludeFalseConflicts: true });
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
    const b = base.fields[spec.name];
    const o = ours.fields[spec.name];
    const t = theirs.fields[spec.name];
    let value: FieldValue | undefined;
    if (same(o, b)) value = t;
    else if (same(t, b) || same(t, o)) value = o;
    else return undefined;
    if (value !== undefined) fields[spec.name] = value;
  }
  const body = mergeBody(base.body, ours.body, theirs.body);
  return body === undefined ? undefined : { fields, body };
}
