/**
 * GFM's tables and task lists ⇄ ADF's `table` and `taskList` (see adf.ts for the contract).
 *
 * A table: the header row's cells are `tableHeader`s, the others `tableCell`s, each holding one paragraph;
 * a row shorter than the header gets empty cells (GFM's own reading), a longer one is refused (GFM drops
 * the extra cells, so the table would lose them). A column aligned `:-:` or `-:` puts an `alignment` mark
 * (`center`, `end`) on each of its paragraphs; `:--` is the default and reads back as `---`. Written back,
 * a table is GFM only when it has exactly that shape: no attributes, a header row over plain rows of equal
 * length, one paragraph per cell without a line break, one alignment per column.
 *
 * A task list: `- [ ] x` and `- [x] x` are `taskItem`s (state `TODO`, `DONE`) holding the item's text
 * (ADF's tasks hold inline content, not paragraphs); a task list nested in an item follows that item in the
 * outer `taskList`, as ADF nests them. ADF requires a `localId` on both; they are numbered in document
 * order (`task-list-n`, `task-n`), so a task list reads back as Markdown only when its ids are those.
 * Refused: a numbered task list (Jira's have no numbers), a list mixing tasks and plain items, an item
 * holding more than one paragraph and task lists.
 */
import type { List, ListItem, Nodes, Paragraph, PhrasingContent, Table, TableCell } from "mdast";
import { jsonEqual } from "../../core/checks.js";
import { type InlineReader, readInline, writeInline } from "./adf-inline.js";
import type { AdfMark, AdfNode } from "./adf-node.js";

/** How many task lists and task items came before: the next ids are these plus one. */
export interface TaskIds {
  lists: number;
  items: number;
}

/** What reading tables and task lists needs from the block reader. */
export interface GfmReader extends InlineReader {
  readonly ids: TaskIds;
}

type Align = "center" | "right" | null;
const ALIGN_MARK: Readonly<Record<"center" | "right", AdfMark>> = {
  center: { type: "alignment", attrs: { align: "center" } },
  right: { type: "alignment", attrs: { align: "end" } },
};

// ---------------------------------------------------------------------------------------------------------
// Markdown → ADF

export function readTable(table: Table, reader: GfmReader): AdfNode {
  const width = table.children[0]?.children.length ?? 0;
  const rows = table.children.map((row, index): AdfNode => {
    if (row.children.length > width) {
      reader.refuse(
        row,
        `a table row of ${row.children.length} cells under a header of ${width}`,
        "GFM drops the cells past the header's, so Jira's table would lose them: add header cells or remove the extra ones",
      );
    }
    const cells: (TableCell | undefined)[] = row.children.slice(0, width);
    while (cells.length < width) cells.push(undefined);
    return {
      type: "tableRow",
      content: cells.map((cell, column) => ({
        type: index === 0 ? "tableHeader" : "tableCell",
        content: [cellParagraph(cell, table.align?.[column] ?? null, reader)],
      })),
    };
  });
  return { type: "table", content: rows };
}

function cellParagraph(cell: TableCell | undefined, align: string | null, reader: GfmReader): AdfNode {
  const content = cell === undefined ? [] : readInline(cell.children, reader);
  const mark = align === "center" || align === "right" ? ALIGN_MARK[align] : undefined;
  return mark === undefined
    ? { type: "paragraph", content }
    : { type: "paragraph", marks: [structuredClone(mark)], content };
}

export function readTaskList(list: List, reader: GfmReader): AdfNode {
  if (list.ordered) {
    reader.refuse(
      list,
      "a numbered task list",
      "Jira's task lists have no numbers: write its items as - [ ] … (or - [x] …)",
    );
  }
  if (list.children.some((item) => typeof item.checked !== "boolean")) {
    reader.refuse(
      list,
      "a list mixing task items (- [ ] …) and plain items",
      "a Jira task list holds tasks only: make every item a task, or none; or put the two kinds in two lists with a line <!-- --> between them",
    );
  }
  const localId = `task-list-${++reader.ids.lists}`;
  const content: AdfNode[] = [];
  for (const item of list.children) content.push(...taskItem(item, reader));
  return { type: "taskList", attrs: { localId }, content };
}

/** A task and the task lists nested in it, which ADF puts after it. */
function taskItem(item: ListItem, reader: GfmReader): AdfNode[] {
  const [first, ...rest] = item.children;
  const text = first?.type === "paragraph" ? readInline(first.children, reader) : [];
  const task: AdfNode = {
    type: "taskItem",
    attrs: { localId: `task-${++reader.ids.items}`, state: item.checked ? "DONE" : "TODO" },
    content: text,
  };
  const nested: AdfNode[] = [];
  for (const child of first?.type === "paragraph" ? rest : item.children) {
    if (child.type === "list" && child.children.some((inner) => typeof inner.checked === "boolean"))
      nested.push(readTaskList(child, reader));
    else {
      reader.refuse(
        child as Nodes,
        `${child.type === "list" ? "a plain list" : "more than one paragraph"} inside a task item`,
        "a Jira task holds one paragraph of text, and task lists under it: make it a task list, or move it out of the task",
      );
    }
  }
  return [task, ...nested];
}

// ---------------------------------------------------------------------------------------------------------
// ADF → Markdown

/** `node`'s keys are among `allowed`. */
export function onlyKeys(node: object, ...allowed: string[]): boolean {
  return Object.keys(node).every((key) => allowed.includes(key));
}

/** A `table` as a GFM table, or `undefined` when it is not exactly what a GFM table reads as. */
export function writeTable(node: AdfNode): Table | undefined {
  const rows = node.content;
  if (!onlyKeys(node, "type", "content") || !Array.isArray(rows) || rows.length === 0) return undefined;
  const width = Array.isArray(rows[0]?.content) ? (rows[0]?.content?.length ?? 0) : 0;
  if (width === 0) return undefined;
  const align: Align[] = [];
  const children: Table["children"] = [];
  for (const [index, row] of rows.entries()) {
    const cells = row?.content;
    if (row?.type !== "tableRow" || !onlyKeys(row, "type", "content")) return undefined;
    if (!Array.isArray(cells) || cells.length !== width) return undefined;
    const written: TableCell[] = [];
    for (const [column, cell] of cells.entries()) {
      const paragraph = onlyChild(cell, index === 0 ? "tableHeader" : "tableCell");
      const cellAlign = paragraph && alignOf(paragraph);
      if (paragraph === undefined || cellAlign === undefined) return undefined;
      if (index === 0) align.push(cellAlign);
      else if (align[column] !== cellAlign) return undefined;
      const inline = writeInline(paragraph.content ?? []);
      if (inline === undefined || inline.some((child) => child.type === "break")) return undefined;
      written.push({ type: "tableCell", children: inline });
    }
    children.push({ type: "tableRow", children: written });
  }
  return { type: "table", align, children };
}

/** The one paragraph a cell of type `type` holds, without attributes. */
function onlyChild(cell: AdfNode | undefined, type: string): AdfNode | undefined {
  if (cell?.type !== type || !onlyKeys(cell, "type", "content")) return undefined;
  const paragraph = Array.isArray(cell.content) && cell.content.length === 1 ? cell.content[0] : undefined;
  if (paragraph?.type !== "paragraph" || !onlyKeys(paragraph, "type", "content", "marks")) return undefined;
  return Array.isArray(paragraph.content) ? paragraph : undefined;
}

/** The column alignment a cell's paragraph says, or `undefined` for marks a GFM table cannot write. */
function alignOf(paragraph: AdfNode): Align | undefined {
  if (paragraph.marks === undefined) return null;
  if (!Array.isArray(paragraph.marks) || paragraph.marks.length !== 1) return undefined;
  const mark = paragraph.marks[0];
  if (jsonEqual(mark, ALIGN_MARK.center)) return "center";
  return jsonEqual(mark, ALIGN_MARK.right) ? "right" : undefined;
}

/**
 * A `taskList` as a GFM task list, or `undefined` when it has no such form; `ids` counts the task lists and
 * items written (the caller puts them back when the list is fenced after all).
 */
export function writeTaskList(node: AdfNode, ids: TaskIds): List | undefined {
  const localId = `task-list-${++ids.lists}`;
  if (!onlyKeys(node, "type", "attrs", "content") || !jsonEqual(node.attrs, { localId })) return undefined;
  if (!Array.isArray(node.content) || node.content.length === 0) return undefined;
  const items: ListItem[] = [];
  for (const child of node.content) {
    const last = items.at(-1);
    if (child?.type === "taskList" && last !== undefined) {
      const nested = writeTaskList(child, ids);
      if (nested === undefined) return undefined;
      last.children.push(nested);
      continue;
    }
    const item = child?.type === "taskItem" ? writeTaskItem(child, ids) : undefined;
    if (item === undefined) return undefined;
    items.push(item);
  }
  return { type: "list", ordered: false, spread: false, children: items };
}

function writeTaskItem(node: AdfNode, ids: TaskIds): ListItem | undefined {
  const localId = `task-${++ids.items}`;
  const state = node.attrs?.state;
  if (!onlyKeys(node, "type", "attrs", "content") || !jsonEqual(node.attrs, { localId, state }))
    return undefined;
  if ((state !== "TODO" && state !== "DONE") || !Array.isArray(node.content) || node.content.length === 0)
    return undefined;
  const inline: PhrasingContent[] | undefined = writeInline(node.content);
  if (inline === undefined) return undefined;
  const paragraph: Paragraph = { type: "paragraph", children: inline };
  return { type: "listItem", checked: state === "DONE", spread: false, children: [paragraph] };
}
