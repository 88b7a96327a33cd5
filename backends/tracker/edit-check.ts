/**
 * The tracker's check of a push's writes before any of them (issue 35; `WritableBackend.checkWrites`), and
 * the fields of issue 35 in the shapes an edit or a create sends.
 *
 * Contract:
 * - A write that changes a read-only field (sprint, a value shown as JSON) is refused: sprints are changed
 *   on the board; a JSON value svc cannot map is never written.
 * - An update that changes components, fix_versions, due or a custom field is checked against
 *   `GET /rest/api/3/issue/{key}/editmeta` (asked once per issue per push): a field not on the issue's edit
 *   screen, or a value not among the field's `allowedValues`, is refused naming the field and the allowed
 *   values, and the line as the file had it (the refusal restores the file).
 * - A create that sets one of them (a value the create sends: not empty) is checked the same way against
 *   the create screen of the issue type the create sends (create-screen.ts: `GET /rest/api/3/issue/
 *   createmeta/{project}/issuetypes/{issueTypeId}`, asked once per issue type per push). That type is the
 *   file's `type` line, else the project's default as the create picks it (workflow.ts `pickIssueType`:
 *   the backend always sends an `issuetype`, so the server never picks one). A `type` the project lacks is
 *   refused there too, naming its types. The refusal of a new file says to change the file's line. A
 *   create that fails anyway (a required field, a rule of the server's) names the refused fields by slug.
 * - An edit sends only the changed fields: `customfield_10016: 5`, `{"value": "Core"}`,
 *   `[{"name": "API"}, {"name": "Web"}]`, `duedate: "2026-12-24"`, a user as `{accountId}`; `null` clears.
 */
import { isObject } from "../../core/checks.js";
import { SvcError } from "../../core/errors.js";
import type { RecordChanges, WriteToCheck } from "../backend.js";
import { type FieldValue, renderYamlString, stringList } from "../record.js";
import { createScreen } from "./create-screen.js";
import type { FieldCatalog } from "./field-catalog.js";
import { type CustomField, READ_ONLY_MAPPINGS, writeCustomValue } from "./fields.js";
import type { TrackerSite } from "./search.js";
import type { IssueType } from "./workflow.js";

/** What a create's check needs of the backend: the project and the issue type a create sends for a name. */
export interface CreateScreens {
  readonly project: string;
  issueType(name: FieldValue | undefined): Promise<IssueType>;
}

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

/** The screen a write is judged by, for messages: an issue's edit screen, or an issue type's create screen. */
interface Screen {
  /** `TEST-1's edit screen`, `the create screen of issue type "Task" in project TEST`. */
  readonly name: string;
  /** What a value not allowed is not allowed on: `TEST-1`, or the create screen. */
  readonly on: string;
  /** What the tracker does not let be done with a field off the screen. */
  readonly refuses: string;
}

const editScreen = (key: string): Screen => ({
  name: `${key}'s edit screen`,
  on: key,
  refuses: "be changed",
});

const createScreenOf = (type: IssueType, project: string): Screen => {
  const name = `the create screen of issue type ${JSON.stringify(type.name)} in project ${project}`;
  return { name, on: name, refuses: "be set on a new issue" };
};

/** Why a screen's `fields` (by field id) refuse `change`, or undefined when the screen takes it. */
function screenProblem(change: Changed, fields: Record<string, unknown>, screen: Screen): string | undefined {
  const meta = fields[change.id];
  const label = change.custom ? `\`${change.name}\` (${change.id})` : `\`${change.name}\``;
  if (!isObject(meta))
    return `field ${label} is not on ${screen.name}, so the tracker does not let it ${screen.refuses} (an administrator can add it to the screen)`;
  if (change.value === null || !Array.isArray(meta.allowedValues)) return undefined;
  const allowed = allowedNames(meta.allowedValues);
  const wanted = Array.isArray(change.value) ? stringList(change.value) : [String(change.value)];
  const refused = wanted.filter((value) => !allowed.includes(value));
  if (refused.length === 0) return undefined;
  return `field ${label}: ${refused.map((value) => JSON.stringify(value)).join(", ")} ${refused.length === 1 ? "is" : "are"} not allowed on ${screen.on}; the allowed values are ${allowed.length === 0 ? "none" : allowed.map((value) => JSON.stringify(value)).join(", ")}`;
}

/** Each planned write's problems (read-only fields, the edit or create screen), one message per file. */
export async function checkTrackerWrites(
  site: TrackerSite,
  catalog: FieldCatalog,
  writes: readonly WriteToCheck[],
  creates: CreateScreens,
): Promise<{ path: string; message: string }[]> {
  const problems: { path: string; message: string }[] = [];
  // Each issue type's create screen, asked once per push.
  const screens = new Map<string, Promise<Record<string, unknown>>>();
  for (const write of writes) {
    const changed = changedFields(write.changes, catalog);
    if (changed.length === 0) continue;
    const creating = write.kind === "create";
    const line = (name: string) =>
      creating ? `change the \`${name}\` line of the new file or remove it` : lineOf(name, write.original);
    const found: string[] = [];
    const writable: Changed[] = [];
    for (const change of changed) {
      const readOnly = readOnlyProblem(change);
      if (readOnly) found.push(`${readOnly}; ${line(change.name)}`);
      else writable.push(change);
    }
    const judged = creating
      ? await judgeCreate(site, creates, screens, write, writable)
      : write.key !== undefined && writable.length > 0
        ? { screen: editScreen(write.key), fields: await editMeta(site, write.key), writable }
        : undefined;
    if (typeof judged === "string") found.push(judged);
    else if (judged) {
      for (const change of judged.writable) {
        const problem = screenProblem(change, judged.fields, judged.screen);
        if (problem) found.push(`${problem}; ${line(change.name)}`);
      }
    }
    if (found.length > 0) problems.push({ path: write.path, message: found.join("\n") });
  }
  return problems;
}

/**
 * The create screen `write` is judged by, and the changes it sends (a create leaves out what it clears);
 * undefined when it sends none of issue 35's fields; the refusal when its `type` names none of the
 * project's types.
 */
async function judgeCreate(
  site: TrackerSite,
  creates: CreateScreens,
  screens: Map<string, Promise<Record<string, unknown>>>,
  write: WriteToCheck,
  writable: readonly Changed[],
): Promise<{ screen: Screen; fields: Record<string, unknown>; writable: Changed[] } | string | undefined> {
  const sent = writable.filter((change) => !clears(change.value));
  if (sent.length === 0) return undefined;
  let type: IssueType;
  try {
    type = await creates.issueType(write.changes.fields.type);
  } catch (error) {
    // An unknown type (400): the create would fail on it; any other failure is the check's.
    if (!(error instanceof SvcError) || !isObject(error.data) || error.data.status !== 400) throw error;
    return `${error.message}; change the \`type\` line of the new file or remove it`;
  }
  let fields = screens.get(type.id);
  if (!fields) {
    fields = createScreen(site, creates.project, type);
    screens.set(type.id, fields);
  }
  return { screen: createScreenOf(type, creates.project), fields: await fields, writable: sent };
}

/** A value a create leaves out: none, or an empty list. */
function clears(value: FieldValue): boolean {
  return value === null || (Array.isArray(value) && value.length === 0);
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
    if (creating && clears(change.value)) continue;
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
