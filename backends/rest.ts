/**
 * The REST plumbing every HTTP backend shares (issue 32 §3): one request through core/http.ts's client, one
 * reading of a JSON answer, one wording of a refusal, one place where a vendor's rate limit is waited out,
 * and one compare-before-write for the backends whose API has no `If-Match`.
 *
 * The server-fault rules (helper/server-fault.ts decides the "run it again" advice from them): an answer
 * the caller expected (a 2xx) whose body is not JSON, or is JSON of another shape than the vendor's
 * description says, is the server's fault, not the user's, so its error carries the answer's status
 * (core/http.ts `isServerFault`: an unexpected 2xx is one). A backend adds only what is its own: its auth
 * header, the words of its 401, and a small extractor of its vendor's error text.
 *
 * Rate limits: the HTTP client's per-origin gate is the one place a wait is held (every request of the
 * process to that origin waits at it, with progress shown); a vendor whose limit is told by other headers
 * than `Retry-After` (the forge's `x-ratelimit-reset`) gives a `RateLimits` that reads them, and this layer
 * closes the gate until then, or refuses with the vendor's own error when the wait would be too long.
 */
import { isObject } from "../core/checks.js";
import { excerpt, SvcError } from "../core/errors.js";
import {
  closeGateUntil,
  type HttpClient,
  type HttpResponse,
  NotJsonError,
  openGateAt,
} from "../core/http.js";
import type { BackendRecord, BaseToken } from "./backend.js";

/** What an answer says about a vendor's rate limit, beyond the `Retry-After` the HTTP client reads itself. */
export type LimitAnswer =
  | { readonly kind: "none" }
  /** The quota is used up until `resetMs` (an instant). */
  | { readonly kind: "primary"; readonly resetMs: number }
  /** Too many requests at once: wait `waitMs`. */
  | { readonly kind: "secondary"; readonly waitMs: number };

/** A vendor's rate-limit rules: how to read an answer, how long svc waits, and its errors when it will not. */
export interface RateLimits {
  /** The instant (ms) before which the quota is known to be at zero, from any answer; undefined if it is not. */
  readonly exhaustedUntil: (response: HttpResponse) => number | undefined;
  /** What a refusal says about limits (`none`: a refusal of another kind). */
  readonly limitOf: (response: HttpResponse) => LimitAnswer;
  /** The longest wait for a reset; a reset further ahead throws `exhausted`. */
  readonly maxResetWaitMs: number;
  /** How many limited answers in a row are waited out before `notReset` or `tooBusy` is thrown. */
  readonly maxWaits: number;
  readonly exhausted: (resetMs: number) => SvcError;
  /** The quota still said to be at zero after each reset it named: `tries` answers. */
  readonly notReset: (tries: number) => SvcError;
  /** Still too many requests at once after `waits` waits. */
  readonly tooBusy: (waits: number) => SvcError;
}

export interface RestOptions {
  readonly http: HttpClient;
  /** `forge repository acme/widgets at https://…`: the start of a message about an answer. */
  readonly description: string;
  /** Sent with every request (auth, accept, API version). */
  readonly headers: Readonly<Record<string, string>>;
  /** The vendor's own words from an error body, or undefined when it holds none (then an excerpt is shown). */
  readonly errorText: (body: Buffer) => string | undefined;
  /** The error for a 401, which no request of the process will get past. */
  readonly unauthorized: (response: HttpResponse) => SvcError;
  readonly limits?: RateLimits;
}

/** An answer, with the request it answers (method, and the URL's path without its query) for messages. */
export interface RestResponse extends HttpResponse {
  readonly method: string;
  readonly path: string;
}

/** A check that JSON is of a vendor's shape: the reason it is not, or undefined. */
export type ShapeCheck = (value: unknown) => string | undefined;

/** The shape every answer of an object type has before its members are read (they may all be optional). */
export const AN_OBJECT: ShapeCheck = (value) =>
  isObject(value)
    ? undefined
    : `${Array.isArray(value) ? "a list" : JSON.stringify(value)?.slice(0, 20)}, not an object`;

/**
 * The server answered what the caller expected with JSON of another shape than the vendor describes (no
 * list of issues, an issue without a key): a server fault with the answer's status, so the command that
 * met it is run again rather than the user's files changed.
 */
export class UnexpectedShapeError extends SvcError {
  /** `message` says which answer and what was wrong with it. */
  constructor(message: string, status: number) {
    super("SVC_BACKEND", message, { data: { status } });
  }
}

/**
 * The headers of every request of the tracker and the wiki: HTTP Basic authentication, as Atlassian's API
 * tokens take it (the account's email and the token), and JSON answers.
 */
export function basicJsonHeaders(email: string, apiToken: string): Readonly<Record<string, string>> {
  return {
    authorization: `Basic ${Buffer.from(`${email}:${apiToken}`).toString("base64")}`,
    accept: "application/json",
  };
}

export class RestClient {
  constructor(private readonly options: RestOptions) {}

  /**
   * One request, its JSON `body` (if any) sent as such, with the vendor's rate limits waited out; a 401
   * throws. Any other answer is returned for the backend to read.
   */
  async call(
    method: string,
    url: string,
    body?: unknown,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<RestResponse> {
    const limits = this.options.limits;
    const { origin, pathname: path } = new URL(url);
    for (let waits = 0; ; waits++) {
      if (limits) {
        // The gate may hold a reset an earlier answer named: further ahead than svc waits is refused here,
        // in the vendor's words, before the HTTP client refuses it in general ones.
        const until = openGateAt(origin);
        if (until - Date.now() > limits.maxResetWaitMs) throw limits.exhausted(until);
      }
      const response = await this.options.http.request({
        method,
        url,
        headers: {
          ...this.options.headers,
          ...headers,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (limits) {
        const resetMs = limits.exhaustedUntil(response);
        // The reset is in whole seconds of the server's clock: a second more so the first request is not
        // early, within the longest wait; one further ahead is kept as named, and refused above.
        if (resetMs !== undefined)
          closeGateUntil(
            origin,
            resetMs - Date.now() > limits.maxResetWaitMs
              ? resetMs
              : Math.min(resetMs + 1000, Date.now() + limits.maxResetWaitMs),
          );
        const limit = limits.limitOf(response);
        if (limit.kind === "primary") {
          // Each round waits (at the gate) for the reset the answer named; one that names a past reset
          // again and again would be asked at once, forever.
          if (waits >= limits.maxWaits) throw limits.notReset(waits + 1);
          continue;
        }
        if (limit.kind === "secondary") {
          if (waits >= limits.maxWaits) throw limits.tooBusy(waits);
          closeGateUntil(origin, Date.now() + limit.waitMs);
          continue;
        }
      }
      if (response.status === 401) throw this.options.unauthorized(response);
      return { ...response, method, path };
    }
  }

  /**
   * The JSON of an answer the caller expected. Not JSON, or (with `check`) JSON of another shape, is a
   * server fault carrying the status. `what` says what was asked (`listing the issues of acme/widgets`).
   */
  parse<T>(what: string, response: RestResponse, check?: ShapeCheck): T {
    let value: unknown;
    try {
      value = JSON.parse(response.body.toString("utf8"));
    } catch {
      // A server fault, as the sim and the wiki say it: the message names when to run the command again.
      throw new NotJsonError(`${this.options.description}: ${what}`, response.status, response.body);
    }
    const reason = check?.(value);
    if (reason !== undefined)
      throw new UnexpectedShapeError(
        `${this.options.description}: ${what} answered ${response.status} with ${reason}; nothing was written`,
        response.status,
      );
    return value as T;
  }

  /** The error for an answer the caller did not expect: what, the request, the status and the vendor's words. */
  failure(what: string, response: RestResponse): SvcError {
    const text = this.options.errorText(response.body) ?? excerpt(response.body.toString("utf8"), 300);
    return new SvcError(
      "SVC_BACKEND",
      `${this.options.description}: ${what} (${response.method} ${response.path}) answered ${response.status}: ${text}`,
      { data: { status: response.status } },
    );
  }
}

/** What a write that cannot send `If-Match` finds when it reads the record first. */
export type ReadForWrite<T> =
  | { readonly kind: "gone" }
  | { readonly kind: "conflict"; readonly current: string }
  | { readonly kind: "current"; readonly value: T };

/**
 * Compare-before-write, for APIs with no `If-Match` (the forge, the tracker; their comments too): the record is read
 * immediately before the write, and a write only goes ahead on the version the push was based on. Gone →
 * the caller's gone handling; an `updatedAt` other than the base's → a conflict (`fetch first`), unless
 * `holds` says the record is already as the write would leave it: a write whose answer was lost (a server
 * fault after the server acted) is then done, not a conflict with itself when the push is run again. A
 * write landing between this read and the write cannot be detected; the window is one round trip.
 */
export async function readForWrite<T extends { readonly record: Pick<BackendRecord, "updatedAt"> }>(
  read: () => Promise<T | undefined>,
  base: BaseToken,
  holds?: (current: T) => boolean,
): Promise<ReadForWrite<T>> {
  const current = await read();
  if (!current) return { kind: "gone" };
  if (current.record.updatedAt !== base.updatedAt && !holds?.(current))
    return { kind: "conflict", current: `updated ${current.record.updatedAt}` };
  return { kind: "current", value: current };
}
