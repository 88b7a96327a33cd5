/**
 * The inline half of the ADF ⇄ Markdown mapping (see adf.ts for the contract): a paragraph's, heading's,
 * table cell's or task's content, as ADF inline nodes and as mdast phrasing content.
 *
 * Reading: text (a soft line break is a space), hard breaks (a backslash or two spaces before the line's
 * end), emphasis (`_x_`, `*x*`), strong, strikethrough (`~~x~~`), code spans, links, autolinks (`<https://…>`)
 * and GFM's autolink literals (`https://…`, `www.…`, addresses), reference links resolved through their
 * definitions. Each text node carries the marks around it once each, in the canonical order `MARK_ORDER`,
 * and neighbours with equal marks are one node, as ADF has it. Refused: raw HTML, images, footnote
 * references, a link without text, and a code span inside strong, em or strike (ADF's code mark goes with a
 * link only).
 *
 * Writing: each text node's marks become nested spans, outermost first in `MARK_ORDER`, so marks in another
 * order, marks Markdown has no form for (underline, colour, …), attributes, and inline nodes other than text
 * and hard breaks (mentions, emoji, dates, …) have no Markdown form: the caller fences the block.
 */
import type { Definition, Nodes, PhrasingContent } from "mdast";
import type { AdfMark, AdfNode } from "./adf-node.js";

/** The marks Markdown expresses, outermost first. `code` is a span of its own and always innermost. */
export const MARK_ORDER = ["link", "strong", "em", "strike", "code"] as const;
type MarkType = (typeof MARK_ORDER)[number];

const MARK_OF = { emphasis: "em", strong: "strong", delete: "strike" } as const;
const MARKDOWN_OF: Readonly<Record<"strong" | "em" | "strike", string>> = {
  strong: "bold (**…**)",
  em: "italic (_…_)",
  strike: "strikethrough (~~…~~)",
};

/** What reading inline content needs from the block reader: refusals, and definitions of reference links. */
export interface InlineReader {
  refuse(node: Nodes, construct: string, advice: string): void;
  definition(identifier: string): Definition | undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Markdown → ADF

/** Phrasing content as ADF inline nodes. */
export function readInline(children: readonly PhrasingContent[], reader: InlineReader): AdfNode[] {
  const nodes: AdfNode[] = [];
  readSpans(children, [], nodes, reader);
  return mergeAdjacent(nodes);
}

function readSpans(
  children: readonly PhrasingContent[],
  marks: readonly AdfMark[],
  out: AdfNode[],
  reader: InlineReader,
): void {
  for (const node of children) {
    switch (node.type) {
      case "text":
        if (node.value !== "") out.push(textNode(node.value.replace(/\n/g, " "), marks));
        break;
      case "break":
        out.push({ type: "hardBreak" });
        break;
      case "emphasis":
      case "strong":
      case "delete":
        readSpans(node.children, withMark(marks, { type: MARK_OF[node.type] }), out, reader);
        break;
      case "inlineCode": {
        const formatted = marks.filter((mark) => mark.type !== "link");
        if (formatted.length > 0) {
          const around = formatted.map((mark) => MARKDOWN_OF[mark.type as keyof typeof MARKDOWN_OF]);
          reader.refuse(
            node,
            `a code span inside ${around.join(" and ")}`,
            "Jira's code text takes no other formatting than a link: take the code span out of that formatting, or the formatting off it",
          );
        } else if (node.value !== "") out.push(textNode(node.value, [...marks, { type: "code" }]));
        break;
      }
      case "link":
        readLink(node, node.url, node.title, marks, out, reader);
        break;
      case "linkReference": {
        const definition = reader.definition(node.identifier);
        if (definition) readLink(node, definition.url, definition.title, marks, out, reader);
        else reader.refuse(node, "a reference link without its definition", "write it as [text](url)");
        break;
      }
      case "image":
      case "imageReference":
        reader.refuse(
          node,
          "an image",
          "a Jira description holds images only as attachments, which svc does not write: link to the image instead, [text](url)",
        );
        break;
      case "html":
        reader.refuse(
          node,
          "raw HTML",
          "a Jira description cannot hold HTML: write it in Markdown (**bold**, _italic_, `code`, [text](url)), or put a backslash before the < to keep it as text (\\<b>)",
        );
        break;
      case "footnoteReference":
        reader.refuse(node, "a footnote reference", "Jira has no footnotes: write the note into the text");
        break;
      default:
        reader.refuse(
          node,
          `Markdown of the kind ${(node as Nodes).type}`,
          "Jira has no such thing: write it as text",
        );
    }
  }
}

function readLink(
  node: Nodes & { children: PhrasingContent[] },
  href: string,
  title: string | null | undefined,
  marks: readonly AdfMark[],
  out: AdfNode[],
  reader: InlineReader,
): void {
  const attrs = title === null || title === undefined ? { href } : { href, title };
  const before = out.length;
  readSpans(node.children, withMark(marks, { type: "link", attrs }), out, reader);
  if (out.length === before)
    reader.refuse(
      node,
      "a link without text",
      "a Jira link needs text: [text](url), or write the address as <url>",
    );
}

/** `marks` with `mark` added in its canonical place; a mark already there (`_a *b* c_`) is not doubled. */
function withMark(marks: readonly AdfMark[], mark: AdfMark): AdfMark[] {
  if (marks.some((other) => other.type === mark.type)) return [...marks];
  const rank = (type: string) => MARK_ORDER.indexOf(type as MarkType);
  return [...marks, mark].sort((a, b) => rank(a.type) - rank(b.type));
}

function textNode(text: string, marks: readonly AdfMark[]): AdfNode {
  if (marks.length === 0) return { type: "text", text };
  return { type: "text", text, marks: marks.map((mark) => structuredClone(mark)) };
}

/** Neighbouring text nodes with the same marks are one node in ADF. */
function mergeAdjacent(nodes: readonly AdfNode[]): AdfNode[] {
  const merged: AdfNode[] = [];
  for (const node of nodes) {
    const previous = merged.at(-1);
    if (
      node.type === "text" &&
      previous?.type === "text" &&
      JSON.stringify(previous.marks ?? []) === JSON.stringify(node.marks ?? [])
    ) {
      merged[merged.length - 1] = textNode(`${previous.text}${node.text}`, node.marks ?? []);
    } else merged.push(node);
  }
  return merged;
}

// ---------------------------------------------------------------------------------------------------------
// ADF → Markdown

interface Run {
  readonly node: AdfNode;
  readonly marks: readonly AdfMark[];
}

/** Inline content as mdast phrasing, or `undefined` if some node or mark has no Markdown form. */
export function writeInline(content: readonly AdfNode[]): PhrasingContent[] | undefined {
  const runs: Run[] = [];
  for (const node of content) {
    if (node?.type === "hardBreak" && Object.keys(node).length === 1) {
      runs.push({ node, marks: [] });
      continue;
    }
    if (!isPlainText(node)) return undefined;
    const marks = canonicalMarks(node.marks);
    if (marks === undefined) return undefined;
    runs.push({ node, marks });
  }
  return nest(runs, 0);
}

function isPlainText(node: AdfNode): boolean {
  return (
    node?.type === "text" &&
    typeof node.text === "string" &&
    node.text !== "" &&
    Object.keys(node).every((key) => key === "type" || key === "text" || key === "marks")
  );
}

/** Runs sharing their mark at `depth` become one span holding their deeper marks. */
function nest(runs: readonly Run[], depth: number): PhrasingContent[] {
  const out: PhrasingContent[] = [];
  let at = 0;
  while (at < runs.length) {
    const { node, marks } = runs[at] as Run;
    const mark = marks[depth];
    if (node.type === "hardBreak") out.push({ type: "break" });
    else if (mark === undefined) out.push({ type: "text", value: node.text ?? "" });
    else if (mark.type === "code") out.push({ type: "inlineCode", value: node.text ?? "" });
    if (mark === undefined || mark.type === "code") {
      at++;
      continue;
    }
    let end = at + 1;
    while (end < runs.length && sameMark(runs[end]?.marks[depth], mark)) end++;
    out.push(span(mark, nest(runs.slice(at, end), depth + 1)));
    at = end;
  }
  return out;
}

function span(mark: AdfMark, children: PhrasingContent[]): PhrasingContent {
  switch (mark.type) {
    case "strong":
      return { type: "strong", children };
    case "em":
      return { type: "emphasis", children };
    case "strike":
      return { type: "delete", children };
    default: {
      const { href, title } = mark.attrs as { href: string; title?: string };
      return { type: "link", url: href, title: title ?? null, children };
    }
  }
}

function sameMark(a: AdfMark | undefined, b: AdfMark): boolean {
  return a !== undefined && a.type === b.type && JSON.stringify(a.attrs) === JSON.stringify(b.attrs);
}

/**
 * The marks of a text node, or `undefined` if Markdown cannot write them exactly: each once, in canonical
 * order, without attributes (but a link's `href` and `title`), and `code` with no mark but a link.
 */
function canonicalMarks(marks: unknown): readonly AdfMark[] | undefined {
  if (marks === undefined) return [];
  if (!Array.isArray(marks) || marks.length === 0) return undefined;
  let previousRank = -1;
  for (const mark of marks as AdfMark[]) {
    const rank = MARK_ORDER.indexOf(mark?.type as MarkType);
    if (rank <= previousRank || !isExpressibleMark(mark)) return undefined;
    previousRank = rank;
  }
  const types = (marks as AdfMark[]).map((mark) => mark.type);
  if (types.includes("code") && types.some((type) => type !== "code" && type !== "link")) return undefined;
  return marks as AdfMark[];
}

function isExpressibleMark(mark: AdfMark): boolean {
  const keys = Object.keys(mark);
  if (mark.type !== "link") return keys.length === 1;
  const attrs = mark.attrs;
  if (keys.length !== 2 || typeof attrs !== "object" || attrs === null) return false;
  const titleOk = !("title" in attrs) || typeof attrs.title === "string";
  return (
    typeof attrs.href === "string" &&
    titleOk &&
    Object.keys(attrs).every((key) => key === "href" || key === "title")
  );
}
