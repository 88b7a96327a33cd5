/**
 * OpenAPI 3.0 schemas judged by ajv (JSON Schema draft-07), for vendor-contract.ts.
 *
 * OpenAPI 3.0's Schema Object is a dialect of JSON Schema; four differences matter to a validator, and
 * `toJsonSchema` rewrites them before ajv sees a schema:
 * - `nullable: true` allows null. ajv's own `nullable` keyword needs `type` beside it, and 135 of GitHub's
 *   nullable schemas have none (`allOf: [{$ref}]`, `anyOf`), so every nullable schema becomes
 *   `anyOf: [{type: "null"}, <the schema>]`, its null branch first (`NULL_BRANCH`, so its errors can be
 *   told apart and dropped).
 * - `exclusiveMinimum`/`exclusiveMaximum` are booleans beside `minimum`/`maximum`.
 * - `readOnly` members are not sent in requests and `writeOnly` ones not answered: "required" does not
 *   apply to them in that direction (OpenAPI 3.0.3, Fixed Fields of the Schema Object).
 * - `discriminator` only names the member that picks a `oneOf`/`anyOf` branch; the branches still decide,
 *   so it is dropped (ajv's `discriminator` option refuses schemas the vendors write, e.g. a mapping onto
 *   `allOf`).
 * Everything else that constrains a value (`type`, `enum`, `required`, `properties`,
 * `additionalProperties`, `items`, `allOf`/`anyOf`/`oneOf`/`not`, `minimum`, `maximum`, `multipleOf`,
 * `minLength`, `maxLength`, `pattern`, `minItems`, `maxItems`, `uniqueItems`, `minProperties`,
 * `maxProperties`, `format`) is ajv's own and enforced (vendor-contract.test.ts shows each kind failing).
 * `strict: false` lets ajv pass over annotations and `x-` members; `format`s are listed in `FORMATS`, and
 * a format not listed there fails the compilation instead of being skipped.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { isObject } from "../core/checks.js";

export type Schema = Readonly<Record<string, unknown>>;
export type Direction = "request" | "answer";

/** Marks the `type: "null"` branch `toJsonSchema` adds for `nullable`. */
const NULL_BRANCH = "/anyOf/0/type";

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * The formats the descriptions use (GitHub's, and the operations recorded from Jira's and Confluence's).
 * Integer ranges, date-times, dates, UUIDs and emails are checked; a `uri` only for having no white space,
 * as the vendors answer relative ones too; the rest are annotations.
 */
const FORMATS: Readonly<
  Record<string, true | RegExp | { type: "number"; validate: (n: number) => boolean }>
> = {
  int32: { type: "number", validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: "number", validate: (n) => Number.isInteger(n) },
  double: true,
  "date-time": RFC3339,
  date: /^\d{4}-\d{2}-\d{2}$/,
  uri: /^\S*$/,
  "uri-template": true,
  email: /^[^\s@]+@[^\s@]+$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  binary: true,
  // GitHub: an `owner/name` parameter.
  "repo.nwo": true,
  // Confluence writes `format: string` beside `type: string`: it says nothing more.
  string: true,
};

/** One ajv for the process: compiled validators are cached by the callers, per operation and status. */
let shared: Ajv | undefined;

export function schemaValidator(): Ajv {
  shared ??= new Ajv({
    strict: false,
    allErrors: true,
    validateFormats: true,
    formats: FORMATS,
    // A format missing from FORMATS is an error at compilation, never a silent pass.
    logger: {
      log: () => {},
      warn: (...args: unknown[]) => {
        throw new Error(`vendor schema: ${args.map(String).join(" ")}`);
      },
      error: (...args: unknown[]) => {
        throw new Error(`vendor schema: ${args.map(String).join(" ")}`);
      },
    },
  });
  return shared;
}

/** `schema` as draft-07 JSON Schema for ajv, as seen in `direction` (the rules in the header). */
export function toJsonSchema(schema: unknown, direction: Direction): unknown {
  if (Array.isArray(schema)) return schema.map((item) => toJsonSchema(item, direction));
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === "nullable" || keyword === "discriminator" || keyword === "example") continue;
    if (keyword.startsWith("x-")) continue;
    if (keyword === "properties" && isObject(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, member]) => [name, toJsonSchema(member, direction)]),
      );
    } else if (keyword === "exclusiveMinimum" || keyword === "exclusiveMaximum") {
      const bound = keyword === "exclusiveMinimum" ? "minimum" : "maximum";
      if (value === true && typeof schema[bound] === "number") out[keyword] = schema[bound];
      else if (typeof value === "number") out[keyword] = value;
    } else if (keyword === "required" && Array.isArray(value) && isObject(schema.properties)) {
      const properties = schema.properties;
      const hidden = direction === "request" ? "readOnly" : "writeOnly";
      out.required = value.filter((name) => {
        const member = properties[name as string];
        return !(isObject(member) && member[hidden] === true);
      });
    } else out[keyword] = toJsonSchema(value, direction);
  }
  if (out.exclusiveMinimum !== undefined && schema.exclusiveMinimum === true) delete out.minimum;
  if (out.exclusiveMaximum !== undefined && schema.exclusiveMaximum === true) delete out.maximum;
  if (schema.nullable === true) {
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return { anyOf: [{ type: "null" }, out] };
  }
  return out;
}

/** One way a value departs from its schema: where (a JSON pointer), what was expected, what was there. */
export interface SchemaDeparture {
  readonly pointer: string;
  readonly expected: string;
  readonly received: string;
}

/** The value at `pointer` (RFC 6901) in `value`. */
function at(value: unknown, pointer: string): unknown {
  let here = value;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    here = isObject(here) || Array.isArray(here) ? (here as Record<string, unknown>)[key] : undefined;
  }
  return here;
}

export function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function escapePointer(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** What ajv's errors say, as departures; the bookkeeping of a nullable's null branch left out. */
export function departuresOf(errors: readonly ErrorObject[], value: unknown): SchemaDeparture[] {
  const real = errors.filter((error) => !error.schemaPath.endsWith(NULL_BRANCH));
  const specific = real.filter((error) => error.keyword !== "anyOf" && error.keyword !== "oneOf");
  const chosen = specific.length > 0 ? specific : real;
  const seen = new Set<string>();
  const departures: SchemaDeparture[] = [];
  for (const error of chosen) {
    const params = error.params as Record<string, unknown>;
    let pointer = error.instancePath;
    let expected = error.message ?? error.keyword;
    let received = shown(at(value, pointer));
    if (error.keyword === "required") {
      pointer = `${pointer}/${escapePointer(String(params.missingProperty))}`;
      expected = "present (required)";
      received = "nothing";
    } else if (error.keyword === "additionalProperties") {
      pointer = `${pointer}/${escapePointer(String(params.additionalProperty))}`;
      expected = "no such member (the schema allows no other members)";
      received = shown(at(value, pointer));
    } else if (error.keyword === "enum") {
      expected = `one of ${shown(params.allowedValues)}`;
    } else if (error.keyword === "type") {
      expected = `type ${shown(params.type)}`;
    }
    const key = `${pointer}\n${expected}`;
    if (seen.has(key)) continue;
    seen.add(key);
    departures.push({ pointer: pointer || "/", expected, received });
  }
  return departures;
}

/** A compiled check of values against one schema. */
export type ValueCheck = (value: unknown) => SchemaDeparture[];

export function valueCheck(compiled: ValidateFunction): ValueCheck {
  return (value) => (compiled(value) ? [] : departuresOf(compiled.errors ?? [], value));
}
