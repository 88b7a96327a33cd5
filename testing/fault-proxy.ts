/**
 * A loopback HTTP proxy that injects faults in front of a real server (the simulator, a fake vendor
 * service): each request is forwarded unchanged unless the test's `fault` function names a fault for it.
 * Closed by the test's teardown.
 *
 * Faults:
 * - `late`: forward at once (the server commits), hold the answer back `ms` milliseconds: a slow network, or
 *   a client killed while waiting for an answer that was already decided.
 * - `answer`: do not forward; answer `status` with `body` (JSON) and `headers` instead.
 * - `reset`: forward, then destroy the client's connection without an answer (the server committed).
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ExecutionContext } from "ava";

export type Fault =
  | { readonly kind: "late"; readonly ms: number }
  | {
      readonly kind: "answer";
      readonly status: number;
      readonly body: unknown;
      /** Headers beside `content-type` (a redirect's `location`). */
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly kind: "reset" };

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

/**
 * Passes the server's whole answer on to the client, as the fault says: at once, after `ms` (a timer kept in
 * `timers` for the teardown), or not at all (the client's connection is reset). `answered` runs when the
 * server's answer is complete.
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
    const reply = () => {
      if (fault?.kind === "reset") {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.end(Buffer.concat(chunks));
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
    if (fault?.kind === "answer") {
      req.resume();
      res.writeHead(fault.status, { "content-type": "application/json", ...fault.headers });
      res.end(JSON.stringify(fault.body));
      return;
    }
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
