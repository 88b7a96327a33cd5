/**
 * The vendors' descriptions as the judge of the fakes' traffic (DESIGN.md §6; issue 32 §2). Every request a
 * backend sends to a fake and every answer the fake gives is one `Exchange`; `exchangeDepartures` says how
 * it departs from the vendor's description (vendor-descriptions.ts): the operation (method and path
 * template; a path no operation has is itself a departure), its path and query parameters (declared,
 * required, typed, enumerated), the JSON request body, the answer's status (the operation's, or one the
 * vendor documents for any operation), its JSON body against the schema for that status, and the answer
 * headers the operation describes (GitHub's `Link`).
 *
 * Each fake holds a `ContractWatch`: it judges every exchange as it happens and keeps the departures, and
 * the fake's `close()` (which every test's teardown calls) fails with them, naming operation, field,
 * expected and received. An answer a test injects on purpose (a hostile listing, a request made wrong to see
 * the fake refuse it) says so where it is made: `deliberate` on the fake's answer, or the request header
 * `DELIBERATE_HEADER` with the reason; such an exchange is kept aside, not judged.
 */
import { isObject } from "../core/checks.js";
import {
  type Answer,
  type Description,
  type Found,
  type Operation,
  type Parameter,
  type VendorName,
  vendorDescription,
} from "./vendor-descriptions.js";
import { type Schema, type SchemaDeparture, shown } from "./vendor-schema.js";

/** A request header that marks a request made wrong on purpose; its value says why. */
export const DELIBERATE_HEADER = "x-svc-test-deliberate";

/** One request and its answer, as a fake or the recording proxy saw them. */
export interface Exchange {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  /** The request body (utf8); empty when there was none. */
  readonly body: string;
  /** Lower-case names. */
  readonly requestHeaders?: Readonly<Record<string, string>>;
  readonly status: number;
  /** Lower-case names. */
  readonly answerHeaders?: Readonly<Record<string, string>>;
  /** The answer's body (utf8); empty when there was none. */
  readonly answer: string;
}

export interface Departure {
  /** The operationId, or `(none)` when no operation has the path. */
  readonly operation: string;
  readonly method: string;
  /** The path template (`/repos/{owner}/{repo}/issues`), or the path as sent when no operation has it. */
  readonly template: string;
  /** `query parameter state`, `request body /state_reason`, `answer body /0/labels`, `answer status`, … */
  readonly field: string;
  readonly expected: string;
  readonly received: string;
}

export function describeDeparture(departure: Departure): string {
  const { operation, method, template, field, expected, received } = departure;
  return `${operation} (${method} ${template}): ${field}: expected ${expected}, received ${received}`;
}

/** A query or path parameter's text as the value its schema describes (a number for an integer, …). */
function parameterValue(text: string, schema: Schema): unknown {
  const type = schema.type;
  if (type === "integer" || type === "number") return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  if (type === "boolean") return text === "true" ? true : text === "false" ? false : text;
  return text;
}

function pathnameAndQuery(path: string): { pathname: string; query: URLSearchParams } {
  const mark = path.indexOf("?");
  return mark < 0
    ? { pathname: path, query: new URLSearchParams() }
    : { pathname: path.slice(0, mark), query: new URLSearchParams(path.slice(mark + 1)) };
}

function jsonSchemaOf(content: Readonly<Record<string, { readonly schema?: Schema }>> | undefined) {
  if (!content) return undefined;
  const type = Object.keys(content).find((name) => /^application\/(.+\+)?json\b/.test(name));
  return type === undefined ? undefined : content[type]?.schema;
}

interface Judgement {
  readonly operationId: string;
  readonly departures: Departure[];
}

/** Judges exchanges against one vendor's description. */
class Judge {
  constructor(private readonly description: Description) {}

  /** The operation `exchange` calls (`(none)` when no operation has its path) and how it departs. */
  judge(exchange: Exchange): Judgement {
    const { pathname, query } = pathnameAndQuery(exchange.path);
    const found = this.description.find(exchange.method, pathname);
    if (!found) return { operationId: "(none)", departures: this.unknown(exchange, pathname) };
    const { operation } = found;
    const out: Departure[] = [];
    const add = (field: string, expected: string, received: string) =>
      out.push({
        operation: operation.operationId,
        method: operation.method,
        template: operation.template,
        field,
        expected,
        received,
      });
    this.parameters(found, query, add);
    this.requestBody(operation, exchange, add);
    this.answer(operation, exchange, add);
    return { operationId: operation.operationId, departures: out };
  }

  /** A path no operation has: a departure, unless it is an operation of the vendor's not recorded here. */
  private unknown(exchange: Exchange, pathname: string): Departure[] {
    if (this.description.unrecordedCall(exchange.method, pathname)) return [];
    return [
      {
        operation: "(none)",
        method: exchange.method,
        template: pathname,
        field: "path",
        expected: `an operation of ${this.description.title} ${this.description.version}`,
        received: `${exchange.method} ${pathname}, which none has`,
      },
    ];
  }

  private parameters(
    found: Found,
    query: URLSearchParams,
    add: (field: string, expected: string, received: string) => void,
  ): void {
    const { operation, pathParameters, alias } = found;
    for (const declared of operation.parameters) {
      const parameter = this.description.resolved(declared) as Parameter;
      const schema = this.description.resolved(parameter.schema ?? {}) as Schema;
      const field = `${parameter.in} parameter ${parameter.name}`;
      if (parameter.in === "path") {
        if (alias) continue;
        const text = pathParameters[parameter.name];
        if (text === undefined) add(field, "present (required)", "nothing");
        else this.value(operation, `${field}`, parameter.schema ?? {}, parameterValue(text, schema), add);
      } else if (parameter.in === "query") {
        const values = query.getAll(parameter.name);
        if (values.length === 0) {
          if (parameter.required) add(field, "present (required)", "nothing");
          continue;
        }
        if (schema.type === "array") {
          const items = this.description.resolved(isObject(schema.items) ? schema.items : {}) as Schema;
          // OpenAPI's default for a query array: `form`, exploded (`status=a&status=b`).
          const texts = parameter.explode === false ? values.flatMap((v) => v.split(",")) : values;
          const parsed = texts.map((text) => parameterValue(text, items));
          this.value(operation, field, parameter.schema ?? {}, parsed, add);
        } else if (values.length > 1) add(field, "one value", `${values.length}: ${shown(values)}`);
        else
          this.value(
            operation,
            field,
            parameter.schema ?? {},
            parameterValue(values[0] as string, schema),
            add,
          );
      }
    }
    const names = new Set(
      operation.parameters
        .map((declared) => this.description.resolved(declared) as Parameter)
        .filter((parameter) => parameter.in === "query")
        .map((parameter) => parameter.name),
    );
    for (const key of new Set(query.keys()))
      if (!names.has(key))
        add(
          `query parameter ${key}`,
          `none of that name (the operation has ${shown([...names])})`,
          shown(query.getAll(key)),
        );
  }

  private requestBody(
    operation: Operation,
    exchange: Exchange,
    add: (field: string, expected: string, received: string) => void,
  ): void {
    const body = this.description.resolved(operation.requestBody);
    const schema = jsonSchemaOf(body?.content);
    if (exchange.body === "") {
      if (body?.required) add("request body", "a body (required)", "nothing");
      return;
    }
    if (!body) {
      add("request body", "no body (the operation takes none)", shown(exchange.body));
      return;
    }
    if (!schema) return;
    const value = parsed(exchange.body);
    if (value === NOT_JSON) {
      add("request body", "JSON", shown(exchange.body));
      return;
    }
    this.value(operation, "request body", schema, value, add, "request");
  }

  private answer(
    operation: Operation,
    exchange: Exchange,
    add: (field: string, expected: string, received: string) => void,
  ): void {
    const status = String(exchange.status);
    let answer: Answer | undefined =
      operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default;
    let schema: Schema | undefined;
    if (answer) schema = jsonSchemaOf(this.description.resolved(answer).content);
    else {
      const general = this.description.generalAnswers.find(
        (entry) =>
          entry.status === exchange.status &&
          (!entry.methods || entry.methods.includes(operation.method)) &&
          (!entry.operations || entry.operations.includes(operation.operationId)),
      );
      if (!general) {
        add("answer status", `one of ${shown(Object.keys(operation.responses))}`, status);
        return;
      }
      answer = {};
      schema = general.schema === undefined ? undefined : { $ref: `#/components/schemas/${general.schema}` };
    }
    for (const [name, header] of Object.entries(answer.headers ?? {})) {
      const resolved = this.description.resolved(header);
      const value = exchange.answerHeaders?.[name];
      if (value === undefined) {
        if (resolved.required) add(`answer header ${name}`, "present (required)", "nothing");
      } else if (resolved.schema)
        this.value(
          operation,
          `answer header ${name}`,
          resolved.schema,
          parameterValue(value, resolved.schema),
          add,
        );
    }
    if (!schema) return;
    if (exchange.answer === "") {
      // 204 and 304 have no body (RFC 9110); Jira describes its 204s with an empty schema.
      const bodiless = exchange.status === 204 || exchange.status === 304 || exchange.method === "HEAD";
      if (!bodiless && Object.keys(schema).length > 0) add("answer body", "a JSON body", "nothing");
      return;
    }
    const value = parsed(exchange.answer);
    if (value === NOT_JSON) add("answer body", "JSON", shown(exchange.answer));
    else this.value(operation, `answer body (${status})`, schema, value, add, "answer", status);
  }

  private value(
    operation: Operation,
    field: string,
    schema: Schema,
    value: unknown,
    add: (field: string, expected: string, received: string) => void,
    direction: "request" | "answer" = "request",
    status = "",
  ): void {
    const key = `${operation.method} ${operation.template} ${field} ${status}`;
    const departures: SchemaDeparture[] = this.description.check(key, schema, direction)(value);
    for (const departure of departures)
      add(
        departure.pointer === "/" ? field : `${field} ${departure.pointer}`,
        departure.expected,
        departure.received,
      );
  }
}

const NOT_JSON = Symbol("not JSON");

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

const judges = new Map<VendorName, Judge>();

function judged(vendor: VendorName, exchange: Exchange): Judgement {
  let judge = judges.get(vendor);
  if (!judge) {
    judge = new Judge(vendorDescription(vendor));
    judges.set(vendor, judge);
  }
  return judge.judge(exchange);
}

/** How `exchange` departs from `vendor`'s description; empty when it does not. */
export function exchangeDepartures(vendor: VendorName, exchange: Exchange): Departure[] {
  return judged(vendor, exchange).departures;
}

/** What a fake (or the recording proxy) saw: the exchanges judged, their departures, those left aside. */
export class ContractWatch {
  readonly departures: Departure[] = [];
  /** Exchanges a test made or answered wrong on purpose, with the reason given; not judged. */
  readonly deliberate: { readonly exchange: Exchange; readonly why: string }[] = [];
  /** The operations judged, by operationId, with how many exchanges each. */
  readonly operations = new Map<string, number>();
  private failure: Error | undefined;

  /** `judging: false` for a benchmark, which times svc, not the judge (they would share the cores). */
  constructor(
    readonly vendor: VendorName,
    readonly judging = true,
  ) {}

  /** Judges one exchange (or keeps it aside, when `why` says it is wrong on purpose). */
  observe(exchange: Exchange, why?: string): void {
    if (!this.judging) return;
    const reason = why ?? exchange.requestHeaders?.[DELIBERATE_HEADER];
    if (reason !== undefined) {
      this.deliberate.push({ exchange, why: reason });
      return;
    }
    try {
      const { operationId, departures } = judged(this.vendor, exchange);
      this.operations.set(operationId, (this.operations.get(operationId) ?? 0) + 1);
      this.departures.push(...departures);
    } catch (error) {
      // A checker that cannot judge must not pass quietly: the fake's close() reports it.
      this.failure ??= error instanceof Error ? error : new Error(String(error));
    }
  }

  /** Throws, naming each departure, when any exchange departed (or could not be judged). */
  assertNone(): void {
    if (this.failure)
      throw new Error(`the ${this.vendor} contract check failed: ${this.failure.message}`, {
        cause: this.failure,
      });
    if (this.departures.length === 0) return;
    const description = vendorDescription(this.vendor);
    const lines = [...new Set(this.departures.map(describeDeparture))];
    throw new Error(
      `the fake's traffic departs from ${description.title} ${description.version} (${description.source}):\n${lines
        .slice(0, 40)
        .map((line) => `- ${line}`)
        .join("\n")}${lines.length > 40 ? `\n… and ${lines.length - 40} more` : ""}`,
    );
  }
}
