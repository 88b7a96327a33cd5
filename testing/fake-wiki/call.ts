/**
 * One request as the fake wiki's handlers see it: kept apart from the router so that the handlers, the router
 * and the hostile listings import it without importing each other.
 */
import type { Shapes } from "./shapes.js";
import type { WikiStore } from "./store.js";

export interface Call {
  readonly method: string;
  readonly url: URL;
  /** The request body (utf8). */
  readonly text: string;
  readonly contentType: string | undefined;
  readonly store: WikiStore;
  readonly shapes: Shapes;
}
