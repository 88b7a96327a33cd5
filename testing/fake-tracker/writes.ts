/**
 * The fake tracker's writes: the `fields` and `update` of create, edit and transition, validated field by field
 * and collected as Jira does (every refused field named at once under `errors`), then checked against the issue
 * hierarchy (a subtask needs a parent one level up, in the same project).
 */
import { adfSchemaProblem } from "../adf-schema.js";
import { extraSetter, FieldError } from "./fields.js";
import {
  fail,
  failFields,
  isAdfDocument,
  isObject,
  isStringArray,
  type JsonObject,
  reference,
} from "./http.js";
import type { Change, Issue, Project, Tracker } from "./store.js";
import {
  cannotBeSet,
  MAX_SUMMARY,
  NOT_ADF,
  PRIORITIES,
  SUBTASK_WITHOUT_PARENT,
  SUMMARY_NEWLINE,
  SUMMARY_REQUIRED,
  SUMMARY_TOO_LONG,
  WRONG_HIERARCHY,
} from "./vendor-data.js";

export interface EditTarget {
  readonly tracker: Tracker;
  readonly project: Project;
  /** Undefined while creating. */
  readonly issue: Issue | undefined;
}

type FieldSetter = (value: unknown, target: EditTarget) => Change;

function setSummary(value: unknown): Change {
  // ASSUMPTION: a non-string summary gets the same message as a missing one.
  if (typeof value !== "string" || value.trim() === "") throw new FieldError(SUMMARY_REQUIRED);
  if (/[\r\n]/.test(value)) throw new FieldError(SUMMARY_NEWLINE);
  if (value.length > MAX_SUMMARY) throw new FieldError(SUMMARY_TOO_LONG);
  return { summary: value };
}

/**
 * A description must be an ADF document valid by Atlassian's schema (testing/adf-schema.ts, the judge the
 * converter's tests use too). ASSUMPTION: a document the schema refuses gets the same message as one that
 * is no document at all; the reason goes after it, for the test that hits it.
 */
function setDescription(value: unknown): Change {
  if (value !== null && !isAdfDocument(value)) throw new FieldError(NOT_ADF);
  const problem = value === null ? undefined : adfSchemaProblem(value);
  if (problem !== undefined) throw new FieldError(`${NOT_ADF}: ${problem}`);
  return { description: value };
}

/** ASSUMPTION: the wordings; labels keep the order sent, without repeats. */
function checkLabels(value: unknown): string[] {
  if (!isStringArray(value)) throw new FieldError("Operation value must be an array of strings.");
  for (const label of value) {
    if (label === "") throw new FieldError("The label '' is invalid: labels cannot be empty.");
    if (/\s/.test(label)) throw new FieldError(`The label '${label}' contains spaces which is invalid.`);
    if (label.length > MAX_SUMMARY) throw new FieldError(`The label '${label}' exceeds 255 characters.`);
  }
  return [...new Set(value)];
}

function setPriority(value: unknown): Change {
  if (value === null) return { priority: null };
  const id = isObject(value) ? value.id : undefined;
  const name = isObject(value) ? value.name : undefined;
  const priority = PRIORITIES.find((candidate) => candidate.id === id || candidate.name === name);
  // ASSUMPTION: the wording.
  if (!priority) throw new FieldError("The priority selected is invalid.");
  return { priority };
}

function setAssignee(value: unknown, target: EditTarget): Change {
  if (value === null || (isObject(value) && value.accountId === null)) return { assignee: null };
  const accountId = isObject(value) ? value.accountId : undefined;
  // ASSUMPTION: the wordings.
  if (typeof accountId !== "string") throw new FieldError("Specify the assignee by its accountId.");
  if (!target.tracker.users.has(accountId)) throw new FieldError(`User '${accountId}' does not exist.`);
  return { assignee: accountId };
}

function setParent(value: unknown, target: EditTarget): Change {
  if (value === null) return { parent: null };
  const named = reference(value, ["key", "id"]);
  const parent = named === undefined ? undefined : target.tracker.visibleIssue(named);
  // ASSUMPTION: the wording.
  if (!parent) throw new FieldError("Could not find issue by id or key.");
  return { parent };
}

function setIssueType(value: unknown, target: EditTarget): Change {
  const id = isObject(value) ? value.id : undefined;
  const name = isObject(value) ? value.name : undefined;
  const type = target.project.issueTypes.find((candidate) => candidate.id === id || candidate.name === name);
  if (!type) throw new FieldError("The issue type selected is invalid.");
  return { type };
}

const FIELD_SETTERS: ReadonlyMap<string, FieldSetter> = new Map<string, FieldSetter>([
  ["summary", setSummary],
  ["description", setDescription],
  ["labels", (value) => ({ labels: checkLabels(value) })],
  ["priority", setPriority],
  ["assignee", setAssignee],
  ["parent", setParent],
  ["issuetype", setIssueType],
]);

/** The setter of field `name`: a fixed one, or one of issue 35's (fields.ts). */
function setterOf(target: EditTarget, name: string): FieldSetter | undefined {
  const extra = extraSetter(target.tracker, name, target.issue === undefined);
  return FIELD_SETTERS.get(name) ?? (extra && ((value, edit) => extra(value, edit.project)));
}

/** `update.labels` operations on top of `labels`: `add`, `remove`, `set`. */
function applyLabelOperations(labels: readonly string[], operations: readonly JsonObject[]): string[] {
  let result = [...labels];
  for (const operation of operations) {
    if ("set" in operation) result = checkLabels(operation.set);
    else if ("add" in operation) result = [...new Set([...result, ...checkLabels([operation.add])])];
    else if ("remove" in operation) result = result.filter((label) => label !== operation.remove);
    else throw new FieldError("Labels support the operations add, remove and set.");
  }
  return result;
}

/** Reads `fields` and `update` into one change, with each refused field's message (Jira names them all at once). */
export function collectChanges(
  body: JsonObject,
  target: EditTarget,
): { change: Change; errors: Record<string, string> } {
  // ASSUMPTION: the wording.
  for (const member of ["fields", "update"]) {
    if (body[member] !== undefined && !isObject(body[member])) fail(400, `'${member}' must be an object.`);
  }
  const fields = isObject(body.fields) ? body.fields : {};
  const update = isObject(body.update) ? body.update : {};
  const errors: Record<string, string> = {};
  let change: Change = {};
  const attempt = (name: string, write: () => Change) => {
    try {
      const next = write();
      // Each custom field's setter names its own: they add up.
      change = {
        ...change,
        ...next,
        ...(next.custom ? { custom: { ...change.custom, ...next.custom } } : {}),
      };
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      errors[name] = error.message;
    }
  };
  for (const [name, value] of Object.entries(fields)) {
    const setter = setterOf(target, name);
    if (setter) attempt(name, () => setter(value, target));
    else errors[name] = cannotBeSet(name);
  }
  for (const [name, operations] of Object.entries(update)) {
    const setter = setterOf(target, name);
    // ASSUMPTION: the wording for a field named in both `fields` and `update` (documented as a 400).
    if (name in fields) errors[name] = `Field '${name}' cannot be set in both 'fields' and 'update'.`;
    else if (setter) attempt(name, () => updateOperations(name, operations, setter, target, change));
    else errors[name] = cannotBeSet(name);
  }
  return { change, errors };
}

/** `collectChanges`, refusing the write (400) when any field was refused. */
export function readChanges(body: JsonObject, target: EditTarget): Change {
  const { change, errors } = collectChanges(body, target);
  if (Object.keys(errors).length > 0) failFields(errors);
  return change;
}

/** One field's `update` operations; besides labels, only `set` (and `parent: [{set: {none: true}}]`). */
function updateOperations(
  name: string,
  operations: unknown,
  setter: FieldSetter,
  target: EditTarget,
  sofar: Change,
): Change {
  if (!Array.isArray(operations) || !operations.every(isObject)) {
    throw new FieldError('Operations must be an array of objects such as [{"set": …}].');
  }
  if (name === "labels")
    return { labels: applyLabelOperations(sofar.labels ?? target.issue?.labels ?? [], operations) };
  let change: Change = {};
  for (const operation of operations) {
    if (!("set" in operation)) throw new FieldError(`Field '${name}' supports only the operation set.`);
    const value = operation.set;
    const removesParent = name === "parent" && isObject(value) && value.none === true;
    change = { ...change, ...(removesParent ? { parent: null } : setter(value, target)) };
  }
  return change;
}

/**
 * What Jira's hierarchy allows after the change: a subtask needs a parent; a parent sits one level above its
 * child in the same project. ASSUMPTION: an edit cannot change an issue's hierarchy level (Jira moves issues
 * between subtask and standard types with "Move", not with an edit).
 */
export function checkHierarchy(target: EditTarget, change: Change): void {
  const type = change.type ?? target.issue?.type;
  const parent = change.parent !== undefined ? change.parent : (target.issue?.parent ?? null);
  if (!type) return;
  if (target.issue && change.type && change.type.hierarchyLevel !== target.issue.type.hierarchyLevel) {
    failFields({ issuetype: "The issue type selected is invalid." });
  }
  if (type.subtask && parent === null) {
    if (target.issue === undefined) failFields({}, [SUBTASK_WITHOUT_PARENT]);
    failFields({ parent: SUBTASK_WITHOUT_PARENT });
  }
  if (parent === null) return;
  const wrong =
    parent === target.issue ||
    parent.project !== target.project ||
    parent.type.hierarchyLevel !== type.hierarchyLevel + 1;
  if (wrong) failFields({ parent: WRONG_HIERARCHY });
}
