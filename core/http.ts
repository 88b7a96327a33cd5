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
import {
  BackendUnreachableError,
  HttpError,
  MAX_RESPONSE_MIB,
  MAX_RESPONSE_SETTING,
  MAX_RETRY_AFTER_S,
  MAX_WAIT_S,
  MIB,
  NotJsonError,
  parseRetryAfter,
  RedirectError,
  ResponseTooLargeError,
  RetryLaterError,
  redact,
  TIMEOUT_SETTING,
} from "./http-errors.js";
import { progress } from "./progress.js";
import { readCount, readDurationMs } from "./settings.js";

// The errors and header readings live in core/http-errors.ts; importers of the client find them here too.
export {
  BackendUnreachableError,
  describeInstant,
  HttpError,
  isServerFault,
  NotJsonError,
  parseRetryAfter,
  RedirectError,
  ResponseTooLargeError,
  RetryLaterError,
  serverClockFloor,
} from "./http-errors.js";

/** node:https (and with it TLS) is loaded on the first https request: the simulator's loopback needs none. */
let httpsModule: typeof import("node:https") | undefined;
function httpsRequest(): typeof import("node:https").request {
  httpsModule ??= createRequire(import.meta.url)("node:https") as typeof import("node:https");
  return httpsModule.request;
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
/** A few tens of MiB: a page of any listing fits, and a hostile server cannot make svc hold a gigabyte. */
const DEFAULT_MAX_RESPONSE_MIB = 32;
/** node's timers take at most 2^31 - 1 ms; a larger value would fire after 1 ms. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/** origin → the instant (ms) before which no request may be sent to it. */
const gates = new Map<string, number>();

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

/** The bounds of one exchange: its deadline (ms), its response cap (bytes), whether a setting can raise the cap. */
interface ExchangeLimits {
  readonly timeout: number;
  readonly cap: number;
  readonly adjustable: boolean;
}

/**
 * One exchange of `HttpClient.once` (whose comment is its contract) while it runs: whether its promise
 * settled, the answer it handed out as a stream, the body's bytes against the deadline; and its steps:
 * send, answer (streamed, or collected under the cap), fail.
 */
class Exchange {
  private settled = false;
  /** Once a streamed answer is handed out, a failure ends its body instead. */
  private streamed: IncomingMessage | undefined;
  /** The body's bytes since the clock was (last) given the timeout; `answered` once the status line came. */
  private bodyBytes = 0;
  private answered = false;
  private readonly clock: ExchangeDeadline;
  private req: ClientRequest | undefined;

  constructor(
    private readonly url: URL,
    private readonly request: HttpRequest,
    private readonly limits: ExchangeLimits,
    private readonly settle: {
      readonly resolve: (response: HttpResponse) => void;
      readonly reject: (error: unknown) => void;
    },
  ) {
    this.clock = new ExchangeDeadline(limits.timeout, () => {
      const slow = this.answered ? { received: this.bodyBytes } : undefined;
      this.fail(new BackendUnreachableError(request.method, url, { timeoutMs: limits.timeout, slow }));
    });
  }

  /** Sends the request; the answer settles the promise (`answer`), a failure or the deadline rejects it. */
  start(send: typeof httpRequest, headers: Record<string, string>, body: Buffer | undefined): void {
    const { url, request, limits } = this;
    this.req = send(url, { method: request.method, headers, agent: false, signal: request.signal }, (res) =>
      this.answer(res),
    );
    // Listening before anything else can throw: an 'error' event without a listener kills the process.
    this.req.on("error", (error) => this.fail(this.unreachable(error)));
    // node runs a timer of NaN ms, or of more than 2^31 - 1, after 1 ms: a caller's mistake, refused.
    if (!(limits.timeout >= 1 && limits.timeout <= MAX_TIMEOUT_MS)) {
      this.fail(new RangeError(`timeoutMs must be from 1 to ${MAX_TIMEOUT_MS}, not ${limits.timeout}`));
      return;
    }
    this.clock.run();
    this.req.end(body);
  }

  /** The first failure wins: it rejects the promise (or ends a streamed body) and destroys the socket. */
  private fail(error: unknown): void {
    this.clock.stop();
    if (this.streamed) {
      this.streamed.destroy(error as Error);
      return;
    }
    if (this.settled) return;
    this.settled = true;
    this.settle.reject(error);
    this.req?.destroy();
  }

  /** The caller's abort reason when it aborted; else the network's failure, by its code. */
  private unreachable(error: NodeJS.ErrnoException): unknown {
    const { request, url } = this;
    return request.signal?.aborted
      ? request.signal.reason
      : new BackendUnreachableError(request.method, url, { code: error.code ?? error.message }, error);
  }

  /** The status line came, the rest of the answer did not: the server may have acted on the request. */
  private cutOff(error: unknown, received: number, announced: number): unknown {
    const { request, url } = this;
    if (request.signal?.aborted) return request.signal.reason;
    return new BackendUnreachableError(
      request.method,
      url,
      {
        code: (error as NodeJS.ErrnoException).code ?? (error as Error).message,
        cutOff: { received, announced: Number.isNaN(announced) ? undefined : announced },
      },
      error,
    );
  }

  private answer(res: IncomingMessage): void {
    this.answered = true;
    const announced = Number(res.headers["content-length"]);
    const status = res.statusCode ?? 0;
    if (this.request.stream && status >= 200 && status < 300) this.handOut(res, status, announced);
    else this.collect(res, status, announced);
  }

  /** A streamed answer: resolved at once, its body read by the caller (`streamedBody`). */
  private handOut(res: IncomingMessage, status: number, announced: number): void {
    this.settled = true;
    this.streamed = res;
    this.settle.resolve({
      status,
      headers: flatHeaders(res.headers),
      body: Buffer.alloc(0),
      chunks: streamedBody(res, this.req as ClientRequest, {
        counted: (bytes) => {
          this.bodyBytes += bytes;
          if (this.bodyBytes < this.limits.cap) return;
          this.bodyBytes = 0;
          this.clock.renew();
        },
        holding: (held) => (held ? this.clock.stop() : this.clock.run()),
        ended: () => this.clock.stop(),
        failure: (error, received) =>
          error instanceof BackendUnreachableError && !this.request.signal?.aborted
            ? error
            : this.cutOff(error, received, announced),
      }),
    });
  }

  /** An answer read whole, under the cap. */
  private collect(res: IncomingMessage, status: number, announced: number): void {
    const { url, request, limits } = this;
    const tooLarge = (size?: number) =>
      this.fail(
        new ResponseTooLargeError(url, request.method, limits.cap, {
          announced: size,
          adjustable: limits.adjustable,
        }),
      );
    if (announced > limits.cap) {
      tooLarge(announced);
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    res.on("data", (chunk: Buffer) => {
      total += chunk.length;
      this.bodyBytes += chunk.length;
      if (total > limits.cap) tooLarge();
      else chunks.push(chunk);
    });
    res.on("end", () => {
      this.clock.stop();
      if (this.settled) return;
      this.settled = true;
      this.settle.resolve({ status, headers: flatHeaders(res.headers), body: Buffer.concat(chunks) });
    });
    res.on("error", (error: NodeJS.ErrnoException) => this.fail(this.cutOff(error, total, announced)));
  }
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
    const limits: ExchangeLimits = {
      timeout: request.timeoutMs ?? this.timeoutMs,
      cap: request.maxResponseBytes ?? this.maxResponseBytes,
      adjustable: this.options.maxResponseBytes === undefined,
    };
    return new Promise((resolve, reject) => {
      const send = url.protocol === "https:" ? httpsRequest() : httpRequest;
      const body = request.body === undefined ? undefined : Buffer.from(request.body);
      const headers: Record<string, string> = { "x-svc-agent": this.options.agent, ...request.headers };
      if (body) headers["content-length"] = String(body.length);
      new Exchange(url, request, limits, { resolve, reject }).start(send, headers, body);
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
