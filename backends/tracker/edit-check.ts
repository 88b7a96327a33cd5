/**
 * The tracker's check of a push's writes before any of them (issue 35; `WritableBackend.checkWrites`), and
 * the fields of issue 35 in the shapes an edit or a create sends.
 *
 * Contract:
 * - A write that changes a read-only field (sprint, a value shown as JSON) is refused: sprints are changed
 *   on the board; a JSON value svc cannot map is never written.
 * - An update that changes components, fix_versions, due or a custom field is checked against
 *   `GET /rest/api/3/issue/{key}/editmeta` (asked once per issue per push): a field not on the edit
 *   screen, or a value not among the field's `allowedValues`, is refused naming the field and the allowed
 *   values. A create is not checked there (the create metadata is per issue type and costs more requests):
 *   the server's 400 names the fields, and the create's failure names them by their slugs.
 * - An edit sends only the changed fields: `customfield_10016: 5`, `{"value": "Core"}`,
 *   `[{"name": "API"}, {"name": "Web"}]`, `duedate: "2026-12-24"`, a user as `{accountId}`; `null` clears.
 */
import { isObject } from "../../core/checks.js";
import { SvcError } from "../../core/errors.js";
import type { RecordChanges, WriteToCheck } from "../backend.js";
import { type FieldValue, renderYamlString, stringList } from "../record.js";
import type { FieldCatalog } from "./field-catalog.js";
import { type CustomField, READ_ONLY_MAPPINGS, writeCustomValue } from "./fields.js";
import type { TrackerSite } from "./search.js";

/** The file's names of issue 35's system fields and the tracker's ids for them. */
const SYSTEM_IDS: Readonly<Record<string, string>> = {
  components: "components",
  fix_versions: "fixVersions",
  due: "duedate",
};

/** A field of issue 35 a write changes: its file name, its tracker id, and the custom field behind it. */
interface Changed {
  readonly name: string;
  readonly id: string;
  readonly value: FieldValue;
  readonly custom?: CustomField;
}

function changedFields(changes: RecordChanges, catalog: FieldCatalog): Changed[] {
  return Object.entries(changes.fields).flatMap(([name, value]): Changed[] => {
    const system = SYSTEM_IDS[name];
    if (system) return [{ name, id: system, value }];
    const custom = catalog.bySlug.get(name);
    return custom ? [{ name, id: custom.id, value, custom }] : [];
  });
}

/** The line as the file had it, for a message: `team: Core`, or that it had none. */
function lineOf(name: string, original: WriteToCheck["original"]): string {
  const value = original?.fields[name];
  if (value === undefined || value === null) return `it had no \`${name}\` line`;
  const shown = Array.isArray(value)
    ? `[${value.map(renderYamlString).join(", ")}]`
    : typeof value === "number"
      ? String(value)
      : renderYamlString(value as string);
  return `it was \`${name}: ${shown}\``;
}

/** Why a read-only field cannot be written, or undefined for a writable one. */
function readOnlyProblem(change: Changed): string | undefined {
  const custom = change.custom;
  if (!custom || !READ_ONLY_MAPPINGS.has(custom.mapping)) return undefined;
  if (custom.mapping === "sprint")
    return `field \`${change.name}\` (${custom.id}) is read-only in svc: sprints are changed on the board (Jira Software's backlog or board), or with the Agile REST API POST /rest/agile/1.0/sprint/{sprintId}/issue`;
  return `field \`${change.name}\` (${custom.id}, ${JSON.stringify(custom.name)}) is shown as its JSON because svc cannot map its type; it is read-only and never written`;
}

/** The names an `allowedValues` entry goes by (`value` of an option, `name` of a component or version). */
function allowedNames(allowed: unknown[]): string[] {
  return allowed.flatMap((item) => {
    if (!isObject(item)) return [];
    const name = typeof item.value === "string" ? item.value : item.name;
    return typeof name === "string" ? [name] : [];
  });
}

/** Why editmeta's `fields` refuses `change`, or undefined when the edit screen takes it. */
function editMetaProblem(change: Changed, fields: Record<string, unknown>, key: string): string | undefined {
  const meta = fields[change.id];
  const label = change.custom ? `\`${change.name}\` (${change.id})` : `\`${change.name}\``;
  if (!isObject(meta))
    return `field ${label} is not on ${key}'s edit screen, so the tracker does not let it be changed (an administrator can add it to the screen)`;
  if (change.value === null || !Array.isArray(meta.allowedValues)) return undefined;
  const allowed = allowedNames(meta.allowedValues);
  const wanted = Array.isArray(change.value) ? stringList(change.value) : [String(change.value)];
  const refused = wanted.filter((value) => !allowed.includes(value));
  if (refused.length === 0) return undefined;
  return `field ${label}: ${refused.map((value) => JSON.stringify(value)).join(", ")} ${refused.length === 1 ? "is" : "are"} not allowed on ${key}; the allowed values are ${allowed.length === 0 ? "none" : allowed.map((value) => JSON.stringify(value)).join(", ")}`;
}

/** Each planned write's problems (read-only fields, the edit screen), one message per file. */
export async function checkTrackerWrites(
  site: TrackerSite,
  catalog: FieldCatalog,
  writes: readonly WriteToCheck[],
): Promise<{ path: string; message: string }[]> {
  const problems: { path: string; message: string }[] = [];
  for (const write of writes) {
    const changed = changedFields(write.changes, catalog);
    if (changed.length === 0) continue;
    const found: string[] = [];
    const writable: Changed[] = [];
    for (const change of changed) {
      const readOnly = readOnlyProblem(change);
      if (readOnly) found.push(`${readOnly}; ${lineOf(change.name, write.original)}`);
      else writable.push(change);
    }
    if (write.kind === "update" && write.key !== undefined && writable.length > 0) {
      const fields = await editMeta(site, write.key);
      for (const change of writable) {
        const problem = editMetaProblem(change, fields, write.key);
        if (problem) found.push(`${problem}; ${lineOf(change.name, write.original)}`);
      }
    }
    if (found.length > 0) problems.push({ path: write.path, message: found.join("\n") });
  }
  return problems;
}

/** `GET /rest/api/3/issue/{key}/editmeta`'s `fields` (the description's `IssueUpdateMetadata`). */
async function editMeta(site: TrackerSite, key: string): Promise<Record<string, unknown>> {
  const what = `reading the edit screen of ${key} (editmeta)`;
  const response = await site.call("GET", site.api(`/issue/${encodeURIComponent(key)}/editmeta`));
  if (response.status !== 200) throw site.failure(what, response);
  const value = site.rest.parse<{ fields?: unknown }>(what, response, (json) =>
    isObject(json) ? undefined : "not an object",
  );
  return isObject(value.fields) ? value.fields : {};
}

/**
 * The fields of issue 35 `changes` sets, in the tracker's shapes (a create leaves out what it clears). A
 * read-only field here is svc's bug: the check above refuses it before any write.
 */
export function extraFieldsFor(
  changes: RecordChanges,
  catalog: FieldCatalog,
  creating: boolean,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const change of changedFields(changes, catalog)) {
    if (creating && (change.value === null || (Array.isArray(change.value) && change.value.length === 0)))
      continue;
    const readOnly = readOnlyProblem(change);
    if (readOnly) throw new SvcError("SVC_BACKEND", `${readOnly}; nothing of this record was written`);
    if (change.custom) fields[change.id] = writeCustomValue(change.custom.mapping, change.value);
    else if (change.id === "duedate") fields.duedate = change.value;
    else fields[change.id] = stringList(change.value).map((name) => ({ name }));
  }
  return fields;
}

/** A create's failure with each custom field id it names followed by its slug: `customfield_10050 (team)`. */
export function withSlugs(message: string, catalog: FieldCatalog): string {
  return message.replace(/customfield_[0-9]+/g, (id) => {
    const custom = catalog.byId.get(id);
    return custom ? `${id} (${custom.slug})` : id;
  });
}
