/**
 * One request as the fake forge's handlers see it, the route that hands it to one, and the issue a request
 * names: kept apart from the route tables so that the handlers and the server import it without importing
 * each other.
 */
import { type Answer, fail } from "./http.js";
import type { Shapes } from "./shapes.js";
import type { Forge, Issue, Repo } from "./store.js";

/** One request as the handlers see it; `params` are the route's captures after the repository. */
export interface Call {
  readonly method: string;
  readonly url: URL;
  readonly repo: Repo;
  readonly params: readonly string[];
  readonly text: string;
  readonly forge: Forge;
  readonly shapes: Shapes;
  readonly origin: string;
  /** The origin of Link rel="next" (the fake's own unless `setNextOrigin` changed it). */
  readonly nextOrigin: string;
}

export interface Route {
  readonly method: string;
  readonly path: RegExp;
  /** The reference page errors cite in `documentation_url`. */
  readonly docs: string;
  readonly handle: (call: Call) => Answer;
}

/** The issue (or pull request) `params[0]` names: 410 "This issue was deleted" for a deleted one, else 404. */
export function targetIssue(call: Call, docs: string): Issue {
  const number = Number(call.params[0]);
  if (call.repo.deleted.has(number)) fail(410, "This issue was deleted", docs);
  const issue = call.repo.issues.get(number);
  if (!issue) fail(404, "Not Found", docs);
  return issue;
}
