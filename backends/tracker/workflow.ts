/**
 * What the tracker's project and workflow answers offer, read from the vendor's shapes (wire.ts): the
 * project's issue types (`GET /project/{key}`, else the create metadata) and an issue's transitions
 * (`GET /issue/{key}/transitions`). Every member is optional in the description: an entry without what svc
 * needs (an id, a name, a target status) is not offered; the issue type a create or a type edit sends. Pure.
 */
import { isObject } from "../../core/checks.js";
import { SvcError } from "../../core/errors.js";
import type { FieldValue } from "../record.js";
import type { CreateMetaIssueTypes, IssueTypeDetails, Project, Transitions } from "./wire.js";

/** An issue type of the project, as creates and type edits need it. */
export interface IssueType {
  readonly id: string;
  readonly name: string;
  readonly subtask: boolean;
  readonly hierarchyLevel: number;
}

/** One workflow transition offered for an issue. */
export interface Transition {
  readonly id: string;
  readonly name: string;
  readonly to: string;
}

/**
 * The issue types of a project answer or a create-metadata answer. `values` is not in the description's
 * `PageOfCreateMetaIssueTypes` (its `issueTypes` is), but is read after it, as svc did before.
 */
export function issueTypesOf(value: (Project | CreateMetaIssueTypes) & { values?: unknown }): IssueType[] {
  const list: unknown = value.issueTypes ?? value.values;
  return (Array.isArray(list) ? (list as Partial<IssueTypeDetails>[]) : []).flatMap((item) =>
    isObject(item) && typeof item.id === "string" && typeof item.name === "string"
      ? [
          {
            id: item.id,
            name: item.name,
            subtask: item.subtask === true,
            hierarchyLevel: typeof item.hierarchyLevel === "number" ? item.hierarchyLevel : 0,
          },
        ]
      : [],
  );
}

/** The transitions offered now (`isAvailable` not false) that name their target status. */
export function transitionsOf(value: Transitions): Transition[] {
  return (Array.isArray(value.transitions) ? value.transitions : []).flatMap((item): Transition[] =>
    isObject(item) &&
    typeof item.id === "string" &&
    item.isAvailable !== false &&
    isObject(item.to) &&
    typeof item.to.name === "string"
      ? [{ id: item.id, name: typeof item.name === "string" ? item.name : item.id, to: item.to.name }]
      : [],
  );
}

/**
 * The issue type of `types` named `name` (case-insensitive); without a name, the type a create without a
 * `type` line sends: the project's first standard type of hierarchy level 0, else its first standard type.
 * An unknown name, or a project with no type to create, is refused (status 400) naming the types.
 */
export function pickIssueType(
  types: readonly IssueType[],
  name: FieldValue | undefined,
  project: string,
  what: string,
): IssueType {
  if (typeof name === "string") {
    const found = types.find((type) => type.name.toLowerCase() === name.toLowerCase());
    if (found) return found;
    throw new SvcError(
      "SVC_BACKEND",
      `${what}: project ${project} has no issue type ${JSON.stringify(name)}; its types are ${types.map((type) => JSON.stringify(type.name)).join(", ")}`,
      { data: { status: 400 } },
    );
  }
  const standard = types.filter((type) => !type.subtask);
  const fallback = standard.find((type) => type.hierarchyLevel === 0) ?? standard[0];
  if (!fallback)
    throw new SvcError("SVC_BACKEND", `${what}: project ${project} offers no issue type to create`, {
      data: { status: 400 },
    });
  return fallback;
}
