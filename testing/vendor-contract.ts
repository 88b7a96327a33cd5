/**
 * The vendors' descriptions as the judge of the fakes' traffic (DESIGN.md §6): every request a backend sends
 * to a fake for an operation recorded in `fixtures/vendor/` (scripts/record-vendor-operations.ts), and every
 * answer the fake gives it, is checked against that operation: path and query parameters, the JSON request
 * body, the answer's status and JSON body. A request for an operation not recorded there is not checked
 * (`vendorProblems` answers undefined).
 *
 * Schemas are read as OpenAPI 3.0 reads them, for the keywords the recorded operations use: `type`,
 * `nullable`, `enum`, `properties`, `additionalProperties`, `required`, `items`, `allOf`, `format`
 * int32/int64, `minimum`, `maximum`, `maxLength`, `maxItems`, `uniqueItems`, `$ref`. Any other keyword that
 * constrains a value is reported, never skipped: a check that cannot fail is no check.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import { isObject } from "../core/checks.js";
import { repoRoot } from "./paths.js";

type Schema = Readonly<Record<string, unknown>>;

interface Parameter {
  readonly name: string;
  readonly in: "path" | "query" | "header" | "cookie";
  readonly required?: boolean;
  readonly schema?: Schema;
}

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly parameters: readonly Parameter[];
  readonly requestBody?: {
    readonly required?: boolean;
    readonly content?: Record<string, { schema?: Schema }>;
  };
  readonly responses: Readonly<Record<string, { readonly content?: Record<string, { schema?: Schema }> }>>;
}

export interface VendorOperations {
  readonly title: string;
  readonly version: string;
  readonly operations: Readonly<Record<string, Operation>>;
  readonly schemas: Readonly<Record<string, Schema>>;
}

/** One request and its answer, as the fakes log them. */
export interface VendorExchange {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  readonly body: string;
  readonly status: number;
  readonly answer: string;
}

/** `fixtures/vendor/<name>.json`. */
export function vendorOperations(name: "jira-platform-v3" | "confluence-v2"): VendorOperations {
  return JSON.parse(
    readFileSync(join(repoRoot, "fixtures", "vendor", `${name}.json`), "utf8"),
  ) as VendorOperations;
}

/** Keywords that document or annotate and constrain nothing a check could test here. */
const ANNOTATIONS = new Set(["readOnly", "writeOnly", "xml", "default", "title", "deprecated", "example"]);
const KNOWN = new Set([
  ...ANNOTATIONS,
  "$ref",
  "type",
  "nullable",
  "enum",
  "properties",
  "additionalProperties",
  "required",
  "items",
  "allOf",
  "format",
  "minimum",
  "maximum",
  "maxLength",
  "maxItems",
  "uniqueItems",
]);

const FORMAT_RANGE: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** What is wrong with `value` as an instance of `schema`, each problem with where (`at`) it is. */
export function schemaProblems(
  schema: Schema,
  value: unknown,
  at: string,
  schemas: Readonly<Record<string, Schema>>,
): string[] {
  const unknown = Object.keys(schema).filter((keyword) => !KNOWN.has(keyword));
  if (unknown.length > 0)
    return [`${at}: the schema uses ${unknown.join(", ")}, which this check does not read`];
  if (value === null && schema.nullable === true) return [];
  if (typeof schema.$ref === "string") {
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : schemas[name];
    if (!target) return [`${at}: ${schema.$ref} is not recorded`];
    return schemaProblems(target, value, at, schemas);
  }
  const problems: string[] = [];
  if (Array.isArray(schema.allOf))
    for (const part of schema.allOf) problems.push(...schemaProblems(part as Schema, value, at, schemas));
  const actual = typeOf(value);
  if (typeof schema.type === "string") {
    const fits = schema.type === actual || (schema.type === "number" && actual === "integer");
    if (!fits) return [...problems, `${at}: ${actual} where the description says ${schema.type}`];
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    problems.push(`${at}: ${JSON.stringify(value)} is none of ${JSON.stringify(schema.enum)}`);
  if (typeof value === "number") {
    const range = typeof schema.format === "string" ? FORMAT_RANGE[schema.format] : undefined;
    if (range && (value < range[0] || value > range[1]))
      problems.push(`${at}: ${value} is outside ${schema.format}`);
    if (typeof schema.minimum === "number" && value < schema.minimum)
      problems.push(`${at}: ${value} is below the minimum ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum)
      problems.push(`${at}: ${value} is above the maximum ${schema.maximum}`);
  }
  if (typeof value === "string" && typeof schema.maxLength === "number" && value.length > schema.maxLength)
    problems.push(`${at}: longer than ${schema.maxLength} characters`);
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems)
      problems.push(`${at}: more than ${schema.maxItems} items`);
    if (schema.uniqueItems === true && new Set(value.map((item) => JSON.stringify(item))).size < value.length)
      problems.push(`${at}: items repeat`);
    if (isObject(schema.items))
      value.forEach((item, index) => {
        problems.push(...schemaProblems(schema.items as Schema, item, `${at}[${index}]`, schemas));
      });
  }
  if (isObject(value)) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required))
      for (const name of schema.required)
        if (!(name in value)) problems.push(`${at}: the required member ${name} is missing`);
    for (const [name, member] of Object.entries(value)) {
      const where = `${at}.${name}`;
      const declared = properties[name];
      if (isObject(declared)) problems.push(...schemaProblems(declared, member, where, schemas));
      else if (schema.additionalProperties === false)
        problems.push(`${where}: not a member the description allows`);
      else if (isObject(schema.additionalProperties))
        problems.push(...schemaProblems(schema.additionalProperties, member, where, schemas));
    }
  }
  return problems;
}

/** A query or path parameter's text as the value its schema describes (a number for an integer, …). */
function parameterValue(text: string, schema: Schema, schemas: Readonly<Record<string, Schema>>): unknown {
  const ref =
    typeof schema.$ref === "string" ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
  const resolved = ref === undefined ? schema : (schemas[ref] ?? schema);
  if (resolved.type === "integer" || resolved.type === "number")
    return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  if (resolved.type === "boolean") return text === "true" ? true : text === "false" ? false : text;
  return text;
}

/** The operation `exchange` is a call of, with its path parameters; undefined when none is recorded. */
function operationOf(
  recorded: VendorOperations,
  exchange: VendorExchange,
): { name: string; operation: Operation; pathParameters: Record<string, string> } | undefined {
  const pathname = exchange.path.split("?")[0] ?? "";
  for (const [name, operation] of Object.entries(recorded.operations)) {
    if (operation.method !== exchange.method) continue;
    const names: string[] = [];
    const pattern = operation.path
      .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
      .replace(/\\?\{([^}]+)\\?\}/g, (_, param: string) => {
        names.push(param);
        return "([^/]+)";
      });
    const match = new RegExp(`^${pattern}$`).exec(pathname);
    if (!match) continue;
    const pathParameters = Object.fromEntries(
      names.map((param, i) => [param, decodeURIComponent(match[i + 1] ?? "")]),
    );
    return { name, operation, pathParameters };
  }
  return undefined;
}

function jsonSchemaOf(content: Record<string, { schema?: Schema }> | undefined): Schema | undefined {
  return content?.["application/json"]?.schema;
}

/**
 * What is wrong with `exchange` as a call of the recorded operation it names, or undefined when it names
 * none. An empty list: the request and its answer are as the description says.
 */
export function vendorProblems(recorded: VendorOperations, exchange: VendorExchange): string[] | undefined {
  const found = operationOf(recorded, exchange);
  if (!found) return undefined;
  const { name, operation, pathParameters } = found;
  const { schemas } = recorded;
  const problems: string[] = [];
  const query = new URLSearchParams(
    exchange.path.includes("?") ? exchange.path.slice(exchange.path.indexOf("?") + 1) : "",
  );
  for (const parameter of operation.parameters) {
    const schema = parameter.schema ?? {};
    if (parameter.in === "path") {
      const text = pathParameters[parameter.name];
      if (text === undefined) problems.push(`path parameter ${parameter.name} is missing`);
      else
        problems.push(
          ...schemaProblems(
            schema,
            parameterValue(text, schema, schemas),
            `path parameter ${parameter.name}`,
            schemas,
          ),
        );
    } else if (parameter.in === "query") {
      const values = query.getAll(parameter.name);
      if (values.length === 0) {
        if (parameter.required) problems.push(`query parameter ${parameter.name} is required`);
        continue;
      }
      // OpenAPI's default for a query array: `form`, exploded (`status=a&status=b`).
      if (schema.type === "array") {
        const items = isObject(schema.items) ? schema.items : {};
        const parsed = values.map((text) => parameterValue(text, items, schemas));
        problems.push(...schemaProblems(schema, parsed, `query parameter ${parameter.name}`, schemas));
      } else if (values.length > 1) problems.push(`query parameter ${parameter.name} is repeated`);
      else
        problems.push(
          ...schemaProblems(
            schema,
            parameterValue(values[0] as string, schema, schemas),
            `query parameter ${parameter.name}`,
            schemas,
          ),
        );
    }
  }
  const declared = new Set(operation.parameters.filter((p) => p.in === "query").map((p) => p.name));
  for (const key of new Set(query.keys()))
    if (!declared.has(key)) problems.push(`query parameter ${key} is not one the description has`);

  const requestSchema = jsonSchemaOf(operation.requestBody?.content);
  if (exchange.body === "") {
    if (operation.requestBody?.required)
      problems.push("the request has no body; the description requires one");
  } else if (!requestSchema) problems.push("the request has a body; the description gives it none");
  else problems.push(...jsonProblems(requestSchema, exchange.body, "request body", schemas));

  const response = operation.responses[String(exchange.status)] ?? operation.responses.default;
  if (!response) problems.push(`the answer's status ${exchange.status} is not one the description has`);
  else {
    const answerSchema = jsonSchemaOf(response.content);
    if (answerSchema) problems.push(...jsonProblems(answerSchema, exchange.answer, "answer", schemas));
  }
  return problems.map((problem) => `${name} (${exchange.method} ${exchange.path}): ${problem}`);
}

function jsonProblems(
  schema: Schema,
  text: string,
  at: string,
  schemas: Readonly<Record<string, Schema>>,
): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [`${at} is not JSON: ${JSON.stringify(text.slice(0, 80))}`];
  }
  return schemaProblems(schema, value, at, schemas);
}

/**
 * Fails the test for every exchange that is not as the vendor's description says; returns how many calls of
 * `operation` were checked (so the test can say that the calls it meant to check were checked).
 */
export function checkVendorTraffic(
  t: ExecutionContext,
  recorded: VendorOperations,
  exchanges: readonly VendorExchange[],
  operation: string,
): number {
  let checked = 0;
  const problems: string[] = [];
  for (const exchange of exchanges) {
    const found = vendorProblems(recorded, exchange);
    if (found === undefined) continue;
    if (operationOf(recorded, exchange)?.name === operation) checked++;
    problems.push(...found);
  }
  t.deepEqual(problems, [], `${recorded.title} ${recorded.version}`);
  return checked;
}
