/**
 * A loopback HTTP proxy that injects faults in front of a real server (the simulator, a fake vendor
 * service): each request is forwarded unchanged unless the test's `fault` function names a fault for it.
 * Closed by the test's teardown, with every connection it holds open (a `hang` included).
 *
 * Faults, by whether the server sees the request:
 * - not forwarded (the server never acts on it):
 *   - `answer`: answer `status` with `body` (JSON) and `headers` instead.
 *   - `retryAfter`: answer `status` (429 or 503) with `Retry-After: <seconds>` and a JSON error body.
 *   - `reset` with `before`: destroy the client's connection without reading on.
 *   - `garbage` without `forward`: a 200 whose body is not JSON (an HTML page, as a captive portal sends).
 *   - `hang` without `forward`: accept the request and never answer; the client's timeout ends it.
 *   - `drip` without `forward`: answer 200 and then a space every 100 ms, forever (a JSON body that never
 *     gets to its first value): only a timeout of the whole request ends it, not an idle timer.
 * - forwarded (the server commits; the client gets a broken answer or none):
 *   - `late`: hold the server's answer back `ms` milliseconds: a slow network, or a client killed while
 *     waiting for an answer that was already decided.
 *   - `slow`: send the server's answer in `slices` equal parts, `gapMs` apart: a long answer arriving over
 *     seconds (a large project's listing on a slow link).
 *   - `reset` (without `before`): destroy the client's connection instead of answering.
 *   - `truncated`: send the server's status and headers (its real `content-length`) and the first half of
 *     its body, then destroy the connection.
 *   - `garbage` with `forward`: a 200 whose body is not JSON in place of the server's answer.
 *   - `hang` with `forward`: never answer.
 *   - `drip` with `forward`: the drip in place of the server's answer.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ExecutionContext } from "ava";

export type Fault =
  | { readonly kind: "late"; readonly ms: number }
  | { readonly kind: "slow"; readonly slices: number; readonly gapMs: number }
  | {
      readonly kind: "answer";
      readonly status: number;
      readonly body: unknown;
      /** Headers beside `content-type` (a redirect's `location`). */
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly kind: "reset"; readonly before?: boolean }
  | { readonly kind: "garbage"; readonly forward?: boolean }
  | { readonly kind: "truncated" }
  | { readonly kind: "hang"; readonly forward?: boolean }
  | { readonly kind: "drip"; readonly forward?: boolean }
  | { readonly kind: "retryAfter"; readonly status: 429 | 503; readonly seconds: number };

/** What `garbage` answers: what a captive portal or a misconfigured proxy sends with a 200. */
export const GARBAGE_BODY = "<html><body><h1>Welcome</h1><p>Sign in to continue.</p></body></html>";

export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  /** How many requests with this method the proxy saw before this one. */
  readonly nth: number;
  /** The `If-Match` header as sent, or undefined. */
  readonly ifMatch: string | undefined;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: use it in place of the server's URL. */
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** Replaces the fault rule (undefined: forward everything). */
  setFault(fault: ((request: ProxiedRequest) => Fault | undefined) | undefined): void;
  /**
   * Settles once the server has answered (to the proxy) a request with `method` (and `path`, without its
   * query, when given), seen from now on.
   */
  answered(method: string, path?: string): Promise<void>;
}

/** The request as the fault rule sees it, counting it among those with its method. */
function describeRequest(req: IncomingMessage, counts: Map<string, number>): ProxiedRequest {
  const method = req.method ?? "";
  const nth = counts.get(method) ?? 0;
  counts.set(method, nth + 1);
  const ifMatch = req.headers["if-match"];
  return {
    method,
    path: req.url ?? "",
    nth,
    ifMatch: Array.isArray(ifMatch) ? ifMatch.join(", ") : ifMatch,
  };
}

/** Whether the server gets to see a request with this fault. */
function forwards(fault: Fault | undefined): boolean {
  switch (fault?.kind) {
    case "answer":
    case "retryAfter":
      return false;
    case "reset":
      return !fault.before;
    case "garbage":
    case "hang":
    case "drip":
      return fault.forward === true;
    default:
      return true;
  }
}

/** The time between two bytes of a `drip`. */
export const DRIP_INTERVAL_MS = 100;

/** A 200 whose body is a space every `DRIP_INTERVAL_MS`, until the client hangs up (the timer in `timers`). */
function drip(res: ServerResponse, timers: Set<NodeJS.Timeout>): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.flushHeaders();
  const timer = setInterval(() => res.write(" "), DRIP_INTERVAL_MS);
  timers.add(timer);
  res.on("close", () => {
    clearInterval(timer);
    timers.delete(timer);
  });
}

/** Answers a fault that is not forwarded; a `hang` answers nothing. */
function answerInstead(
  fault: Fault | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  timers: Set<NodeJS.Timeout>,
): void {
  switch (fault?.kind) {
    case "answer":
      req.resume();
      res.writeHead(fault.status, { "content-type": "application/json", ...fault.headers });
      res.end(JSON.stringify(fault.body));
      return;
    case "retryAfter":
      req.resume();
      res.writeHead(fault.status, {
        "content-type": "application/json",
        "retry-after": String(fault.seconds),
      });
      res.end(JSON.stringify({ error: "rate_limited", message: `retry in ${fault.seconds} s` }));
      return;
    case "reset":
      req.socket.destroy();
      return;
    case "garbage":
      req.resume();
      res.writeHead(200, { "content-type": "text/html" });
      res.end(GARBAGE_BODY);
      return;
    case "hang":
      req.resume();
      return;
    case "drip":
      req.resume();
      drip(res, timers);
      return;
    default:
      throw new Error(`fault ${fault?.kind} is forwarded`);
  }
}

/**
 * Passes the server's whole answer on to the client, as the fault says: at once, after `ms` (a timer kept in
 * `timers` for the teardown), cut off, replaced (by a drip too), or not at all. `answered` runs when the server's answer is
 * complete.
 */
function relayAnswer(
  answer: IncomingMessage,
  req: IncomingMessage,
  res: ServerResponse,
  fault: Fault | undefined,
  timers: Set<NodeJS.Timeout>,
  answered: () => void,
): void {
  const chunks: Buffer[] = [];
  answer.on("data", (chunk: Buffer) => chunks.push(chunk));
  answer.on("end", () => {
    answered();
    const body = Buffer.concat(chunks);
    const reply = () => {
      switch (fault?.kind) {
        case "reset":
          req.socket.destroy();
          return;
        case "hang":
          return;
        case "drip":
          drip(res, timers);
          return;
        case "garbage":
          res.writeHead(200, { "content-type": "text/html" });
          res.end(GARBAGE_BODY);
          return;
        case "truncated": {
          const { "transfer-encoding": _chunked, ...headers } = answer.headers;
          res.writeHead(answer.statusCode ?? 502, { ...headers, "content-length": body.length });
          // The half is flushed before the socket goes: a destroy right after write() may drop it.
          res.write(body.subarray(0, Math.floor(body.length / 2)), () => req.socket.destroy());
          return;
        }
        case "slow": {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          const size = Math.ceil(body.length / fault.slices);
          const send = (at: number) => {
            if (at + size >= body.length) return void res.end(body.subarray(at));
            res.write(body.subarray(at, at + size));
            const timer = setTimeout(() => {
              timers.delete(timer);
              send(at + size);
            }, fault.gapMs);
            timers.add(timer);
          };
          send(0);
          return;
        }
        default:
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(body);
      }
    };
    if (fault?.kind !== "late") return reply();
    const timer = setTimeout(() => {
      timers.delete(timer);
      reply();
    }, fault.ms);
    timers.add(timer);
  });
}

export async function givenFaultProxy(t: ExecutionContext, target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const requests: ProxiedRequest[] = [];
  const counts = new Map<string, number>();
  let rule: ((request: ProxiedRequest) => Fault | undefined) | undefined;
  const timers = new Set<NodeJS.Timeout>();
  const waiters: { method: string; path: string | undefined; resolve: () => void }[] = [];
  const notify = (method: string, path: string) => {
    for (const waiter of waiters.splice(0)) {
      const matches =
        waiter.method === method && (waiter.path === undefined || waiter.path === path.split("?")[0]);
      if (matches) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  const server = createServer((req, res) => {
    const proxied = describeRequest(req, counts);
    const { method } = proxied;
    requests.push(proxied);
    const fault = rule?.(proxied);
    if (!forwards(fault)) return answerInstead(fault, req, res, timers);
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => relayAnswer(answer, req, res, fault, timers, () => notify(method, proxied.path)),
    );
    forward.on("error", (error) => {
      res.writeHead(502);
      res.end(error.message);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    setFault(fault) {
      rule = fault;
    },
    answered(method, path) {
      return new Promise((resolve) => waiters.push({ method, path, resolve }));
    },
  };
}
