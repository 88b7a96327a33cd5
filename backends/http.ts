/**
 * The one HTTP client (DESIGN.md §6; STYLE.md rule 6). Every request, pagination URLs included, is checked
 * against the egress allowlist `SVC_ALLOWED_ORIGINS` before it is sent; redirects are never followed; every
 * request has a timeout; 429 answers are retried after `Retry-After`. Error messages never carry request
 * headers (credentials live there).
 */
import { request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { SvcError, UserFacingError } from "./errors.js";

/** node:https (and with it TLS) is loaded on the first https request: the simulator's loopback needs none. */
let httpsModule: typeof import("node:https") | undefined;
function httpsRequest(): typeof import("node:https").request {
  httpsModule ??= createRequire(import.meta.url)("node:https") as typeof import("node:https");
  return httpsModule.request;
}

export const DEFAULT_ALLOWED_ORIGINS = "http://127.0.0.1:*,http://localhost:*";

interface OriginPattern {
  readonly protocol: string;
  readonly host: string;
  readonly port: string;
}

function defaultPort(protocol: string): string {
  return protocol === "https:" ? "443" : "80";
}

export function parseAllowlist(text: string): OriginPattern[] {
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .map((item) => {
      const match = /^(https?):\/\/(\[[^\]]+\]|[^:/]+)(?::(\*|\d+))?\/?$/.exec(item);
      if (!match) {
        throw new UserFacingError(
          "SVC_USAGE",
          `SVC_ALLOWED_ORIGINS entry ${JSON.stringify(item)} is not scheme://host[:port|:*], e.g. http://127.0.0.1:*`,
        );
      }
      const protocol = `${match[1]}:`;
      return { protocol, host: (match[2] ?? "").toLowerCase(), port: match[3] ?? defaultPort(protocol) };
    });
}

export function isOriginAllowed(url: URL, patterns: readonly OriginPattern[]): boolean {
  const port = url.port || defaultPort(url.protocol);
  const host = url.hostname.toLowerCase();
  return patterns.some(
    (pattern) =>
      pattern.protocol === url.protocol &&
      (pattern.host === host || (pattern.host.startsWith("*.") && host.endsWith(pattern.host.slice(1)))) &&
      (pattern.port === "*" || pattern.port === port),
  );
}

export class EgressDeniedError extends UserFacingError {
  constructor(url: URL) {
    super(
      "SVC_EGRESS_DENIED",
      `origin not allowlisted: ${url.origin}; add it to SVC_ALLOWED_ORIGINS (comma-separated, e.g. ` +
        `SVC_ALLOWED_ORIGINS="${DEFAULT_ALLOWED_ORIGINS},${url.origin}") if you trust it`,
      { data: { origin: url.origin } },
    );
  }
}

/** An HTTP answer that was not what the caller wanted: status, method, URL (without query) and a body excerpt. */
export class HttpError extends SvcError {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly url: string,
    readonly body: string,
  ) {
    super("SVC_BACKEND", `${method} ${url} answered ${status}: ${body.slice(0, 300)}`, {
      data: { status, method, url },
    });
  }
}

export class BackendUnreachableError extends UserFacingError {
  constructor(method: string, url: string, reason: string, cause?: unknown) {
    super(
      "SVC_BACKEND",
      `cannot reach the backend: ${method} ${url} failed (${reason}); is the server running?`,
      {
        cause,
        data: { url },
      },
    );
  }
}

export interface HttpResponse {
  readonly status: number;
  /** Response headers by lower-case name; repeated headers joined with `, ` (node:http's rule). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface HttpRequest {
  readonly method: string;
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly timeoutMs?: number;
  /** Aborting ends the exchange at once (a long poll on shutdown); the promise rejects with the abort reason. */
  readonly signal?: AbortSignal;
}

export interface HttpClientOptions {
  /** The allowlist text; `SVC_ALLOWED_ORIGINS` or the default. */
  readonly allowedOrigins?: string;
  /** `X-Svc-Agent` sent with every request. */
  readonly agent: string;
  readonly timeoutMs?: number;
  /** The largest response body accepted. */
  readonly maxResponseBytes?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const MAX_ATTEMPTS = 4;
/** The longest a request waits in all for a server that keeps answering 429 with `Retry-After`. */
const MAX_WAIT_S = 600;

/** origin → the instant (ms) before which no request may be sent to it. */
const gates = new Map<string, number>();

/** Whole seconds from a `Retry-After` header (the delta form), capped at 60; undefined if absent or unreadable. */
export function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Math.min(Number(value), 60);
}

function armGate(origin: string, seconds: number): void {
  const until = Date.now() + seconds * 1000;
  if (until > (gates.get(origin) ?? 0)) gates.set(origin, until);
}

async function waitForGate(origin: string, sleep: (ms: number) => Promise<void>): Promise<void> {
  for (;;) {
    const wait = (gates.get(origin) ?? 0) - Date.now();
    if (wait <= 0) return;
    await sleep(wait);
  }
}

function redact(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

export class HttpClient {
  private readonly patterns: OriginPattern[];
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: HttpClientOptions) {
    this.patterns = parseAllowlist(
      options.allowedOrigins ?? process.env.SVC_ALLOWED_ORIGINS ?? DEFAULT_ALLOWED_ORIGINS,
    );
    this.timeoutMs = options.timeoutMs ?? Number(process.env.SVC_HTTP_TIMEOUT_MS ?? 30_000);
    this.maxResponseBytes = options.maxResponseBytes ?? 1024 * 1024 * 1024;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Throws EgressDeniedError unless `url`'s origin is allowlisted. */
  checkEgress(url: string): URL {
    const parsed = new URL(url);
    if (!isOriginAllowed(parsed, this.patterns)) throw new EgressDeniedError(parsed);
    return parsed;
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    const url = this.checkEgress(request.url);
    let backoffs = 0;
    let waited = 0;
    for (;;) {
      await waitForGate(url.origin, this.sleep);
      const response = await this.once(url, request);
      const retryAfter = parseRetryAfter(response.headers["retry-after"]);
      // The gate is shared by every request to the origin: one 429 (or a quota at zero) holds them all.
      if (response.status === 429 && retryAfter !== undefined) armGate(url.origin, retryAfter);
      else if (response.headers["x-ratelimit-remaining"] === "0") armGate(url.origin, retryAfter ?? 1);
      if (response.status !== 429) return response;
      if (retryAfter !== undefined) {
        // The server says when: keep waiting as long as it keeps saying so, up to a total of MAX_WAIT_S.
        waited += retryAfter;
        if (waited > MAX_WAIT_S) return response;
        continue;
      }
      // No header says when: exponential backoff with jitter, at most MAX_ATTEMPTS attempts in all.
      if (++backoffs >= MAX_ATTEMPTS) return response;
      await this.sleep(2 ** backoffs * 250 + Math.floor(Math.random() * 250));
    }
  }

  /**
   * One exchange over node:http(s). Not the global `fetch`: its first use loads undici's internals (~40 ms),
   * and the helper starts once per git fetch. node:http never follows redirects.
   */
  private once(url: URL, request: HttpRequest): Promise<HttpResponse> {
    const timeout = request.timeoutMs ?? this.timeoutMs;
    const where = redact(url);
    return new Promise((resolve, reject) => {
      const send = url.protocol === "https:" ? httpsRequest() : httpRequest;
      const body = request.body === undefined ? undefined : Buffer.from(request.body);
      const headers: Record<string, string> = { "x-svc-agent": this.options.agent, ...request.headers };
      if (body) headers["content-length"] = String(body.length);
      const req = send(
        url,
        { method: request.method, headers, agent: false, signal: request.signal },
        (res) => {
          const chunks: Buffer[] = [];
          let total = 0;
          res.on("data", (chunk: Buffer) => {
            total += chunk.length;
            if (total > this.maxResponseBytes) {
              req.destroy(
                new SvcError(
                  "SVC_BACKEND",
                  `${request.method} ${where}: response larger than ${this.maxResponseBytes} bytes`,
                ),
              );
              return;
            }
            chunks.push(chunk);
          });
          res.on("end", () => {
            // Not the global `Headers`: like `fetch`, it loads undici's internals on first use (~30 ms).
            const responseHeaders: Record<string, string> = {};
            for (const [name, value] of Object.entries(res.headers)) {
              if (typeof value === "string") responseHeaders[name] = value;
              else if (Array.isArray(value)) responseHeaders[name] = value.join(", ");
            }
            resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: Buffer.concat(chunks) });
          });
          res.on("error", (error) => req.destroy(error));
        },
      );
      req.setTimeout(timeout, () =>
        req.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT_SVC" })),
      );
      req.on("error", (error: NodeJS.ErrnoException) => {
        if (error instanceof SvcError) reject(error);
        else if (request.signal?.aborted) reject(request.signal.reason);
        else {
          const reason =
            error.code === "ETIMEDOUT_SVC" ? `no answer within ${timeout} ms` : (error.code ?? error.message);
          reject(new BackendUnreachableError(request.method, where, reason, error));
        }
      });
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
      throw new SvcError(
        "SVC_BACKEND",
        `${request.method} ${url} answered ${response.status} with a body that is not JSON: ${JSON.stringify(text.slice(0, 120))}`,
      );
    }
  }
}
