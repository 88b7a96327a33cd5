/**
 * Aligned plain-text tables, the one renderer for command output and the benchmark reports: columns padded
 * to their widest cell, two spaces apart, left-aligned unless the caller right-aligns a column (numbers).
 * Cells hold untrusted text (page and issue titles): control characters, escape sequences included, are
 * shown as U+FFFD so they cannot move the cursor or recolour the terminal, and widths are measured in
 * terminal columns, not in characters, by `string-width` (grapheme clusters: an emoji ZWJ sequence, a flag
 * or an emoji with a skin tone is one two-column glyph; wide CJK counts two, combining marks none).
 *
 * `string-width` costs ~30 ms to import, so commands load this module with `await import()` when they print
 * a table (cli/main.ts); the remote helper never loads it.
 */
import stringWidth from "string-width";
import { isControlCharacter } from "../core/errors.js";

/** Terminal columns `text` takes. Escape sequences are not stripped first: cells never carry them. */
export function displayWidth(text: string): number {
  return stringWidth(text, { countAnsiEscapeCodes: true });
}

/** One table cell: whitespace runs that would break the row become a space; other controls become U+FFFD. */
export function tableCell(text: string): string {
  let out = "";
  let pendingSpace = false;
  for (const char of text) {
    if (char === "\r" || char === "\n" || char === "\t") {
      pendingSpace = true;
      continue;
    }
    if (pendingSpace) out += " ";
    pendingSpace = false;
    out += isControlCharacter(char.codePointAt(0) ?? 0) ? "\ufffd" : char;
  }
  return pendingSpace ? `${out} ` : out;
}

export interface TableLayout {
  /** `true` for each column whose cells are right-aligned (numbers); the others are left-aligned. */
  readonly rightAligned?: readonly boolean[];
}

/**
 * `header` and `rows` as lines, each ending in a newline and without trailing spaces. A row has the header's
 * columns: missing cells are empty, extra cells are dropped.
 */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  layout: TableLayout = {},
): string {
  const all = [header, ...rows].map((row) => header.map((_, column) => tableCell(row[column] ?? "")));
  const widths = header.map((_, column) => Math.max(...all.map((row) => displayWidth(row[column] ?? ""))));
  const last = header.length - 1;
  return all
    .map((row) =>
      row
        .map((cell, column) => {
          const padding = " ".repeat((widths[column] ?? 0) - displayWidth(cell));
          if (layout.rightAligned?.[column]) return padding + cell;
          return column === last ? cell : cell + padding;
        })
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}
