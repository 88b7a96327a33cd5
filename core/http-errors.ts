/**
 * The errors of the one HTTP client (core/http.ts), and the readings of an answer's headers they rest on:
 * what failed (a status, no answer, a redirect, an answer too large or not JSON, a server asking for a wait
 * longer than svc makes) and `isServerFault`, which tells the failures worth running again from the ones the
 * user must fix.
 */
import { AHEAD, formatDuration } from "./duration.js";
import { excerpt, SvcError, UserFacingError } from "./errors.js";
import { ListingTimeoutError } from "./pagination.js";
import { parseRemoteUrl } from "./remote-url.js";

export const TIMEOUT_SETTING = "SVC_HTTP_TIMEOUT_MS";
export const MAX_RESPONSE_SETTING = "SVC_HTTP_MAX_RESPONSE_MIB";
/** The most `SVC_HTTP_MAX_RESPONSE_MIB` may say. */
export const MAX_RESPONSE_MIB = 1024;

/** A URL as messages show it: origin and path, never the query (tokens may travel there). */
export function redact(url: URL): string {
  return `${url.origin}${url.pathname}`;
}
/** An HTTP answer that was not what the caller wanted: status, method, URL (without query) and a quoted body excerpt. */
export class HttpError extends SvcError {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly url: string,
    readonly body: string,
  ) {
    // The body is the server's text: quoted as a JSON string, on one line, so it reads as data and not as
    // svc's own words (a line "run: …" in it must not pass for advice).
    super("SVC_BACKEND", `${method} ${url} answered ${status}: ${excerpt(body, 300)}`, {
      data: { status, method, url },
    });
  }
}

/** Network failures before the request reached anything that could act on it: nothing was sent. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EAI_FAIL",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * How a request ended without a whole answer: a network failure's code, the timeout that ended the
 * exchange (with `slow`, the bytes of the body that came in it, once the status line had come), or
 * (`cutOff`) the connection closed after the status line, with the bytes of the body read and those
 * `content-length` announced.
 */
interface Unreachable {
  readonly code?: string;
  readonly timeoutMs?: number;
  readonly slow?: { readonly received: number };
  readonly cutOff?: { readonly received: number; readonly announced: number | undefined };
}

/** What a network failure means for the user, by its code (or the timeout that ended the exchange). */
function unreachableReason(url: URL, failure: Unreachable): string {
  const { code, timeoutMs, slow, cutOff } = failure;
  if (timeoutMs !== undefined) {
    const what =
      slow === undefined
        ? `no answer within ${timeoutMs} ms`
        : `the answer came too slowly: ${slow.received} bytes of its body in ${timeoutMs} ms`;
    return `${what} (${TIMEOUT_SETTING}); is ${url.origin} overloaded or stuck?`;
  }
  if (cutOff !== undefined) {
    const of = cutOff.announced === undefined ? "" : ` of the ${cutOff.announced} it announced`;
    return `${url.origin} closed the connection in the middle of its answer (${code ?? "closed"}, after ${cutOff.received} bytes${of})`;
  }
  switch (code) {
    case "ECONNREFUSED":
      return `nothing is listening at ${url.origin} (ECONNREFUSED); is the server running?`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
    case "EAI_FAIL":
      return `the host name ${url.hostname} does not resolve (${code}); check the URL`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `no route to ${url.hostname} (${code}); check the network`;
    case "ECONNRESET":
    case "EPIPE":
      return `${url.origin} closed the connection before it answered (${code})`;
    default:
      return `${code ?? "no answer"}`;
  }
}

/**
 * A request that got no HTTP answer: refused, a host name that does not resolve, a timeout, a connection
 * closed. `sent` is false when the request cannot have reached the server (nothing was written by it).
 */
export class BackendUnreachableError extends UserFacingError {
  readonly sent: boolean;

  constructor(method: string, url: URL, failure: Unreachable, cause?: unknown) {
    super(
      "SVC_BACKEND",
      `cannot reach the backend: ${method} ${redact(url)} failed: ${unreachableReason(url, failure)}`,
      { cause, data: { url: redact(url), code: failure.code } },
    );
    this.sent = failure.timeoutMs !== undefined || !NOT_SENT.has(failure.code ?? "");
  }
}

/**
 * A 3xx answer. Redirects are never followed: a redirect could send the request, and its credentials, to
 * another origin. When the Location is the same resource at another origin and that origin makes a svc
 * remote URL, the message names the URL to use (`remoteUrl`).
 */
export class RedirectError extends UserFacingError {
  readonly remoteUrl: string | undefined;

  constructor(url: URL, status: number, location: string | undefined) {
    const target = location === undefined ? undefined : resolveLocation(url, location);
    const named =
      target === undefined
        ? `answered ${status} without a usable Location`
        : `answered ${status} with Location ${redact(target)}${target.search === "" ? "" : "?…"}`;
    const remoteUrl = target && movedRemoteUrl(url, target);
    super(
      "SVC_BACKEND",
      `${url.origin} ${named}; svc never follows redirects (a redirect could send your credentials elsewhere)` +
        (remoteUrl ? RedirectError.advice(remoteUrl, "origin") : ""),
      { data: { status, origin: url.origin, location: target && redact(target), remoteUrl } },
    );
    this.remoteUrl = remoteUrl;
  }

  /** The message's last part, for a remote of another name than `origin`. */
  static advice(remoteUrl: string, remote: string): string {
    return `: if the new address is right, use it in the remote URL: git remote set-url ${remote} ${remoteUrl}`;
  }
}

function resolveLocation(url: URL, location: string): URL | undefined {
  try {
    return new URL(location, url);
  } catch {
    return undefined;
  }
}

/**
 * The svc remote URL of the project a redirect moved: only when the Location is the requested path (and
 * query) at another origin, the path names `…/projects/<project>` and the result parses as a remote URL.
 */
function movedRemoteUrl(url: URL, target: URL): string | undefined {
  if (target.origin === url.origin || target.pathname !== url.pathname || target.search !== url.search)
    return undefined;
  const project = /^(.*?\/projects\/[^/]+)(?:\/|$)/.exec(target.pathname)?.[1];
  if (!project) return undefined;
  const candidate = `svc::${target.origin}${project}`;
  try {
    parseRemoteUrl(candidate);
    return candidate;
  } catch {
    return undefined;
  }
}

export const MIB = 1024 * 1024;

function size(bytes: number): string {
  return bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`;
}

/**
 * A response over the byte cap, refused as soon as its `content-length` says so or, without one, as soon as
 * the bytes read pass the cap (the connection is closed then: a hostile server cannot make svc hold more).
 */
export class ResponseTooLargeError extends UserFacingError {
  /**
   * `announced`: the `content-length`, when it gave the answer away. `adjustable`: the cap follows
   * `SVC_HTTP_MAX_RESPONSE_MIB` (the caller did not fix it), so the message may say to raise it.
   */
  constructor(url: URL, method: string, cap: number, options: { announced?: number; adjustable: boolean }) {
    const request = `${method} ${url.pathname}`;
    const what =
      options.announced === undefined
        ? `sent more than ${size(cap)} in answer to ${request}, the most svc accepts in one response; ` +
          "svc closed the connection and kept none of it"
        : `announced ${options.announced} bytes (content-length) in answer to ${request}, more than the ` +
          `${size(cap)} svc accepts in one response; svc closed the connection without reading it`;
    const next =
      options.adjustable && cap < MAX_RESPONSE_MIB * MIB
        ? `If answers this large are expected, run the command again with e.g. ${MAX_RESPONSE_SETTING}=` +
          `${Math.min(Math.ceil(cap / MIB) * 2, MAX_RESPONSE_MIB)}; if not, report it to the admins of ${url.origin}`
        : `Report it to the admins of ${url.origin}`;
    super("SVC_BACKEND", `the server at ${url.origin} ${what}. ${next}`, {
      data: { origin: url.origin, method, path: url.pathname, cap, announced: options.announced },
    });
  }
}

/**
 * The longest a request goes on with its retries (for a server that keeps answering 429 with `Retry-After`):
 * no wait is begun that would end later than this after the request began.
 */
export const MAX_WAIT_S = 600;
/**
 * The longest one `Retry-After` svc waits out (git is held meanwhile); a longer one ends the request with
 * a `RetryLaterError` instead of retrying sooner than the server asked.
 */
export const MAX_RETRY_AFTER_S = 60;

/**
 * The instant (ms) of an HTTP `Date` header, a second early (the header has second precision, so the server's
 * clock may be up to a second later); undefined when absent or unreadable.
 */
export function serverClockFloor(date: string | undefined): number | undefined {
  const ms = date === undefined ? Number.NaN : Date.parse(date);
  return Number.isNaN(ms) ? undefined : ms - 1000;
}

/**
 * Whole seconds from a `Retry-After` header (the delta form); undefined if absent or unreadable (the
 * HTTP-date form is not read). Not capped: a wait longer than svc makes is refused by the caller.
 */
export function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d{1,10}\s*$/.test(value)) return undefined;
  return Number(value);
}

/** `2025-01-06T18:40:05Z (in 60 min)`: an instant for people, to the second, with how far ahead it is. */
export function describeInstant(ms: number, now = Date.now()): string {
  const at = new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
  return `${at} (in ${formatDuration(ms - now, AHEAD)})`;
}

/**
 * The server asked svc to wait longer than it does: a `Retry-After` over `MAX_RETRY_AFTER_S` on a 429 or a
 * 503, one past `MAX_WAIT_S` in all (`waitedS`: how long this request has taken already), or a rate-limit
 * gate closed that long. The request is not sent (again), and git is not held for minutes. `untilMs` is when
 * the server said to come back; callers add what was written and the command.
 */
export class RetryLaterError extends UserFacingError {
  readonly untilMs: number;

  constructor(
    url: URL,
    untilMs: number,
    asked: { status: number; seconds: number } | undefined,
    waitedS?: number,
  ) {
    const why =
      asked === undefined
        ? "(an earlier answer's Retry-After)"
        : `(${asked.status} with Retry-After: ${asked.seconds})`;
    const most =
      waitedS === undefined
        ? `svc waits at most ${MAX_RETRY_AFTER_S} s for a server`
        : `svc waits at most ${MAX_WAIT_S} s in all for a server, and waited ${waitedS} s already`;
    super(
      "SVC_BACKEND",
      `the server at ${url.origin} asked svc to send no request before ${describeInstant(untilMs)} ${why}; ` +
        `${most}, so it stopped here`,
      {
        data: {
          origin: url.origin,
          status: asked?.status ?? 429,
          until: new Date(untilMs).toISOString(),
        },
      },
    );
    this.untilMs = untilMs;
  }

  /** `after 2025-01-06T18:40:05Z`, for a message's next step. */
  get after(): string {
    return `after ${new Date(this.untilMs).toISOString().replace(/\.\d+Z$/, "Z")}`;
  }
}

/**
 * An answer whose body is not the JSON the API sends: an HTML page of a proxy or a sign-in portal between
 * svc and the server, or a broken server. `request` names the server and the request (`<backend's
 * description>: listing issues`, or `GET <url>`).
 */
export class NotJsonError extends SvcError {
  constructor(request: string, status: number, body: Buffer) {
    super(
      "SVC_BACKEND",
      `${request} answered ${status} with a body that is not JSON: ${excerpt(body.toString("utf8"), 80)} ` +
        "(a proxy or sign-in page between svc and the server may have answered in its place)",
      { data: { status } },
    );
  }
}

/**
 * A failure that the same request may not meet later, and that nothing the user changes would fix: no
 * answer (refused, timed out, too slow, cut off), a listing that did not end in its time, a 5xx, a 408 or
 * 429, an unexpected 2xx or one that is not JSON, a Retry-After longer than svc waits. Callers print the
 * command to run again for these.
 */
export function isServerFault(error: unknown): boolean {
  if (
    error instanceof BackendUnreachableError ||
    error instanceof ListingTimeoutError ||
    error instanceof RetryLaterError ||
    error instanceof NotJsonError
  )
    return true;
  // A 2xx its caller did not expect is not the API's answer either (the simulator creates with a 201).
  const status = error instanceof SvcError ? error.data.status : undefined;
  if (typeof status === "number")
    return (status >= 200 && status < 300) || status >= 500 || status === 408 || status === 429;
  // A backend's own words around a fault ("created issue TEST-4, then …") keep it a fault.
  return error instanceof SvcError && error.cause instanceof SvcError && isServerFault(error.cause);
}
