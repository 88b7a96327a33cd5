/**
 * The one HTTP client (DESIGN.md §6; STYLE.md rule 6). Every request, pagination URLs included, is checked
 * against the egress allowlist `SVC_ALLOWED_ORIGINS` before it is sent; redirects are never followed; every
 * request has a timeout; 429 answers are retried after `Retry-After`. Error messages never carry request
 * headers (credentials live there).
 */
import { SvcError, UserFacingError } from "./errors.js";

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
  readonly headers: Headers;
  readonly body: Buffer;
}

export interface HttpRequest {
  readonly method: string;
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly timeoutMs?: number;
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
    for (let attempt = 1; ; attempt++) {
      const response = await this.once(url, request);
      if (response.status !== 429 || attempt >= MAX_ATTEMPTS) return response;
      const retryAfter = Number(response.headers.get("retry-after"));
      const wait =
        Number.isFinite(retryAfter) && retryAfter >= 0 ? Math.min(retryAfter, 60) * 1000 : 2 ** attempt * 250;
      await this.sleep(wait);
    }
  }

  private async once(url: URL, request: HttpRequest): Promise<HttpResponse> {
    const timeout = request.timeoutMs ?? this.timeoutMs;
    let response: Response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers: { "x-svc-agent": this.options.agent, ...request.headers },
        body: request.body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeout),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      const reason =
        (error as Error).name === "TimeoutError"
          ? `no answer within ${timeout} ms`
          : (cause?.code ?? (error as Error).message);
      throw new BackendUnreachableError(request.method, redact(url), reason, error);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of response.body ?? []) {
        total += chunk.length;
        if (total > this.maxResponseBytes) {
          throw new SvcError(
            "SVC_BACKEND",
            `${request.method} ${redact(url)}: response larger than ${this.maxResponseBytes} bytes`,
          );
        }
        chunks.push(Buffer.from(chunk));
      }
    } catch (error) {
      if (error instanceof SvcError) throw error;
      throw new BackendUnreachableError(
        request.method,
        redact(url),
        `the response broke off: ${(error as Error).message}`,
        error,
      );
    }
    return { status: response.status, headers: response.headers, body: Buffer.concat(chunks) };
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
