/**
 * The record model and the one canonical renderer/parser of record files (DESIGN.md §2).
 *
 * A file is `---\n`, one `key: value` line per frontmatter field in the schema's order, `---\n`, then the
 * body byte for byte. The renderer is ours and deterministic: the same record gives the same bytes on every
 * machine and version, because blob ids in the cache's trees are computed from these bytes.
 *
 * Parsing does not use gray-matter (DESIGN.md §2 names it): gray-matter caches results by input string and
 * hands out the same mutable `data` object for equal inputs, and it brings js-yaml 3 with it. Splitting at
 * the delimiter lines is a few lines of code; the YAML between them goes to js-yaml 5 with the JSON schema
 * (no `Date` coercion), aliases refused (an alias bomb costs nothing) and a small nesting limit.
 */

import { createRequire } from "node:module";
import { RFC3339 } from "../core/checks.js";
import { excerpt, UserFacingError } from "../core/errors.js";

/** js-yaml, loaded on first parse: the fetch path only renders, and the helper starts once per fetch. */
let yaml: typeof import("js-yaml") | undefined;
function loadYaml(): typeof import("js-yaml") {
  yaml ??= createRequire(import.meta.url)("js-yaml") as typeof import("js-yaml");
  return yaml;
}

export type FieldValue = string | number | null | readonly string[];

/** A list field's values (a copy), or none when the field is absent or not a list. */
export function stringList(value: FieldValue | undefined): string[] {
  return Array.isArray(value) ? [...value] : [];
}

export type FieldType =
  /** A safe integer. */
  | "integer"
  /**
   * A numeric identifier kept as a string (wiki page and space ids are 64-bit): rendered as bare digits,
   * read back from a number or a string of digits.
   */
  | "numeric-id"
  /** Any string. */
  | "string"
  /** An RFC 3339 timestamp, kept as the server spelled it. */
  | "timestamp"
  /** A list of strings, rendered as a YAML flow sequence. */
  | "string-list"
  /** A finite number, whole or not (a tracker's story points: `5`, `0.5`). */
  | "number"
  /** A calendar date `YYYY-MM-DD`, rendered plain (a JSON-schema YAML reader keeps it a string). */
  | "date"
  /**
   * A value svc shows but cannot map (a tracker's cascading select): its JSON on one line, kept as that
   * text, rendered single-quoted when it can be (`'{"value":"A"}'`), double-quoted otherwise.
   */
  | "json"
  /**
   * An issue of the same repository by its number (`7`), or one of another repository as `owner/repo#N`
   * (text: the forge's parent of another repository, shown and never written).
   */
  | "issue-ref";

/** `owner/repo#N`: an issue of another repository. */
export const ISSUE_REF = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+#[1-9][0-9]*$/;

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  /** Assigned by the server: never sent on writes, always taken from the server's last state. */
  readonly serverControlled: boolean;
  /** Must be present in a file the user writes (server-controlled fields are exempt on new files). */
  readonly required: boolean;
  /** May be `null` (rendered `null`). */
  readonly nullable: boolean;
  /** Left out of the rendered file when the record has no value for it (`assignee` of the sim). */
  readonly omitWhenAbsent: boolean;
  /** The values a string field may take, when the backend fixes them. */
  readonly allowed?: readonly string[];
  /** What the server accepts in a write (the planner refuses a push that breaks it before any write). */
  readonly limit?: FieldLimit;
}

/** A backend's documented limit on one writable field; lengths in UTF-16 code units, as JSON counts them. */
export interface FieldLimit {
  /** A string's longest length. */
  readonly maxLength?: number;
  /** A string must hold more than white space. */
  readonly nonBlank?: boolean;
  /** A list's most entries. */
  readonly maxItems?: number;
  /** A list entry's longest length; entries must not be blank. */
  readonly maxItemLength?: number;
  /**
   * Why a list entry may not be written (the server gives it another meaning: the forge's status labels),
   * or undefined for an entry that may.
   */
  readonly reserved?: (entry: string) => string | undefined;
}

export interface RecordSchema {
  /** Backend kind: `sim`, `wiki`, `forge`, `tracker`. */
  readonly kind: string;
  /** The collection folder, without a trailing slash: `issues`, `pages`. */
  readonly folder: string;
  readonly fields: readonly FieldSpec[];
  /** The frontmatter fields holding the concurrency token: the version number (if any) and the update time. */
  readonly tokenFields: { readonly version: string | undefined; readonly updatedAt: string };
  /**
   * The frontmatter field holding the record's key (`BackendRecord.key`), by which a pushed file names its
   * record; default `id`. The tracker's is `key` (`TEST-42`): its files are named by it.
   */
  readonly keyField?: string;
  /** The canonical file of the record with this key: `issues/0042.md`. Records are never renamed. */
  readonly fileName: (key: string) => string;
  /**
   * Writable fields the server keeps unique (the wiki: a title per space). A create whose answer was lost
   * is recognised by them alone; without them, by its whole content (helper/create-journal.ts).
   */
  readonly uniqueFields?: readonly string[];
  /**
   * Fields a create sets with a later request, so a create cut off between the two has not got them yet:
   * they are left out when a lost create is looked for (the forge closes a new issue with a PATCH).
   */
  readonly setAfterCreate?: readonly string[];
  /**
   * Where the server cannot delete a record, the word for what a delete does instead, as a push's summary
   * counts it (the forge closes the issue as not planned: `closed`). Undefined where a delete deletes.
   */
  readonly deleteDoes?: string;
  /**
   * Fields the server fills in on a create when the file leaves them out or `null` (the tracker's issue
   * type, priority, default assignee): a lost create is recognised whatever the server chose for them.
   */
  readonly serverDefaults?: readonly string[];
  /**
   * How this schema renders a record, as a word that changes whenever the same server record would render
   * to other bytes (a field added, a value shown otherwise; the tracker's also names its custom fields and
   * their slugs). The cache keeps the word it rendered with; a sync that finds another one lists every record
   * again, without HTTP validators, and renders each anew, so an old cache shows what a new clone shows
   * (cache/sync.ts). Absent: the first rendering.
   */
  readonly rendering?: string;
  /** The longest body the server accepts, in UTF-16 code units as JSON counts them (the forge: 65,536). */
  readonly bodyMaxLength?: number;
  /**
   * Why the server cannot take this body (the tracker: a malformed `adf` fence, raw HTML, an image, …),
   * checked before any write.
   */
  readonly bodyProblem?: (body: string) => string | undefined;
  /**
   * The body as the server will give it back, where it converts bodies (the tracker: Markdown → ADF →
   * Markdown): a create whose answer was lost is recognised by this form. Must be idempotent.
   */
  readonly canonicalBody?: (body: string) => string;
}

export type RecordFields = Readonly<Record<string, FieldValue>>;

/** The record key a file's fields name (`schema.keyField`, else `id`), or undefined for a new record. */
export function recordKeyOf(schema: RecordSchema, fields: RecordFields): string | undefined {
  const key = fields[schema.keyField ?? "id"];
  return key === undefined || key === null ? undefined : String(key);
}

/** What a record file holds: frontmatter fields and the body. */
export interface RecordContent {
  readonly fields: RecordFields;
  readonly body: string;
}

export function field(
  name: string,
  type: FieldType,
  options: Partial<Omit<FieldSpec, "name" | "type">> = {},
): FieldSpec {
  return {
    name,
    type,
    serverControlled: options.serverControlled ?? false,
    required: options.required ?? false,
    nullable: options.nullable ?? false,
    omitWhenAbsent: options.omitWhenAbsent ?? false,
    ...(options.allowed ? { allowed: options.allowed } : {}),
    ...(options.limit ? { limit: options.limit } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Rendering

const PLAIN_WORD = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
/** Characters a double-quoted scalar must escape (surrogates go the slow way, which tells pairs from lone ones). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]/;
/** Words some YAML reader would take for something other than a string. */
const RESERVED_WORDS = new Set(["true", "false", "null", "yes", "no", "on", "off", "y", "n"]);

/**
 * A scalar string as YAML: plain when it cannot be mistaken for anything else by a YAML 1.2 reader
 * (timestamps stay plain: YAML 1.1 readers make them dates, our JSON-schema parser keeps them strings),
 * otherwise double-quoted with every character js-yaml would refuse or fold escaped.
 */
export function renderYamlString(value: string): string {
  if ((PLAIN_WORD.test(value) && !RESERVED_WORDS.has(value.toLowerCase())) || RFC3339.test(value)) {
    return value;
  }
  if (!NEEDS_ESCAPE.test(value)) return `"${value}"`;
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (
      c < 0x20 ||
      (c >= 0x7f && c <= 0x9f) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0xfeff ||
      c === 0xfffe ||
      c === 0xffff
    ) {
      out += `\\u${c.toString(16).padStart(4, "0")}`;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += value[i] + value[i + 1];
        i++;
      } else {
        out += `\\u${c.toString(16)}`;
      }
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      out += `\\u${c.toString(16)}`;
    } else {
      out += value[i];
    }
  }
  return `${out}"`;
}

function renderValue(spec: FieldSpec, value: FieldValue): string {
  if (value === null) return "null";
  // Bare digits only where a YAML reader's number keeps every digit; larger ids stay quoted strings.
  if (spec.type === "numeric-id" && typeof value === "string" && /^[0-9]+$/.test(value)) {
    if (Number.isSafeInteger(Number(value))) return value;
  }
  if (typeof value === "number") return String(value);
  if (spec.type === "date" && typeof value === "string" && isCalendarDate(value)) return value;
  if (spec.type === "json" && typeof value === "string") return renderJsonText(value);
  if (typeof value === "string") return renderYamlString(value);
  if (value.length === 0) return "[]";
  return `[${value.map(renderYamlString).join(", ")}]`;
}

/** A valid calendar date written `YYYY-MM-DD`. */
export function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [, y, m, d] = match.map(Number);
  const date = new Date(Date.UTC(y ?? 0, (m ?? 0) - 1, d ?? 0));
  return date.getUTCFullYear() === y && date.getUTCMonth() + 1 === m && date.getUTCDate() === d;
}

/**
 * JSON text as a YAML scalar: single-quoted (only `'` doubled) when it holds nothing a YAML reader would
 * refuse or fold, which JSON.stringify's output nearly always is; double-quoted with escapes otherwise.
 */
function renderJsonText(value: string): string {
  if (NEEDS_ESCAPE.test(value.replace(/["\\]/g, ""))) return renderYamlString(value);
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * The canonical bytes of a record file. Fields the schema does not name are not rendered, and neither are
 * fields the record has no value for (a record the server sent has them all; a new one has no `id` yet).
 */
export function renderRecordFile(schema: RecordSchema, content: RecordContent): string {
  let out = "---\n";
  for (const spec of schema.fields) {
    const value = content.fields[spec.name];
    if (value !== undefined) out += `${spec.name}: ${renderValue(spec, value)}\n`;
  }
  return `${out}---\n${content.body}`;
}

// ---------------------------------------------------------------------------------------------------------
// Parsing

/**
 * A record file that cannot be read: what is wrong, what was expected, what was found. The command to run
 * next depends on where the file came from (a push prints it: helper/push-plan.ts `nextCommand`).
 */
export class RecordParseError extends UserFacingError {
  constructor(
    path: string,
    problem: string,
    expected: string,
    received: string | undefined,
    cause?: unknown,
  ) {
    const got = received === undefined ? "" : `\n  received: ${received}`;
    super("SVC_RECORD_PARSE", `${path}: ${problem}\n  expected: ${expected}${got}`, {
      data: { path, problem },
      cause,
    });
  }
}

/** A field the schema does not have: `field` names it (a push tells one svc itself wrote from others). */
export class UnknownFieldError extends RecordParseError {
  constructor(
    path: string,
    readonly field: string,
    schema: RecordSchema,
  ) {
    super(
      path,
      `unknown field \`${excerpt(field, 40)}\``,
      `only the fields ${schema.fields.map((f) => f.name).join(", ")}`,
      undefined,
    );
  }
}

/**
 * The largest frontmatter we read, in UTF-16 code units: a bound on memory, not a record size. A server can
 * hold records far over its own write limits (a record with 100,000 labels renders to about 1 MiB of
 * frontmatter), and the user must still be able to edit such a record's other fields.
 */
const MAX_FRONTMATTER_CHARS = 8 * 1024 * 1024;

interface SplitFile {
  readonly yaml: string;
  readonly body: string;
}

/** Finds the frontmatter between the first line `---` and the next line `---` (CRLF tolerated). */
export function splitFrontmatter(path: string, text: string): SplitFile {
  const start = text.startsWith("\uFEFF") ? 1 : 0;
  const open = /^---[ \t]*\r?\n/.exec(text.slice(start));
  if (!open) {
    throw new RecordParseError(
      path,
      "the file does not start with a frontmatter block",
      "a first line `---`, then `key: value` lines, then a line `---`, then the body",
      excerpt(text.slice(start, start + 40)),
    );
  }
  const yamlStart = start + open[0].length;
  // Not the `m` flag: its `^` also matches after U+2028 and U+2029, which YAML reads as ordinary characters
  // inside a value, so a value holding them raw would end the frontmatter early.
  const closing = /(?<=\n)---[ \t]*(?:\r?\n|$)/g;
  closing.lastIndex = yamlStart;
  const close = closing.exec(text);
  if (!close || close.index - yamlStart > MAX_FRONTMATTER_CHARS) {
    throw new RecordParseError(
      path,
      close ? "the frontmatter block is larger than 8 MiB" : "the frontmatter block is not closed",
      "a line `---` after the `key: value` lines",
      undefined,
    );
  }
  return { yaml: text.slice(yamlStart, close.index), body: text.slice(close.index + close[0].length) };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return `string ${excerpt(value, 40)}`;
  // Unquoted: `number "5"` would read as if the user had written a string. YAML numbers and booleans are short.
  return `${typeof value} ${String(value)}`;
}

function checkValue(path: string, spec: FieldSpec, value: unknown): FieldValue {
  const wrong = (expected: string) =>
    new RecordParseError(path, `field \`${spec.name}\` has the wrong type`, expected, describe(value));
  if (value === null) {
    if (spec.nullable) return null;
    throw wrong(`a value (\`${spec.name}\` may not be null)`);
  }
  switch (spec.type) {
    case "integer":
      if (typeof value === "number" && Number.isSafeInteger(value)) return value;
      throw wrong("a whole number, for example `42`");
    case "numeric-id":
      if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return String(value);
      if (typeof value === "string" && /^[0-9]+$/.test(value)) return value;
      throw wrong("an id made of digits, for example `2818063`");
    case "string":
    case "timestamp":
      if (typeof value !== "string") {
        throw wrong(`a string, for example \`${spec.name}: "some text"\``);
      }
      if (spec.type === "timestamp" && !RFC3339.test(value)) {
        throw wrong("an RFC 3339 timestamp, for example `2026-01-31T12:00:00.000Z`");
      }
      if (spec.allowed && !spec.allowed.includes(value)) {
        throw new RecordParseError(
          path,
          `field \`${spec.name}\` has a value this backend does not know`,
          `one of ${spec.allowed.join(", ")}`,
          excerpt(value, 60),
        );
      }
      return value;
    case "string-list":
      if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value as string[];
      throw wrong(`a list of strings, for example \`${spec.name}: [bug, "needs triage"]\``);
    case "number":
      if (typeof value === "number" && Number.isFinite(value)) return value;
      throw wrong(`a number, for example \`${spec.name}: 5\``);
    case "date":
      if (typeof value === "string" && isCalendarDate(value)) return value;
      throw wrong(`a date YYYY-MM-DD, for example \`${spec.name}: 2026-12-24\``);
    case "json":
      if (typeof value === "string" && isJson(value)) return value;
      throw wrong(`the JSON text svc wrote, on one line in quotes (this field is read-only)`);
    case "issue-ref":
      if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
      if (typeof value === "string" && ISSUE_REF.test(value)) return value;
      throw wrong(
        `an issue's number, for example \`${spec.name}: 42\` (or another repository's, as svc wrote it)`,
      );
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A line git writes around a conflict: `<<<<<<< ours`, `|||||||` (diff3), `=======`, `>>>>>>> theirs`. */
const CONFLICT_MARKER = /(?<=^|\n)(<{7}|\|{7}|={7}|>{7})(?=[ \r\n]|$)/g;

/**
 * The line (1-based) of the first `<<<<<<<` of a complete conflict git left in `text` (`<<<<<<<`, then
 * `=======`, then `>>>>>>>`, each at the start of a line), or undefined. Lines split at `\n` only, as git
 * splits them. A lone `=======` is Markdown (a heading's underline), not a conflict.
 */
export function conflictMarkerLine(text: string): number | undefined {
  let start: number | undefined;
  let middle = false;
  for (const match of text.matchAll(CONFLICT_MARKER)) {
    const marker = match[1]?.[0];
    if (marker === "<") {
      start = match.index;
      middle = false;
    } else if (marker === "=" && start !== undefined) {
      middle = true;
    } else if (marker === ">" && middle && start !== undefined) {
      let line = 1;
      for (let at = text.indexOf("\n"); at !== -1 && at < start; at = text.indexOf("\n", at + 1)) line++;
      return line;
    }
  }
  return undefined;
}

/** What js-yaml says is wrong (its `reason`, without its own position), or the message of anything else. */
function yamlReason(error: unknown): string {
  const reason = (error as { reason?: unknown }).reason;
  if (typeof reason === "string") return reason;
  return error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
}

/**
 * The line of the file a YAML error is about, and what to show of it. js-yaml's mark is where it gave up,
 * which for a few errors is a line after the wrong one (table-tested in record.test.ts):
 * - an unclosed `[`, `{` or quote: it reads on until a line less indented, the next `key:` line;
 * - a line that is no `key: value` (a stray word, a conflict marker): it takes the line for the start of a
 *   key that goes on into the next line, and stops at that line's colon;
 * - an indented first line: the mapping starts indented, and the next, unindented line is where it stops.
 * The frontmatter's first line is line 2 of the file (line 1 is `---`).
 */
export function yamlErrorAt(yaml: string, error: unknown): { line: number | undefined; received: string } {
  const lines = yaml.split("\n");
  const text = (line: number) => (lines[line - 2] ?? "").replace(/\r$/, "");
  /** The nearest line above `line` that starts a `key:` entry (at column 0, not a comment). */
  const entryAbove = (line: number) => {
    for (let at = line - 1; at >= 2; at--) if (/^[^\s#]/.test(text(at))) return at;
    return undefined;
  };
  const reason = yamlReason(error);
  const mark = (error as { mark?: { line?: unknown } }).mark;
  const last = lines.length + (lines.at(-1) === "" ? 0 : 1);
  let line: number | undefined;
  let why = reason;
  if (typeof mark?.line === "number") {
    // js-yaml read `\n` + the frontmatter: its 0-based line numbers are the file's 1-based ones, minus 1.
    const at = Math.min(mark.line + 1, last);
    const firstContent = lines.findIndex((content) => content.trim() !== "" && !content.startsWith("#")) + 2;
    if (reason === "deficient indentation") {
      line = entryAbove(mark.line + 1);
      why = "a `[`, `{` or quote opened on this line is not closed on it";
    } else if (reason.includes("a multiline key may not be an implicit key")) {
      line = entryAbove(mark.line + 1);
      why = "this line is no `key: value` line";
    } else if (reason.startsWith("end of the stream") && /^\s/.test(text(firstContent))) {
      line = firstContent;
      why = "the first `key: value` line is indented; every line starts a `key: value` at column 0";
    } else {
      line = at;
    }
  } else if (reason.includes("expected a single document")) {
    const at = lines.findIndex((content) => /^\.\.\.[ \t]*\r?$/.test(content));
    if (at !== -1) line = at + 2;
    why = "a line `...` ends the YAML before the frontmatter does";
  }
  return { line, received: line === undefined ? why : `${excerpt(text(line), 60)}: ${why}` };
}

/**
 * Parses a record file the user may have edited. Unknown fields, wrong types and YAML errors are refused
 * with a message that names the file; missing server-controlled fields are allowed (a new record).
 * `rendered`: the file is svc's own rendering of a server state (a push's base), whose fields the schema may
 * no longer have (a tracker field removed or renamed on the server since): those are left out, not refused.
 */
export function parseRecordFile(
  schema: RecordSchema,
  path: string,
  text: string,
  rendered = false,
): RecordContent {
  const { yaml, body } = splitFrontmatter(path, text);
  let data: unknown;
  try {
    data =
      yaml.trim() === ""
        ? {}
        : // The leading newline stands for the opening `---`, so js-yaml's line numbers are the file's.
          loadYaml().load(`\n${yaml}`, {
            schema: loadYaml().JSON_SCHEMA,
            maxAliases: 0,
            maxDepth: 4,
            filename: path,
          });
  } catch (error) {
    const found = yamlErrorAt(yaml, error);
    throw new RecordParseError(
      path,
      `the frontmatter is not valid YAML${found.line === undefined ? "" : ` at line ${found.line}`}`,
      "`key: value` lines",
      found.received,
      error,
    );
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new RecordParseError(
      path,
      "the frontmatter is not a mapping",
      "`key: value` lines",
      describe(data),
    );
  }
  const known = new Map(schema.fields.map((spec) => [spec.name, spec]));
  const fields: Record<string, FieldValue> = {};
  for (const [name, value] of Object.entries(data)) {
    const spec = known.get(name);
    if (!spec && rendered) continue;
    if (!spec) throw new UnknownFieldError(path, name, schema);
    fields[name] = checkValue(path, spec, value);
  }
  for (const spec of schema.fields) {
    if (spec.required && !spec.serverControlled && fields[spec.name] === undefined) {
      throw new RecordParseError(
        path,
        `field \`${spec.name}\` is missing`,
        `a line \`${spec.name}: …\``,
        undefined,
      );
    }
  }
  return { fields, body };
}
