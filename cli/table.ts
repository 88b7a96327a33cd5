/** Aligned plain-text tables for command output: columns padded to their widest cell, two spaces apart. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = (cell: string) => cell.replace(/[\r\n\t]+/g, " ");
  const all = [header, ...rows].map((row) => row.map(clean));
  const widths = header.map((_, column) => Math.max(...all.map((row) => [...(row[column] ?? "")].length)));
  return all
    .map((row) =>
      row
        .map((cell, column) =>
          column === row.length - 1 ? cell : cell + " ".repeat((widths[column] ?? 0) - [...cell].length),
        )
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}
