/**
 * Records the operations svc uses from a vendor's published OpenAPI description into `fixtures/vendor/`
 * (DESIGN.md §6: the fakes' traffic is checked against them in the tests; a fresh clone has no copy of the
 * whole description). Run by hand when svc starts using another operation:
 *
 *   node dist/scripts/record-vendor-operations.js <openapi.json> fixtures/vendor/<name>.json <operationId>…
 *
 * Each operation keeps its method, path (with the server's base path in front), parameters, request body
 * and responses; the component schemas they reach come along; descriptions, examples and `x-` members do
 * not. Where the vendor's own words contradict its schema (a member documented as "null if …" but not
 * marked nullable), `AMENDMENTS` says so, and the fixture lists each amendment with its reason.
 */
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { isObject } from "../core/checks.js";

type Json = unknown;

/** A schema member the vendor documents as nullable in words but not in the schema. */
interface Amendment {
  readonly schema: string;
  readonly property: string;
  readonly why: string;
}

export const AMENDMENTS: readonly Amendment[] = [
  {
    schema: "PageBulk",
    property: "parentId",
    why: 'described as "ID of the parent page, or null if there is no parent page" but not marked nullable',
  },
  {
    schema: "PageBulk",
    property: "parentType",
    why: 'ParentContentType is described as "Content type of the parent, or null if there is no parent" but has no null',
  },
];

const METHODS = ["get", "put", "post", "delete", "patch"] as const;

/** The description without what a check does not need: descriptions, examples, `x-` members. */
function stripped(value: Json): Json {
  if (Array.isArray(value)) return value.map(stripped);
  if (!isObject(value)) return value;
  const out: Record<string, Json> = {};
  for (const [name, member] of Object.entries(value)) {
    if (name === "description" || name === "example" || name === "examples" || name === "summary") continue;
    if (name.startsWith("x-")) continue;
    // `properties` maps member names to schemas: a member called "description" is kept.
    out[name] =
      name === "properties" && isObject(member)
        ? Object.fromEntries(Object.entries(member).map(([key, schema]) => [key, stripped(schema)]))
        : stripped(member);
  }
  return out;
}

/** `#/components/<kind>/<name>` → its value. */
function resolve(document: Record<string, Json>, ref: string): Json {
  const match = /^#\/components\/([^/]+)\/([^/]+)$/.exec(ref);
  const components = isObject(document.components) ? document.components : {};
  const kind = match ? components[match[1] as string] : undefined;
  const found = isObject(kind) ? kind[match?.[2] as string] : undefined;
  if (found === undefined) throw new Error(`cannot resolve ${ref}`);
  return found;
}

/** The names of the component schemas `value` reaches, transitively, added to `into`. */
function reachedSchemas(document: Record<string, Json>, value: Json, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) reachedSchemas(document, item, into);
    return;
  }
  if (!isObject(value)) return;
  for (const [name, member] of Object.entries(value)) {
    if (name === "$ref" && typeof member === "string" && member.startsWith("#/components/schemas/")) {
      const schema = member.slice("#/components/schemas/".length);
      if (!into.has(schema)) {
        into.add(schema);
        reachedSchemas(document, resolve(document, member), into);
      }
    } else reachedSchemas(document, member, into);
  }
}

/** The base path of the description's first server (`https://{your-domain}/wiki/api/v2` → `/wiki/api/v2`). */
function basePath(document: Record<string, Json>): string {
  const server = Array.isArray(document.servers) ? document.servers[0] : undefined;
  const url = isObject(server) && typeof server.url === "string" ? server.url : "";
  const path = url.replace(/^[a-z]+:\/\/[^/]+/i, "");
  return path === "/" ? "" : path.replace(/\/$/, "");
}

export function recordOperations(
  document: Record<string, Json>,
  operationIds: readonly string[],
  from: string,
): Record<string, Json> {
  const operations: Record<string, Json> = {};
  const paths = isObject(document.paths) ? document.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation) || !operationIds.includes(operation.operationId as string)) continue;
      const parameters = [
        ...(Array.isArray(item.parameters) ? item.parameters : []),
        ...(Array.isArray(operation.parameters) ? operation.parameters : []),
      ].map((parameter) =>
        isObject(parameter) && typeof parameter.$ref === "string"
          ? resolve(document, parameter.$ref)
          : parameter,
      );
      operations[operation.operationId as string] = stripped({
        method: method.toUpperCase(),
        path: `${basePath(document)}${path}`,
        parameters,
        requestBody: operation.requestBody,
        responses: operation.responses,
      });
    }
  }
  const missing = operationIds.filter((id) => !(id in operations));
  if (missing.length > 0) throw new Error(`not in the description: ${missing.join(", ")}`);
  const reached = new Set<string>();
  reachedSchemas(document, operations, reached);
  const schemas: Record<string, Json> = {};
  for (const name of [...reached].sort())
    schemas[name] = stripped(resolve(document, `#/components/schemas/${name}`));
  const amendments = AMENDMENTS.filter((amendment) => amendment.schema in schemas);
  for (const amendment of amendments) {
    const schema = schemas[amendment.schema];
    const property =
      isObject(schema) && isObject(schema.properties) ? schema.properties[amendment.property] : 0;
    if (!isObject(property)) throw new Error(`${amendment.schema} has no property ${amendment.property}`);
    property.nullable = true;
  }
  const info = isObject(document.info) ? document.info : {};
  return {
    title: info.title,
    version: info.version,
    recordedFrom: from,
    operations,
    schemas,
    amendments,
  };
}

function main(args: readonly string[]): number {
  const [input, output, ...ids] = args;
  if (!input || !output || ids.length === 0) {
    process.stderr.write(
      "usage: node dist/scripts/record-vendor-operations.js <openapi.json> <out.json> <operationId>…\n",
    );
    return 2;
  }
  const document = JSON.parse(readFileSync(input, "utf8")) as Record<string, Json>;
  const recorded = recordOperations(document, ids, basename(input));
  writeFileSync(output, `${JSON.stringify(recorded, null, 1)}\n`);
  return 0;
}

// Run as a program, not when imported by its tests.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
