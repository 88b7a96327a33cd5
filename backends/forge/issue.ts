/**
 * One issue object of the forge's REST API (`GET /repos/{owner}/{repo}/issues[/{number}]`) as a record:
 * validated member by member, pull requests told apart (they carry a `pull_request` member), the status
 * read from state, state reason and the two status labels (schema.ts), the body byte for byte (`null` → empty).
 */
import { isObject, RFC3339 } from "../../core/checks.js";
import { excerpt } from "../../core/errors.js";
import type { BackendRecord } from "../backend.js";
import { forgeFileName, isStatusLabel, statusOf } from "./schema.js";

/** An issue as svc needs it, with every label (the status ones too) and its raw state. */
export interface ForgeIssue {
  readonly number: number;
  readonly state: "open" | "closed";
  readonly stateReason: string | null;
  /** Every label name, in the server's order, the status labels included. */
  readonly labels: readonly string[];
  readonly record: BackendRecord;
}

/** A pull request: listed by the issues endpoints, but not a record. */
export const PULL_REQUEST = Symbol("pull request");

function names(list: unknown, member: string, what: string): string[] | string {
  if (!Array.isArray(list)) return `${what} is not a list`;
  const out: string[] = [];
  for (const item of list) {
    const name = typeof item === "string" ? item : isObject(item) ? item[member] : undefined;
    if (typeof name !== "string") return `${what} holds an entry without a ${member}`;
    out.push(name);
  }
  return out;
}

/** Validates one issue object; returns the reason it is malformed, `PULL_REQUEST`, or the issue. */
export function toForgeIssue(value: unknown): ForgeIssue | typeof PULL_REQUEST | string {
  if (!isObject(value)) return "an issue must be an object";
  const number = value.number;
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 1)
    return `bad issue number ${excerpt(String(number), 30)}`;
  if (value.pull_request !== undefined && value.pull_request !== null) return PULL_REQUEST;
  const at = `issue ${number}`;
  if (typeof value.title !== "string") return `${at}: title is not a string`;
  if (value.body !== null && value.body !== undefined && typeof value.body !== "string")
    return `${at}: body is not a string`;
  if (value.state !== "open" && value.state !== "closed") return `${at}: state is neither open nor closed`;
  const reason = value.state_reason ?? null;
  if (reason !== null && typeof reason !== "string") return `${at}: state_reason is not a string`;
  const labels = names(value.labels, "name", `${at}: labels`);
  if (typeof labels === "string") return labels;
  const assignees = names(value.assignees ?? [], "login", `${at}: assignees`);
  if (typeof assignees === "string") return assignees;
  for (const member of ["created_at", "updated_at"] as const) {
    const time = value[member];
    if (typeof time !== "string" || !RFC3339.test(time)) return `${at}: ${member} is not a timestamp`;
  }
  const createdAt = value.created_at as string;
  const updatedAt = value.updated_at as string;
  const key = String(number);
  const fields = {
    id: number,
    title: value.title,
    status: statusOf(value.state, reason, labels),
    labels: labels.filter((name) => !isStatusLabel(name)),
    assignees,
    created_at: createdAt,
    updated_at: updatedAt,
  };
  const body = typeof value.body === "string" ? value.body : "";
  return {
    number,
    state: value.state,
    stateReason: reason,
    labels,
    record: {
      key,
      path: forgeFileName(number),
      version: null,
      updatedAt,
      content: { fields, body },
      raw: fields,
    },
  };
}
