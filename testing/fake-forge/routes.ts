/**
 * The fake forge's routes, each on a path after the repository (`/repos/{owner}/{repo}` or
 * `/repositories/{id}`): the repository, the issue listing, one issue (get, create, update) and an issue's
 * labels (list, add, set, remove); then the comment routes (comment-routes.ts) and those of milestones, issue
 * types and sub-issues (planning.ts). A deleted issue answers 410,
 * an unknown one 404.
 */
import { type Call, type Route, targetIssue } from "./call.js";
import { checkBody, checkLabelNames, checkState, checkStateReason, checkTitle } from "./checks.js";
import { COMMENT_ROUTES } from "./comment-routes.js";
import { type Answer, fail, invalid, parseJsonObject } from "./http.js";
import { linkHeader, parseListQuery, selectIssues } from "./listing.js";
import { PLANNING_ROUTES, planningEdit } from "./planning.js";
import type { IssueEdit, IssueSeed } from "./types.js";
import { DOCS, ISSUES_DOCS, LABELS_DOCS } from "./vendor-data.js";

function listIssues(call: Call): Answer {
  const query = parseListQuery(call.url.searchParams, `${ISSUES_DOCS}#list-repository-issues`);
  const selected = selectIssues(call.repo, query);
  const last = Math.max(1, Math.ceil(selected.length / query.perPage));
  const start = (query.page - 1) * query.perPage;
  const link = linkHeader(call.origin, call.nextOrigin, call.repo, call.url, query.page, last);
  return {
    status: 200,
    headers: link === undefined ? {} : { link },
    body: selected.slice(start, start + query.perPage).map((issue) => call.shapes.issue(call.repo, issue)),
  };
}

function getIssue(call: Call): Answer {
  const issue = targetIssue(call, `${ISSUES_DOCS}#get-an-issue`);
  return {
    status: 200,
    headers: { "last-modified": new Date(issue.updatedMs).toUTCString() },
    body: call.shapes.issue(call.repo, issue),
  };
}

/** `assignees` (or the deprecated `assignee`) of a create or update, each a collaborator. */
function checkAssignees(call: Call, input: Record<string, unknown>, docs: string): string[] | undefined {
  let logins: unknown = input.assignees;
  if (logins === undefined && "assignee" in input) logins = input.assignee === null ? [] : [input.assignee];
  if (logins === undefined) return undefined;
  if (!Array.isArray(logins) || logins.some((login) => typeof login !== "string")) {
    invalid(docs, { code: "invalid", field: "assignees", value: logins });
  }
  const strangers = logins.filter((login: string) => !call.forge.collaborators.includes(login));
  if (strangers.length > 0) invalid(docs, { code: "invalid", field: "assignees", value: strangers });
  return logins as string[];
}

function createIssue(call: Call): Answer {
  const docs = `${ISSUES_DOCS}#create-an-issue`;
  const input = parseJsonObject(call.text, docs);
  const seed: IssueSeed = {
    title: checkTitle(input.title, docs),
    body: input.body === undefined ? null : checkBody(input.body, docs),
    labels: input.labels === undefined ? [] : checkLabelNames(input.labels, docs),
    assignees: checkAssignees(call, input, docs) ?? [],
  };
  const planned = planningEdit(call, input, docs);
  const forge = call.forge;
  const issue = forge.insertIssue(
    call.repo,
    { ...seed, milestone: planned.milestone ?? undefined, type: planned.type ?? undefined },
    forge.login,
    forge.nextStamp(),
  );
  return {
    status: 201,
    headers: { location: `${call.shapes.repoApi(call.repo)}/issues/${issue.number}` },
    body: call.shapes.issue(call.repo, issue),
  };
}

/** A pull request's number edits its issue fields, as GitHub's issues endpoint does. */
function updateIssue(call: Call): Answer {
  const docs = `${ISSUES_DOCS}#update-an-issue`;
  const issue = targetIssue(call, docs);
  const input = parseJsonObject(call.text, docs);
  const edit: IssueEdit = {
    ...planningEdit(call, input, docs),
    title: input.title === undefined ? undefined : checkTitle(input.title, docs),
    body: input.body === undefined ? undefined : checkBody(input.body, docs),
    state: input.state === undefined ? undefined : checkState(input.state, docs),
    stateReason: input.state_reason === undefined ? undefined : checkStateReason(input.state_reason, docs),
    labels: input.labels === undefined ? undefined : checkLabelNames(input.labels, docs),
    assignees: checkAssignees(call, input, docs),
  };
  call.forge.edit(call.repo, issue, edit, call.forge.login);
  return { status: 200, body: call.shapes.issue(call.repo, issue) };
}

/** The names of an add/set labels body: `{labels: [...]}`, a bare array, or one name (all in the schema). */
function labelsInput(text: string, docs: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail(400, "Problems parsing JSON", docs);
  }
  if (typeof parsed === "string") return checkLabelNames([parsed], docs);
  const list = Array.isArray(parsed) ? parsed : (parsed as { labels?: unknown } | null)?.labels;
  return checkLabelNames(list, docs);
}

function listIssueLabels(call: Call): Answer {
  const issue = targetIssue(call, `${LABELS_DOCS}#list-labels-for-an-issue`);
  return { status: 200, body: call.shapes.labels(call.repo, issue) };
}

function addIssueLabels(call: Call): Answer {
  const docs = `${LABELS_DOCS}#add-labels-to-an-issue`;
  const issue = targetIssue(call, docs);
  const labels = [...issue.labels, ...labelsInput(call.text, docs)];
  call.forge.edit(call.repo, issue, { labels }, call.forge.login);
  return { status: 200, body: call.shapes.labels(call.repo, issue) };
}

function setIssueLabels(call: Call): Answer {
  const docs = `${LABELS_DOCS}#set-labels-for-an-issue`;
  const issue = targetIssue(call, docs);
  call.forge.edit(call.repo, issue, { labels: labelsInput(call.text, docs) }, call.forge.login);
  return { status: 200, body: call.shapes.labels(call.repo, issue) };
}

function removeIssueLabel(call: Call): Answer {
  const docs = `${LABELS_DOCS}#remove-a-label-from-an-issue`;
  const issue = targetIssue(call, docs);
  const name = decodeURIComponent(call.params[1] as string).toLowerCase();
  if (!issue.labels.some((label) => label.toLowerCase() === name)) fail(404, "Label does not exist", docs);
  const labels = issue.labels.filter((label) => label.toLowerCase() !== name);
  call.forge.edit(call.repo, issue, { labels }, call.forge.login);
  return { status: 200, body: call.shapes.labels(call.repo, issue) };
}

/** `GET /repos/{owner}/{repo}`: the repository, GitHub's `full-repository` with every required member. */
export function getRepository(call: Call): Answer {
  return { status: 200, body: call.shapes.repository(call.repo) };
}

export const ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: /^$/,
    docs: `${DOCS}/repos/repos#get-a-repository`,
    handle: getRepository,
  },
  { method: "GET", path: /^\/issues$/, docs: `${ISSUES_DOCS}#list-repository-issues`, handle: listIssues },
  { method: "POST", path: /^\/issues$/, docs: `${ISSUES_DOCS}#create-an-issue`, handle: createIssue },
  { method: "GET", path: /^\/issues\/(\d+)$/, docs: `${ISSUES_DOCS}#get-an-issue`, handle: getIssue },
  { method: "PATCH", path: /^\/issues\/(\d+)$/, docs: `${ISSUES_DOCS}#update-an-issue`, handle: updateIssue },
  {
    method: "GET",
    path: /^\/issues\/(\d+)\/labels$/,
    docs: `${LABELS_DOCS}#list-labels-for-an-issue`,
    handle: listIssueLabels,
  },
  {
    method: "POST",
    path: /^\/issues\/(\d+)\/labels$/,
    docs: `${LABELS_DOCS}#add-labels-to-an-issue`,
    handle: addIssueLabels,
  },
  {
    method: "PUT",
    path: /^\/issues\/(\d+)\/labels$/,
    docs: `${LABELS_DOCS}#set-labels-for-an-issue`,
    handle: setIssueLabels,
  },
  {
    method: "DELETE",
    path: /^\/issues\/(\d+)\/labels\/([^/]+)$/,
    docs: `${LABELS_DOCS}#remove-a-label-from-an-issue`,
    handle: removeIssueLabel,
  },
  ...COMMENT_ROUTES,
  ...PLANNING_ROUTES,
];
