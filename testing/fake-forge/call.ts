/**
 * One request as the fake forge's handlers see it, and the route that hands it to one: kept apart from the route
 * table so that the handlers and the server import it without importing each other.
 */
import type { Answer } from "./http.js";
import type { Shapes } from "./shapes.js";
import type { Forge, Repo } from "./store.js";

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
