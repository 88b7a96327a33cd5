/**
 * Markdown → ADF (see adf.ts for the contract): the CommonMark + GFM syntax tree of a description
 * (markdown-tree.ts) mapped to ADF blocks.
 *
 * Each block goes where ADF's schema lets it: a document holds any of them; a list item paragraphs, lists,
 * task lists and code blocks; a block quote paragraphs, bullet and numbered lists and code blocks. Anything
 * else (a heading or a table inside a quote, a quote inside a list item, …), and whatever ADF cannot hold at
 * all (raw HTML, images, footnotes, see adf-inline.ts), is refused: one `UserFacingError` naming the line and
 * the construct of each, so nothing is ever sent flattened. Reference definitions are used by the links that
 * name them and leave no block; a `<!---->` between two lists (the printer's separator) leaves none either.
 *
 * Numbered lists: `n.` is an `orderedList` with `attrs: {order: n}`, `1)` one without attrs (ADF has both;
 * `n)` for another n is `{order: n}` too). Task lists take `localId`s numbered in document order
 * (`task-list-1`, `task-1`, …), which `TaskIds` lets the writer's block-by-block checks start anywhere.
 */
import type { Code, Definition, Html, List, ListItem, Nodes, RootContent } from "mdast";
import { excerpt, UserFacingError } from "../../core/errors.js";
import { type GfmReader, readTable, readTaskList, type TaskIds } from "./adf-gfm.js";
import { readInline } from "./adf-inline.js";
import { type AdfDoc, type AdfNode, isAdfNode } from "./adf-node.js";
import { isListSeparator, orderedDelimiter, parseMarkdownTree } from "./markdown-tree.js";

export type { TaskIds } from "./adf-gfm.js";

/** The containers a block can be in, as messages name them. */
export type Container = "document" | "list item" | "block quote";

const HOLDS: Readonly<Record<Exclude<Container, "document">, string>> = {
  "list item": "paragraphs, lists, task lists and code blocks",
  "block quote": "paragraphs, bullet and numbered lists and code blocks",
};

/** The description as an ADF document, or null for none; see adf.ts `markdownToAdf`. */
export function readDescription(markdown: string): AdfDoc | null {
  const { content } = readBlocks(markdown, { lists: 0, items: 0 });
  if (content.length === 0) return null;
  const whole = content.find((node) => node.type === "doc");
  if (whole !== undefined && content.length === 1) return whole as unknown as AdfDoc;
  if (whole !== undefined) {
    const line = fenceLines.get(whole) ?? 0;
    throw adfFenceError(line, "holds a whole document beside other blocks", JSON.stringify(whole));
  }
  return { type: "doc", version: 1, content };
}

/**
 * The blocks of `markdown`, its task lists numbered on from `ids` (the writer checks one block at a time);
 * `ids` after them comes back.
 */
export function readBlocks(markdown: string, ids: TaskIds): { content: AdfNode[]; ids: TaskIds } {
  const source = markdown.replace(/\r\n/g, "\n");
  const reader = new BlockReader(source, { ...ids });
  const tree = parseMarkdownTree(source);
  reader.collectDefinitions(tree.children);
  const content = reader.blocks(tree.children, "document");
  reader.throwRefusals();
  return { content, ids: reader.ids };
}

/** The line each ```adf fence started on, for the error about a whole document among other blocks. */
const fenceLines = new WeakMap<AdfNode, number>();

class BlockReader implements GfmReader {
  private readonly refusals: {
    readonly line: number;
    readonly construct: string;
    readonly message: string;
  }[] = [];
  private readonly definitions = new Map<string, Definition>();

  constructor(
    private readonly source: string,
    readonly ids: TaskIds,
  ) {}

  collectDefinitions(nodes: readonly Nodes[]): void {
    for (const node of nodes) {
      if (node.type === "definition" && !this.definitions.has(node.identifier))
        this.definitions.set(node.identifier, node);
      if ("children" in node) this.collectDefinitions(node.children);
    }
  }

  definition(identifier: string): Definition | undefined {
    return this.definitions.get(identifier);
  }

  refuse(node: Nodes, construct: string, advice: string): void {
    const line = node.position?.start.line ?? 0;
    const start = node.position?.start.offset ?? 0;
    const written = this.source.slice(start, node.position?.end.offset ?? start).split("\n")[0] ?? "";
    const shown = written === "" ? "" : ` ${excerpt(written, 50)}`;
    const message = `line ${line} of the description has ${construct}${shown}: ${advice}`;
    // `<b>x</b>` is two pieces of HTML on one line: one message says it.
    if (!this.refusals.some((refusal) => refusal.line === line && refusal.construct === construct))
      this.refusals.push({ line, construct, message });
  }

  throwRefusals(): void {
    const [first, ...more] = this.refusals;
    if (first === undefined) return;
    throw new UserFacingError(
      "SVC_RECORD_INVALID",
      [first.message, ...more.map((refusal) => refusal.message)].join("\n"),
      { data: { line: first.line, lines: this.refusals.map((refusal) => refusal.line) } },
    );
  }

  blocks(nodes: readonly RootContent[], where: Container): AdfNode[] {
    const out: AdfNode[] = [];
    for (const node of nodes) {
      const block = this.block(node, where);
      if (block !== undefined) out.push(block);
    }
    return out;
  }

  /** A container's blocks; one that has none holds an empty paragraph (ADF's containers are never empty). */
  private containerBlocks(nodes: readonly RootContent[], where: Container): AdfNode[] {
    const content = this.blocks(nodes, where);
    return content.length > 0 || nodes.length > 0 ? content : [{ type: "paragraph", content: [] }];
  }

  private block(node: RootContent, where: Container): AdfNode | undefined {
    switch (node.type) {
      case "paragraph":
        return { type: "paragraph", content: readInline(node.children, this) };
      case "code":
        return node.lang === "adf" && !node.meta ? this.adfFence(node) : this.codeBlock(node);
      case "list":
        return this.list(node, where);
      case "definition":
        return undefined;
      case "html":
        if (!isListSeparator(node.value)) this.refuseHtml(node);
        return undefined;
      case "footnoteDefinition":
        this.refuse(node, "a footnote", "Jira has no footnotes: write the note into the text");
        return undefined;
      default:
        return where === "document" ? this.topLevelBlock(node) : this.misplaced(node, where);
    }
  }

  /** The blocks only a document holds. */
  private topLevelBlock(node: RootContent): AdfNode | undefined {
    switch (node.type) {
      case "heading":
        return { type: "heading", attrs: { level: node.depth }, content: readInline(node.children, this) };
      case "thematicBreak":
        return { type: "rule" };
      case "blockquote":
        return { type: "blockquote", content: this.containerBlocks(node.children, "block quote") };
      case "table":
        return readTable(node, this);
      default:
        this.refuse(node, `Markdown of the kind ${node.type}`, "Jira has no such thing: write it as text");
        return undefined;
    }
  }

  private misplaced(node: RootContent, where: Exclude<Container, "document">): undefined {
    const what: Partial<Record<RootContent["type"], string>> = {
      heading: "a heading",
      thematicBreak: "a rule",
      blockquote: "a block quote",
      table: "a table",
    };
    this.refuse(
      node,
      `${what[node.type] ?? `Markdown of the kind ${node.type}`} inside a ${where}`,
      `a Jira ${where} holds ${HOLDS[where]}: move it out of the ${where}`,
    );
    return undefined;
  }

  private refuseHtml(node: Html): void {
    if (/^<!--/.test(node.value)) {
      this.refuse(
        node,
        "an HTML comment",
        "a Jira description cannot hold HTML, comments neither: delete it",
      );
      return;
    }
    this.refuse(
      node,
      "raw HTML",
      "a Jira description cannot hold HTML: write it in Markdown, or put a backslash before the < to keep it as text (\\<div>)",
    );
  }

  private codeBlock(node: Code): AdfNode | undefined {
    if (node.meta) {
      this.refuse(
        node,
        "a code block whose info string says more than its language",
        `a Jira code block takes a language only: write the first line as \`\`\`${node.lang ?? ""}`,
      );
      return undefined;
    }
    return {
      type: "codeBlock",
      ...(node.lang ? { attrs: { language: node.lang } } : {}),
      content: node.value === "" ? [] : [{ type: "text", text: node.value }],
    };
  }

  private list(node: List, where: Container): AdfNode | undefined {
    if (node.children.some((item) => typeof item.checked === "boolean")) {
      if (where !== "block quote") return readTaskList(node, this);
      this.refuse(
        node,
        "a task list inside a block quote",
        `a Jira block quote holds ${HOLDS["block quote"]}: move it out of the quote`,
      );
      return undefined;
    }
    const items = node.children.map((item) => this.listItem(item));
    if (!node.ordered) return { type: "bulletList", content: items };
    const order = node.start ?? 1;
    if (orderedDelimiter(node, this.source) === ")" && order === 1)
      return { type: "orderedList", content: items };
    return { type: "orderedList", attrs: { order }, content: items };
  }

  private listItem(item: ListItem): AdfNode {
    return { type: "listItem", content: this.containerBlocks(item.children, "list item") };
  }

  private adfFence(node: Code): AdfNode | undefined {
    const line = node.position?.start.line ?? 0;
    if (!isClosedFence(this.source.slice(node.position?.start.offset, node.position?.end.offset)))
      throw adfFenceError(line, "is never closed (no ``` line after its JSON)", node.value);
    let parsed: unknown;
    try {
      parsed = JSON.parse(node.value);
    } catch (cause) {
      throw adfFenceError(line, `does not hold valid JSON (${(cause as Error).message})`, node.value, cause);
    }
    if (!isAdfNode(parsed)) throw adfFenceError(line, "holds JSON that is not an ADF node", node.value);
    fenceLines.set(parsed, line);
    return parsed;
  }
}

/**
 * Whether a fenced code block's source ends with its closing fence (mdast does not say; an unclosed fence
 * runs to the end of its container). Lines inside a quote or list item keep their `>` and indent here.
 */
function isClosedFence(written: string): boolean {
  const lines = written.split("\n");
  const open = /(`{3,}|~{3,})/.exec(lines[0] ?? "")?.[1];
  const last = lines.length > 1 ? lines.at(-1) : undefined;
  if (open === undefined || last === undefined) return false;
  return new RegExp(`^[ \\t>]*[${open[0]}]{${open.length},}[ \\t]*$`).test(last);
}

const ADF_EXAMPLE = '{"type":"rule"}';

function adfFenceError(lineNo: number, what: string, received: string, cause?: unknown): UserFacingError {
  const where = lineNo === 0 ? "the description" : `line ${lineNo} of the description`;
  return new UserFacingError(
    "SVC_RECORD_PARSE",
    `the \`\`\`adf block at ${where} ${what}: expected one ADF node as JSON between \`\`\`adf and \`\`\`, ` +
      `e.g. ${ADF_EXAMPLE}; received ${excerpt(received)}. Fix the block or delete it`,
    { data: { line: lineNo }, cause },
  );
}
