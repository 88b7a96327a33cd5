/**
 * The fake wiki's router: a request's method and path to its handler (pages, spaces, labels, footer
 * comments, accounts). A known path asked with another method
 * answers 405 with `Allow`; any other path 404.
 */
import { HttpFailure } from "../fake-server.js";
import type { Call } from "./call.js";
import {
  bulkUsersRequest,
  createCommentRequest,
  currentUser,
  deleteCommentRequest,
  getComment,
  listComments,
  listCommentVersions,
  listPageComments,
  updateCommentRequest,
} from "./comment-routes.js";
import { type Answer, fail, vendorError } from "./http.js";
import { addLabelsRequest, listPageLabels, listV1Labels } from "./label-routes.js";
import { createPageRequest, deletePageRequest, getPage, updatePageRequest } from "./page-routes.js";
import { getSpace, getSpacePages, getSpaces } from "./space-routes.js";

const V2 = "/wiki/api/v2";

/** Throws the 405 unless the call's method is among `allowed` (comma-separated). */
function allow(call: Call, allowed: string): void {
  if (!allowed.split(",").includes(call.method)) {
    throw new HttpFailure({
      ...vendorError(405, "METHOD_NOT_ALLOWED", "Method Not Allowed"),
      headers: { allow: allowed },
    });
  }
}

export function route(call: Call): Answer {
  const { url } = call;
  // The one v1 route modelled: v2 can read a page's labels but not add them.
  const v1Label = /^\/wiki\/rest\/api\/content\/([^/]+)\/label$/.exec(url.pathname);
  if (v1Label) {
    allow(call, "GET,POST");
    const rawId = v1Label[1] as string;
    return call.method === "POST" ? addLabelsRequest(call, rawId) : listV1Labels(call, rawId);
  }
  if (url.pathname === "/wiki/rest/api/user/current") {
    allow(call, "GET");
    return currentUser(call);
  }
  if (!url.pathname.startsWith(`${V2}/`)) fail(404, "NOT_FOUND", "Not Found", url.pathname);
  const [collection, id, sub, ...rest] = url.pathname.slice(V2.length + 1).split("/");
  if (rest.length > 0) return fail(404, "NOT_FOUND", "Not Found", url.pathname);
  if (collection === "pages" && id !== undefined && sub === "labels") {
    allow(call, "GET");
    return listPageLabels(call, id);
  }
  if (collection === "pages" && id !== undefined && sub === "footer-comments") {
    allow(call, "GET");
    return listPageComments(call, id);
  }
  if (collection === "footer-comments") return commentsRoute(call, id, sub);
  if (collection === "users-bulk" && id === undefined) {
    allow(call, "POST");
    return bulkUsersRequest(call);
  }
  if (collection === "spaces") return spacesRoute(call, id, sub);
  if (collection === "pages" && sub === undefined) return pagesRoute(call, id);
  return fail(404, "NOT_FOUND", "Not Found", url.pathname);
}

function spacesRoute(call: Call, id: string | undefined, sub: string | undefined): Answer {
  if (id === undefined) {
    allow(call, "GET");
    return getSpaces(call);
  }
  if (sub === undefined) {
    allow(call, "GET");
    return getSpace(call, id);
  }
  if (sub === "pages") {
    allow(call, "GET");
    return getSpacePages(call, id);
  }
  return fail(404, "NOT_FOUND", "Not Found", call.url.pathname);
}

function pagesRoute(call: Call, id: string | undefined): Answer {
  if (id === undefined) {
    allow(call, "POST");
    return createPageRequest(call);
  }
  allow(call, "GET,PUT,DELETE");
  if (call.method === "GET") return getPage(call, id);
  if (call.method === "PUT") return updatePageRequest(call, id);
  return deletePageRequest(call, id);
}

function commentsRoute(call: Call, id: string | undefined, sub: string | undefined): Answer {
  if (id === undefined) {
    allow(call, "GET,POST");
    return call.method === "GET" ? listComments(call) : createCommentRequest(call);
  }
  if (sub === "versions") {
    allow(call, "GET");
    return listCommentVersions(call, id);
  }
  if (sub !== undefined) return fail(404, "NOT_FOUND", "Not Found", call.url.pathname);
  allow(call, "GET,PUT,DELETE");
  if (call.method === "GET") return getComment(call, id);
  if (call.method === "PUT") return updateCommentRequest(call, id);
  return deleteCommentRequest(call, id);
}
