/**
 * A loopback HTTP proxy in front of the simulator that notes every request it forwards and the status the
 * simulator answered, so the simulator's `audit_events` can be compared with the requests it was sent
 * (Document 1 "Audit record" rule 1: one row per request, 429s included). Requests and answers pass
 * unchanged, headers included (`X-Svc-Agent` keeps its rate-limit bucket).
 */
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  readonly method: string;
  /** The request target as sent: path and query. */
  readonly path: string;
  readonly status: number;
}

export interface CountingProxy {
  readonly url: string;
  /** The requests the simulator answered, in the order the answers began. */
  answered(): readonly ProxiedRequest[];
  /** Requests forwarded without an answer (the simulator or the connection failed). */
  unanswered(): readonly string[];
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const answered: ProxiedRequest[] = [];
  const unanswered: string[] = [];
  const server = createServer((req, res) => {
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method, path, headers: req.headers, agent },
      (answer) => {
        answered.push({ method, path, status: answer.statusCode ?? 0 });
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", (error) => {
      unanswered.push(`${method} ${path}: ${error.message}`);
      res.destroy();
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answered: () => answered,
    unanswered: () => unanswered,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
