/**
 * Jira's error bodies (its `ErrorCollection`: `errorMessages` and `errors` by field) as one line for a
 * message: each text cut to 300 characters, at most 20 of them; a body that is not one, as an excerpt.
 */
import { isObject } from "../../core/checks.js";
import { excerpt } from "../../core/errors.js";

/** The tracker's own words from an error body: `errorMessages`, then `errors` as `field: message`. */
export function errorCollectionText(body: Buffer): string {
  return trackerErrorText(body) ?? excerpt(body.toString("utf8"), 300);
}

/** The tracker's own words from an error body, or undefined when it is no `ErrorCollection` that has some. */
export function trackerErrorText(body: Buffer): string | undefined {
  try {
    const value: unknown = JSON.parse(body.toString("utf8"));
    if (isObject(value)) {
      const parts: string[] = [];
      if (Array.isArray(value.errorMessages))
        for (const message of value.errorMessages)
          if (typeof message === "string") parts.push(excerpt(message, 300));
      if (isObject(value.errors))
        for (const [name, message] of Object.entries(value.errors))
          if (typeof message === "string")
            parts.push(
              `${/^[\w.:-]{1,60}$/.test(name) ? name : excerpt(name, 60)}: ${excerpt(message, 300)}`,
            );
      if (parts.length > 0) return parts.slice(0, 20).join("; ");
    }
  } catch {
    // Not JSON: no words of the tracker's.
  }
  return undefined;
}
