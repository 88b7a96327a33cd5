/** Plain-text rendering of benchmark results: aligned columns, numbers right-aligned. */
import { formatTable } from "../../cli/table.js";

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
 * Renders rows under a header with the command line's table renderer. A column is right-aligned when every
 * body cell in it is a number, a ratio or `n/a`; other columns are left-aligned.
 */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const rightAligned = header.map(
    (_, column) => rows.length > 0 && rows.every((row) => /^[\d.,]+$|^n\/a$/.test(row[column] ?? "")),
  );
  return formatTable(header, rows, { rightAligned });
}
