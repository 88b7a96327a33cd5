/**
 * The fake wiki's keyset pagination: an opaque cursor naming the last item's (sort value, id), the page after
 * it, and the relative `_links.next` URL that carries it.
 */
import { fail, parseLimit } from "./http.js";

type SortValue = string | number;
export interface CursorPosition {
  readonly sort: string;
  readonly value: SortValue;
  readonly id: number;
}

function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position), "utf8").toString("base64url");
}

function decodeCursor(raw: string, sort: string): CursorPosition {
  try {
    const position = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as CursorPosition;
    if (position.sort === sort && typeof position.id === "number") return position;
  } catch {
    // falls through to the 400 below
  }
  return fail(400, "INVALID_REQUEST_PARAMETER", "Invalid cursor");
}

function compareValues(a: SortValue, b: SortValue): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/**
 * Keyset pagination: the cursor names the last item's (sort value, id), so items added or edited during a walk
 * never shift the pages that follow the way an offset would.
 */
export function paginate<T>(
  items: readonly T[],
  params: URLSearchParams,
  sortParam: string,
  sortValue: (item: T) => SortValue,
  idOf: (item: T) => number,
): { page: T[]; next: CursorPosition | undefined } {
  const descending = sortParam.startsWith("-");
  const direction = descending ? -1 : 1;
  const compare = (a: { value: SortValue; id: number }, b: { value: SortValue; id: number }) =>
    direction * (compareValues(a.value, b.value) || a.id - b.id);
  const keyed = items.map((item) => ({ item, value: sortValue(item), id: idOf(item) }));
  keyed.sort(compare);
  const rawCursor = params.get("cursor");
  const after = rawCursor === null ? undefined : decodeCursor(rawCursor, sortParam);
  const remaining = after === undefined ? keyed : keyed.filter((entry) => compare(entry, after) > 0);
  const limit = parseLimit(params);
  const page = remaining.slice(0, limit);
  const last = page.at(-1);
  const next =
    remaining.length > limit && last ? { sort: sortParam, value: last.value, id: last.id } : undefined;
  return { page: page.map((entry) => entry.item), next };
}

/** The relative next URL: the request's own path and query with the cursor replaced (last, as the vendor does). */
export function nextUrl(url: URL, cursor: CursorPosition): string {
  const params = new URLSearchParams(url.searchParams);
  params.delete("cursor");
  params.append("cursor", encodeCursor(cursor));
  return `${url.pathname}?${params.toString()}`;
}
