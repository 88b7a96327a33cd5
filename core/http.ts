/**
 * The one HTTP client (DESIGN.md §6; STYLE.md rule 6). Every request, pagination URLs included, is checked
 * against the egress allowlist `SVC_ALLOWED_ORIGINS` (core/allowlist.ts) before it is sent; redirects are never followed; every
 * request ends within `SVC_HTTP_TIMEOUT_MS` of its start, answer and all (a deadline, not an idle timer);
 * 429 answers are retried after a `Retry-After` of up to a minute, and a longer one (on a 429 or a 503) ends
 * the request at once with the time the server named. Error messages never carry request headers
 * (credentials live there).
 */
import {
  type ClientRequest,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import { createRequire } from "node:module";
import {
  DEFAULT_ALLOWED_ORIGINS,
  EgressDeniedError,
  isOriginAllowed,
  type OriginPattern,
  parseAllowlist,
} from "./allowlist.js";
import { type BackoffPolicy, backoffMs } from "./backoff.js";
import { excerpt, SvcError, UserFacingError } from "./errors.js";
import { ListingTimeoutError } from "./pagination.js";
import { progress } from "./progress.js";
import { parseRemoteUrl } from "./remote-url.js";
import { readCount, readDurationMs } from "./settings.js";

/** node:https (and with it TLS) is loaded on the first https request: the simulator's loopback needs none. */
let httpsModule: typeof import("node:https") | undefined;
function httpsRequest(): typeof import("node:https").request {
  httpsModule ??= createRequire(import.meta.url)("node:https") as typeof import("node:https");
  return httpsModule.request;
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

const MIB = 1024 * 1024;

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

export interface HttpResponse {
  readonly status: number;
  /** Response headers by lower-case name; repeated headers joined with `, ` (node:http's rule). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /**
   * With `stream`, a 2xx answer's body as it arrives (`body` is then empty). Read it to its end or stop
   * early (the exchange is then cut off); a failure on the way (cut off, too slow) is thrown from the
   * iteration as a `BackendUnreachableError`. How long it may take: `HttpClient.once`.
   */
  readonly chunks?: AsyncIterable<Buffer>;
}

export interface HttpRequest {
  readonly method: string;
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** The most this request may take, answer and all, in place of the client's (`SVC_HTTP_TIMEOUT_MS`). */
  readonly timeoutMs?: number;
  /** This request's cap on the response body, in place of the client's (a listing that cannot page). */
  readonly maxResponseBytes?: number;
  /** Aborting ends the exchange at once (a long poll on shutdown); the promise rejects with the abort reason. */
  readonly signal?: AbortSignal;
  /**
   * A 2xx answer's body is not collected but handed out as it arrives (`HttpResponse.chunks`), for an
   * answer larger than any response cap (an unpaginated listing): the caller bounds what it keeps. Other
   * answers are read whole, under the cap.
   */
  readonly stream?: boolean;
}

export interface HttpClientOptions {
  /** The allowlist text; `SVC_ALLOWED_ORIGINS` or the default. */
  readonly allowedOrigins?: string;
  /** `X-Svc-Agent` sent with every request. */
  readonly agent: string;
  /** The most one request may take, answer and all: default `SVC_HTTP_TIMEOUT_MS`, else 30 s. */
  readonly timeoutMs?: number;
  /** The largest response body accepted; default `SVC_HTTP_MAX_RESPONSE_MIB` MiB, else 32 MiB. */
  readonly maxResponseBytes?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const MAX_ATTEMPTS = 4;
/** A 429 without Retry-After waits 500–749 ms, then 1000–1249, then 2000–2249 (base·2^n plus < 250 ms). */
const RETRY_BACKOFF: BackoffPolicy = { baseMs: 250, jitter: { kind: "add", maxMs: 250 } };
const TIMEOUT_SETTING = "SVC_HTTP_TIMEOUT_MS";
const MAX_RESPONSE_SETTING = "SVC_HTTP_MAX_RESPONSE_MIB";
/** A few tens of MiB: a page of any listing fits, and a hostile server cannot make svc hold a gigabyte. */
const DEFAULT_MAX_RESPONSE_MIB = 32;
/** The most `SVC_HTTP_MAX_RESPONSE_MIB` may say. */
const MAX_RESPONSE_MIB = 1024;
/** node's timers take at most 2^31 - 1 ms; a larger value would fire after 1 ms. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/**
 * The longest a request goes on with its retries (for a server that keeps answering 429 with `Retry-After`):
 * no wait is begun that would end later than this after the request began.
 */
const MAX_WAIT_S = 600;
/**
 * The longest one `Retry-After` svc waits out (git is held meanwhile); a longer one ends the request with
 * a `RetryLaterError` instead of retrying sooner than the server asked.
 */
const MAX_RETRY_AFTER_S = 60;

/** origin → the instant (ms) before which no request may be sent to it. */
const gates = new Map<string, number>();

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
  const seconds = Math.max(0, Math.round((ms - now) / 1000));
  const minutes = Math.round(seconds / 60);
  const ahead =
    seconds < 120
      ? `${seconds} s`
      : minutes < 120
        ? `${minutes} min`
        : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${at} (in ${ahead})`;
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

function armGate(origin: string, seconds: number): void {
  closeGateUntil(origin, Date.now() + seconds * 1000);
}

/**
 * Holds every request of the process to `origin` until `untilMs` (never opening it earlier): for a limit a
 * vendor tells by other headers than `Retry-After` (backends/rest.ts `RateLimits`). A request meeting the
 * closed gate waits there, or is refused as a `RetryLaterError` when it is over `MAX_RETRY_AFTER_S` ahead.
 */
export function closeGateUntil(origin: string, untilMs: number): void {
  if (untilMs > (gates.get(origin) ?? 0)) gates.set(origin, untilMs);
}

/** The instant (ms) `origin`'s gate opens; in the past when it is open. */
export function openGateAt(origin: string): number {
  return gates.get(origin) ?? 0;
}

/**
 * Waits until `origin`'s gate opens. An aborted request stops waiting at once (a sleep that returns early
 * on abort, as the listener's does, would otherwise spin here until the gate opened).
 */
async function waitForGate(
  origin: string,
  sleep: (ms: number) => Promise<void>,
  signal: AbortSignal | undefined,
): Promise<void> {
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    const wait = (gates.get(origin) ?? 0) - Date.now();
    if (wait <= 0) return;
    await sleep(wait);
  }
}

/**
 * Response headers by lower-case name; repeated ones joined with `, `. Not the global `Headers`: like
 * `fetch`, it loads undici's internals on first use (~30 ms).
 */
function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === "string") flat[name] = value;
    else if (Array.isArray(value)) flat[name] = value.join(", ");
  }
  return flat;
}

/** What `once` hears of a streamed body as the caller reads it. */
interface StreamHooks {
  /** A chunk of `bytes` arrived. */
  readonly counted: (bytes: number) => void;
  /** The caller holds a chunk (`true`) or asks for the next (`false`). */
  readonly holding: (held: boolean) => void;
  /** The body ended, read whole, stopped early or failed; called once. */
  readonly ended: () => void;
  /** The error to throw for a failure, with the bytes received so far. */
  readonly failure: (error: unknown, received: number) => unknown;
}

/**
 * The body of a streamed answer, chunk by chunk as the caller reads (the socket is paused meanwhile). A
 * failure is thrown as `hooks.failure` makes it. Stopping early destroys the exchange.
 */
async function* streamedBody(
  res: IncomingMessage,
  req: ClientRequest,
  hooks: StreamHooks,
): AsyncGenerator<Buffer> {
  let received = 0;
  let finished = false;
  try {
    for await (const chunk of res) {
      received += (chunk as Buffer).length;
      hooks.counted((chunk as Buffer).length);
      hooks.holding(true);
      yield chunk as Buffer;
      hooks.holding(false);
    }
    // A body shorter than its content-length, or a connection closed before the last chunk of a chunked one.
    if (!res.complete) throw new Error("ECONNRESET");
    finished = true;
  } catch (error) {
    throw hooks.failure(error, received);
  } finally {
    hooks.ended();
    if (!finished) req.destroy();
  }
}

/**
 * The time an exchange may still take: `ms` of running time, then `expired` runs (once). It runs from
 * `run` to `stop`, and `renew` gives it the whole `ms` again. A stopped deadline holds no timer, so it
 * never keeps the process alive.
 */
class ExchangeDeadline {
  private left: number;
  private since = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly expired: () => void,
  ) {
    this.left = ms;
  }

  run(): void {
    if (this.timer !== undefined) return;
    this.since = Date.now();
    // Spent already (the time ran out while stopped): expire at once, without node's negative-timeout warning.
    this.timer = setTimeout(this.expired, Math.max(this.left, 0));
  }

  stop(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= Date.now() - this.since;
  }

  renew(): void {
    const running = this.timer !== undefined;
    this.stop();
    this.left = this.ms;
    if (running) this.run();
  }
}

function redact(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

export class HttpClient {
  private readonly patterns: OriginPattern[];
  private readonly timeoutMs: number;
  /** The cap on one response body, unless a request brings its own. */
  readonly maxResponseBytes: number;
  private readonly sleep: (ms: number) => Promise<void>;

  /** Throws a `SettingError` for a bad `SVC_HTTP_TIMEOUT_MS` or `SVC_HTTP_MAX_RESPONSE_MIB`. */
  constructor(private readonly options: HttpClientOptions) {
    this.patterns = parseAllowlist(
      options.allowedOrigins ?? process.env.SVC_ALLOWED_ORIGINS ?? DEFAULT_ALLOWED_ORIGINS,
    );
    this.timeoutMs =
      options.timeoutMs ??
      readDurationMs(TIMEOUT_SETTING, process.env[TIMEOUT_SETTING], {
        unit: "ms",
        fallbackMs: 30_000,
        minMs: 1,
        maxMs: MAX_TIMEOUT_MS,
      });
    this.maxResponseBytes =
      options.maxResponseBytes ??
      MIB *
        readCount(MAX_RESPONSE_SETTING, process.env[MAX_RESPONSE_SETTING], {
          fallback: DEFAULT_MAX_RESPONSE_MIB,
          min: 1,
          max: MAX_RESPONSE_MIB,
        });
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Throws EgressDeniedError unless `url`'s origin is allowlisted. */
  checkEgress(url: string): URL {
    const parsed = new URL(url);
    if (!isOriginAllowed(parsed, this.patterns)) throw new EgressDeniedError(parsed);
    return parsed;
  }

  /**
   * Sends the request, waiting out what the server asks (a 429's `Retry-After`, a rate-limit gate) or
   * backing off. Each attempt is one exchange, bounded by the timeout (`once`). Their number is bounded
   * too: no wait (a `Retry-After`, a backoff, an origin's closed gate) is begun that would end more than
   * MAX_WAIT_S after the request began, and after 429s without a usable `Retry-After` there are at most
   * MAX_ATTEMPTS attempts. So a request with its retries ends within MAX_WAIT_S plus one attempt's timeout.
   */
  async request(request: HttpRequest): Promise<HttpResponse> {
    const url = this.checkEgress(request.url);
    const began = Date.now();
    const waitedS = () => Math.round((Date.now() - began) / 1000);
    let backoffs = 0;
    for (;;) {
      const gate = (gates.get(url.origin) ?? 0) - Date.now();
      if (gate > MAX_RETRY_AFTER_S * 1000) throw new RetryLaterError(url, Date.now() + gate, undefined);
      if (gate > 0) {
        if (Date.now() + gate - began > MAX_WAIT_S * 1000)
          throw new RetryLaterError(url, Date.now() + gate, undefined, waitedS());
        progress().waitFor(url.origin, gate);
        await waitForGate(url.origin, this.sleep, request.signal);
        progress().waitFor(undefined);
      }
      const response = await this.once(url, request);
      const retryAfter = parseRetryAfter(response.headers["retry-after"]);
      // The gate is shared by every request to the origin: one 429 (or a quota at zero) holds them all.
      const limited = response.status === 429 || response.status === 503;
      if (limited && retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_S) {
        armGate(url.origin, retryAfter);
        throw new RetryLaterError(url, Date.now() + retryAfter * 1000, {
          status: response.status,
          seconds: retryAfter,
        });
      }
      if (response.status === 429 && retryAfter !== undefined) armGate(url.origin, retryAfter);
      else if (response.headers["x-ratelimit-remaining"] === "0") armGate(url.origin, retryAfter ?? 1);
      if (response.status >= 300 && response.status < 400 && response.status !== 304)
        throw new RedirectError(url, response.status, response.headers.location);
      if (response.status !== 429) return response;
      // The server says when: keep waiting (at the gate) as long as it keeps saying so, up to MAX_WAIT_S in
      // all. A `Retry-After: 0` says no time: it is backed off from like a 429 without one, so a server that
      // keeps saying it is not asked again as fast as it answers.
      if (retryAfter !== undefined && retryAfter > 0) {
        if (Date.now() + retryAfter * 1000 - began > MAX_WAIT_S * 1000) {
          throw new RetryLaterError(
            url,
            Date.now() + retryAfter * 1000,
            { status: 429, seconds: retryAfter },
            waitedS(),
          );
        }
        continue;
      }
      // No header says when: exponential backoff with jitter, at most MAX_ATTEMPTS attempts in all.
      const backoff = backoffMs(backoffs + 1, RETRY_BACKOFF);
      if (++backoffs >= MAX_ATTEMPTS || Date.now() + backoff - began > MAX_WAIT_S * 1000) return response;
      progress().waitFor(url.origin, backoff);
      await this.sleep(backoff);
      progress().waitFor(undefined);
    }
  }

  /**
   * One exchange over node:http(s). Not the global `fetch`: its first use loads undici's internals (~40 ms),
   * and the helper starts once per git fetch. node:http never follows redirects. The promise settles once:
   * the first failure wins, and the socket is destroyed with it.
   *
   * The timeout is a deadline from the start of the exchange to the end of the answer (connect, status line,
   * headers, body), not an idle timer: a server that drips its answer a byte at a time is held to it too
   * (with an idle timer, one byte every 100 ms kept a request going for as long as the server liked). A
   * streamed answer may be longer than any response cap (the simulator's issue listing, one answer of any
   * length): it gets the time again for each cap's worth of bytes, as that many answers would, and its
   * clock stops while the caller holds a chunk (its own work, ~6 MB/s into a new cache on a busy machine,
   * is not the server's slowness); its total is its listing's to bound (core/pagination.ts
   * `ListingDeadline`). The timer is cleared however the exchange ends, so it never keeps the process alive.
   */
  private once(url: URL, request: HttpRequest): Promise<HttpResponse> {
    const timeout = request.timeoutMs ?? this.timeoutMs;
    const cap = request.maxResponseBytes ?? this.maxResponseBytes;
    const adjustable = this.options.maxResponseBytes === undefined;
    return new Promise((resolve, reject) => {
      const send = url.protocol === "https:" ? httpsRequest() : httpRequest;
      const body = request.body === undefined ? undefined : Buffer.from(request.body);
      const headers: Record<string, string> = { "x-svc-agent": this.options.agent, ...request.headers };
      if (body) headers["content-length"] = String(body.length);
      let settled = false;
      // The caller's abort reason when it aborted; else the network's failure, by its code.
      const unreachable = (error: NodeJS.ErrnoException) =>
        request.signal?.aborted
          ? request.signal.reason
          : new BackendUnreachableError(request.method, url, { code: error.code ?? error.message }, error);
      // Once a streamed answer is handed out, a failure ends its body instead (`streamed`).
      let streamed: IncomingMessage | undefined;
      // The body's bytes since the clock was (last) given the timeout; `answered` once the status line came.
      let bodyBytes = 0;
      let answered = false;
      const clock = new ExchangeDeadline(timeout, () => {
        const slow = answered ? { received: bodyBytes } : undefined;
        fail(new BackendUnreachableError(request.method, url, { timeoutMs: timeout, slow }));
      });
      const fail = (error: unknown) => {
        clock.stop();
        if (streamed) {
          streamed.destroy(error as Error);
          return;
        }
        if (settled) return;
        settled = true;
        reject(error);
        req.destroy();
      };
      const req = send(
        url,
        { method: request.method, headers, agent: false, signal: request.signal },
        (res) => {
          answered = true;
          const tooLarge = (announced?: number) =>
            fail(new ResponseTooLargeError(url, request.method, cap, { announced, adjustable }));
          const announced = Number(res.headers["content-length"]);
          const status = res.statusCode ?? 0;
          if (request.stream && status >= 200 && status < 300) {
            settled = true;
            streamed = res;
            resolve({
              status,
              headers: flatHeaders(res.headers),
              body: Buffer.alloc(0),
              chunks: streamedBody(res, req, {
                counted: (bytes) => {
                  bodyBytes += bytes;
                  if (bodyBytes < cap) return;
                  bodyBytes = 0;
                  clock.renew();
                },
                holding: (held) => (held ? clock.stop() : clock.run()),
                ended: () => clock.stop(),
                failure: (error, received) =>
                  request.signal?.aborted
                    ? request.signal.reason
                    : error instanceof BackendUnreachableError
                      ? error
                      : new BackendUnreachableError(
                          request.method,
                          url,
                          {
                            code: (error as NodeJS.ErrnoException).code ?? (error as Error).message,
                            cutOff: { received, announced: Number.isNaN(announced) ? undefined : announced },
                          },
                          error,
                        ),
              }),
            });
            return;
          }
          if (announced > cap) return tooLarge(announced);
          const chunks: Buffer[] = [];
          let total = 0;
          res.on("data", (chunk: Buffer) => {
            total += chunk.length;
            bodyBytes += chunk.length;
            if (total > cap) tooLarge();
            else chunks.push(chunk);
          });
          res.on("end", () => {
            clock.stop();
            if (settled) return;
            settled = true;
            resolve({
              status,
              headers: flatHeaders(res.headers),
              body: Buffer.concat(chunks),
            });
          });
          // The status line came, the rest of the answer did not: the server may have acted on the request.
          res.on("error", (error: NodeJS.ErrnoException) =>
            fail(
              request.signal?.aborted
                ? request.signal.reason
                : new BackendUnreachableError(
                    request.method,
                    url,
                    {
                      code: error.code ?? error.message,
                      cutOff: { received: total, announced: Number.isNaN(announced) ? undefined : announced },
                    },
                    error,
                  ),
            ),
          );
        },
      );
      // Listening before anything else can throw: an 'error' event without a listener kills the process.
      req.on("error", (error) => fail(unreachable(error)));
      // node runs a timer of NaN ms, or of more than 2^31 - 1, after 1 ms: a caller's mistake, refused.
      if (!(timeout >= 1 && timeout <= MAX_TIMEOUT_MS))
        return fail(new RangeError(`timeoutMs must be from 1 to ${MAX_TIMEOUT_MS}, not ${timeout}`));
      clock.run();
      req.end(body);
    });
  }

  /** Sends the request and parses a JSON answer with one of `expected` statuses; anything else is an HttpError. */
  async json(
    request: HttpRequest,
    expected: readonly number[] = [200],
  ): Promise<{ status: number; value: unknown }> {
    const response = await this.request(request);
    const url = redact(new URL(request.url));
    const text = response.body.toString("utf8");
    if (!expected.includes(response.status)) throw new HttpError(response.status, request.method, url, text);
    try {
      return { status: response.status, value: text === "" ? null : JSON.parse(text) };
    } catch {
      throw new NotJsonError(`${request.method} ${url}`, response.status, response.body);
    }
  }
}
