/**
 * Tracker descriptions: Atlassian Document Format (ADF, the tracker's rich-text JSON) ⇄ Markdown, lossless,
 * on one CommonMark + GFM parser and printer (markdown-tree.ts).
 *
 * Contract: `markdownToAdf(adfToMarkdown(doc))` deep-equals `doc` for every document, and the same document
 * always gives the same bytes. What Markdown says, ADF gets (adf-from-markdown.ts): paragraphs, headings,
 * bullet, numbered and task lists, code blocks with their language, block quotes, rules, GFM tables, hard
 * breaks, links and autolinks, and the marks strong, em, strike and code. What ADF cannot hold (raw HTML,
 * images, footnotes, a heading inside a quote, …) is refused with the line and the construct, never sent
 * flattened. Every block Markdown cannot write exactly is kept as a fence holding its JSON on one line:
 *
 *     ```adf
 *     {"type":"panel",...}
 *     ```
 *
 * Exactness is checked, not hoped for (adf-to-markdown.ts): each block's Markdown is parsed back on the spot
 * and, unless that gives the very node, the block is written as a fence instead; a final check of the whole
 * document falls back to fencing every top-level block, so no combination of blocks can lose a byte either.
 *
 * Markdown that means the same as the canonical form but is spelled otherwise (`*x*`, `+ item`, two spaces
 * before a line break, a reference link, a setext heading, a lines-wrapped paragraph) gives the same ADF,
 * and reads back in the canonical spelling: `canonicalMarkdown` is that form.
 */

import { excerpt } from "../../core/errors.js";
import { readDescription } from "./adf-from-markdown.js";
import { type AdfDoc, isAdfNode } from "./adf-node.js";
import { writeDescription } from "./adf-to-markdown.js";

export { MARK_ORDER } from "./adf-inline.js";
export type { AdfDoc, AdfMark, AdfNode } from "./adf-node.js";

/** The description `doc` (parsed JSON, or `null` when there is none) as Markdown; `""` for none. */
export function adfToMarkdown(doc: unknown): string {
  if (doc === null || doc === undefined) return "";
  if (!isAdfNode(doc) || doc.type !== "doc") {
    throw new TypeError(
      `expected an ADF document ({"type":"doc",…}), received ${excerpt(JSON.stringify(doc))}`,
    );
  }
  return writeDescription(doc);
}

/**
 * The description `markdown` as an ADF document, or `null` when it holds nothing (the tracker's "no
 * description"). Throws a `UserFacingError` naming the line: `SVC_RECORD_PARSE` for an ```adf fence that does
 * not hold one node's JSON, `SVC_RECORD_INVALID` for what ADF cannot hold.
 */
export function markdownToAdf(markdown: string): AdfDoc | null {
  return readDescription(markdown);
}

/** The Markdown `markdown` reads back as after a round trip through the tracker. */
export function canonicalMarkdown(markdown: string): string {
  return adfToMarkdown(markdownToAdf(markdown));
}
