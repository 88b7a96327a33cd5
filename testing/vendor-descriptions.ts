/**
 * The vendors' published descriptions, as vendor-contract.ts reads them: GitHub's REST description from the
 * installed `@octokit/openapi` (the whole of it: svc may call any documented path), Jira's and Confluence's
 * operations as recorded in `fixtures/vendor/` (scripts/record-vendor-operations.ts), each with its title
 * and version. A description is loaded once per process, when a fake first needs it (GitHub's is 13 MB:
 * about a quarter of a second), and the schema of each operation, status and direction is compiled on first
 * use and kept.
 *
 * Besides the operations, a description here carries what the vendor documents outside them, each with
 * where it says so:
 * - `aliases`: a path the vendor itself sends clients to that its description does not list (GitHub's
 *   `Link` URLs name the repository by id), judged as the operation it stands for;
 * - `unrecorded`: an operation svc's tests call that is in another of the vendor's descriptions, not
 *   checked, with the reason (from the fixture);
 * - `generalAnswers`: statuses any operation may answer (rate limits, conditional requests), documented in
 *   the vendor's guides rather than per operation.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { ValidateFunction } from "ajv";
import { isObject } from "../core/checks.js";
import { repoRoot } from "./paths.js";
import {
  type Direction,
  type Schema,
  schemaValidator,
  toJsonSchema,
  type ValueCheck,
  valueCheck,
} from "./vendor-schema.js";

export type VendorName = "github" | "jira" | "confluence";

export interface Parameter {
  readonly name: string;
  readonly in: "path" | "query" | "header" | "cookie";
  readonly required?: boolean;
  readonly schema?: Schema;
  readonly style?: string;
  readonly explode?: boolean;
}

interface MediaTypes {
  readonly content?: Readonly<Record<string, { readonly schema?: Schema }>>;
}

export interface Answer extends MediaTypes {
  readonly headers?: Readonly<Record<string, { readonly required?: boolean; readonly schema?: Schema }>>;
}

export interface Operation {
  readonly operationId: string;
  readonly method: string;
  /** The path template with the server's base path in front: `/wiki/api/v2/pages/{id}`. */
  readonly template: string;
  readonly parameters: readonly Parameter[];
  readonly requestBody?: MediaTypes & { readonly required?: boolean };
  readonly responses: Readonly<Record<string, Answer>>;
}

/** A path the vendor sends clients to that its description does not list. */
interface Alias {
  readonly template: string;
  readonly operationId: string;
  readonly why: string;
}

/** An operation in another description of the vendor's (not recorded), called by svc's tests. */
export interface Unrecorded {
  readonly method: string;
  readonly template: string;
  readonly operationId: string;
  readonly why: string;
}

/**
 * A status any operation (or those `operations` names) may answer that the description does not list, from
 * the vendor's guides or its recorded behaviour; `schema` names its body's schema.
 */
export interface GeneralAnswer {
  readonly status: number;
  readonly why: string;
  readonly methods?: readonly string[];
  readonly operations?: readonly string[];
  readonly schema?: string;
}

export interface Found {
  readonly operation: Operation;
  readonly pathParameters: Readonly<Record<string, string>>;
  /** Set when the path is an alias: its parameters are not the operation's. */
  readonly alias?: Alias;
}

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  readonly names: readonly string[];
  /** Literal characters in the template: among several matches, the most literal wins. */
  readonly literal: number;
  readonly operationId: string;
  readonly alias?: Alias;
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

const GITHUB_DOCS = "https://docs.github.com/en/rest";

function routeOf(method: string, template: string, operationId: string, alias?: Alias): Route {
  const names: string[] = [];
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const name = /^\{([^}]+)\}$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
      names.push(name);
      return "([^/]+)";
    })
    .join("");
  const literal = template.replace(/\{[^}]+\}/g, "").length;
  return { method, pattern: new RegExp(`^${source}$`), names, literal, operationId, alias };
}

export class Description {
  private readonly routes: Route[] = [];
  private readonly operations = new Map<string, Operation>();
  private readonly checks = new Map<string, ValueCheck>();
  private readonly added = new Set<string>();

  constructor(
    readonly vendor: VendorName,
    readonly title: string,
    readonly version: string,
    /** Where the description came from: the package and its version, or the fixture. */
    readonly source: string,
    private readonly document: Readonly<Record<string, unknown>>,
    operations: readonly Operation[],
    readonly aliases: readonly Alias[],
    readonly unrecorded: readonly Unrecorded[],
    readonly generalAnswers: readonly GeneralAnswer[],
  ) {
    for (const operation of operations) {
      this.operations.set(operation.operationId, operation);
      this.routes.push(routeOf(operation.method, operation.template, operation.operationId));
    }
    for (const alias of aliases) {
      const target = this.operations.get(alias.operationId);
      if (!target)
        throw new Error(`${title}: the alias ${alias.template} names no operation ${alias.operationId}`);
      this.routes.push(routeOf(target.method, alias.template, alias.operationId, alias));
    }
  }

  /** Every operation's id, in the description's order. */
  get operationIds(): string[] {
    return [...this.operations.keys()];
  }

  operation(operationId: string): Operation | undefined {
    return this.operations.get(operationId);
  }

  /** The operation `method` on `pathname` calls, with its path parameters (decoded). */
  find(method: string, pathname: string): Found | undefined {
    let best: { route: Route; match: RegExpExecArray } | undefined;
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const match = route.pattern.exec(pathname);
      if (match && (!best || route.literal > best.route.literal)) best = { route, match };
    }
    if (!best) return undefined;
    const { route, match } = best;
    const pathParameters = Object.fromEntries(
      route.names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? "")]),
    );
    const operation = this.operations.get(route.operationId) as Operation;
    return { operation, pathParameters, alias: route.alias };
  }

  unrecordedCall(method: string, pathname: string): Unrecorded | undefined {
    return this.unrecorded.find(
      (entry) =>
        entry.method === method && routeOf(method, entry.template, entry.operationId).pattern.test(pathname),
    );
  }

  /** `value` with a `$ref` to one of the description's components replaced by what it names. */
  resolved<T>(value: T): T {
    return resolvedIn(this.document, value);
  }

  private component(ref: string): unknown {
    return componentIn(this.document, ref);
  }

  /**
   * A check of values against `schema` as seen in `direction`, compiled once per `key`. Each component
   * schema it reaches is converted (vendor-schema.ts) and added to ajv under its own id once.
   */
  check(key: string, schema: Schema, direction: Direction): ValueCheck {
    const cacheKey = `${direction} ${key}`;
    const cached = this.checks.get(cacheKey);
    if (cached) return cached;
    const ajv = schemaValidator();
    const prefix = `svc-vendor:${this.vendor}:${direction}:`;
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (!isObject(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [name, member] of Object.entries(value)) {
        if (name === "$ref" && typeof member === "string") {
          const component = /^#\/components\/schemas\/(.+)$/.exec(member)?.[1];
          if (component === undefined)
            throw new Error(`${this.title}: a $ref outside the schemas: ${member}`);
          this.addComponent(component, direction, prefix, rewrite);
          out.$ref = `${prefix}${component}`;
        } else if (name === "properties" && isObject(member)) {
          out.properties = Object.fromEntries(Object.entries(member).map(([k, v]) => [k, rewrite(v)]));
        } else out[name] = rewrite(member);
      }
      return out;
    };
    const compiled: ValidateFunction = ajv.compile(rewrite(toJsonSchema(schema, direction)) as object);
    const check = valueCheck(compiled);
    this.checks.set(cacheKey, check);
    return check;
  }

  private addComponent(name: string, direction: Direction, prefix: string, rewrite: (v: unknown) => unknown) {
    const id = `${prefix}${name}`;
    if (this.added.has(id)) return;
    this.added.add(id);
    const converted = rewrite(toJsonSchema(this.component(`#/components/schemas/${name}`), direction));
    schemaValidator().addSchema(converted as object, id);
  }
}

function componentIn(document: Readonly<Record<string, unknown>>, ref: string): unknown {
  const match = /^#\/components\/([^/]+)\/(.+)$/.exec(ref);
  const components = isObject(document.components) ? document.components : {};
  const kind = match ? components[match[1] as string] : undefined;
  const found = isObject(kind) ? kind[match?.[2] as string] : undefined;
  if (found === undefined) throw new Error(`cannot resolve ${ref}`);
  return found;
}

/** `value`, or what its `$ref` (to a component of `document`) names, followed to the end. */
function resolvedIn<T>(document: Readonly<Record<string, unknown>>, value: T): T {
  let here: unknown = value;
  for (let depth = 0; isObject(here) && typeof here.$ref === "string"; depth++) {
    if (depth > 20) throw new Error(`a $ref loop at ${String(here.$ref)}`);
    here = componentIn(document, here.$ref);
  }
  return here as T;
}

/** The operations of an OpenAPI document, with path-level parameters merged and `$ref`s resolved. */
function operationsOf(document: Readonly<Record<string, unknown>>, base: string): Operation[] {
  const resolve = (value: unknown) => resolvedIn(document, value);
  const operations: Operation[] = [];
  const paths = isObject(document.paths) ? document.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation) || typeof operation.operationId !== "string") continue;
      const parameters = [
        ...(Array.isArray(item.parameters) ? item.parameters : []),
        ...(Array.isArray(operation.parameters) ? operation.parameters : []),
      ].map((parameter) => resolve(parameter) as Parameter);
      const responses: Record<string, Answer> = {};
      for (const [status, answer] of Object.entries(
        isObject(operation.responses) ? operation.responses : {},
      )) {
        const resolvedAnswer = resolve(answer) as Answer;
        const headers = Object.fromEntries(
          Object.entries(resolvedAnswer.headers ?? {}).map(([name, header]) => [
            name.toLowerCase(),
            resolve(header),
          ]),
        ) as Answer["headers"];
        responses[status] = { ...resolvedAnswer, headers };
      }
      operations.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        template: `${base}${path}`,
        parameters,
        requestBody: resolve(operation.requestBody) as Operation["requestBody"],
        responses,
      });
    }
  }
  return operations;
}

const require = createRequire(import.meta.url);

/** GitHub's REST description for api.github.com, as `@octokit/openapi` ships it. */
function github(): Description {
  const file = require.resolve("@octokit/openapi/generated/api.github.com.json");
  const pkg = JSON.parse(readFileSync(require.resolve("@octokit/openapi/package.json"), "utf8")) as {
    version: string;
  };
  const document = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const info = document.info as { title: string; version: string };
  const aliases: Alias[] = [
    {
      template: "/repositories/{repository_id}/issues",
      operationId: "issues/list-for-repo",
      why: `GitHub's Link headers for the repository issues listing name the repository by id; clients follow them as given (${GITHUB_DOCS}/using-the-rest-api/using-pagination-in-the-rest-api)`,
    },
    {
      template: "/repositories/{repository_id}/issues/comments",
      operationId: "issues/list-comments-for-repo",
      why: `the Link headers of the repository's comments listing, in the same form (${GITHUB_DOCS}/using-the-rest-api/using-pagination-in-the-rest-api)`,
    },
    {
      template: "/repositories/{repository_id}/issues/{issue_number}/comments",
      operationId: "issues/list-comments",
      why: `the Link headers of an issue's comments listing, in the same form (${GITHUB_DOCS}/using-the-rest-api/using-pagination-in-the-rest-api)`,
    },
  ];
  const generalAnswers: GeneralAnswer[] = [
    {
      status: 304,
      methods: ["GET"],
      why: `a conditional request whose ETag still matches (${GITHUB_DOCS}/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate)`,
    },
    {
      status: 401,
      schema: "basic-error",
      why: `"Bad credentials" for a missing or wrong token (${GITHUB_DOCS}/using-the-rest-api/troubleshooting-the-rest-api)`,
    },
    {
      status: 403,
      schema: "basic-error",
      why: `the primary or secondary rate limit (${GITHUB_DOCS}/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit)`,
    },
    {
      status: 429,
      schema: "basic-error",
      why: `the secondary rate limit (${GITHUB_DOCS}/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit)`,
    },
    {
      status: 410,
      operations: [
        "issues/list-for-repo",
        "issues/list-comments-for-repo",
        "issues/get-comment",
        "issues/update-comment",
        "issues/delete-comment",
      ],
      schema: "basic-error",
      why: '"Issues are disabled for this repo": the listings and the comment operations answer as the issue operations that document 410 (issues/get, issues/create, issues/list-comments); their own entries list no 410',
    },
    {
      status: 404,
      operations: ["issues/update-comment", "issues/delete-comment"],
      schema: "basic-error",
      why: `a comment deleted meanwhile answers 404 "Not Found", as issues/get-comment documents for the same path (${GITHUB_DOCS}/issues/comments)`,
    },
  ];
  return new Description(
    "github",
    info.title,
    info.version,
    `@octokit/openapi ${pkg.version}, generated/api.github.com.json`,
    document,
    operationsOf(document, ""),
    aliases,
    [],
    generalAnswers,
  );
}

/** What `fixtures/vendor/<name>.json` holds (scripts/record-vendor-operations.ts writes it). */
export interface RecordedFixture {
  readonly title: string;
  readonly version: string;
  readonly recordedFrom: string;
  readonly operations: Readonly<
    Record<
      string,
      {
        method: string;
        path: string;
        parameters: Parameter[];
        requestBody?: unknown;
        responses: Record<string, unknown>;
      }
    >
  >;
  readonly schemas: Readonly<Record<string, unknown>>;
  readonly unrecorded?: readonly Unrecorded[];
  readonly amendments?: readonly unknown[];
}

export const FIXTURE_NAMES = { jira: "jira-platform-v3", confluence: "confluence-v2" } as const;

export function readFixture(vendor: "jira" | "confluence"): RecordedFixture {
  return JSON.parse(
    readFileSync(join(repoRoot, "fixtures", "vendor", `${FIXTURE_NAMES[vendor]}.json`), "utf8"),
  ) as RecordedFixture;
}

/** Atlassian documents 429 with `Retry-After` for every REST operation in its rate-limiting guides. */
const ATLASSIAN_RATE_LIMIT: Readonly<Record<"jira" | "confluence", string>> = {
  jira: "https://developer.atlassian.com/cloud/jira/platform/rate-limiting/",
  confluence: "https://developer.atlassian.com/cloud/confluence/rate-limiting/",
};

/** A recorded fixture as a Description. */
export function recordedDescription(vendor: "jira" | "confluence", fixture: RecordedFixture): Description {
  const document = { components: { schemas: fixture.schemas } };
  const operations: Operation[] = Object.entries(fixture.operations).map(([operationId, recorded]) => ({
    operationId,
    method: recorded.method,
    template: recorded.path,
    parameters: recorded.parameters,
    requestBody: recorded.requestBody as Operation["requestBody"],
    responses: recorded.responses as Operation["responses"],
  }));
  const generalAnswers: GeneralAnswer[] = [
    { status: 429, why: `the rate limit, any operation (${ATLASSIAN_RATE_LIMIT[vendor]})` },
  ];
  if (vendor === "confluence")
    generalAnswers.push({
      status: 409,
      operations: ["updatePage", "updateFooterComment"],
      why: "a version number that is not the current one + 1: Confluence answers 409 CONFLICT (recorded answers of v2 clients' tests; the v1 reference documents it), the v2 description lists no 409",
    });
  return new Description(
    vendor,
    fixture.title,
    fixture.version,
    `fixtures/vendor/${FIXTURE_NAMES[vendor]}.json (recorded from ${fixture.recordedFrom})`,
    document,
    operations,
    [],
    fixture.unrecorded ?? [],
    generalAnswers,
  );
}

const loaded = new Map<VendorName, Description>();

/** The vendor's description, loaded on first use and kept for the process. */
export function vendorDescription(vendor: VendorName): Description {
  let description = loaded.get(vendor);
  if (!description) {
    description = vendor === "github" ? github() : recordedDescription(vendor, readFixture(vendor));
    loaded.set(vendor, description);
  }
  return description;
}
