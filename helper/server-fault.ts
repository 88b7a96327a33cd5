/**
 * When a git command that met a server fault (core/http.ts `isServerFault`: no answer, a 5xx, an answer
 * cut off, too slow or not JSON, a listing that did not end in its time, a Retry-After longer than svc
 * waits) is worth running again: the first half of a message's last part, `<when>, run: <command>`.
 */
import { SvcError } from "../core/errors.js";
import { BackendUnreachableError, RetryLaterError } from "../core/http.js";

export function whenAgain(error: unknown): string {
  if (error instanceof RetryLaterError) return error.after;
  if (error instanceof BackendUnreachableError) {
    return /^(ENOTFOUND|EAI_)/.test(String(error.data.code ?? ""))
      ? "once the host name resolves (or the remote URL is corrected)"
      : "when the server is back";
  }
  // A backend's own words around a fault ("created issue TEST-4, then …"): the fault decides.
  if (error instanceof SvcError && error.cause instanceof SvcError) return whenAgain(error.cause);
  return "when the server works again";
}
