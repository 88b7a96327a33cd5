/**
 * The pages of a space that are no longer current, as the wiki's page listing names them: the answer of
 * `GET /wiki/api/v2/spaces/{id}/pages?status=trashed&status=deleted&status=archived` (getPagesInSpace),
 * a `MultiEntityResult<PageBulk>`. svc's records are the current pages (Document 3 lists
 * `status=current`), so a page in the trash, deleted or archived is a record removed on the server.
 */
import { isObject } from "../../core/checks.js";

/** The page statuses (of the listing's `status` filter) that are not current. */
export const REMOVED_STATUSES = ["trashed", "deleted", "archived"] as const;

/**
 * The query of the one request: removed pages only (the array exploded, OpenAPI's default for a query), no
 * bodies, the last modified first, as many as one result page holds (250, the vendor's maximum).
 */
export const REMOVED_QUERY = [
  ...REMOVED_STATUSES.map((status) => `status=${status}`),
  "sort=-modified-date",
  "limit=250",
].join("&");

export interface RemovedPages {
  /** Pages whose own `status` is one of `REMOVED_STATUSES`, in the answer's order. */
  readonly ids: string[];
  /** The answer names a next result page (`_links.next`): more pages are removed than it holds. */
  readonly more: boolean;
}

/**
 * The removed pages one answer names, or what is wrong with it. A result whose own `status` is not a removed
 * one (a server that ignored the filter) is no removal: only the page's own word removes it.
 */
export function removedPages(value: unknown): RemovedPages | string {
  if (!isObject(value) || !Array.isArray(value.results)) return "an answer without a results list";
  const ids: string[] = [];
  for (const item of value.results) {
    if (!isObject(item)) return "a result that is not an object";
    // PageBulk's id is a string; a number is taken as the page listing takes it (backend.ts).
    const id =
      typeof item.id === "number" && Number.isSafeInteger(item.id) && item.id >= 0
        ? String(item.id)
        : item.id;
    if (typeof id !== "string" || !/^[0-9]{1,18}$/.test(id))
      return `a page id that is not a number: ${String(JSON.stringify(item.id)).slice(0, 40)}`;
    if ((REMOVED_STATUSES as readonly unknown[]).includes(item.status)) ids.push(id);
  }
  const next = isObject(value._links) ? value._links.next : undefined;
  return { ids, more: typeof next === "string" && next !== "" };
}
