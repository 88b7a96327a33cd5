/**
 * The fake wiki's page routes: get one page, create one, update it (the version rule: exactly one more than the
 * current; a trashed page is restored without touching its content), and delete it (to the trash, or `purge`
 * from it). Titles are unique within a space; drafts and page history are not modelled.
 */
import type { Call } from "./call.js";
import { type Answer, fail, listParam, notModelled, oneOf, parseId, parseJsonObject } from "./http.js";
import type { Space, WikiStore } from "./store.js";
import { SINGLE_BODY_FORMATS } from "./vendor-data.js";

/**
 * `body` as PageBodyWrite (`{representation, value}`) or PageNestedBodyWrite (`{storage: {…}}`); a comment's
 * CommentBodyWrite and CommentNestedBodyWrite have the same members.
 */
export function storageBody(body: unknown): string {
  if (body === undefined) return "";
  if (body === null || typeof body !== "object")
    fail(400, "INVALID_REQUEST_PARAMETER", "'body' must be an object");
  const record = body as Record<string, unknown>;
  const write = (record.storage ?? record) as Record<string, unknown>;
  const representation = write.representation;
  if (representation !== "storage") {
    if (
      representation === "atlas_doc_format" ||
      representation === "wiki" ||
      record.atlas_doc_format ||
      record.wiki
    ) {
      notModelled(`body representation ${String(representation)}: the fake stores storage bodies only`);
    }
    fail(
      400,
      "INVALID_REQUEST_PARAMETER",
      "'body.representation' must be one of storage, atlas_doc_format, wiki",
    );
  }
  if (typeof write.value !== "string")
    fail(400, "INVALID_REQUEST_PARAMETER", "'body.value' must be a string");
  return write.value;
}

/** The parent a write names (the homepage when it names none), in the same space and not in the trash. */
function checkParent(store: WikiStore, space: Space, parentId: unknown, selfId?: string): string | null {
  if (parentId === undefined || parentId === null) return space.homepageId;
  if (typeof parentId !== "string" && typeof parentId !== "number") {
    fail(400, "INVALID_REQUEST_PARAMETER", "'parentId' must be a string");
  }
  const parent = store.pages.get(String(parentId));
  if (!parent || parent.spaceId !== space.id || parent.status === "trashed" || parent.id === selfId) {
    fail(404, "NOT_FOUND", "Not Found", `parent page ${String(parentId)} not found in space ${space.key}`);
  }
  return parent.id;
}

/** The vendor keeps page titles unique within a space (the trash aside). */
function checkTitleFree(store: WikiStore, spaceId: string, title: string, exceptId?: string): void {
  if (store.titleTaken(spaceId, title, exceptId)) {
    fail(400, "INVALID_REQUEST_PARAMETER", "A page with this title already exists", `title: ${title}`);
  }
}

export function getPage(call: Call, rawId: string): Answer {
  const params = call.url.searchParams;
  const id = parseId(rawId, "page");
  const bodyFormat = params.get("body-format");
  if (bodyFormat !== null) oneOf(bodyFormat, SINGLE_BODY_FORMATS, "body-format");
  if (params.has("version")) notModelled("?version=: the fake keeps no page history");
  if (params.get("get-draft") === "true") notModelled("?get-draft=true: the fake has no drafts");
  const statuses = listParam(params, "status");
  // ASSUMPTION: like the listings, a page is found in status current or archived unless `status` says more.
  const page = call.store.readablePage(id, statuses.length > 0 ? statuses : ["current", "archived"]);
  return { status: 200, body: call.shapes.page(page, bodyFormat, true) };
}

export function createPageRequest(call: Call): Answer {
  const { url, store } = call;
  const input = parseJsonObject(call.text, call.contentType);
  if (typeof input.spaceId !== "string" && typeof input.spaceId !== "number") {
    fail(400, "INVALID_REQUEST_PARAMETER", "'spaceId' is required");
  }
  const status = input.status ?? "current";
  if (status === "draft") notModelled("status draft: the fake has no drafts");
  if (status !== "current") fail(400, "INVALID_REQUEST_PARAMETER", "'status' must be current or draft");
  if (typeof input.title !== "string" || input.title.trim() === "") {
    fail(400, "INVALID_REQUEST_PARAMETER", "'title' is required for a page that is not a draft");
  }
  const space = store.guardSpace(store.spaceById(String(input.spaceId)));
  const body = storageBody(input.body);
  const rootLevel = url.searchParams.get("root-level") === "true";
  if (rootLevel && input.parentId !== undefined && input.parentId !== null) {
    fail(400, "INVALID_REQUEST_PARAMETER", "'parentId' may not be given with root-level=true");
  }
  const parentId = rootLevel ? null : checkParent(store, space, input.parentId);
  checkTitleFree(store, space.id, input.title);
  const page = store.insertPage(space, { title: input.title, body, parentId, createdAt: store.stamp() });
  return { status: 200, body: call.shapes.page(page, "storage", true) };
}

export function updatePageRequest(call: Call, rawId: string): Answer {
  const { store } = call;
  const id = parseId(rawId, "page");
  const input = parseJsonObject(call.text, call.contentType);
  const missing = ["id", "status", "title", "body", "version"].filter((name) => input[name] === undefined);
  if (missing.length > 0)
    fail(400, "INVALID_REQUEST_PARAMETER", `Missing required fields: ${missing.join(", ")}`);
  if (String(input.id) !== id)
    fail(400, "INVALID_REQUEST_PARAMETER", "'id' does not match the page in the path");
  if (input.status === "draft") notModelled("status draft: the fake has no drafts");
  if (input.status !== "current") fail(400, "INVALID_REQUEST_PARAMETER", "'status' must be current or draft");
  if (typeof input.title !== "string" || input.title.trim() === "") {
    fail(400, "INVALID_REQUEST_PARAMETER", "'title' must be a non-empty string");
  }
  const version = input.version as { number?: unknown; message?: unknown } | null;
  if (version === null || typeof version !== "object" || !Number.isInteger(version.number)) {
    fail(400, "INVALID_REQUEST_PARAMETER", "'version.number' must be an integer");
  }
  const page = store.readablePage(id, ["current", "archived", "trashed"]);
  const space = store.spaceById(page.spaceId) as Space;
  if (input.spaceId !== undefined && String(input.spaceId) !== page.spaceId) {
    fail(400, "INVALID_REQUEST_PARAMETER", "Moving a page to a different space is not supported");
  }
  const body = storageBody(input.body);
  if (version.number !== page.version.number + 1) {
    // Recorded vendor answer (third-party tests of v2 clients); the OpenAPI document lists no 409 at all.
    fail(
      409,
      "CONFLICT",
      `Version must be incremented when updating a page. Current Version: [${page.version.number}]. ` +
        `Provided version: [${String(version.number)}]`,
    );
  }
  const message = typeof version.message === "string" ? version.message : "";
  if (page.status === "trashed") {
    // The reference: restoring a trashed page changes only its status, never its content.
    page.status = "current";
  } else {
    const parentId = "parentId" in input ? checkParent(store, space, input.parentId, page.id) : page.parentId;
    checkTitleFree(store, space.id, input.title, page.id);
    page.title = input.title;
    page.body = body;
    if (parentId !== page.parentId) {
      page.parentId = parentId;
      page.position = store.siblingsCount(space.id, parentId);
    }
  }
  page.version = store.nextVersion(page, message);
  return { status: 200, body: call.shapes.page(page, "storage", true) };
}

export function deletePageRequest(call: Call, rawId: string): Answer {
  const { url, store } = call;
  const id = parseId(rawId, "page");
  const purge = url.searchParams.get("purge") === "true";
  if (url.searchParams.get("draft") === "true") notModelled("?draft=true: the fake has no drafts");
  const page = store.readablePage(id, purge ? ["current", "archived", "trashed"] : ["current", "archived"]);
  if (purge) {
    // ASSUMPTION: purging a page that is not in the trash is refused, as "must be called on a trashed page"
    // suggests.
    if (page.status !== "trashed") {
      fail(400, "INVALID_REQUEST_PARAMETER", "Only a trashed page can be purged; delete it first");
    }
    store.pages.delete(id);
    // ASSUMPTION: a page purged for good takes its comments with it.
    for (const comment of store.comments.ofPage(id)) store.comments.comments.delete(comment.id);
  } else {
    store.trash(page);
  }
  return { status: 204 };
}
