/**
 * Tracker descriptions: Atlassian Document Format (ADF, the tracker's rich-text JSON) ⇄ Markdown, lossless.
 *
 * Contract: `markdownToAdf(adfToMarkdown(doc))` deep-equals `doc` for every document, and the same document
 * always gives the same bytes. Paragraphs, headings, bullet and ordered lists, code blocks, blockquotes,
 * rules, hard breaks and the marks strong, em, strike, code and link become Markdown; every other block is
 * kept as a fence holding its JSON on one line:
 *
 *     ```adf
 *     {"type":"table",...}
 *     ```
 *
 * Exactness is checked, not hoped for: each block's Markdown is parsed back on the spot and, unless that
 * gives the very node, the block is written as a fence instead. So a paragraph holding a node Markdown has no
 * form for (a mention, an emoji, a status lozenge, a date, an inline card), a mark it cannot write (underline,
 * colour, sub/superscript), attributes (`localId`, alignment marks), marks out of the canonical order
 * (`MARK_ORDER`), adjacent text nodes with equal marks, or white space Markdown would eat, is one fence as a
 * whole; a list is fenced as a whole when a list item itself carries something Markdown cannot (a child
 * that cannot is fenced inside the item). A final check of the whole document falls back to fencing every
 * top-level block, so no combination of blocks can lose a byte either.
 *
 * Forms chosen where ADF has two spellings of one Markdown: an `orderedList` with `attrs: {order: n}` is
 * written `n. `, one without attrs `1) `; two adjacent lists of one kind are kept apart by a `<!-- -->` line
 * (CommonMark's own idiom). A paragraph or heading with no content, a code block with marks or with
 * attrs other than `language`, a document that is not `{type, version: 1, content: [≥1 block]}` (the whole
 * document is then one fence) are fences. A description that is absent (`null`) is the empty string.
 */

import { jsonEqual } from "../../core/checks.js";
import { excerpt, UserFacingError } from "../../core/errors.js";
import { parseInline, renderInline } from "./adf-inline.js";

export { MARK_ORDER } from "./adf-inline.js";

export interface AdfMark {
  readonly type: string;
  readonly attrs?: Readonly<Record<string, unknown>>;
}

/** Any ADF node: a block (`paragraph`, `table`, …) or an inline node (`text`, `mention`, …). */
export interface AdfNode {
  readonly type: string;
  readonly attrs?: Readonly<Record<string, unknown>>;
  readonly content?: readonly AdfNode[];
  readonly marks?: readonly AdfMark[];
  readonly text?: string;
}

export interface AdfDoc {
  readonly type: "doc";
  readonly version: 1;
  readonly content: readonly AdfNode[];
}

/** A Markdown line and its 1-based number in the description, for error messages. */
interface Line {
  readonly text: string;
  readonly no: number;
}

// ---------------------------------------------------------------------------------------------------------
// ADF → Markdown

/** The description `doc` (parsed JSON, or `null` when there is none) as Markdown; `""` for none. */
export function adfToMarkdown(doc: unknown): string {
  if (doc === null || doc === undefined) return "";
  if (!isNode(doc) || doc.type !== "doc") {
    throw new TypeError(
      `expected an ADF document ({"type":"doc",…}), received ${excerpt(JSON.stringify(doc))}`,
    );
  }
  if (!isCanonicalDoc(doc)) return `${fence(doc)}\n`;
  const markdown = `${joinBlocks(doc.content.map(renderBlock), "loose")}\n`;
  if (jsonEqual(parseMarkdown(markdown), doc.content)) return markdown;
  return `${joinBlocks(doc.content.map(fence), "loose")}\n`;
}

function isNode(value: unknown): value is AdfNode {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as AdfNode).type === "string"
  );
}

function isCanonicalDoc(doc: AdfNode): doc is AdfDoc {
  const { type, version, content, ...rest } = doc as AdfNode & { version?: unknown };
  const blocks = nodeList(content);
  // A block of type `doc` would read back as the whole document: such a document is one fence.
  const blocksOk = blocks !== undefined && blocks.length > 0 && blocks.every((block) => block.type !== "doc");
  return type === "doc" && version === 1 && blocksOk && isEmpty(rest);
}

function isEmpty(object: object): boolean {
  return Object.keys(object).length === 0;
}

function fence(node: unknown): string {
  return `\`\`\`adf\n${JSON.stringify(node)}\n\`\`\``;
}

/**
 * One block as Markdown, or as an ```adf fence when its Markdown would not parse back to it exactly. Only a
 * node can be a fence (a fence holding `5` would not parse): a container of anything else is fenced whole.
 */
function renderBlock(node: AdfNode): string {
  const markdown = renderMarkdownForm(node);
  if (markdown !== undefined && jsonEqual(parseMarkdown(markdown), [node])) return markdown;
  return fence(node);
}

/** `value` if it is a list of nodes, else `undefined`. */
function nodeList(value: unknown): readonly AdfNode[] | undefined {
  return Array.isArray(value) && value.every(isNode) ? value : undefined;
}

/** The Markdown a node would have, or `undefined` where Markdown has no form for it. */
function renderMarkdownForm(node: AdfNode): string | undefined {
  const content = nodeList(node.content);
  switch (node.type) {
    case "paragraph":
      return content && content.length > 0 ? renderInline(content) : undefined;
    case "heading": {
      const level = node.attrs?.level;
      const inline = content && content.length > 0 ? renderInline(content) : undefined;
      if (!isHeadingLevel(level) || inline === undefined || inline.includes("\n")) return undefined;
      return `${"#".repeat(level)} ${inline}`;
    }
    case "bulletList":
    case "orderedList":
      return content && content.length > 0 ? renderList(node, content) : undefined;
    case "codeBlock":
      return content && renderCodeBlock(node, content);
    case "blockquote":
      return content && prefixLines(joinBlocks(content.map(renderBlock), "loose"), () => "> ");
    case "rule":
      return "---";
    default:
      return undefined;
  }
}

function isHeadingLevel(level: unknown): level is number {
  return typeof level === "number" && Number.isInteger(level) && level >= 1 && level <= 6;
}

function renderList(node: AdfNode, items: readonly AdfNode[]): string | undefined {
  const order = node.attrs?.order;
  const start = typeof order === "number" ? order : 1;
  const delimiter = node.attrs === undefined ? ")" : ".";
  if (node.type === "orderedList" && (!Number.isSafeInteger(start) || start < 0)) return undefined;
  const rendered: string[] = [];
  for (const [index, item] of items.entries()) {
    const children = nodeList(item.content);
    if (children === undefined) return undefined;
    const marker = node.type === "bulletList" ? "-" : `${start + index}${delimiter}`;
    const body = joinBlocks(children.map(renderBlock), "tight");
    const indent = " ".repeat(marker.length + 1);
    rendered.push(body === "" ? marker : prefixLines(body, (first) => (first ? `${marker} ` : indent)));
  }
  return rendered.join("\n");
}

function renderCodeBlock(node: AdfNode, content: readonly AdfNode[]): string | undefined {
  const language = node.attrs?.language;
  if (language !== undefined && (typeof language !== "string" || !/^[^\s`]+$/.test(language))) {
    return undefined;
  }
  const body = content.map((child) => child.text ?? "").join("");
  const longest = Math.max(2, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const marks = "`".repeat(longest + 1);
  return `${marks}${language ?? ""}\n${body === "" ? "" : `${body}\n`}${marks}`;
}

/**
 * Prefixes every line of `text`: a quote's `>` or a list item's marker and indent. An empty line gets the
 * prefix without trailing spaces (`>`, or nothing inside a list item).
 */
function prefixLines(text: string, prefix: (first: boolean) => string): string {
  return text
    .split("\n")
    .map((line, index) => {
      const head = prefix(index === 0);
      if (line !== "") return head + line;
      return index === 0 ? head.trimEnd() : head.trim() === "" ? "" : head.trimEnd();
    })
    .join("\n");
}

/**
 * Sibling blocks, one blank line apart ("loose": the document, a quote) or, inside a list item, a nested
 * list right under the line before it ("tight"). Two lists of one kind in a row would read as one list, so
 * a `<!-- -->` line separates them.
 */
function joinBlocks(blocks: readonly string[], spacing: "loose" | "tight"): string {
  let joined = blocks[0] ?? "";
  for (let i = 1; i < blocks.length; i++) {
    const kind = listKind(blocks[i]);
    const sameKind = kind !== undefined && kind === listKind(blocks[i - 1]);
    const gap = spacing === "tight" ? "\n" : "\n\n";
    if (sameKind) joined += `${gap}${LIST_SEPARATOR}${gap}`;
    else if (spacing === "tight" && kind !== undefined && interruptsParagraph(blocks[i])) joined += "\n";
    else joined += "\n\n";
    joined += blocks[i];
  }
  return joined;
}

const LIST_SEPARATOR = "<!-- -->";

/** `-`, `.` or `)` for a block rendered as a list, `undefined` for any other block. */
function listKind(markdown: string): string | undefined {
  const marker = LIST_MARKER.exec(markdown.split("\n")[0]);
  return marker === null ? undefined : (marker[1] ?? marker[2]);
}

/** CommonMark lets a list interrupt a paragraph only when it is a bullet list or starts at 1. */
function interruptsParagraph(markdown: string): boolean {
  return /^(?:-|1[.)])(?: |$)/.test(markdown.split("\n")[0]);
}

// ---------------------------------------------------------------------------------------------------------
// Markdown → ADF

/**
 * The description `markdown` as an ADF document, or `null` when it holds nothing (the tracker's "no
 * description"). Reads the renderer's Markdown and hand edits of it; throws a `UserFacingError` naming the
 * line for an ```adf fence that does not hold one node's JSON.
 */
export function markdownToAdf(markdown: string): AdfDoc | null {
  const content = parseMarkdown(markdown);
  if (content.length === 0) return null;
  const whole = content.find((node) => node.type === "doc");
  if (whole !== undefined && content.length === 1) return whole as AdfDoc;
  if (whole !== undefined) {
    const line = blockLines.get(whole) ?? 0;
    throw adfFenceError(line, "holds a whole document beside other blocks", JSON.stringify(whole));
  }
  return { type: "doc", version: 1, content };
}

function parseMarkdown(markdown: string): AdfNode[] {
  const lines = markdown
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((text, index) => ({ text, no: index + 1 }));
  return parseBlocks(lines);
}

const BLANK = /^[ \t]*$/;
const FENCE_OPEN = /^(`{3,}|~{3,})[ \t]*([^`]*?)[ \t]*$/;
// The `s` flag: without it `.` stops at U+2028 and U+2029, which text may hold (lines split at `\n` only).
const HEADING = /^(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/s;
const RULE = /^ {0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$/;
const QUOTE = /^ {0,3}>/;
const LIST_MARKER = /^(?:([-+*])|\d{1,9}([.)]))(?:[ \t]+|$)/;
const SEPARATOR = /^<!--.*-->[ \t]*$/s;

interface Parsed {
  readonly node: AdfNode | undefined;
  readonly next: number;
}

/** The block parsers in the order they are tried; a paragraph is what none of them takes. */
const BLOCK_PARSERS: readonly ((lines: readonly Line[], at: number) => Parsed | undefined)[] = [
  (lines, at) => (SEPARATOR.test(lines[at].text) ? { node: undefined, next: at + 1 } : undefined),
  parseFence,
  parseHeading,
  (lines, at) => (RULE.test(lines[at].text) ? { node: { type: "rule" }, next: at + 1 } : undefined),
  parseQuote,
  parseList,
];

/** The line each top-level block parsed from the description starts on, for errors about the block. */
const blockLines = new WeakMap<AdfNode, number>();

function parseBlocks(lines: readonly Line[]): AdfNode[] {
  const nodes: AdfNode[] = [];
  let at = 0;
  while (at < lines.length) {
    if (BLANK.test(lines[at].text)) {
      at++;
      continue;
    }
    const parsed = firstParse(lines, at) ?? parseParagraph(lines, at);
    if (parsed.node !== undefined) {
      nodes.push(parsed.node);
      blockLines.set(parsed.node, lines[at].no);
    }
    at = parsed.next;
  }
  return nodes;
}

function firstParse(lines: readonly Line[], at: number): Parsed | undefined {
  for (const parse of BLOCK_PARSERS) {
    const parsed = parse(lines, at);
    if (parsed !== undefined) return parsed;
  }
  return undefined;
}

function startsBlock(text: string): boolean {
  return [SEPARATOR, FENCE_OPEN, HEADING, RULE, QUOTE, LIST_MARKER].some((pattern) => pattern.test(text));
}

function parseParagraph(lines: readonly Line[], at: number): Parsed {
  let end = at + 1;
  while (end < lines.length && !BLANK.test(lines[end].text) && !startsBlock(lines[end].text)) end++;
  const source = lines
    .slice(at, end)
    .map((line) => line.text.replace(/^[ \t]+|[ \t]+$/g, ""))
    .join("\n");
  return { node: { type: "paragraph", content: parseInline(source) }, next: end };
}

function parseHeading(lines: readonly Line[], at: number): Parsed | undefined {
  const match = HEADING.exec(lines[at].text);
  if (match === null) return undefined;
  const content = parseInline(match[2] ?? "");
  return { node: { type: "heading", attrs: { level: match[1].length }, content }, next: at + 1 };
}

function parseQuote(lines: readonly Line[], at: number): Parsed | undefined {
  let end = at;
  while (end < lines.length && QUOTE.test(lines[end].text)) end++;
  if (end === at) return undefined;
  const inner = lines.slice(at, end).map((line) => ({ ...line, text: line.text.replace(/^ {0,3}> ?/, "") }));
  return { node: { type: "blockquote", content: parseBlocks(inner) }, next: end };
}

/** A list: items with the same marker (`-`, `*`, `+`, `.` or `)`), blank lines between them allowed. */
function parseList(lines: readonly Line[], at: number): Parsed | undefined {
  const first = LIST_MARKER.exec(lines[at].text);
  if (first === null) return undefined;
  const kind = first[1] ?? first[2];
  const items: AdfNode[] = [];
  let next = at;
  for (;;) {
    const item = parseListItem(lines, next);
    items.push({ type: "listItem", content: parseBlocks(item.lines) });
    next = item.next;
    let after = next;
    while (after < lines.length && BLANK.test(lines[after].text)) after++;
    const marker = after < lines.length ? LIST_MARKER.exec(lines[after].text) : null;
    if (marker === null || (marker[1] ?? marker[2]) !== kind || RULE.test(lines[after].text)) break;
    next = after;
  }
  return { node: listNode(kind, lines[at].text, items), next };
}

function listNode(kind: string, firstLine: string, items: AdfNode[]): AdfNode {
  if (kind !== "." && kind !== ")") return { type: "bulletList", content: items };
  const order = Number.parseInt(firstLine, 10);
  if (kind === ")" && order === 1) return { type: "orderedList", content: items };
  return { type: "orderedList", attrs: { order }, content: items };
}

/**
 * One list item's lines, its marker and indent taken off: the marker line, then every line indented at
 * least as far as the item's text, and blank lines between them.
 */
function parseListItem(lines: readonly Line[], at: number): { lines: Line[]; next: number } {
  const marker = LIST_MARKER.exec(lines[at].text)?.[0] ?? "";
  // More than four spaces after the marker: the text starts one space in (CommonMark's indented-code rule).
  const width = marker.trimEnd().length + Math.min(Math.max(marker.length - marker.trimEnd().length, 1), 4);
  const inner: Line[] = [{ ...lines[at], text: lines[at].text.slice(Math.min(width, marker.length)) }];
  let next = at + 1;
  for (let i = at + 1; i < lines.length; i++) {
    const text = lines[i].text;
    if (BLANK.test(text)) {
      inner.push({ ...lines[i], text: text.slice(Math.min(width, text.length)) });
      continue;
    }
    if (!text.startsWith(" ".repeat(width))) break;
    inner.push({ ...lines[i], text: text.slice(width) });
    next = i + 1;
  }
  return { lines: inner.slice(0, next - at), next };
}

/** A fenced block: a code block, or with the info string `adf` one ADF node as JSON. */
function parseFence(lines: readonly Line[], at: number): Parsed | undefined {
  const open = FENCE_OPEN.exec(lines[at].text);
  if (open === null) return undefined;
  const marks = open[1];
  const closing = new RegExp(`^ {0,3}${marks[0] === "`" ? "`" : "~"}{${marks.length},}[ \\t]*$`);
  let end = at + 1;
  while (end < lines.length && !closing.test(lines[end].text)) end++;
  const body = lines.slice(at + 1, end).map((line) => line.text);
  const info = open[2];
  if (info === "adf") return { node: parseAdfFence(lines[at].no, body, end < lines.length), next: end + 1 };
  const text = body.join("\n");
  const node: AdfNode = {
    type: "codeBlock",
    ...(info === "" ? {} : { attrs: { language: info } }),
    content: text === "" ? [] : [{ type: "text", text }],
  };
  return { node, next: end + 1 };
}

const ADF_EXAMPLE = '{"type":"rule"}';

function parseAdfFence(lineNo: number, body: readonly string[], closed: boolean): AdfNode {
  const json = body.join("\n");
  if (!closed) throw adfFenceError(lineNo, "is never closed (no ``` line after its JSON)", json);
  let node: unknown;
  try {
    node = JSON.parse(json);
  } catch (cause) {
    throw adfFenceError(lineNo, `does not hold valid JSON (${(cause as Error).message})`, json, cause);
  }
  if (!isNode(node)) throw adfFenceError(lineNo, "holds JSON that is not an ADF node", json);
  return node;
}

function adfFenceError(lineNo: number, what: string, received: string, cause?: unknown): UserFacingError {
  const where = lineNo === 0 ? "the description" : `line ${lineNo} of the description`;
  return new UserFacingError(
    "SVC_RECORD_PARSE",
    `the \`\`\`adf block at ${where} ${what}: expected one ADF node as JSON between \`\`\`adf and \`\`\`, ` +
      `e.g. ${ADF_EXAMPLE}; received ${excerpt(received)}. Fix the block or delete it`,
    { data: { line: lineNo }, cause },
  );
}
