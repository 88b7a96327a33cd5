/**
 * One request as the fake tracker's handlers see it, and the route that hands it to one: kept apart from the
 * route table so that the handlers and the table import it without importing each other.
 */
import type { Answer } from "./http.js";
import type { Search } from "./search.js";
import type { Shapes } from "./shapes.js";
import type { Tracker } from "./store.js";

/** One request as a handler sees it; `params` are the route's captures, URI-decoded. */
export interface Call {
  readonly url: URL;
  readonly params: readonly string[];
  readonly text: string;
  readonly tracker: Tracker;
  readonly shapes: Shapes;
  readonly search: Search;
}

export interface Route {
  readonly method: string;
  readonly path: RegExp;
  readonly handle: (call: Call) => Answer;
}

/** `name` as repeated query parameters, each possibly a comma-separated list. */
export const queryList = (url: URL, name: string) => url.searchParams.getAll(name);
