/**
 * The fake tracker's issue routes: get, create, edit and delete an issue, and list or perform its transitions.
 * An issue the account cannot see answers 404 as one that does not exist.
 */
import { type Call, queryList } from "./call.js";
import { fieldList } from "./fields.js";
import { type Answer, fail, failFields, isObject, parseJsonObject, reference } from "./http.js";
import { type IssueField, selectFields } from "./shapes.js";
import type { Issue } from "./store.js";
import type { FakeTrackerIssueType, FakeTrackerTransition } from "./types.js";
import {
  cannotBeSet,
  hasSubtasks,
  ISSUE_NOT_FOUND,
  SUMMARY_REQUIRED,
  TRANSITION_NOT_INTEGER,
} from "./vendor-data.js";
import { checkHierarchy, collectChanges, readChanges } from "./writes.js";

/** The issue the path names (`params[0]`); one the account cannot see answers 404 as one that does not exist. */
export function issueOr404(call: Call): Issue {
  const issue = call.tracker.visibleIssue(call.params[0] ?? "");
  if (!issue) fail(404, ISSUE_NOT_FOUND);
  return issue;
}

export function getIssue(call: Call): Answer {
  const issue = issueOr404(call);
  const selection = selectFields(queryList(call.url, "fields"), "*all");
  const fields = selection.idsOnly ? { idsOnly: false as const, fields: new Set<IssueField>() } : selection;
  return { status: 200, body: call.shapes.issue(issue, fields) };
}

/**
 * Edits an issue. Besides `fields` and `update`, `historyMetadata`, `properties` and `transition` are accepted
 * and ignored (the docs: "issue transition is not supported and is ignored here").
 * ASSUMPTION: every accepted edit moves `updated`, even one that changes nothing.
 */
export function editIssue(call: Call): Answer {
  const issue = issueOr404(call);
  const body = parseJsonObject(call.text);
  const target = { tracker: call.tracker, project: issue.project, issue };
  const change = readChanges(body, target);
  checkHierarchy(target, change);
  call.tracker.apply(issue, change);
  call.tracker.touch(issue);
  if (call.url.searchParams.get("returnIssue") !== "true") return { status: 204 };
  return { status: 200, body: call.shapes.issue(issue, selectFields([], "*all")) };
}

/** `IssueUpdateMetadata` of the issue: the fields on its edit screen, with allowed values (fields.ts). */
export function getEditMeta(call: Call): Answer {
  return { status: 200, body: call.shapes.extra.editMeta(issueOr404(call)) };
}

/** The site's field list: `FieldDetails[]` (fields.ts). */
export function getFields(call: Call): Answer {
  return { status: 200, body: fieldList(call.tracker.customFields) };
}

export function deleteIssue(call: Call): Answer {
  const issue = issueOr404(call);
  const withSubtasks = call.url.searchParams.get("deleteSubtasks") === "true";
  if (!withSubtasks && call.tracker.subtasksOf(issue).length > 0) fail(400, hasSubtasks(issue.key));
  call.tracker.remove(issue);
  return { status: 204 };
}

/** `fields.project`, `fields.issuetype` and `fields.summary` are required; all missing ones are named at once. */
export function createIssue(call: Call): Answer {
  const body = parseJsonObject(call.text);
  const { project: named, ...settable } = isObject(body.fields) ? body.fields : {};
  const key = reference(named, ["key", "id"]);
  const project = call.tracker.projects.find(
    (p) => !p.hidden && key !== undefined && (p.key === key || p.id === key),
  );
  const errors: Record<string, string> = {};
  if (!project) errors.project = "Specify a valid project ID or key";
  if (settable.issuetype === undefined) errors.issuetype = "Specify an issue type";
  if (settable.summary === undefined) errors.summary = SUMMARY_REQUIRED;
  if (!project) failFields(errors);
  const target = { tracker: call.tracker, project, issue: undefined };
  const collected = collectChanges({ ...body, fields: settable }, target);
  Object.assign(errors, collected.errors);
  if (Object.keys(errors).length > 0) failFields(errors);
  const change = collected.change;
  checkHierarchy(target, change);
  const issue = call.tracker.insert(project, change.type as FakeTrackerIssueType, "", call.tracker.now());
  call.tracker.apply(issue, change);
  return { status: 201, body: { id: issue.id, key: issue.key, self: call.shapes.issueUrl(issue) } };
}

/**
 * The transitions offered from the issue's status. ASSUMPTION: a global transition into the status the issue
 * is already in is not offered.
 */
function availableTransitions(issue: Issue): FakeTrackerTransition[] {
  return issue.project.transitions.filter(
    (transition) =>
      transition.from.includes(issue.status.name) ||
      (transition.from.includes("*") && transition.to !== issue.status.name),
  );
}

export function getTransitions(call: Call): Answer {
  const issue = issueOr404(call);
  const wanted = call.url.searchParams.get("transitionId");
  const withFields = (call.url.searchParams.get("expand") ?? "").split(",").includes("transitions.fields");
  const transitions = availableTransitions(issue)
    .filter((transition) => wanted === null || transition.id === wanted)
    .map((transition) =>
      call.shapes.transition(
        transition,
        call.tracker.statusOrThrow(issue.project, transition.to),
        withFields,
      ),
    );
  return { status: 200, body: { expand: "transitions", transitions } };
}

/**
 * Performs a transition. Only the fields its screen requires may be sent ("a field that isn't included on the
 * transition screen" is a 400); ASSUMPTION: their values are accepted and not stored (the fake has no
 * resolution), and a transition moves `updated`.
 */
export function doTransition(call: Call): Answer {
  const issue = issueOr404(call);
  const body = parseJsonObject(call.text);
  const id = isObject(body.transition) ? body.transition.id : undefined;
  if ((typeof id !== "string" || !/^\d+$/.test(id)) && !Number.isInteger(id))
    fail(400, TRANSITION_NOT_INTEGER);
  const transition = availableTransitions(issue).find((candidate) => candidate.id === String(id));
  if (!transition) fail(400, `Transition id '${String(id)}' is not valid for this issue.`);
  const requires = transition.requires ?? {};
  const fields = isObject(body.fields) ? body.fields : {};
  const unknown = Object.keys({ ...fields, ...(isObject(body.update) ? body.update : {}) }).filter(
    (name) => !(name in requires),
  );
  if (unknown.length > 0) failFields(Object.fromEntries(unknown.map((name) => [name, cannotBeSet(name)])));
  const missing = Object.entries(requires).filter(
    ([name]) => fields[name] === undefined || fields[name] === null,
  );
  if (missing.length > 0) failFields(Object.fromEntries(missing));
  issue.status = call.tracker.statusOrThrow(issue.project, transition.to);
  call.tracker.touch(issue);
  return { status: 204 };
}
