/**
 * The server-side mechanics the vendor fakes share (testing/fake-tracker/, testing/fake-wiki/,
 * testing/fake-forge/): the request log entry, an answer written with its length, a handler's refusal thrown
 * as a value, a handler's bug answered 500 instead of a hang, the lifecycle (`FakeVendorServer`: the log, the
 * contract watch, closing once with its verdict), and the one-test helper. Each fake keeps its own vendor's
 * wording, error bodies and content types.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { ExecutionContext } from "ava";
import { closeServer } from "./loopback.js";
import type { ContractWatch } from "./vendor-contract.js";

/** One request as a fake logs it; each fake adds what it records of its answer. */
export interface FakeRequestBase {
  readonly method: string;
  /** Path and query exactly as sent. */
  readonly path: string;
  /** Lower-case header names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /** The raw request body (utf8). */
  readonly body: string;
  /** The status answered; 0 while the request is in flight. */
  readonly status: number;
  /** `Date.now()` when it arrived (the real clock, not a fake's `now` option: for waits). */
  readonly receivedAt: number;
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** The log entry of a request just received (status 0); `extra` holds what the fake adds, in flight. */
export function requestEntry<E extends object>(
  req: IncomingMessage,
  body: string,
  extra: E,
): Writable<FakeRequestBase> & E {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return {
    method: req.method ?? "",
    path: req.url ?? "",
    headers,
    body,
    status: 0,
    ...extra,
    receivedAt: Date.now(),
  };
}

/** What a handler throws to answer at once (a 4xx): the fake's own answer shape. */
export class HttpFailure<A extends { readonly status: number }> extends Error {
  constructor(readonly answer: A) {
    super(`HTTP ${answer.status}`);
  }
}

/** The answer a handler threw; any other error goes on (it is a bug of the fake). */
export function thrownAnswer<A extends { readonly status: number }>(error: unknown): A {
  if (error instanceof HttpFailure) return error.answer as A;
  throw error;
}

/** Writes the answer; a payload goes with `content-type` (unless `headers` name one) and its `content-length`. */
export function writeAnswer(
  res: ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>> | undefined,
  payload: string | undefined,
  contentType: string,
): void {
  const sent: Record<string, string> = { ...headers };
  if (payload !== undefined) {
    sent["content-type"] ??= contentType;
    sent["content-length"] = String(Buffer.byteLength(payload));
  }
  res.writeHead(status, sent);
  res.end(payload);
}

/** Atlassian's `X-RateLimit-Reset`: `yyyy-MM-ddTHH:mmZ` (the tracker's and the wiki's rate limits). */
export function atlassianResetStamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16)}Z`;
}

/** Hands every request to `handle`; a handler that throws is a bug of the fake: logged, answered 500. */
export function serveRequests(
  server: Server,
  name: string,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): void {
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      console.error(`${name}:`, error);
      if (!res.headersSent) writeAnswer(res, 500, undefined, undefined, "");
    });
  });
}

/**
 * What every vendor fake is: the servers it listens with, the log of what it received and the watch that judges
 * each exchange against the vendor's description; `close()` closes once and rejects naming every departure.
 */
export abstract class FakeVendorServer<R extends FakeRequestBase> {
  /** Every request received, oldest first. */
  readonly requests: R[] = [];
  private closing: Promise<void> | undefined;

  constructor(
    private readonly servers: readonly Server[],
    readonly origin: string,
    readonly contract: ContractWatch,
  ) {}

  /** The base URL to configure: the origin, no path (like the vendor's tenant URL). */
  get url(): string {
    return this.origin;
  }

  close(): Promise<void> {
    this.closing ??= Promise.all(this.servers.map((server) => closeServer(server))).then(() =>
      this.contract.assertNone(),
    );
    return this.closing;
  }
}

/** A fake started for one ava test; the test's teardown closes it (and so judges its traffic). */
export async function givenFake<F extends { close(): Promise<void> }>(
  t: ExecutionContext,
  start: () => Promise<F>,
): Promise<F> {
  const fake = await start();
  t.teardown(() => fake.close());
  return fake;
}
