/**
 * A loopback proxy that records every exchange between svc (or a contract suite's own API calls) and a
 * vendor service and judges each against the vendor's description (vendor-contract.ts), for the contract
 * suites: in `npm run test:real` it stands in front of the real service, in the normal suite in front of
 * the fake, the same code either way. `close()` fails naming each departure, as a fake's does.
 *
 * It forwards method, path, headers (the `Host` rewritten) and body to `target` (http or https) and the
 * answer back byte for byte, except that URLs of the target's origin in `Link` and `Location` are
 * rewritten to the proxy's, so pagination and redirects stay on the recorded path (the suites allow only
 * the proxy's origin, so nothing reaches the service around it). A compressed answer is recorded decoded.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import type { ExecutionContext } from "ava";
import { closeServer, listenOnLoopback } from "./loopback.js";
import { ContractWatch, type Exchange } from "./vendor-contract.js";
import type { VendorName } from "./vendor-descriptions.js";

export interface RecordingProxy {
  /** The proxy's base URL: its origin with the target's path (e.g. GitHub Enterprise's `/api/v3`). */
  readonly url: string;
  readonly origin: string;
  /** Every exchange, oldest first. */
  readonly exchanges: readonly Exchange[];
  readonly contract: ContractWatch;
  /** Closes the proxy; rejects, naming them, when any exchange departed from the vendor's description. */
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "host",
]);

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}

function flat(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  return out;
}

function decoded(body: Buffer, encoding: string | undefined): string {
  try {
    if (encoding === "gzip") return gunzipSync(body).toString("utf8");
    if (encoding === "deflate") return inflateSync(body).toString("utf8");
    if (encoding === "br") return brotliDecompressSync(body).toString("utf8");
  } catch {
    return body.toString("latin1");
  }
  return body.toString("utf8");
}

/** Starts the proxy on `127.0.0.1:0` in front of `target` (a base URL: origin and optional path). */
export async function startRecordingProxy(vendor: VendorName, target: string): Promise<RecordingProxy> {
  const base = new URL(target);
  const basePath = base.pathname.replace(/\/+$/, "");
  const contract = new ContractWatch(vendor);
  const exchanges: Exchange[] = [];
  const server = createServer();
  const origin = await listenOnLoopback(server);
  const toProxy = (value: string) => value.split(base.origin).join(origin);

  server.on("request", (req, res) => {
    void (async () => {
      const body = await readAll(req);
      const headers = flat(req.headers);
      const outgoing: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) outgoing[name] = value;
      outgoing.host = base.host;
      const send = base.protocol === "https:" ? httpsRequest : httpRequest;
      const upstream = send(new URL(req.url ?? "/", base.origin), { method: req.method, headers: outgoing });
      upstream.on("error", () => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
        res.end("recording proxy: the target did not answer");
      });
      upstream.on("response", async (answer) => {
        const bytes = await readAll(answer);
        const answerHeaders = flat(answer.headers);
        for (const name of ["link", "location"]) {
          const value = answerHeaders[name];
          if (value !== undefined) answerHeaders[name] = toProxy(value);
        }
        const back: Record<string, string> = {};
        for (const [name, value] of Object.entries(answerHeaders))
          if (!HOP_BY_HOP.has(name)) back[name] = value;
        back["content-length"] = String(bytes.length);
        res.writeHead(answer.statusCode ?? 502, back);
        res.end(bytes);
        const path = (req.url ?? "/").startsWith(`${basePath}/`)
          ? (req.url ?? "/").slice(basePath.length)
          : (req.url ?? "/");
        const exchange: Exchange = {
          method: req.method ?? "",
          path,
          body: body.toString("utf8"),
          requestHeaders: headers,
          status: answer.statusCode ?? 0,
          answerHeaders,
          answer: decoded(bytes, answerHeaders["content-encoding"]),
        };
        exchanges.push(exchange);
        contract.observe(exchange);
      });
      upstream.end(body);
    })();
  });

  let closing: Promise<void> | undefined;
  return {
    url: `${origin}${basePath}`,
    origin,
    exchanges,
    contract,
    close() {
      closing ??= closeServer(server).then(() => contract.assertNone());
      return closing;
    },
  };
}

/** `startRecordingProxy` for one ava test; the test's teardown closes it (and fails on a departure). */
export async function givenRecordingProxy(
  t: ExecutionContext,
  vendor: VendorName,
  target: string,
): Promise<RecordingProxy> {
  const proxy = await startRecordingProxy(vendor, target);
  t.teardown(() => proxy.close());
  return proxy;
}

/** What the contract suites point at: the variables for `svc` and `git`, and the API root. */
interface Target {
  readonly vars: Readonly<Record<string, string>>;
  readonly baseUrl: string;
}

/**
 * `target` with everything on the way through a recording proxy judged by `vendor`'s description: its API
 * root and `baseUrlVariable` (svc's base URL override) are the proxy's, and only the proxy's origin is on
 * `SVC_ALLOWED_ORIGINS`, so no request goes around it.
 */
export async function throughRecordingProxy<T extends Target>(
  t: ExecutionContext,
  vendor: VendorName,
  target: T,
  baseUrlVariable: "SVC_FORGE_BASE_URL" | "SVC_TRACKER_BASE_URL" | "SVC_WIKI_BASE_URL",
): Promise<T> {
  const proxy = await givenRecordingProxy(t, vendor, target.baseUrl);
  return {
    ...target,
    baseUrl: proxy.url,
    vars: { ...target.vars, [baseUrlVariable]: proxy.url, SVC_ALLOWED_ORIGINS: proxy.origin },
  };
}
