/**
 * The project's field list as svc uses it (issue 35): the record schema built from it, the fields a search
 * asks for, and the reading of an issue's fields beyond the fixed ones. The list itself comes from
 * `GET /rest/api/3/field` and is kept in the cache (`FieldListKeeper`).
 *
 * Contract:
 * - The tracker's schema is `TRACKER_SCHEMA` (whose fields end with components, fix_versions, due, reporter,
 *   resolution) followed by the custom fields, sorted by slug (fields.ts). Both the renderer (cache/) and the
 *   push's parser (helper/) read it through `TrackerBackend.schema`, which is the schema of the list kept
 *   last: a fetch or a push lists first (cache/sync.ts), and the listing loads the list before it reads an
 *   issue.
 * - The list is kept in the cache's validator store under the field list's URL (the store a backend is
 *   handed by `useValidators`, kept with the project's cache): a full listing asks the server for it and
 *   hands it to the cache as one of the listing's validators (`Listing.validators`, kept with the sync that
 *   applies the listing, the first one too); a delta listing uses it as kept. A field added or renamed
 *   meanwhile thus changes the records that carry it in one sync. An issue read for a write that carries a
 *   `customfield_*` the kept list lacks has the list asked again (kept at once: `remember`).
 */
import { createHash } from "node:crypto";
import { isObject } from "../../core/checks.js";
import type { Validator, ValidatorStore } from "../backend.js";
import type { FieldValue, RecordSchema } from "../record.js";
import { type CustomField, customFields, type KeptField, readCustomValue } from "./fields.js";
import { TRACKER_SCHEMA } from "./schema.js";
import type { TrackerSite } from "./search.js";

/** The issue fields behind the schema's components, fix_versions, due, reporter and resolution. */
export const EXTRA_SYSTEM_FIELDS = [
  "components",
  "fixVersions",
  "duedate",
  "reporter",
  "resolution",
] as const;

/** One field list and what svc makes of it. */
export class FieldCatalog {
  readonly customs: readonly CustomField[];
  readonly byId: ReadonlyMap<string, CustomField>;
  readonly bySlug: ReadonlyMap<string, CustomField>;
  readonly schema: RecordSchema;

  constructor(readonly list: readonly KeptField[]) {
    this.customs = customFields(list);
    this.byId = new Map(this.customs.map((custom) => [custom.id, custom]));
    this.bySlug = new Map(this.customs.map((custom) => [custom.slug, custom]));
    this.schema = {
      ...TRACKER_SCHEMA,
      fields: [...TRACKER_SCHEMA.fields, ...this.customs.map((custom) => custom.spec)],
      rendering: renderingOf(this.customs),
    };
  }

  /** The custom field ids the list names, for a search's `fields`. */
  ids(): string[] {
    return this.customs.map((custom) => custom.id);
  }

  /** Whether `fields` (an issue's) carries a custom field this list lacks. */
  lacksAny(fields: Record<string, unknown>): boolean {
    return Object.keys(fields).some((id) => /^customfield_[0-9]+$/.test(id) && !this.byId.has(id));
  }
}

/**
 * The schema's `rendering`: 2 (issue 35's fields), then a digest of each custom field's id, slug and mapping,
 * so that a field added, renamed or mapped otherwise on the server has every record rendered anew once.
 */
function renderingOf(customs: readonly CustomField[]): string {
  if (customs.length === 0) return "2";
  const hash = createHash("sha256");
  for (const custom of customs) hash.update(`${custom.id}=${custom.slug}:${custom.mapping}\n`);
  return `2 ${hash.digest("hex").slice(0, 16)}`;
}

function names(value: unknown, member: string): string[] | undefined {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) return undefined;
  const out: string[] = [];
  for (const item of value) {
    if (!isObject(item) || typeof item[member] !== "string") return undefined;
    out.push(item[member] as string);
  }
  return out;
}

/**
 * An issue's fields beyond the fixed ones as record fields (absent when empty), or the reason the issue is
 * malformed.
 */
export function readExtraFields(
  key: string,
  f: Record<string, unknown>,
  catalog: FieldCatalog,
): Record<string, FieldValue> | string {
  const out: Record<string, FieldValue> = {};
  const components = names(f.components, "name");
  const versions = names(f.fixVersions, "name");
  if (components === undefined) return `${key}: components is not a list of named components`;
  if (versions === undefined) return `${key}: fixVersions is not a list of named versions`;
  if (components.length > 0) out.components = components;
  if (versions.length > 0) out.fix_versions = versions;
  const due = f.duedate ?? null;
  if (due !== null && (typeof due !== "string" || !/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(due)))
    return `${key}: duedate is not a date`;
  if (due !== null) out.due = due;
  const reporter = f.reporter ?? null;
  if (reporter !== null && !(isObject(reporter) && typeof reporter.accountId === "string"))
    return `${key}: reporter has no accountId`;
  if (reporter !== null) out.reporter = reporter.accountId as string;
  const resolution = f.resolution ?? null;
  if (resolution !== null && !(isObject(resolution) && typeof resolution.name === "string"))
    return `${key}: resolution has no name`;
  if (resolution !== null) out.resolution = resolution.name as string;
  for (const custom of catalog.customs) {
    const value = readCustomValue(custom.mapping, f[custom.id]);
    if (value === undefined) continue;
    if (value !== null && typeof value === "object" && "problem" in value)
      return `${key}: ${custom.id} (${custom.slug}) ${value.problem}`;
    out[custom.slug] = value as FieldValue;
  }
  return out;
}

/** The members of a `FieldDetails` svc keeps, or undefined for an entry it cannot use. */
function keptField(value: unknown): KeptField | undefined {
  if (!isObject(value) || typeof value.id !== "string" || typeof value.name !== "string") return undefined;
  const schema = isObject(value.schema) ? value.schema : undefined;
  const text = (name: string) => (typeof schema?.[name] === "string" ? { [name]: schema[name] } : {});
  return {
    id: value.id,
    name: value.name,
    custom: value.custom === true,
    ...(schema
      ? { schema: { ...text("type"), ...text("items"), ...text("custom"), ...text("system") } }
      : {}),
  };
}

/**
 * Where the field list is kept in the validator store: a key of svc's own (as the comments' state), not the
 * list's URL, so that what reads a cache without the tracker's settings (`svc log`) finds it too. The etag
 * is a fixed word (the field list's answer has none; the store needs one).
 */
const KEPT_URL = "svc:tracker-field-list";
const KEPT = "svc-field-list";

/** The catalog of the field list kept in `store`, or undefined when none is kept. */
function keptCatalog(store: ValidatorStore | undefined): FieldCatalog | undefined {
  const kept = store?.lookup(KEPT_URL);
  return kept ? new FieldCatalog(JSON.parse(kept.payload) as KeptField[]) : undefined;
}

/** The schema of the field list kept in `store`, or of the fixed fields when none is kept (`svc log`). */
export function keptTrackerSchema(store: ValidatorStore | undefined): RecordSchema {
  return (keptCatalog(store) ?? new FieldCatalog([])).schema;
}

/**
 * The field list of the site, kept in the cache's validator store when the backend was handed one: read
 * from it at the first need, asked of the server when absent or when the caller says it may be stale.
 */
export class FieldListKeeper {
  private store: ValidatorStore | undefined;
  private current: FieldCatalog | undefined;
  private asked: Promise<FieldCatalog> | undefined;

  constructor(private readonly site: TrackerSite) {}

  /**
   * The cache's store; the list kept there is loaded at once (when none is loaded yet), so the schema is that
   * of the kept list before any listing: the sync compares its `rendering` with the cache's.
   */
  use(store: ValidatorStore): void {
    this.store = store;
    if (this.current && this.current.list.length > 0) return;
    this.current = keptCatalog(store) ?? this.current;
  }

  /** The catalog loaded last; before any, the fixed fields only. */
  get catalog(): FieldCatalog {
    this.current ??= new FieldCatalog([]);
    return this.current;
  }

  /** The kept list, or the server's when none is kept or `fresh`. Asked at most once per backend instance. */
  async load(fresh = false): Promise<FieldCatalog> {
    if (!fresh && this.current && this.current.list.length > 0) return this.current;
    if (!fresh && !this.asked) {
      const kept = keptCatalog(this.store);
      if (kept) {
        this.current = kept;
        return kept;
      }
    }
    this.asked ??= this.ask();
    this.asked.catch(() => {
      this.asked = undefined;
    });
    return await this.asked;
  }

  private async ask(): Promise<FieldCatalog> {
    const what = "reading the tracker's field list (/rest/api/3/field)";
    const response = await this.site.call("GET", this.site.api("/field"));
    // A site that does not serve the list (a 404: a proxy in front of the tracker, a server without the
    // resource) has its issues shown with the fixed fields only, as before issue 35, rather than none at all;
    // any other refusal (credentials, permissions, a fault) stops the listing as every listing does.
    if (response.status === 404) {
      this.current = new FieldCatalog([]);
      return this.current;
    }
    if (response.status !== 200) throw this.site.failure(what, response);
    const entries = this.site.rest.parse<unknown[]>(what, response, (value) =>
      Array.isArray(value) ? undefined : "not a list of fields",
    );
    const list = entries.flatMap((entry) => {
      const kept = keptField(entry);
      return kept ? [kept] : [];
    });
    this.current = new FieldCatalog(list);
    return this.current;
  }

  /** The list as the validator a listing hands to the cache (`Listing.validators`). */
  validator(catalog: FieldCatalog): Validator {
    return { url: KEPT_URL, etag: KEPT, payload: JSON.stringify(catalog.list) };
  }

  /** The catalog that knows every custom field `fields` carries: asked again (and kept) when one is unknown. */
  async covering(fields: Record<string, unknown>): Promise<FieldCatalog> {
    const catalog = await this.load();
    if (!catalog.lacksAny(fields)) return catalog;
    const fresh = await this.load(true);
    this.store?.remember(this.validator(fresh));
    return fresh;
  }
}
