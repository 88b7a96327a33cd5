/**
 * The shapes of Atlassian Document Format (the tracker's rich-text JSON) that the converter reads and writes,
 * and the one structural test of a node. A module of its own so that adf.ts (the entry) and the two
 * directions it calls (adf-from-markdown.ts, adf-to-markdown.ts) import it without importing each other in
 * a circle.
 */

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

export function isAdfNode(value: unknown): value is AdfNode {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as AdfNode).type === "string"
  );
}
