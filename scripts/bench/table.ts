/** Plain-text rendering of benchmark results: aligned columns, numbers right-aligned. */

/** Formats a rate like `12,345`; rates under 100 keep one decimal. */
export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return "n/a";
  const digits = perSecond < 100 ? 1 : 0;
  return perSecond.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `svc / baseline` with two decimals, or `n/a` when the baseline measured nothing. */
export function formatRatio(svc: number, baseline: number): string {
  return baseline > 0 && Number.isFinite(svc) ? (svc / baseline).toFixed(2) : "n/a";
}

/**
 * Renders rows under a header, two spaces between columns. A column is right-aligned when every body cell
 * in it starts with a digit (numbers, ratios); other columns are left-aligned. Trailing spaces are trimmed.
 */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  const numeric = header.map(
    (_, column) => rows.length > 0 && rows.every((row) => /^[\d.,]+$|^n\/a$/.test(row[column] ?? "")),
  );
  return all
    .map((row) =>
      header
        .map((_, column) => {
          const cell = row[column] ?? "";
          const width = widths[column] ?? 0;
          return numeric[column] ? cell.padStart(width) : cell.padEnd(width);
        })
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}
