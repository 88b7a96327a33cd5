/**
 * The fake tracker's JQL: a strict subset, tokenized and parsed as Jira's parser would refuse anything else
 * (clauses joined by AND over project, key, parent, labels, summary ~, created and updated, then ORDER BY).
 * What the fake does not know is an error naming the fake's limit, never silently dropped. Resolving a query
 * against the site is testing/fake-tracker/search.ts.
 */
import { MAX_ORDER_FIELDS, UNBOUNDED } from "./vendor-data.js";

/** A JQL refusal; the message is the whole `errorMessages` entry. */
export class JqlError extends Error {}

type ListField = "project" | "key" | "parent" | "labels";
type DateField = "created" | "updated";
type JqlField = ListField | "summary" | DateField;
export type DateOperator = ">=" | ">" | "<=" | "<";
export type SortField = "key" | "id" | "created" | "updated";

export type JqlClause =
  | { readonly kind: "list"; readonly field: ListField; readonly values: readonly string[] }
  | { readonly kind: "contains"; readonly text: string }
  | {
      readonly kind: "date";
      readonly field: DateField;
      readonly operator: DateOperator;
      readonly wall: number;
    };

export interface JqlSort {
  readonly field: SortField;
  readonly descending: boolean;
}

export interface JqlQuery {
  readonly clauses: readonly JqlClause[];
  /** Empty: Jira's default order. */
  readonly orderBy: readonly JqlSort[];
}

interface Token {
  readonly kind: "word" | "string" | "operator" | "punctuation" | "end";
  readonly text: string;
  /** 1-based character position, as Jira's "(line 1, character N)". */
  readonly at: number;
}

const JQL_FIELDS: ReadonlyMap<string, JqlField> = new Map([
  ["project", "project"],
  ["key", "key"],
  ["issuekey", "key"],
  ["parent", "parent"],
  ["labels", "labels"],
  ["summary", "summary"],
  ["created", "created"],
  ["createddate", "created"],
  ["updated", "updated"],
  ["updateddate", "updated"],
] as const);

const FIELD_OPERATORS: Readonly<Record<JqlField, readonly string[]>> = {
  project: ["=", "in"],
  key: ["=", "in"],
  parent: ["=", "in"],
  labels: ["=", "in"],
  summary: ["~"],
  created: [">=", ">", "<=", "<"],
  updated: [">=", ">", "<=", "<"],
};

const SORT_FIELDS: ReadonlyMap<string, SortField> = new Map([
  ["key", "key"],
  ["issuekey", "key"],
  ["id", "id"],
  ["created", "created"],
  ["createddate", "created"],
  ["updated", "updated"],
  ["updateddate", "updated"],
] as const);

const JQL_KEYWORDS = new Set(["and", "or", "not", "order", "by", "asc", "desc", "in", "is", "empty", "null"]);
const JQL_OPERATORS = [">=", "<=", "!=", "!~", ">", "<", "=", "~"] as const;
const JQL_WORD_CHARACTER = /[\p{L}\p{N}_-]/u;
const JQL_ESCAPES: ReadonlyMap<string, string> = new Map([
  ["'", "'"],
  ['"', '"'],
  ["\\", "\\"],
  ["n", "\n"],
  ["t", "\t"],
  ["r", "\r"],
  [" ", " "],
]);
const JQL_DATE = /^(\d{4})([/-])(\d{2})\2(\d{2})(?: (\d{2}):(\d{2}))?$/;
const JQL_PERIOD = /^[-+]?\d+\s*[wdhm]/i;

function jqlSyntax(message: string, at: number): JqlError {
  return new JqlError(`Error in the JQL Query: ${message} (line 1, character ${at})`);
}

const describeToken = (token: Token) => (token.kind === "end" ? "the end of the query" : `'${token.text}'`);

/** A quoted JQL string starting at `start`; returns its value and the index after the closing quote. */
function readJqlString(jql: string, start: number): [string, number] {
  const quote = jql[start];
  let value = "";
  let index = start + 1;
  while (index < jql.length && jql[index] !== quote) {
    const char = jql[index] as string;
    if (char !== "\\") {
      value += char;
      index++;
      continue;
    }
    const escaped = jql[index + 1] ?? "";
    const hex = /^u([0-9a-fA-F]{4})/.exec(jql.slice(index + 1));
    const simple = JQL_ESCAPES.get(escaped);
    if (hex) value += String.fromCharCode(Number.parseInt(hex[1] as string, 16));
    else if (simple !== undefined) value += simple;
    else throw jqlSyntax(`'\\${escaped}' is an illegal JQL escape sequence.`, index + 1);
    index += hex ? 6 : 2;
  }
  if (index >= jql.length) throw jqlSyntax(`The quoted string '${value}' has not been completed.`, start + 1);
  return [value, index + 1];
}

function tokenizeJql(jql: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < jql.length) {
    const char = jql[index] as string;
    const at = index + 1;
    const operator = JQL_OPERATORS.find((candidate) => jql.startsWith(candidate, index));
    if (/\s/.test(char)) {
      index++;
    } else if ("(),".includes(char)) {
      tokens.push({ kind: "punctuation", text: char, at });
      index++;
    } else if (operator !== undefined) {
      tokens.push({ kind: "operator", text: operator, at });
      index += operator.length;
    } else if (char === '"' || char === "'") {
      const [text, end] = readJqlString(jql, index);
      tokens.push({ kind: "string", text, at });
      index = end;
    } else if (JQL_WORD_CHARACTER.test(char)) {
      let end = index;
      while (end < jql.length && JQL_WORD_CHARACTER.test(jql[end] as string)) end++;
      tokens.push({ kind: "word", text: jql.slice(index, end), at });
      index = end;
    } else {
      throw jqlSyntax(
        `The character '${char}' is a reserved JQL character. You must enclose it in a string or use the escape '\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}' instead.`,
        at,
      );
    }
  }
  tokens.push({ kind: "end", text: "", at: jql.length + 1 });
  return tokens;
}

/** The wall-clock time a JQL date value names, as if it were UTC (minute precision). */
function parseJqlDate(text: string, field: string): number {
  if (JQL_PERIOD.test(text)) {
    throw new JqlError(
      `Error in the JQL Query: the fake tracker does not support relative dates such as '${text}'; write 'yyyy/MM/dd HH:mm'.`,
    );
  }
  const match = JQL_DATE.exec(text);
  if (match) {
    const [year, month, day, hour, minute] = [1, 3, 4, 5, 6].map((group) => Number(match[group] ?? "0")) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const wall = Date.UTC(year, month - 1, day, hour, minute);
    const check = new Date(wall);
    if (check.getUTCMonth() === month - 1 && check.getUTCDate() === day && hour < 24 && minute < 60)
      return wall;
  }
  throw new JqlError(
    `Date value '${text}' for field '${field}' is invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd', or a period format e.g. '-5d', '4w 2d'.`,
  );
}

const isWord = (token: Token, word: string) => token.kind === "word" && token.text.toLowerCase() === word;

/** Parses the subset strictly: whatever it does not know is an error, never silently dropped. */
export class JqlParser {
  private index = 0;

  private constructor(private readonly tokens: readonly Token[]) {}

  static parse(jql: string): JqlQuery {
    return new JqlParser(tokenizeJql(jql)).query();
  }

  private peek(): Token {
    return this.tokens[this.index] ?? { kind: "end", text: "", at: 0 };
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.index++;
    return token;
  }

  private take(punctuation: string): boolean {
    const token = this.peek();
    if (token.kind !== "punctuation" || token.text !== punctuation) return false;
    this.index++;
    return true;
  }

  private query(): JqlQuery {
    const clauses: JqlClause[] = [];
    if (!isWord(this.peek(), "order") && this.peek().kind !== "end") {
      clauses.push(this.clause());
      while (isWord(this.peek(), "and")) {
        this.index++;
        clauses.push(this.clause());
      }
    }
    const orderBy = isWord(this.peek(), "order") ? this.orderBy() : [];
    const rest = this.peek();
    if (isWord(rest, "or"))
      throw jqlSyntax("the fake tracker does not support 'OR'; join clauses with AND.", rest.at);
    if (rest.kind !== "end")
      throw jqlSyntax(`Expecting either 'OR' or 'AND' but got ${describeToken(rest)}.`, rest.at);
    if (clauses.length === 0) throw new JqlError(UNBOUNDED);
    return { clauses, orderBy };
  }

  private clause(): JqlClause {
    const name = this.next();
    if (isWord(name, "not")) throw jqlSyntax("the fake tracker does not support 'NOT'.", name.at);
    if (name.kind !== "word" && name.kind !== "string") {
      throw jqlSyntax(`Expecting a field name but got ${describeToken(name)}.`, name.at);
    }
    const field = JQL_FIELDS.get(name.text.toLowerCase());
    if (field === undefined) {
      throw jqlSyntax(
        `the fake tracker does not support the field '${name.text}' (it knows project, key, parent, labels, summary, created and updated).`,
        name.at,
      );
    }
    const operator = this.operator();
    if (!FIELD_OPERATORS[field].includes(operator)) {
      throw new JqlError(`The operator '${operator}' is not supported by the '${name.text}' field.`);
    }
    if (operator === "in") return { kind: "list", field: field as ListField, values: this.list() };
    const value = this.value();
    if (field === "summary") return { kind: "contains", text: value };
    if (field === "created" || field === "updated") {
      return {
        kind: "date",
        field,
        operator: operator as DateOperator,
        wall: parseJqlDate(value, name.text),
      };
    }
    return { kind: "list", field, values: [value] };
  }

  private operator(): string {
    const token = this.next();
    if (token.kind === "operator") return token.text;
    if (isWord(token, "in")) return "in";
    throw jqlSyntax(
      `Expecting operator but got ${describeToken(token)}. The valid operators are '=', '!=', '<', '>', '<=', '>=', '~', '!~', 'IN', 'NOT IN', 'IS' and 'IS NOT'.`,
      token.at,
    );
  }

  private value(): string {
    const token = this.next();
    if (token.kind === "string") return token.text;
    if (token.kind === "word" && !JQL_KEYWORDS.has(token.text.toLowerCase())) return token.text;
    throw jqlSyntax(`Expecting either a value, list or function but got ${describeToken(token)}.`, token.at);
  }

  private list(): string[] {
    const open = this.peek();
    if (!this.take("(")) throw jqlSyntax(`Expecting '(' but got ${describeToken(open)}.`, open.at);
    const values = [this.value()];
    while (this.take(",")) values.push(this.value());
    const close = this.peek();
    if (!this.take(")")) throw jqlSyntax(`Expecting ')' but got ${describeToken(close)}.`, close.at);
    return values;
  }

  private orderBy(): JqlSort[] {
    this.index++;
    const by = this.next();
    if (!isWord(by, "by")) throw jqlSyntax(`Expecting 'by' but got ${describeToken(by)}.`, by.at);
    const sorts: JqlSort[] = [];
    do {
      const name = this.next();
      if (name.kind !== "word" && name.kind !== "string") {
        throw jqlSyntax(`Expecting a field name but got ${describeToken(name)}.`, name.at);
      }
      const field = SORT_FIELDS.get(name.text.toLowerCase());
      if (field === undefined) throw new JqlError(`Not able to sort using field '${name.text}'.`);
      const direction = this.peek();
      const descending = isWord(direction, "desc");
      if (descending || isWord(direction, "asc")) this.index++;
      sorts.push({ field, descending });
    } while (this.take(","));
    // ASSUMPTION: the wording; the limit is documented, the message is not.
    if (sorts.length > MAX_ORDER_FIELDS) {
      throw new JqlError(
        `Error in the JQL Query: the ORDER BY clause can contain at most ${MAX_ORDER_FIELDS} fields.`,
      );
    }
    return sorts;
  }
}
