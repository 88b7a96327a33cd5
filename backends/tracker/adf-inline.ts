/**
 * The inline half of the ADF ⇄ Markdown converter (see `adf.ts` for the contract): a paragraph's or a
 * heading's content (text nodes with the marks strong, em, strike, code and link, and hard breaks) to one
 * Markdown string and back.
 *
 * Rendering returns `undefined` for content it cannot write exactly; the caller then keeps the whole block
 * as an ```adf fence. Marks are written as nested spans in the canonical order `MARK_ORDER` (outermost
 * first), so a text node whose marks come in another order is not written (the parser could only give the
 * canonical order back).
 *
 * Parsing reads what the renderer writes, plus the usual hand edits: `*a*` for em, `__a__` for strong, a
 * soft line break is a space, an unmatched delimiter or bracket is literal text, `_` between two letters or
 * digits is literal (CommonMark's rule for `snake_case`). Delimiters are toggles, not CommonMark's
 * delimiter-run algorithm: `**` switches strong on or off, `_` em, `~~` strike, so `**a****b**` (closing
 * then reopening) means what it says, and so does whatever order the renderer closes and opens spans in.
 */

import type { AdfMark, AdfNode } from "./adf.js";

/** The marks Markdown expresses, outermost first. `code` is a span of its own and always innermost. */
export const MARK_ORDER = ["link", "strong", "em", "strike", "code"] as const;
type MarkType = (typeof MARK_ORDER)[number];

const DELIMITER: Readonly<Record<"strong" | "em" | "strike", string>> = {
  strong: "**",
  em: "_",
  strike: "~~",
};

// ---------------------------------------------------------------------------------------------------------
// Rendering

/**
 * Characters escaped wherever they appear in text: every delimiter the parser reads, `<` before what could
 * open an autolink or HTML, `&` before what could be an entity.
 */
const ESCAPE_ANYWHERE = /[\\`*_[\]~]|<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)/g;

/** A text at the start of a line that Markdown would read as a block: heading, quote, list item, rule. */
const BLOCK_START = /^[#>+=-]/;
const ORDERED_START = /^(\d+)([.)])/;

function escapeText(text: string, atLineStart: boolean): string {
  const escaped = text.replace(ESCAPE_ANYWHERE, "\\$&");
  if (!atLineStart) return escaped;
  if (BLOCK_START.test(escaped)) return `\\${escaped}`;
  return escaped.replace(ORDERED_START, "$1\\$2");
}

/** A code span: a backtick run longer than any inside, padded where CommonMark would strip or merge. */
function codeSpan(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") || strippedByCodeSpan(text);
  return pad ? `${fence} ${text} ${fence}` : `${fence}${text}${fence}`;
}

/** CommonMark takes one space off each end of a code span that starts and ends with one and is not all spaces. */
function strippedByCodeSpan(text: string): boolean {
  return text.length >= 2 && text.startsWith(" ") && text.endsWith(" ") && /[^ ]/.test(text);
}

function linkDestination(href: string): string {
  if (/^[^\s<>()\\]+$/.test(href)) return href;
  return `<${href.replace(/[\\<>]/g, "\\$&")}>`;
}

function closeLink(attrs: Record<string, unknown>): string {
  const title = attrs.title === undefined ? "" : ` "${String(attrs.title).replace(/[\\"]/g, "\\$&")}"`;
  return `](${linkDestination(String(attrs.href))}${title})`;
}

/** The marks of a text node in canonical order, or `undefined` if Markdown cannot write them exactly. */
function canonicalMarks(marks: unknown): readonly AdfMark[] | undefined {
  if (marks === undefined) return [];
  if (!Array.isArray(marks) || marks.length === 0) return undefined;
  let previousRank = -1;
  for (const mark of marks as AdfMark[]) {
    const rank = MARK_ORDER.indexOf(mark?.type as MarkType);
    if (rank <= previousRank || !isExpressibleMark(mark)) return undefined;
    previousRank = rank;
  }
  return marks as AdfMark[];
}

function isExpressibleMark(mark: AdfMark): boolean {
  const keys = Object.keys(mark);
  if (mark.type !== "link") return keys.length === 1;
  const attrs = mark.attrs;
  if (keys.length !== 2 || typeof attrs !== "object" || attrs === null) return false;
  const attrKeys = Object.keys(attrs);
  const titleOk = !("title" in attrs) || typeof attrs.title === "string";
  return (
    typeof attrs.href === "string" && titleOk && attrKeys.every((key) => key === "href" || key === "title")
  );
}

function sameMark(a: AdfMark, b: AdfMark): boolean {
  return a.type === b.type && JSON.stringify(a.attrs) === JSON.stringify(b.attrs);
}

/** Writes spans as they open and close; fails (returns false) where CommonMark would not see the span. */
class InlineWriter {
  out = "";
  private open: AdfMark[] = [];
  private lineStart = true;

  /** Closes the open spans that `marks` does not continue and opens the new ones. */
  switchTo(marks: readonly AdfMark[], nextText: string): boolean {
    let keep = 0;
    while (keep < this.open.length && keep < marks.length && sameMark(this.open[keep], marks[keep])) keep++;
    if (!this.closeDownTo(keep)) return false;
    for (const mark of marks.slice(keep)) {
      if (mark.type === "link") this.out += "[";
      else {
        // `** a**` is literal text in CommonMark: a delimiter must touch the text it marks.
        if (/^\s/u.test(nextText)) return false;
        this.out += DELIMITER[mark.type as keyof typeof DELIMITER];
      }
      this.open.push(mark);
    }
    if (marks.length > keep) this.lineStart = false;
    return true;
  }

  closeDownTo(depth: number): boolean {
    while (this.open.length > depth) {
      const mark = this.open.pop() as AdfMark;
      if (mark.type === "link") this.out += closeLink(mark.attrs ?? {});
      else if (/\s$/u.test(this.out)) return false;
      else this.out += DELIMITER[mark.type as keyof typeof DELIMITER];
    }
    return true;
  }

  text(text: string, code: boolean): void {
    this.out += code ? codeSpan(text) : escapeText(text, this.lineStart);
    this.lineStart = false;
  }

  hardBreak(): void {
    this.out += "\\\n";
    this.lineStart = true;
  }
}

/** Inline content as Markdown, or `undefined` if some node or mark cannot be written exactly. */
export function renderInline(content: readonly AdfNode[]): string | undefined {
  const writer = new InlineWriter();
  for (const node of content) {
    if (node?.type === "hardBreak" && Object.keys(node).length === 1) {
      // Spans close before the break (a hard break has no marks) and reopen after it.
      if (!writer.closeDownTo(0)) return undefined;
      writer.hardBreak();
      continue;
    }
    if (node?.type !== "text" || typeof node.text !== "string" || node.text === "") return undefined;
    const marks = canonicalMarks(node.marks);
    if (marks === undefined) return undefined;
    const code = marks.at(-1)?.type === "code";
    if (!writer.switchTo(code ? marks.slice(0, -1) : marks, node.text)) return undefined;
    writer.text(node.text, code);
  }
  return writer.closeDownTo(0) ? writer.out : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Parsing

type Token =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "break" }
  | { readonly kind: "toggle"; readonly mark: "strong" | "em" | "strike"; readonly raw: string }
  | { readonly kind: "code"; readonly text: string }
  | { readonly kind: "linkOpen" }
  | { readonly kind: "linkClose"; readonly attrs: Record<string, string>; readonly raw: string };

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Inline Markdown (lines already joined with `\n`) as ADF inline nodes. */
export function parseInline(source: string): AdfNode[] {
  return buildNodes(pairTokens(tokenize(source)));
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const step = readToken(source, i);
    tokens.push(...step.tokens);
    i = step.next;
  }
  return tokens;
}

function readToken(source: string, i: number): { tokens: Token[]; next: number } {
  const char = source[i];
  const next = source[i + 1];
  if (char === "\\" && next === "\n") return { tokens: [{ kind: "break" }], next: i + 2 };
  if (char === "\\" && next !== undefined && ASCII_PUNCTUATION.test(next)) return text(next, i + 2);
  if (char === "\n") return text(" ", i + 1);
  if (char === "`") return readCodeSpan(source, i);
  if (char === "[") return { tokens: [{ kind: "linkOpen" }], next: i + 1 };
  if (char === "]" && next === "(") return readLinkClose(source, i) ?? text("]", i + 1);
  if (char === "*" || char === "_") return readEmphasisRun(source, i);
  if (char === "~" && next === "~") return toggle("strike", "~~", i + 2);
  if (char !== undefined && !INLINE_SPECIAL.test(char)) {
    // A run of characters none of which starts anything is one token (a token per character made long
    // descriptions cost a merge per character).
    let end = i + 1;
    while (end < source.length && !INLINE_SPECIAL.test(source[end] ?? "")) end++;
    return text(source.slice(i, end), end);
  }
  return text(char ?? "", i + 1);
}

/** The characters `readToken` looks at: anything else is plain text. */
const INLINE_SPECIAL = /[\\\n`[\]*_~]/;

function text(value: string, next: number): { tokens: Token[]; next: number } {
  return { tokens: [{ kind: "text", text: value }], next };
}

function toggle(
  mark: "strong" | "em" | "strike",
  raw: string,
  next: number,
): { tokens: Token[]; next: number } {
  return { tokens: [{ kind: "toggle", mark, raw }], next };
}

/**
 * A run of `*` or `_`: each pair toggles strong, an odd one left over toggles em (CommonMark's `*a*` and
 * `__a__`; the renderer writes only `**` and `_`). A run of `_` between two letters or digits is literal.
 */
function readEmphasisRun(source: string, i: number): { tokens: Token[]; next: number } {
  const char = source[i];
  let end = i;
  while (source[end] === char) end++;
  const run = source.slice(i, end);
  if (char === "_" && WORD_CHAR.test(source[i - 1] ?? "") && WORD_CHAR.test(source[end] ?? ""))
    return text(run, end);
  const tokens: Token[] = [];
  for (let n = 0; n + 1 < run.length; n += 2)
    tokens.push({ kind: "toggle", mark: "strong", raw: char + char });
  if (run.length % 2 === 1) tokens.push({ kind: "toggle", mark: "em", raw: char });
  return { tokens, next: end };
}

function readCodeSpan(source: string, i: number): { tokens: Token[]; next: number } {
  let end = i;
  while (source[end] === "`") end++;
  const fence = source.slice(i, end);
  let close = source.indexOf(fence, end);
  while (close !== -1 && source[close + fence.length] === "`") {
    let after = close;
    while (source[after] === "`") after++;
    close = source.indexOf(fence, after);
  }
  if (close === -1) return text(fence, end);
  let body = source.slice(end, close).replace(/\n/g, " ");
  if (strippedByCodeSpan(body)) body = body.slice(1, -1);
  return { tokens: [{ kind: "code", text: body }], next: close + fence.length };
}

/** `](destination "title")` at `i`, or `undefined` if what follows `]` is not a link's end. */
function readLinkClose(source: string, i: number): { tokens: Token[]; next: number } | undefined {
  let at = i + 2;
  const destination = readDestination(source, at);
  if (destination === undefined) return undefined;
  at = destination.next;
  const attrs: Record<string, string> = { href: destination.value };
  const spaced = /^[ \t]+/.exec(source.slice(at))?.[0].length ?? 0;
  if (spaced > 0 && source[at + spaced] === '"') {
    const title = readQuoted(source, at + spaced + 1);
    if (title === undefined) return undefined;
    attrs.title = title.value;
    at = title.next;
  }
  at += /^[ \t]*/.exec(source.slice(at))?.[0].length ?? 0;
  if (source[at] !== ")") return undefined;
  return { tokens: [{ kind: "linkClose", attrs, raw: source.slice(i, at + 1) }], next: at + 1 };
}

function readDestination(source: string, at: number): { value: string; next: number } | undefined {
  if (source[at] === "<") {
    let value = "";
    for (let i = at + 1; i < source.length; i++) {
      if (source[i] === ">") return { value, next: i + 1 };
      if (source[i] === "\n" || source[i] === "<") return undefined;
      if (source[i] === "\\" && ASCII_PUNCTUATION.test(source[i + 1] ?? "")) i++;
      value += source[i];
    }
    return undefined;
  }
  let value = "";
  let depth = 0;
  let i = at;
  for (; i < source.length && !/\s/.test(source[i]); i++) {
    if (source[i] === "(") depth++;
    if (source[i] === ")" && depth-- === 0) break;
    if (source[i] === "\\" && ASCII_PUNCTUATION.test(source[i + 1] ?? "")) i++;
    value += source[i];
  }
  return { value, next: i };
}

function readQuoted(source: string, at: number): { value: string; next: number } | undefined {
  let value = "";
  for (let i = at; i < source.length; i++) {
    if (source[i] === '"') return { value, next: i + 1 };
    if (source[i] === "\\" && ASCII_PUNCTUATION.test(source[i + 1] ?? "")) i++;
    value += source[i];
  }
  return undefined;
}

/** Unmatched brackets and delimiters become the literal text they were written as. */
function pairTokens(tokens: Token[]): Token[] {
  const result = [...tokens];
  const openLinks: number[] = [];
  tokens.forEach((token, index) => {
    if (token.kind === "linkOpen") openLinks.push(index);
    if (token.kind === "linkClose" && openLinks.pop() === undefined)
      result[index] = { kind: "text", text: token.raw };
  });
  for (const index of openLinks) result[index] = { kind: "text", text: "[" };
  for (const mark of ["strong", "em", "strike"] as const) {
    const toggles = result.flatMap((token, index) =>
      token.kind === "toggle" && token.mark === mark ? [index] : [],
    );
    const last = toggles.at(-1);
    if (toggles.length % 2 === 1 && last !== undefined) {
      result[last] = { kind: "text", text: (result[last] as { raw: string }).raw };
    }
  }
  return result;
}

function buildNodes(tokens: readonly Token[]): AdfNode[] {
  const nodes: AdfNode[] = [];
  const on = { strong: false, em: false, strike: false };
  // A link's attributes are known only at its `](…)`: the nodes inside share one mark, filled in there.
  const openLinks: { type: "link"; attrs: Record<string, string> }[] = [];
  for (const token of tokens) {
    if (token.kind === "text" || token.kind === "code") {
      const link = openLinks.at(-1);
      const marks: AdfMark[] = link === undefined ? [] : [link];
      for (const type of ["strong", "em", "strike"] as const) if (on[type]) marks.push({ type });
      if (token.kind === "code") marks.push({ type: "code" });
      nodes.push({ type: "text", text: token.text, marks });
    } else if (token.kind === "break") nodes.push({ type: "hardBreak" });
    else if (token.kind === "toggle") on[token.mark] = !on[token.mark];
    else if (token.kind === "linkOpen") openLinks.push({ type: "link", attrs: {} });
    else Object.assign(openLinks.pop()?.attrs ?? {}, token.attrs);
  }
  return mergeAdjacent(nodes);
}

function withMarks(value: string, marks: readonly AdfMark[]): AdfNode {
  if (marks.length === 0) return { type: "text", text: value };
  return {
    type: "text",
    text: value,
    marks: marks.map((mark) =>
      mark.attrs === undefined ? { type: mark.type } : { ...mark, attrs: { ...mark.attrs } },
    ),
  };
}

function sameMarks(a: readonly AdfMark[], b: readonly AdfMark[]): boolean {
  if (a.length !== b.length) return false;
  return a.length === 0 || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Neighbouring text nodes with the same marks are one node in ADF (escapes and code spans come out split).
 * Also copies every mark, so no two nodes share one (the link marks were shared while parsing).
 */
function mergeAdjacent(nodes: readonly AdfNode[]): AdfNode[] {
  const merged: AdfNode[] = [];
  for (const node of nodes) {
    const previous = merged.at(-1);
    if (
      node.type === "text" &&
      previous?.type === "text" &&
      sameMarks(previous.marks ?? [], node.marks ?? [])
    ) {
      merged[merged.length - 1] = withMarks(`${previous.text}${node.text}`, node.marks ?? []);
    } else merged.push(node.type === "text" ? withMarks(node.text ?? "", node.marks ?? []) : node);
  }
  return merged;
}
