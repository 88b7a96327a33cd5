/**
 * The fake tracker's fields beyond the fixed ones (issue 35), in the vendor's shapes: the site's field list
 * (`GET /rest/api/3/field`, `FieldDetails[]`), an issue's edit metadata (`GET …/issue/{key}/editmeta`,
 * `IssueUpdateMetadata` with `allowedValues`), an issue type's create screen (`GET …/issue/createmeta/
 * {project}/issuetypes/{id}`, `FieldCreateMetadata[]`), the values of components, fix versions, due date, reporter,
 * resolution and custom fields on an issue, and the setters an edit or a create uses for them.
 *
 * A custom field's value is stored simply (a number, an option's value, a list of values, sprint names, a
 * cascading select's `{value, child}`) and rendered as Jira sends it.
 */
import { isObject, type JsonObject } from "./http.js";
import type { Change, Issue, Project } from "./model.js";
import type { FakeTrackerCustomField, FakeTrackerIssueType, TrackerIssueEdit } from "./types.js";
import { API } from "./vendor-data.js";

type FieldType = FakeTrackerCustomField["kind"];

/** What of the site (store.ts `Tracker`, which imports this file) the fields need: its custom fields. */
interface FieldSite {
  readonly customFields: readonly FakeTrackerCustomField[];
}

/** A field value a write refuses; the message goes under `errors[<field>]` (writes.ts). */
export class FieldError extends Error {}

const PLUGIN = "com.atlassian.jira.plugin.system.customfieldtypes";
export const SPRINT_PLUGIN = "com.pyxis.greenhopper.jira:gh-sprint";

/** Story Points (a number), Team (a single select), Sprint: what a Jira Software site has. */
export const DEFAULT_CUSTOM_FIELDS: readonly FakeTrackerCustomField[] = [
  { id: "customfield_10016", name: "Story Points", kind: "number" },
  { id: "customfield_10020", name: "Sprint", kind: "sprint" },
  { id: "customfield_10050", name: "Team", kind: "option", options: ["Core", "Platform", "Web"] },
];

const SCHEMA_OF: Record<FieldType, { type: string; items?: string; custom: string }> = {
  number: { type: "number", custom: `${PLUGIN}:float` },
  string: { type: "string", custom: `${PLUGIN}:textfield` },
  option: { type: "option", custom: `${PLUGIN}:select` },
  options: { type: "array", items: "option", custom: `${PLUGIN}:multiselect` },
  sprint: { type: "array", items: "json", custom: SPRINT_PLUGIN },
  cascading: { type: "option-with-child", custom: `${PLUGIN}:cascadingselect` },
};

function numberOf(id: string): number {
  return Number(id.replace(/^customfield_/, ""));
}

export function customSchema(field: FakeTrackerCustomField): JsonObject {
  return { ...SCHEMA_OF[field.kind], customId: numberOf(field.id) };
}

const SYSTEM_FIELDS: readonly (readonly [string, string, JsonObject])[] = [
  ["summary", "Summary", { type: "string", system: "summary" }],
  ["description", "Description", { type: "string", system: "description" }],
  ["status", "Status", { type: "status", system: "status" }],
  ["priority", "Priority", { type: "priority", system: "priority" }],
  ["labels", "Labels", { type: "array", items: "string", system: "labels" }],
  ["assignee", "Assignee", { type: "user", system: "assignee" }],
  ["reporter", "Reporter", { type: "user", system: "reporter" }],
  ["parent", "Parent", { type: "issuelink", system: "parent" }],
  ["issuetype", "Issue Type", { type: "issuetype", system: "issuetype" }],
  ["components", "Components", { type: "array", items: "component", system: "components" }],
  ["fixVersions", "Fix versions", { type: "array", items: "version", system: "fixVersions" }],
  ["duedate", "Due date", { type: "date", system: "duedate" }],
  ["resolution", "Resolution", { type: "resolution", system: "resolution" }],
  ["created", "Created", { type: "datetime", system: "created" }],
  ["updated", "Updated", { type: "datetime", system: "updated" }],
];

/** `GET /rest/api/3/field`: the system fields, then the custom ones. */
export function fieldList(customs: readonly FakeTrackerCustomField[]): JsonObject[] {
  const entry = (id: string, name: string, schema: JsonObject, custom: boolean): JsonObject => ({
    id,
    key: id,
    name,
    custom,
    orderable: true,
    navigable: true,
    searchable: true,
    clauseNames: custom ? [`cf[${numberOf(id)}]`, name] : [id],
    schema,
  });
  return [
    ...SYSTEM_FIELDS.map(([id, name, schema]) => entry(id, name, schema, false)),
    ...customs.map((field) => entry(field.id, field.name, customSchema(field), true)),
  ];
}

/** The `self` of a component, a version, an option. */
export class FieldShapes {
  constructor(
    private readonly origin: string,
    private readonly tracker: FieldSite,
    private readonly user: (accountId: string) => JsonObject,
  ) {}

  private api(path: string): string {
    return `${this.origin}${API}${path}`;
  }

  component(project: Project, name: string): JsonObject {
    const id = String(10000 + project.components.indexOf(name));
    return { self: this.api(`/component/${id}`), id, name };
  }

  version(project: Project, name: string): JsonObject {
    const id = String(10100 + project.versions.indexOf(name));
    return { self: this.api(`/version/${id}`), id, name, archived: false, released: false };
  }

  option(field: FakeTrackerCustomField, value: string): JsonObject {
    const id = String(numberOf(field.id) * 10 + (field.options ?? []).indexOf(value));
    return { self: this.api(`/customFieldOption/${id}`), value, id };
  }

  resolution(name: string): JsonObject {
    return { self: this.api("/resolution/10000"), id: "10000", description: `${name}.`, name };
  }

  /** A custom field's value as an issue carries it (null when it has none). */
  custom(field: FakeTrackerCustomField, stored: unknown): unknown {
    if (stored === undefined || stored === null) return null;
    switch (field.kind) {
      case "option":
        return this.option(field, String(stored));
      case "options":
        return (stored as string[]).map((value) => this.option(field, value));
      case "sprint":
        return (stored as string[]).map((name, index) => ({
          id: 1 + index,
          name,
          state: "active",
          boardId: 1,
          goal: "",
        }));
      case "cascading": {
        const { value, child } = stored as { value: string; child: string };
        return { ...this.option(field, value), child: this.option(field, child) };
      }
      default:
        return stored;
    }
  }

  /** An issue's fields of issue 35, by field id, for the selection `has` allows. */
  extraFields(issue: Issue, has: (id: string) => boolean): JsonObject {
    const out: JsonObject = {};
    const project = issue.project;
    if (has("components")) out.components = issue.components.map((name) => this.component(project, name));
    if (has("fixVersions")) out.fixVersions = issue.fixVersions.map((name) => this.version(project, name));
    if (has("duedate")) out.duedate = issue.duedate;
    if (has("reporter")) out.reporter = issue.reporter === null ? null : this.user(issue.reporter);
    if (has("resolution"))
      out.resolution = issue.resolution === null ? null : this.resolution(issue.resolution);
    for (const field of this.tracker.customFields) {
      if (has(field.id)) out[field.id] = this.custom(field, issue.custom.get(field.id));
    }
    return out;
  }

  /** `IssueUpdateMetadata`: the fields on the issue's edit screen, with the allowed values of the closed ones. */
  editMeta(issue: Issue): JsonObject {
    const project = issue.project;
    const meta = (key: string, name: string, schema: JsonObject, allowed?: unknown[]): JsonObject => ({
      required: key === "summary",
      schema,
      name,
      key,
      operations: ["set"],
      ...(allowed ? { allowedValues: allowed } : {}),
    });
    const fields: JsonObject = {};
    for (const [id, name, schema] of SYSTEM_FIELDS) {
      if (["status", "created", "updated", "resolution", "reporter"].includes(id)) continue;
      fields[id] = meta(id, name, schema, this.closedValues(project, id));
    }
    for (const field of this.tracker.customFields) {
      if (field.onEditScreen === false) continue;
      const allowed = field.options?.map((value) => this.option(field, value));
      fields[field.id] = meta(field.id, field.name, customSchema(field), allowed);
    }
    return { fields };
  }

  /**
   * The create screen of `type` in `project` (`FieldCreateMetadata[]`, whole): the fields a create may
   * set, with the allowed values of the closed ones. ASSUMPTION: every issue type's screen is the same but
   * for `parent`, required of a subtask; reporter is left off (the fake's create does not set it).
   */
  createMeta(project: Project, type: FakeTrackerIssueType): JsonObject[] {
    const meta = (key: string, name: string, schema: JsonObject, allowed?: unknown[]): JsonObject => ({
      fieldId: key,
      key,
      name,
      required: ["summary", "issuetype", "project"].includes(key) || (key === "parent" && type.subtask),
      schema,
      hasDefaultValue: false,
      operations: ["set"],
      ...(allowed ? { allowedValues: allowed } : {}),
    });
    const fields = [meta("project", "Project", { type: "project", system: "project" })];
    for (const [id, name, schema] of SYSTEM_FIELDS) {
      if (["status", "created", "updated", "resolution", "reporter"].includes(id)) continue;
      fields.push(meta(id, name, schema, this.closedValues(project, id)));
    }
    for (const field of this.tracker.customFields) {
      if (field.onCreateScreen === false) continue;
      const allowed = field.options?.map((value) => this.option(field, value));
      fields.push(meta(field.id, field.name, customSchema(field), allowed));
    }
    return fields;
  }

  /** The allowed values of system field `id` (components, fix versions), or undefined for an open field. */
  private closedValues(project: Project, id: string): JsonObject[] | undefined {
    if (id === "components") return project.components.map((value) => this.component(project, value));
    if (id === "fixVersions") return project.versions.map((value) => this.version(project, value));
    return undefined;
  }
}

function namesOf(value: unknown, allowed: readonly string[], what: string): string[] {
  if (!Array.isArray(value)) throw new FieldError(`${what} must be a list.`);
  return value.map((item) => {
    const name = isObject(item) ? item.name : undefined;
    // ASSUMPTION: the wording; a reference by id is not used by svc.
    if (typeof name !== "string" || !allowed.includes(name))
      throw new FieldError(`${what} name '${String(name)}' is not valid`);
    return name;
  });
}

function optionValue(field: FakeTrackerCustomField, value: unknown): string {
  const named = isObject(value) ? value.value : undefined;
  if (typeof named !== "string" || !(field.options ?? []).includes(named))
    throw new FieldError(`Option value '${String(named)}' is not valid`);
  return named;
}

/** The value a write sets on custom field `field`, stored as the fake keeps it. */
function customChange(field: FakeTrackerCustomField, value: unknown): unknown {
  if (value === null) return null;
  switch (field.kind) {
    case "number":
      if (typeof value !== "number") throw new FieldError("Operation value must be a number.");
      return value;
    case "string":
      if (typeof value !== "string") throw new FieldError("Operation value must be a string.");
      return value;
    case "option":
      return optionValue(field, value);
    case "options":
      if (!Array.isArray(value)) throw new FieldError("Operation value must be an array.");
      return value.map((item) => optionValue(field, item));
    default:
      // ASSUMPTION: the fake takes no sprint or cascading select writes (svc sends none).
      throw new FieldError(`Field '${field.id}' cannot be set by the fake.`);
  }
}

/**
 * The setter of a field of issue 35 named `name` (a create's or an edit's), or undefined for another field.
 * A custom field off the write's screen (the create screen, or the edit screen) has none (Jira: "cannot be
 * set … not on the appropriate screen").
 */
export function extraSetter(
  tracker: FieldSite,
  name: string,
  creating: boolean,
): ((value: unknown, project: Project) => Change) | undefined {
  if (name === "components")
    return (value, project) => ({ components: namesOf(value, project.components, "Component") });
  if (name === "fixVersions")
    return (value, project) => ({ fixVersions: namesOf(value, project.versions, "Version") });
  if (name === "duedate")
    return (value) => {
      if (value !== null && (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)))
        throw new FieldError("Error parsing date string: use yyyy-MM-dd.");
      return { duedate: value as string | null };
    };
  const field = tracker.customFields.find((candidate) => candidate.id === name);
  if (!field || (creating ? field.onCreateScreen : field.onEditScreen) === false) return undefined;
  return (value) => ({ custom: { [field.id]: customChange(field, value) } });
}

/** A test helper's fields of issue 35 as a `Change` (unknown custom field ids are the test's bug). */
export function extraHelperChange(
  tracker: FieldSite,
  edit: TrackerIssueEdit & { readonly reporter?: string | null },
): Change {
  const change: Change = {};
  if (edit.components !== undefined) change.components = [...edit.components];
  if (edit.fixVersions !== undefined) change.fixVersions = [...edit.fixVersions];
  if (edit.duedate !== undefined) change.duedate = edit.duedate;
  if (edit.reporter !== undefined) change.reporter = edit.reporter;
  if (edit.resolution !== undefined) change.resolution = edit.resolution;
  if (edit.custom !== undefined) {
    for (const id of Object.keys(edit.custom)) {
      if (!tracker.customFields.some((field) => field.id === id))
        throw new Error(`fake tracker: no custom field ${id}`);
    }
    change.custom = structuredClone({ ...edit.custom }) as Record<string, unknown>;
  }
  return change;
}
