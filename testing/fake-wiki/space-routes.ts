/**
 * The fake wiki's space routes: the space listing (by ids, keys or alias, type and status, sorted and paged),
 * one space, and a space's pages (by status, depth and title, sorted and paged).
 */
import type { Call } from "./call.js";
import { type Answer, fail, listParam, oneOf, parseId } from "./http.js";
import { paginate } from "./pagination.js";
import { BODY_FORMATS, PAGE_SORTS, PAGE_STATUSES, SPACE_SORTS } from "./vendor-data.js";

export function getSpaces(call: Call): Answer {
  const { url, store, shapes } = call;
  const params = url.searchParams;
  const ids = listParam(params, "ids");
  const keys = listParam(params, "keys");
  if (ids.length > 250 || keys.length > 250)
    fail(400, "INVALID_REQUEST_PARAMETER", "At most 250 ids or keys");
  const type = params.get("type");
  if (type !== null) oneOf(type, ["global", "collaboration", "knowledge_base", "personal"], "type");
  const status = params.get("status");
  if (status !== null) oneOf(status, ["current", "archived"], "status");
  const sort = params.get("sort") ?? "id";
  const field = oneOf(sort.replace(/^-/, ""), SPACE_SORTS, "sort");
  const matching = store.spaces.filter(
    (space) =>
      (ids.length === 0 || ids.includes(space.id)) &&
      // ASSUMPTION: the reference says only "filter … based on their keys". Document 3 says the lookup
      // also matches an active alias, so `keys=<alias>` finds the space too.
      (keys.length === 0 || keys.includes(space.key) || keys.includes(space.alias)) &&
      (type === null || space.type === type) &&
      (status === null || space.status === status),
  );
  const { page, next } = paginate(
    matching,
    params,
    sort,
    (space) => (field === "id" ? Number(space.id) : field === "key" ? space.key : space.name),
    (space) => Number(space.id),
  );
  return shapes.listing(
    url,
    page.map((space) => shapes.space(space, params)),
    next,
  );
}

export function getSpace(call: Call, rawId: string): Answer {
  const space = call.store.spaceById(parseId(rawId, "space"));
  if (!space) fail(404, "NOT_FOUND", "Not Found");
  return {
    status: 200,
    body: {
      ...call.shapes.space(space, call.url.searchParams),
      _links: { webui: `/spaces/${space.alias}`, base: call.shapes.linksBase },
    },
  };
}

export function getSpacePages(call: Call, rawId: string): Answer {
  const { url, store, shapes } = call;
  const params = url.searchParams;
  const space = store.guardSpace(store.spaceById(parseId(rawId, "space")));
  const sort = params.get("sort") ?? "id";
  const field = oneOf(sort.replace(/^-/, ""), PAGE_SORTS, "sort");
  const statuses = listParam(params, "status").map((s) => oneOf(s, PAGE_STATUSES, "status"));
  const wanted: readonly string[] = statuses.length > 0 ? statuses : ["current", "archived"];
  const depth = oneOf(params.get("depth") ?? "all", ["all", "root"], "depth");
  const title = params.get("title");
  const bodyFormat = params.get("body-format");
  if (bodyFormat !== null) oneOf(bodyFormat, BODY_FORMATS, "body-format");
  const matching = [...store.pages.values()].filter(
    (page) =>
      page.spaceId === space.id &&
      wanted.includes(page.status) &&
      (depth === "all" || page.parentId === null || page.parentId === space.homepageId) &&
      (title === null || page.title === title),
  );
  const { page, next } = paginate(
    matching,
    params,
    sort,
    (p) =>
      field === "id"
        ? Number(p.id)
        : field === "created-date"
          ? p.createdAt
          : field === "modified-date"
            ? p.version.createdAt
            : p.title,
    (p) => Number(p.id),
  );
  return shapes.listing(
    url,
    page.map((p) => shapes.page(p, bodyFormat, false)),
    next,
  );
}
