/**
 * Records the operations svc uses from a vendor's published OpenAPI description into `fixtures/vendor/`
 * (DESIGN.md §6: the fakes' traffic is checked against them in the tests; a fresh clone has no copy of the
 * whole description). Run by hand when svc starts using another operation:
 *
 *   node dist/scripts/record-vendor-operations.js <openapi.json> fixtures/vendor/<name>.json [<operationId>…]
 *
 * Without operation ids it records those `RECORDED_OPERATIONS` lists for that fixture: every operation svc
 * calls (grep the backends for their paths) and every one the fakes serve to svc. A request for an
 * operation the fixture does not have fails the tests, unless `UNRECORDED` lists it with the reason.
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

/**
 * Where the vendor's own words contradict its schema, the recording follows the words and says so: a member
 * documented as "null if …" but not marked nullable becomes nullable; a `oneOf` whose branches both accept
 * the documented form (so "exactly one" can never hold) becomes `anyOf`. The property is one of a component
 * schema's (`schema`) or of an operation's JSON request body (`operation`).
 */
interface Amendment {
  readonly schema?: string;
  readonly operation?: string;
  readonly property: string;
  readonly change: "nullable" | "anyOf";
  readonly why: string;
}

const PARENT_ID_WHY =
  'described as "ID of the parent page, or null if there is no parent page" but not marked nullable';
const PARENT_TYPE_WHY =
  'ParentContentType is described as "Content type of the parent, or null if there is no parent" but has no null';
const PAGE_BODY_WHY =
  "oneOf PageBodyWrite ({representation, value}) and PageNestedBodyWrite ({storage: …}): neither has required members, so the documented {representation, value} matches both and no body could be valid; read as anyOf";

const COMMENT_BODY_WHY =
  "oneOf CommentBodyWrite ({representation, value}) and CommentNestedBodyWrite ({storage: …}): neither has required members, so the documented {representation, value} matches both and no body could be valid; read as anyOf";

export const AMENDMENTS: readonly Amendment[] = [
  { schema: "PageBulk", property: "parentId", change: "nullable", why: PARENT_ID_WHY },
  { schema: "PageBulk", property: "parentType", change: "nullable", why: PARENT_TYPE_WHY },
  { schema: "PageSingle", property: "parentId", change: "nullable", why: PARENT_ID_WHY },
  { schema: "PageSingle", property: "parentType", change: "nullable", why: PARENT_TYPE_WHY },
  { operation: "createPage", property: "body", change: "anyOf", why: PAGE_BODY_WHY },
  { operation: "updatePage", property: "body", change: "anyOf", why: PAGE_BODY_WHY },
  { schema: "CreateFooterCommentModel", property: "body", change: "anyOf", why: COMMENT_BODY_WHY },
  { schema: "UpdateFooterCommentModel", property: "body", change: "anyOf", why: COMMENT_BODY_WHY },
];

/**
 * Operations of the vendor's that svc's tests call but that are in another of its descriptions, not in the
 * one recorded: the check lets a call of them through and the fixture says why (by description title).
 */
interface Unrecorded {
  readonly method: string;
  readonly template: string;
  readonly operationId: string;
  readonly why: string;
}

export const UNRECORDED: Readonly<Record<string, readonly Unrecorded[]>> = {
  "The Confluence Cloud REST API v2": [
    {
      method: "POST",
      template: "/wiki/rest/api/content/{id}/label",
      operationId: "addLabelsToContent",
      why: "Confluence REST API v1 (https://developer.atlassian.com/cloud/confluence/rest/v1/api-group-content-labels/#api-wiki-rest-api-content-id-label-post): v2 can read a page's labels but not add them, so the wiki contract suite labels the pages it creates through v1 (Document 3, test-fixture rule 3); svc itself never calls it. The v1 description is not among those recorded.",
    },
    {
      method: "GET",
      template: "/wiki/rest/api/content/{id}/label",
      operationId: "getLabelsForContent",
      why: "Confluence REST API v1, served by the fake beside addLabelsToContent for the same suite; svc itself never calls it. The v1 description is not among those recorded.",
    },
    {
      method: "GET",
      template: "/wiki/rest/api/user/current",
      operationId: "getCurrentUser",
      why: "Confluence REST API v1 (https://developer.atlassian.com/cloud/confluence/rest/v1/api-group-users/#api-wiki-rest-api-user-current-get): v2 has no operation for the calling user, so svc asks v1 whose comments are its own (accountId). The v1 description is not among those recorded.",
    },
  ],
};

/** The command that records each fixture, and the operations svc and its tests use (grep the backends). */
export const RECORDED_OPERATIONS: Readonly<Record<string, readonly string[]>> = {
  "jira-platform-v3": [
    "countIssues",
    "searchAndReconsileIssuesUsingJqlPost",
    "searchAndReconsileIssuesUsingJql",
    "createIssue",
    "getIssue",
    "editIssue",
    "deleteIssue",
    "getTransitions",
    "doTransition",
    "getCurrentUser",
    "getProject",
    "getCreateIssueMetaIssueTypes",
    "getCreateIssueMetaIssueTypeId",
    "getPriorities",
    "getFields",
    "getEditIssueMeta",
    "getComments",
    "addComment",
    "getComment",
    "updateComment",
    "deleteComment",
  ],
  "confluence-v2": [
    "getSpaces",
    "getSpaceById",
    "getPagesInSpace",
    "getPageLabels",
    "createPage",
    "getPageById",
    "updatePage",
    "deletePage",
    "getPageFooterComments",
    "getFooterComments",
    "createFooterComment",
    "getFooterCommentById",
    "updateFooterComment",
    "deleteFooterComment",
    "getFooterCommentVersions",
    "createBulkUserLookup",
  ],
};

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

/** The JSON schema of an operation's request body, as recorded. */
function requestSchema(operation: Json): Json {
  const body = isObject(operation) ? operation.requestBody : undefined;
  const content = isObject(body) && isObject(body.content) ? body.content["application/json"] : undefined;
  return isObject(content) ? content.schema : undefined;
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
      const referenced = (value: Json): Json =>
        isObject(value) && typeof value.$ref === "string" ? resolve(document, value.$ref) : value;
      const responses = isObject(operation.responses) ? operation.responses : {};
      operations[operation.operationId as string] = stripped({
        method: method.toUpperCase(),
        path: `${basePath(document)}${path}`,
        parameters,
        requestBody: referenced(operation.requestBody),
        responses: Object.fromEntries(
          Object.entries(responses).map(([status, answer]) => [status, referenced(answer)]),
        ),
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
  const amendments = AMENDMENTS.filter((amendment) =>
    amendment.schema === undefined ? (amendment.operation ?? "") in operations : amendment.schema in schemas,
  );
  for (const amendment of amendments) {
    const holder =
      amendment.schema === undefined
        ? requestSchema(operations[amendment.operation ?? ""])
        : schemas[amendment.schema];
    const property =
      isObject(holder) && isObject(holder.properties) ? holder.properties[amendment.property] : 0;
    const where = amendment.schema ?? `${amendment.operation} request body`;
    if (!isObject(property)) throw new Error(`${where} has no property ${amendment.property}`);
    if (amendment.change === "nullable") property.nullable = true;
    else {
      if (!Array.isArray(property.oneOf)) throw new Error(`${where}.${amendment.property} has no oneOf`);
      property.anyOf = property.oneOf;
      delete property.oneOf;
    }
  }
  const info = isObject(document.info) ? document.info : {};
  const unrecorded = typeof info.title === "string" ? (UNRECORDED[info.title] ?? []) : [];
  return {
    title: info.title,
    version: info.version,
    recordedFrom: from,
    operations,
    schemas,
    amendments,
    unrecorded,
  };
}

function main(args: readonly string[]): number {
  const [input, output, ...named] = args;
  // Without operation ids: those RECORDED_OPERATIONS lists for the fixture of that name.
  const ids = named.length > 0 ? named : (RECORDED_OPERATIONS[basename(output ?? "", ".json")] ?? []);
  if (!input || !output || ids.length === 0) {
    process.stderr.write(
      "usage: node dist/scripts/record-vendor-operations.js <openapi.json> fixtures/vendor/<name>.json [<operationId>…]\n",
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
