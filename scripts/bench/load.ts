/**
 * A closed-loop HTTP load generator: `clients` concurrent loops over one keep-alive `node:http` Agent, each
 * sending its next request as soon as the previous answer has been read in full. Requests that complete
 * during the warm-up are answered (and counted in `answered`) but not measured.
 */
import { Agent, request } from "node:http";

export interface RequestShape {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
}

export interface LoadOptions {
  /** `http://host:port` */
  readonly baseUrl: string;
  readonly clients: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** The `n`th request of the run (0-based, over all clients). */
  readonly shape: (n: number) => RequestShape;
  /** A request still unanswered after this long counts as an error and its socket is destroyed. */
  readonly requestTimeoutMs?: number;
}

export interface LoadResult {
  /** 2xx answers completed in the measured window. */
  readonly ok: number;
  /** Non-2xx answers and transport failures in the measured window. */
  readonly errors: number;
  /** Seconds from the end of the warm-up until the last client finished. */
  readonly seconds: number;
  /** `ok / seconds` */
  readonly perSecond: number;
  /** Every request that got an HTTP answer, warm-up included (what the server saw and answered). */
  readonly answered: number;
  /** Requests that failed without an HTTP answer, warm-up included. */
  readonly transportFailures: number;
  /** The first few failure descriptions, for the report. */
  readonly failureSamples: readonly string[];
}

type Outcome = { kind: "answered"; status: number } | { kind: "failed"; reason: string };

function send(agent: Agent, baseUrl: URL, shape: RequestShape, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...shape.headers };
    if (shape.body) headers["content-length"] = String(shape.body.length);
    const req = request(
      { agent, host: baseUrl.hostname, port: baseUrl.port, method: shape.method, path: shape.path, headers },
      (res) => {
        res.on("data", () => {});
        res.on("end", () => resolve({ kind: "answered", status: res.statusCode ?? 0 }));
        res.on("error", (error) => resolve({ kind: "failed", reason: error.message }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (error) => resolve({ kind: "failed", reason: error.message }));
    req.end(shape.body);
  });
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const baseUrl = new URL(options.baseUrl);
  const timeoutMs = options.requestTimeoutMs ?? 5000;
  const agent = new Agent({ keepAlive: true, maxSockets: options.clients });
  const start = performance.now();
  const measureFrom = start + options.warmupMs;
  const stopAt = measureFrom + options.durationMs;
  let next = 0;
  let ok = 0;
  let errors = 0;
  let answered = 0;
  let transportFailures = 0;
  const failureSamples: string[] = [];

  const client = async () => {
    while (performance.now() < stopAt) {
      const shape = options.shape(next++);
      const outcome = await send(agent, baseUrl, shape, timeoutMs);
      const measured = performance.now() >= measureFrom;
      const success = outcome.kind === "answered" && outcome.status >= 200 && outcome.status < 300;
      if (outcome.kind === "answered") answered++;
      else transportFailures++;
      if (!success && failureSamples.length < 3) {
        failureSamples.push(
          `${shape.method} ${shape.path}: ${outcome.kind === "answered" ? `HTTP ${outcome.status}` : outcome.reason}`,
        );
      }
      if (measured) {
        if (success) ok++;
        else errors++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.clients }, client));
  } finally {
    agent.destroy();
  }
  const seconds = Math.max(performance.now(), stopAt) / 1000 - measureFrom / 1000;
  return { ok, errors, seconds, perSecond: ok / seconds, answered, transportFailures, failureSamples };
}
