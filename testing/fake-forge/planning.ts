/**
 * What plans an issue on the fake forge (issue 35), in the vendor's shapes: milestones (`GET …/milestones`,
 * paged), issue types (`GET …/issue-types`; 404 for an owner without them), sub-issues (`POST
 * …/issues/{n}/sub_issues`, `DELETE …/issues/{n}/sub_issue`, `GET …/issues/{n}/sub_issues`, `GET
 * …/issues/{n}/parent`), and the checks of a create's or an update's `milestone` (a number) and `type` (a
 * name). The JSON of a milestone, an issue type and the issue's members for them is in shapes.ts; a
 * repository's milestones, types and an issue's parent in store.ts.
 *
 * ASSUMPTIONS: linking or unlinking a sub-issue moves both issues' updated_at (each gets a timeline event);
 * a link to an issue that already has a parent, without `replace_parent`, answers 422; removing a link the
 * issue does not have answers 404.
 */
import { type Call, type Route, targetIssue } from "./call.js";
import { type Answer, fail, invalid, parseJsonObject } from "./http.js";
import type { Forge, Issue } from "./store.js";
import type { IssueEdit } from "./types.js";
import {
  DEFAULT_PER_PAGE,
  ISSUE_TYPES_DOCS,
  MAX_PER_PAGE,
  MILESTONES_DOCS,
  SUB_ISSUES_DOCS,
} from "./vendor-data.js";

/**
 * A create's or an update's `milestone` (a number; null removes it) and `type` (a name; null removes it),
 * checked: one the repository lacks answers 422. Without push access both are dropped without a word.
 */
export function planningEdit(
  call: Call,
  input: Record<string, unknown>,
  docs: string,
): Pick<IssueEdit, "milestone" | "type"> {
  const repo = call.repo;
  const edit: { milestone?: string | null; type?: string | null } = {};
  const milestone = input.milestone;
  if (milestone !== undefined) {
    const found = milestone === null ? null : repo.milestones.find((known) => known.number === milestone);
    if (found === undefined) invalid(docs, { code: "invalid", field: "milestone", value: milestone });
    edit.milestone = found?.title ?? null;
  }
  const type = input.type;
  if (type !== undefined) {
    const name =
      typeof type === "string"
        ? repo.issueTypes?.find((known) => known.toLowerCase() === type.toLowerCase())
        : undefined;
    if (type !== null && name === undefined) invalid(docs, { code: "invalid", field: "type", value: type });
    edit.type = type === null ? null : (name as string);
  }
  return repo.pushAccess ? edit : {};
}

function listMilestones(call: Call): Answer {
  const params = call.url.searchParams;
  const state = params.get("state") ?? "open";
  if (!["open", "closed", "all"].includes(state))
    invalid(`${MILESTONES_DOCS}#list-milestones`, { code: "invalid", field: "state", value: state });
  const perPage = Math.min(
    Number(params.get("per_page") ?? DEFAULT_PER_PAGE) || DEFAULT_PER_PAGE,
    MAX_PER_PAGE,
  );
  const page = Math.max(1, Number(params.get("page") ?? 1) || 1);
  // Every milestone of the fake is open.
  const selected = state === "closed" ? [] : call.repo.milestones;
  const last = Math.max(1, Math.ceil(selected.length / perPage));
  const next = new URLSearchParams(params);
  next.set("page", String(page + 1));
  const link =
    page < last ? `<${call.nextOrigin}${call.url.pathname}?${next.toString()}>; rel="next"` : undefined;
  return {
    status: 200,
    headers: link === undefined ? {} : { link },
    body: selected
      .slice((page - 1) * perPage, page * perPage)
      .map((milestone) => call.shapes.milestone(call.repo, milestone)),
  };
}

function listIssueTypes(call: Call): Answer {
  const types = call.repo.issueTypes;
  if (types === null) fail(404, "Not Found", `${ISSUE_TYPES_DOCS}#list-issue-types-for-a-repository`);
  return { status: 200, body: types.map((name) => call.shapes.issueType(call.repo, name)) };
}

/** The issue whose database id a sub-issue call's body names (`sub_issue_id`), in a repository of the same owner. */
function subIssue(call: Call, input: Record<string, unknown>, docs: string): Issue {
  const id = input.sub_issue_id;
  if (typeof id !== "number") invalid(docs, { code: "invalid", field: "sub_issue_id", value: id });
  for (const repo of call.forge.repos) {
    if (repo.owner !== call.repo.owner) continue;
    for (const issue of repo.issues.values()) if (issue.id === id) return issue;
  }
  return invalid(docs, { code: "invalid", field: "sub_issue_id", value: id });
}

function addSubIssue(call: Call): Answer {
  const docs = `${SUB_ISSUES_DOCS}#add-sub-issue`;
  const parent = targetIssue(call, docs);
  const input = parseJsonObject(call.text, docs);
  const child = subIssue(call, input, docs);
  if (child === parent) invalid(docs, { code: "invalid", field: "sub_issue_id", value: child.id });
  if (child.parent && input.replace_parent !== true)
    invalid(docs, { code: "custom", field: "sub_issue_id", message: "Sub issue may only have one parent" });
  child.parent = { repo: call.repo, number: parent.number };
  touch(call.forge, child, parent);
  return {
    status: 201,
    headers: { location: `${call.shapes.repoApi(call.repo)}/issues/${parent.number}/sub_issues` },
    body: call.shapes.issue(call.repo, parent),
  };
}

function removeSubIssue(call: Call): Answer {
  const docs = `${SUB_ISSUES_DOCS}#remove-sub-issue`;
  const parent = targetIssue(call, docs);
  const child = subIssue(call, parseJsonObject(call.text, docs), docs);
  if (child.parent?.repo !== call.repo || child.parent.number !== parent.number) fail(404, "Not Found", docs);
  child.parent = null;
  touch(call.forge, child, parent);
  return { status: 200, body: call.shapes.issue(call.repo, parent) };
}

function listSubIssues(call: Call): Answer {
  const parent = targetIssue(call, `${SUB_ISSUES_DOCS}#list-sub-issues`);
  const children = call.forge.repos.flatMap((repo) =>
    [...repo.issues.values()]
      .filter((issue) => issue.parent?.repo === call.repo && issue.parent.number === parent.number)
      .map((issue) => call.shapes.issue(repo, issue)),
  );
  return { status: 200, body: children };
}

function getParent(call: Call): Answer {
  const docs = `${SUB_ISSUES_DOCS}#get-parent-issue`;
  const child = targetIssue(call, docs);
  const parent = child.parent;
  if (!parent) return fail(404, "Not Found", docs);
  return {
    status: 200,
    body: call.shapes.issue(parent.repo, call.forge.issueOrThrow(parent.repo, parent.number)),
  };
}

/** A link made or removed moves both issues' updated_at. */
function touch(forge: Forge, ...issues: Issue[]): void {
  for (const issue of issues) issue.updatedMs = forge.nextStamp(issue.updatedMs);
}

export const PLANNING_ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: /^\/milestones$/,
    docs: `${MILESTONES_DOCS}#list-milestones`,
    handle: listMilestones,
  },
  {
    method: "GET",
    path: /^\/issue-types$/,
    docs: `${ISSUE_TYPES_DOCS}#list-issue-types-for-a-repository`,
    handle: listIssueTypes,
  },
  {
    method: "POST",
    path: /^\/issues\/(\d+)\/sub_issues$/,
    docs: `${SUB_ISSUES_DOCS}#add-sub-issue`,
    handle: addSubIssue,
  },
  {
    method: "GET",
    path: /^\/issues\/(\d+)\/sub_issues$/,
    docs: `${SUB_ISSUES_DOCS}#list-sub-issues`,
    handle: listSubIssues,
  },
  {
    method: "DELETE",
    path: /^\/issues\/(\d+)\/sub_issue$/,
    docs: `${SUB_ISSUES_DOCS}#remove-sub-issue`,
    handle: removeSubIssue,
  },
  {
    method: "GET",
    path: /^\/issues\/(\d+)\/parent$/,
    docs: `${SUB_ISSUES_DOCS}#get-parent-issue`,
    handle: getParent,
  },
];
