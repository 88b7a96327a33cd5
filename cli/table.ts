/**
 * Aligned plain-text tables for command output: columns padded to their widest cell, two spaces apart.
 * Cells hold untrusted text (page and issue titles): control characters, escape sequences included, are
 * shown as U+FFFD so they cannot move the cursor or recolour the terminal, and widths are measured in
 * terminal columns (wide CJK and emoji count two, combining marks none), not in characters.
 */

/** Code point ranges a terminal draws two columns wide (East Asian Wide/Fullwidth, emoji blocks). */
const WIDE_RANGES: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f6ff],
  [0x1f900, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x20000, 0x3fffd],
];
/** Zero-width: combining and enclosing marks, zero-width spaces and joiners, variation selectors, BOM. */
const ZERO_RANGES: readonly (readonly [number, number])[] = [
  [0x200b, 0x200f],
  [0x2060, 0x2064],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
];
const MARK = /^[\p{Mn}\p{Me}]$/u;

function inRanges(code: number, ranges: readonly (readonly [number, number])[]): boolean {
  return ranges.some(([from, to]) => code >= from && code <= to);
}

/** Terminal columns `text` takes. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (MARK.test(char) || inRanges(code, ZERO_RANGES)) continue;
    width += inRanges(code, WIDE_RANGES) ? 2 : 1;
  }
  return width;
}

/** True for C0/C1 controls and the bidirectional overrides that can reorder what a terminal shows. */
function isControl(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
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
    out += isControl(char.codePointAt(0) ?? 0) ? "\ufffd" : char;
  }
  return pendingSpace ? `${out} ` : out;
}

export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((row) => row.map(tableCell));
  const widths = header.map((_, column) => Math.max(...all.map((row) => displayWidth(row[column] ?? ""))));
  return all
    .map((row) =>
      row
        .map((cell, column) =>
          column === row.length - 1 ? cell : cell + " ".repeat((widths[column] ?? 0) - displayWidth(cell)),
        )
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}
