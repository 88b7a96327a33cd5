/**
 * ADF → Markdown (see adf.ts for the contract): each block as the mdast node Markdown would read back as
 * that block, printed by markdown-tree.ts, or as an ```adf fence holding its JSON.
 *
 * A block has a Markdown form only where it is exactly what the reader (adf-from-markdown.ts) gives: the
 * same attributes (none, but a heading's level, a code block's language, a numbered list's `order`, a task's
 * `localId` and state), in a container that may hold it there (a heading only at the top, …), its content
 * written by adf-inline.ts and adf-gfm.ts. The whole document is printed and read back; when that is not
 * the very document, each block is printed and read back on its own, task ids numbered on from the blocks
 * before it, and anything short of the very node makes it a fence (a list or quote whose child is fenced
 * keeps its Markdown form around the fence). A final check of the whole document falls back to fencing
 * each top-level block.
 *
 * Two forms where ADF has two spellings of one Markdown: an `orderedList` with `attrs: {order: n}` is
 * written `n.`, one without attrs `1)`; a list item or quote holding one empty paragraph is an empty item
 * (`-`) or quote (`>`). A code block in the language `adf` is a fence (it would read back as ADF).
 */
import type { BlockContent, ListItem, Root, RootContent } from "mdast";
import { jsonEqual } from "../../core/checks.js";
import { UserFacingError } from "../../core/errors.js";
import { type Container, readBlocks } from "./adf-from-markdown.js";
import { onlyKeys, type TaskIds, writeTable, writeTaskList } from "./adf-gfm.js";
import { writeInline } from "./adf-inline.js";
import type { AdfNode } from "./adf-node.js";
import { printMarkdownTree, separateLists } from "./markdown-tree.js";

/** The Markdown of a document (`type: "doc"`). */
export function writeDescription(doc: AdfNode): string {
  const content = canonicalContent(doc);
  if (content === undefined) return print([fence(doc)]);
  // Most documents read back whole on the first try; only one that does not pays for a check per block.
  for (const checkEachBlock of [false, true]) {
    const writer = new BlockWriter(checkEachBlock);
    const markdown = print(content.map((block) => writer.block(block, "document")));
    if (readsBackAs(markdown, content, { lists: 0, items: 0 })) return markdown;
  }
  return print(content.map(fence));
}

/** A document's blocks when it is `{type: "doc", version: 1, content: [≥1 block]}`, none of them a `doc`. */
function canonicalContent(doc: AdfNode): readonly AdfNode[] | undefined {
  const { type, version, content, ...rest } = doc as AdfNode & { version?: unknown };
  if (type !== "doc" || version !== 1 || Object.keys(rest).length > 0 || !Array.isArray(content))
    return undefined;
  // A block of type `doc` would read back as the whole document: such a document is one fence.
  const ok = content.length > 0 && content.every((block) => isNode(block) && block.type !== "doc");
  return ok ? content : undefined;
}

function isNode(value: unknown): value is AdfNode {
  return typeof value === "object" && value !== null && typeof (value as AdfNode).type === "string";
}

function print(blocks: RootContent[]): string {
  const tree: Root = { type: "root", children: separateLists(blocks) };
  return printMarkdownTree(tree);
}

function fence(node: unknown): BlockContent {
  return { type: "code", lang: "adf", meta: null, value: JSON.stringify(node) };
}

/** Whether `markdown` reads as `content`, its task ids numbered on from `ids`, and nothing refused. */
function readsBackAs(markdown: string, content: readonly AdfNode[], ids: TaskIds, after?: TaskIds): boolean {
  try {
    const read = readBlocks(markdown, ids);
    return jsonEqual(read.content, content) && (after === undefined || jsonEqual(read.ids, after));
  } catch (error) {
    if (error instanceof UserFacingError) return false;
    throw error;
  }
}

/** What ADF lets each container hold that Markdown can write there. */
const HOLDS: Readonly<Record<Container, ReadonlySet<string>>> = {
  document: new Set([
    "paragraph",
    "heading",
    "bulletList",
    "orderedList",
    "taskList",
    "codeBlock",
    "blockquote",
    "rule",
    "table",
  ]),
  "list item": new Set(["paragraph", "bulletList", "orderedList", "taskList", "codeBlock"]),
  "block quote": new Set(["paragraph", "bulletList", "orderedList", "codeBlock"]),
};

class BlockWriter {
  private ids: TaskIds = { lists: 0, items: 0 };

  constructor(private readonly checkEachBlock: boolean) {}

  /** `node` in Markdown where it has a form (and, checking each block, reads back as itself), else a fence. */
  block(node: AdfNode, where: Container): BlockContent {
    const start = { ...this.ids };
    const form = HOLDS[where].has(node?.type) ? this.form(node) : undefined;
    const checked = () =>
      !this.checkEachBlock || readsBackAs(print([form as BlockContent]), [node], start, this.ids);
    if (form !== undefined && checked()) return form;
    this.ids = start;
    return fence(node);
  }

  private form(node: AdfNode): BlockContent | undefined {
    switch (node.type) {
      case "paragraph": {
        const content = onlyKeys(node, "type", "content") ? node.content : undefined;
        const children = Array.isArray(content) && content.length > 0 ? writeInline(content) : undefined;
        return children && { type: "paragraph", children };
      }
      case "heading":
        return this.heading(node);
      case "rule":
        return Object.keys(node).length === 1 ? { type: "thematicBreak" } : undefined;
      case "codeBlock":
        return this.codeBlock(node);
      case "bulletList":
      case "orderedList":
        return this.list(node);
      case "taskList":
        return writeTaskList(node, this.ids);
      case "blockquote": {
        const children = onlyKeys(node, "type", "content")
          ? this.children(node.content, "block quote")
          : undefined;
        return children && { type: "blockquote", children };
      }
      case "table":
        return writeTable(node);
      default:
        return undefined;
    }
  }

  private heading(node: AdfNode): BlockContent | undefined {
    const level = node.attrs?.level;
    if (!onlyKeys(node, "type", "attrs", "content") || !Array.isArray(node.content)) return undefined;
    if (!jsonEqual(node.attrs, { level }) || !isHeadingLevel(level)) return undefined;
    const children = writeInline(node.content);
    if (children === undefined || children.some((child) => child.type === "break")) return undefined;
    return { type: "heading", depth: level, children };
  }

  private codeBlock(node: AdfNode): BlockContent | undefined {
    const language = node.attrs?.language;
    if (!onlyKeys(node, "type", "attrs", "content") || !Array.isArray(node.content)) return undefined;
    if (node.attrs !== undefined && (!jsonEqual(node.attrs, { language }) || typeof language !== "string"))
      return undefined;
    if (language === "" || language === "adf" || node.content.length > 1) return undefined;
    const text = node.content[0];
    if (text !== undefined && (!onlyKeys(text, "type", "text") || text.type !== "text" || !text.text))
      return undefined;
    return {
      type: "code",
      lang: (language as string | undefined) ?? null,
      meta: null,
      value: text?.text ?? "",
    };
  }

  private list(node: AdfNode): BlockContent | undefined {
    const order = node.attrs?.order;
    if (!onlyKeys(node, "type", "attrs", "content") || !Array.isArray(node.content)) return undefined;
    if (node.content.length === 0) return undefined;
    const ordered = node.type === "orderedList";
    if (node.attrs !== undefined) {
      const orderOk = typeof order === "number" && Number.isSafeInteger(order) && order >= 0;
      if (!ordered || !orderOk || !jsonEqual(node.attrs, { order })) return undefined;
    }
    const items: ListItem[] = [];
    for (const item of node.content) {
      if (item?.type !== "listItem" || !onlyKeys(item, "type", "content")) return undefined;
      const children = this.children(item.content, "list item");
      if (children === undefined) return undefined;
      items.push({ type: "listItem", spread: false, children });
    }
    if (!ordered) return { type: "list", ordered: false, spread: false, children: items };
    const start = typeof order === "number" ? order : 1;
    const delimiter = node.attrs === undefined ? ")" : ".";
    return { type: "list", ordered: true, start, spread: false, data: { delimiter }, children: items };
  }

  /** A list item's or quote's blocks; one empty paragraph is none (`-`, `>`). */
  private children(content: unknown, where: Container): BlockContent[] | undefined {
    if (!Array.isArray(content) || content.length === 0 || !content.every(isNode)) return undefined;
    if (content.length === 1 && jsonEqual(content[0], { type: "paragraph", content: [] })) return [];
    return separateLists(content.map((child) => this.block(child, where)));
  }
}

function isHeadingLevel(level: unknown): level is 1 | 2 | 3 | 4 | 5 | 6 {
  return typeof level === "number" && Number.isInteger(level) && level >= 1 && level <= 6;
}
