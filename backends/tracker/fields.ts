/**
 * The tracker's fields beyond the fixed ones (issue 35): the project's field list (`GET /rest/api/3/field`,
 * `FieldDetails[]`) as frontmatter names and types, and each value's mapping between the wire and a file.
 *
 * Contract:
 * - A custom field is named by the slug of its name: lowercase, each run of characters other than `a-z0-9`
 *   becomes `_`, trimmed of `_` ("Story Points" → `story_points`); a name that slugs to nothing is
 *   `field_<n>` (n: the number of its id `customfield_<n>`).
 * - Collisions are settled by the field list alone, so every machine renders the same bytes: the fixed
 *   frontmatter names always win; among custom fields sharing a slug the lowest id keeps it and each other
 *   gets `_<n>` (`team_10050`).
 * - Values (read): number → number; string → string; option → its `value`; array of options → the values;
 *   array of strings → the list; user → its accountId; array of users → the accountIds; date → YYYY-MM-DD;
 *   datetime → as sent; sprint (`com.pyxis.greenhopper.jira:gh-sprint`) → the sprint names, read-only;
 *   anything else (a cascading select, an ADF text area, a type svc does not know) → its JSON on one line
 *   with keys sorted, read-only. Null or empty → the line is absent.
 */
import { isObject } from "../../core/checks.js";
import { type FieldSpec, type FieldValue, field } from "../record.js";
import { TRACKER_SCHEMA } from "./schema.js";

/** One entry of the field list as svc keeps it (the members of `FieldDetails` it reads). */
export interface KeptField {
  readonly id: string;
  readonly name: string;
  readonly custom: boolean;
  readonly schema?: {
    readonly type?: string;
    readonly items?: string;
    readonly custom?: string;
    readonly system?: string;
  };
}

/** How a custom field's value maps between the wire and the file. */
export type Mapping =
  | "number"
  | "string"
  | "option"
  | "options"
  | "strings"
  | "user"
  | "users"
  | "date"
  | "datetime"
  | "sprint"
  | "json";

/** A custom field as svc shows it. */
export interface CustomField {
  /** `customfield_10016`. */
  readonly id: string;
  /** The number of its id: 10016. */
  readonly number: number;
  readonly name: string;
  /** Its frontmatter name. */
  readonly slug: string;
  readonly mapping: Mapping;
  readonly spec: FieldSpec;
}

export const SPRINT_TYPE = "com.pyxis.greenhopper.jira:gh-sprint";
const TEXT_AREA = "com.atlassian.jira.plugin.system.customfieldtypes:textarea";

/** Mappings whose values svc shows but never writes. */
export const READ_ONLY_MAPPINGS: ReadonlySet<Mapping> = new Set(["sprint", "json"]);

/** The frontmatter names a custom field can never take: the tracker's fixed fields (schema.ts). */
export const FIXED_NAMES: ReadonlySet<string> = new Set(TRACKER_SCHEMA.fields.map((spec) => spec.name));

/** "Story Points" → `story_points`. */
export function slugOf(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

/** How the field of `schema` maps (see the contract above). */
export function mappingOf(schema: KeptField["schema"]): Mapping {
  const type = schema?.type;
  if (schema?.custom === SPRINT_TYPE) return "sprint";
  if (type === "number") return "number";
  if (type === "string") return schema?.custom === TEXT_AREA ? "json" : "string";
  if (type === "option") return "option";
  if (type === "user") return "user";
  if (type === "date") return "date";
  if (type === "datetime") return "datetime";
  if (type === "array" && schema?.items === "option") return "options";
  if (type === "array" && schema?.items === "string") return "strings";
  if (type === "array" && schema?.items === "user") return "users";
  return "json";
}

function specOf(slug: string, mapping: Mapping): FieldSpec {
  const options = { nullable: true, omitWhenAbsent: true };
  switch (mapping) {
    case "number":
      return field(slug, "number", options);
    case "date":
      return field(slug, "date", options);
    case "json":
      return field(slug, "json", options);
    case "options":
    case "strings":
    case "users":
    case "sprint":
      return field(slug, "string-list", options);
    default:
      return field(slug, "string", options);
  }
}

/**
 * The custom fields of a field list, with their slugs by the collision rule, sorted by slug (the order of
 * their lines). Entries whose id is not `customfield_<n>` are left out.
 */
export function customFields(list: readonly KeptField[]): CustomField[] {
  const customs = list
    .flatMap((entry) => {
      const match = /^customfield_([0-9]{1,15})$/.exec(entry.id);
      return entry.custom && match ? [{ entry, number: Number(match[1]) }] : [];
    })
    .sort((a, b) => a.number - b.number);
  const taken = new Set(FIXED_NAMES);
  const result: CustomField[] = [];
  for (const { entry, number } of customs) {
    const base = slugOf(entry.name) || `field_${number}`;
    const slug = [base, `${base}_${number}`, `customfield_${number}`].find((name) => !taken.has(name));
    if (slug === undefined) continue;
    taken.add(slug);
    const mapping = mappingOf(entry.schema);
    result.push({ id: entry.id, number, name: entry.name, slug, mapping, spec: specOf(slug, mapping) });
  }
  return result.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
}

/** JSON with every object's keys sorted: one text for one value, whatever order the server sent. */
export function canonicalJson(value: unknown): string {
  const sorted = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(sorted);
    if (!isObject(item)) return item;
    return Object.fromEntries(
      Object.keys(item)
        .sort()
        .map((key) => [key, sorted(item[key])]),
    );
  };
  return JSON.stringify(sorted(value));
}

const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** The member `name` of each item, or undefined when one has none. */
function members(value: unknown[], name: string): string[] | undefined {
  const out: string[] = [];
  for (const item of value) {
    const member = isObject(item) ? item[name] : undefined;
    if (typeof member !== "string") return undefined;
    out.push(member);
  }
  return out;
}

/**
 * A custom field's wire value as a file's value: undefined for none (null, an empty list), a problem when
 * the value does not have the shape its field's type says (a malformed issue).
 */
export function readCustomValue(
  mapping: Mapping,
  value: unknown,
): FieldValue | undefined | { readonly problem: string } {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value) && value.length === 0) return undefined;
  return readMapped(mapping, value) ?? { problem: `is not the ${mapping} its field's type says` };
}

function readMapped(mapping: Mapping, value: unknown): FieldValue | undefined {
  switch (mapping) {
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? value : undefined;
    case "string":
    case "datetime":
      return typeof value === "string" ? value : undefined;
    case "date":
      return typeof value === "string" && DATE.test(value) ? value : undefined;
    case "option":
      return isObject(value) && typeof value.value === "string" ? value.value : undefined;
    case "user":
      return isObject(value) && typeof value.accountId === "string" ? value.accountId : undefined;
    case "options":
      return Array.isArray(value) ? members(value, "value") : undefined;
    case "users":
      return Array.isArray(value) ? members(value, "accountId") : undefined;
    case "sprint":
      return Array.isArray(value) ? members(value, "name") : undefined;
    case "strings":
      return Array.isArray(value) && value.every((item) => typeof item === "string") ? value : undefined;
    case "json":
      return canonicalJson(value);
  }
}

/** A file's value of a writable custom field in the shape an edit sends (`null` clears). */
export function writeCustomValue(mapping: Mapping, value: FieldValue): unknown {
  if (value === null) return null;
  const list = Array.isArray(value) ? (value as readonly string[]) : [String(value)];
  switch (mapping) {
    case "option":
      return { value: String(value) };
    case "options":
      return list.map((item) => ({ value: item }));
    case "user":
      return { accountId: String(value) };
    case "users":
      return list.map((item) => ({ accountId: item }));
    default:
      return value;
  }
}
