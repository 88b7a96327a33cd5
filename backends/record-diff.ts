/**
 * What changed between two versions of one record: the one comparison the push planner, the staleness
 * check, `svc.autoMerge` and the check for a write an interrupted push already made all use (DESIGN.md §4).
 *
 * Contract:
 * - Only writable fields count; server-controlled ones (`id`, `version`, timestamps) are never compared.
 * - A field absent from a record is "not said", except an `omitWhenAbsent` field (the sim's `assignee`),
 *   whose absence means "none": removing its line is a change to `null`, which a write must send.
 * - Bodies that differ only by one final newline (an editor adding or removing it) are the same.
 */
import type { RecordChanges } from "./backend.js";
import type { FieldSpec, FieldValue, RecordContent, RecordSchema } from "./record.js";

/** The body `mine` equals `base`, or differs only by a final newline an editor added or removed. */
export function sameBody(base: string, mine: string): boolean {
  return mine === base || mine === `${base}\n` || base === `${mine}\n`;
}

function sameValue(a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => item === b[i]);
  return a === b;
}

/** The value a field has in `content` as a write sees it: `null` for an absent `omitWhenAbsent` field. */
function effective(spec: FieldSpec, content: RecordContent): FieldValue | undefined {
  const value = content.fields[spec.name];
  return value === undefined && spec.omitWhenAbsent ? null : value;
}

/** Whether field `spec` has the same value in `a` and in `b`, as a write sees it. */
export function sameField(spec: FieldSpec, a: RecordContent, b: RecordContent): boolean {
  return sameValue(effective(spec, a), effective(spec, b));
}

/**
 * The writable fields and body of `to` that differ from `from`: what a write turning `from` into `to`
 * sends. A field `to` does not say (absent, not `omitWhenAbsent`) is left as it is.
 */
export function recordChanges(schema: RecordSchema, from: RecordContent, to: RecordContent): RecordChanges {
  const fields: Record<string, FieldValue> = {};
  for (const spec of schema.fields) {
    if (spec.serverControlled) continue;
    const value = effective(spec, to);
    if (value === undefined) continue;
    if (!sameValue(effective(spec, from), value)) fields[spec.name] = value;
  }
  return sameBody(from.body, to.body) ? { fields } : { fields, body: to.body };
}

/** Whether `changes` would change nothing. */
export function isNoChange(changes: RecordChanges): boolean {
  return Object.keys(changes.fields).length === 0 && changes.body === undefined;
}

/**
 * The record the user wants, writable fields only: what `mine` says, and for a field it leaves out, the
 * base's value (or none, for an `omitWhenAbsent` field, whose absence clears it).
 */
export function desiredRecord(schema: RecordSchema, base: RecordContent, mine: RecordContent): RecordContent {
  const fields: Record<string, FieldValue> = {};
  for (const spec of schema.fields) {
    if (spec.serverControlled) continue;
    const said = mine.fields[spec.name];
    const value = said !== undefined || spec.omitWhenAbsent ? said : base.fields[spec.name];
    if (value !== undefined) fields[spec.name] = value;
  }
  return { fields, body: mine.body };
}

/** The server-controlled fields `mine` sets to something else than `base` has (edits that are not sent). */
export function editedServerFields(schema: RecordSchema, base: RecordContent, mine: RecordContent): string[] {
  return schema.fields
    .filter((spec) => spec.serverControlled && mine.fields[spec.name] !== undefined)
    .filter((spec) => !sameValue(mine.fields[spec.name], base.fields[spec.name]))
    .map((spec) => spec.name);
}
