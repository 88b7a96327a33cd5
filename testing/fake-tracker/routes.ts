/**
 * The fake tracker's route table (every operation it serves, by method and path) and the routes about the site
 * rather than its issues: the account (`myself`), a project, its create metadata (issue types, and an issue
 * type's create screen), and the priorities.
 */
import type { Call, Route } from "./call.js";
import {
  addComment,
  count,
  deleteComment,
  getComment,
  getComments,
  updateComment,
} from "./comment-routes.js";
import { type Answer, fail } from "./http.js";
import {
  createIssue,
  deleteIssue,
  doTransition,
  editIssue,
  getEditMeta,
  getFields,
  getIssue,
  getTransitions,
} from "./issue-routes.js";
import { countIssues, runSearch, searchBody, searchQuery } from "./search-routes.js";
import { PRIORITIES } from "./vendor-data.js";

function getMyself(call: Call): Answer {
  const expand = (call.url.searchParams.get("expand") ?? "").split(",");
  return { status: 200, body: call.shapes.myself(expand) };
}

function getProject(call: Call): Answer {
  const named = call.params[0] ?? "";
  const project = call.tracker.visibleProject(named);
  if (!project) fail(404, `No project could be found with key '${named}'.`);
  return { status: 200, body: call.shapes.project(project) };
}

/**
 * "Get create metadata issue types for a project" (`PageOfCreateMetaIssueTypes`). A project the account
 * cannot see answers 400: the description documents 200, 400 and 401 only. ASSUMPTION: the message, as
 * getProject's.
 */
function getCreateMetaIssueTypes(call: Call): Answer {
  const named = call.params[0] ?? "";
  const project = call.tracker.visibleProject(named);
  if (!project) fail(400, `No project could be found with key '${named}'.`);
  const allowed = ["avatarId", "description", "hierarchyLevel", "iconUrl", "id", "name", "self", "subtask"];
  const issueTypes = project.issueTypes.map((type) =>
    Object.fromEntries(
      Object.entries(call.shapes.issueType(type)).filter(([name]) => allowed.includes(name)),
    ),
  );
  return { status: 200, body: { issueTypes, maxResults: 50, startAt: 0, total: issueTypes.length } };
}

/**
 * "Get create field metadata for a project and issue type id" (`PageOfCreateMetaIssueTypeWithField`): the
 * issue type's create screen (fields.ts), `startAt` on, at most `maxResults` (default 50, at most 200, as
 * the description says) and `metaPageSize` fields a page. A project the account cannot see, or an issue type
 * the project lacks, answers 400 (the description documents 200, 400 and 401 only). ASSUMPTION: the
 * wordings.
 */
function getCreateMetaFields(call: Call): Answer {
  const [named = "", typeId = ""] = call.params;
  const project = call.tracker.visibleProject(named);
  if (!project) fail(400, `No project could be found with key '${named}'.`);
  const type = project.issueTypes.find((candidate) => candidate.id === typeId);
  if (!type) fail(400, `The issue type with id '${typeId}' does not exist in project '${project.key}'.`);
  const startAt = count(call, "startAt", 0);
  const asked = count(call, "maxResults", 50);
  if (asked > 200) fail(400, "Parameter 'maxResults' must not exceed the limit '200'");
  const maxResults = Math.min(asked, call.tracker.options.metaPageSize);
  const all = call.shapes.extra.createMeta(project, type);
  const fields = all.slice(startAt, startAt + maxResults);
  return { status: 200, body: { fields, maxResults, startAt, total: all.length } };
}

function getPriorities(call: Call): Answer {
  return { status: 200, body: PRIORITIES.map((priority) => call.shapes.priorityFull(priority)) };
}

const ISSUE_PATH = /^\/rest\/api\/3\/issue\/([^/]+)$/;
const TRANSITIONS_PATH = /^\/rest\/api\/3\/issue\/([^/]+)\/transitions$/;
const COMMENTS_PATH = /^\/rest\/api\/3\/issue\/([^/]+)\/comment$/;
const COMMENT_PATH = /^\/rest\/api\/3\/issue\/([^/]+)\/comment\/([^/]+)$/;
const SEARCH_PATH = /^\/rest\/api\/3\/search\/jql$/;

export const ROUTES: readonly Route[] = [
  { method: "POST", path: SEARCH_PATH, handle: (call) => runSearch(call, searchBody(call.text)) },
  { method: "GET", path: SEARCH_PATH, handle: (call) => runSearch(call, searchQuery(call.url)) },
  { method: "POST", path: /^\/rest\/api\/3\/search\/approximate-count$/, handle: countIssues },
  { method: "POST", path: /^\/rest\/api\/3\/issue$/, handle: createIssue },
  { method: "GET", path: ISSUE_PATH, handle: getIssue },
  { method: "PUT", path: ISSUE_PATH, handle: editIssue },
  { method: "DELETE", path: ISSUE_PATH, handle: deleteIssue },
  { method: "GET", path: TRANSITIONS_PATH, handle: getTransitions },
  { method: "POST", path: TRANSITIONS_PATH, handle: doTransition },
  { method: "GET", path: COMMENTS_PATH, handle: getComments },
  { method: "POST", path: COMMENTS_PATH, handle: addComment },
  { method: "GET", path: COMMENT_PATH, handle: getComment },
  { method: "PUT", path: COMMENT_PATH, handle: updateComment },
  { method: "DELETE", path: COMMENT_PATH, handle: deleteComment },
  { method: "GET", path: /^\/rest\/api\/3\/myself$/, handle: getMyself },
  { method: "GET", path: /^\/rest\/api\/3\/project\/([^/]+)$/, handle: getProject },
  {
    method: "GET",
    path: /^\/rest\/api\/3\/issue\/createmeta\/([^/]+)\/issuetypes$/,
    handle: getCreateMetaIssueTypes,
  },
  {
    method: "GET",
    path: /^\/rest\/api\/3\/issue\/createmeta\/([^/]+)\/issuetypes\/([^/]+)$/,
    handle: getCreateMetaFields,
  },
  { method: "GET", path: /^\/rest\/api\/3\/priority$/, handle: getPriorities },
  { method: "GET", path: /^\/rest\/api\/3\/field$/, handle: getFields },
  { method: "GET", path: /^\/rest\/api\/3\/issue\/([^/]+)\/editmeta$/, handle: getEditMeta },
];
