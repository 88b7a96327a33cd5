/**
 * The answer of `POST /rest/api/3/search/approximate-count` (operationId `countIssues`): a
 * `JQLCountResultsBean`, `{"count": <int64>}` and nothing else (`additionalProperties: false`). The count is
 * an estimate: "Recent updates might not be immediately visible in the returned output" (the vendor's
 * description), which cache/sync.ts allows for.
 */
import { isObject } from "../../core/checks.js";

/** The count the answer holds, or what is wrong with it (for a message: "answered <reason>"). */
export function approximateCount(value: unknown): number | string {
  if (!isObject(value)) return "with a body that is not a JSON object";
  const count = value.count;
  if (count === undefined) return "without a count";
  if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 0)
    return `with a count that is not a whole number of issues: ${JSON.stringify(count).slice(0, 40)}`;
  return count;
}
