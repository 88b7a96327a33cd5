/**
 * The HTTP client's limits against real loopback servers: a response over the byte cap is refused as soon
 * as `content-length` says so, or as soon as the bytes read pass the cap (and the connection is closed, so
 * the server stops sending); a request may bring its own cap; `SVC_HTTP_TIMEOUT_MS` and
 * `SVC_HTTP_MAX_RESPONSE_MIB` go through the settings reader; a refused connection is a rejection, never an
 * unhandled 'error' event; a `Retry-After` longer than svc waits ends the request at once, naming the time;
 * an answer cut off, or not JSON, says so. `SVC_HTTP_TIMEOUT_MS` bounds a whole request: a server that
 * drips its answer is cut off at it (a streamed answer gets it again per response cap's worth, its clock
 * stopped while the caller holds a chunk), and no timer outlives its request; `Retry-After: 0` forever ends
 * after a few attempts.
 */
import { spawn } from "node:child_process";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import test, { type ExecutionContext } from "ava";
import { SvcError, UserFacingError } from "./errors.js";
import {
  BackendUnreachableError,
  describeInstant,
  HttpClient,
  HttpError,
  isServerFault,
  NotJsonError,
  parseRetryAfter,
  RedirectError,
  ResponseTooLargeError,
  RetryLaterError,
} from "./http.js";
import { ListingTimeoutError } from "./pagination.js";
import { SettingError } from "./settings.js";

const MIB = 1024 * 1024;

interface Streamed {
  /** Bytes handed to the socket before the response ended or the client hung up. */
  written: number;
  closedEarly: boolean;
}

/**
 * A server whose every answer is `bytes` bytes, in 64 KiB chunks with backpressure (and `content-length`
 * when `announce`); `done` resolves when the answer's connection closed.
 */
async function givenStreamingServer(
  t: ExecutionContext,
  bytes: number,
  announce: boolean,
): Promise<{ url: string; done: Promise<Streamed> }> {
  let finish: (streamed: Streamed) => void = () => {};
  const done = new Promise<Streamed>((resolve) => {
    finish = resolve;
  });
  const server = createServer((_req, res: ServerResponse) => {
    const chunk = Buffer.alloc(64 * 1024, "a");
    const streamed = { written: 0, closedEarly: false };
    res.on("error", () => {});
    res.on("close", () => finish({ ...streamed, closedEarly: !res.writableFinished }));
    res.writeHead(200, announce ? { "content-length": String(bytes) } : {});
    const pump = () => {
      while (!res.destroyed && streamed.written < bytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, bytes - streamed.written));
        streamed.written += piece.length;
        if (!res.write(piece)) return void res.once("drain", pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/listing?token=secret`, done };
}

function client(options: { maxResponseBytes?: number } = {}): HttpClient {
  return new HttpClient({ agent: "http-test", allowedOrigins: "http://127.0.0.1:*", ...options });
}

test("a response over the cap without content-length is cut off a little after the cap", async (t) => {
  const server = await givenStreamingServer(t, 100 * MIB, false);
  const error = await t.throwsAsync(client().request({ method: "GET", url: server.url }), {
    instanceOf: ResponseTooLargeError,
  });
  const origin = new URL(server.url).origin;
  t.is(
    error?.message,
    `the server at ${origin} sent more than 32 MiB in answer to GET /listing, the most svc accepts in one ` +
      "response; svc closed the connection and kept none of it. If answers this large are expected, run the " +
      `command again with e.g. SVC_HTTP_MAX_RESPONSE_MIB=64; if not, report it to the admins of ${origin}`,
  );
  t.is(error?.code, "SVC_BACKEND");
  const streamed = await server.done;
  t.true(streamed.closedEarly);
  // On top of the cap, only what the sockets' kernel buffers held when the client hung up.
  t.true(streamed.written < 72 * MIB, `the server sent ${streamed.written} bytes`);
});

test("a response whose content-length is over the cap is refused before its body is read", async (t) => {
  const server = await givenStreamingServer(t, 100 * MIB, true);
  const error = await t.throwsAsync(
    client({ maxResponseBytes: 1000 }).request({ method: "GET", url: server.url }),
    { instanceOf: ResponseTooLargeError },
  );
  const origin = new URL(server.url).origin;
  t.is(
    error?.message,
    `the server at ${origin} announced ${100 * MIB} bytes (content-length) in answer to GET /listing, more ` +
      "than the 1000 bytes svc accepts in one response; svc closed the connection without reading it. " +
      `Report it to the admins of ${origin}`,
    "a cap the caller set is not the setting's: no advice to raise SVC_HTTP_MAX_RESPONSE_MIB",
  );
  t.true((await server.done).closedEarly);
});

test("a request may bring its own cap, larger or smaller than the client's", async (t) => {
  const server = await givenStreamingServer(t, 3 * MIB, false);
  const small = client({ maxResponseBytes: MIB });
  const response = await small.request({ method: "GET", url: server.url, maxResponseBytes: 4 * MIB });
  t.is(response.body.length, 3 * MIB);
  await t.throwsAsync(small.request({ method: "GET", url: server.url }), {
    instanceOf: ResponseTooLargeError,
  });
  await t.throwsAsync(client().request({ method: "GET", url: server.url, maxResponseBytes: MIB }), {
    instanceOf: ResponseTooLargeError,
  });
});

/** Runs `body` with the variables set, then restores them (serial tests only). */
function withEnv<T>(vars: Readonly<Record<string, string>>, body: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  Object.assign(process.env, vars);
  try {
    return body();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

test.serial("SVC_HTTP_TIMEOUT_MS and SVC_HTTP_MAX_RESPONSE_MIB are read by the one settings reader", (t) => {
  const timeout = t.throws(() => withEnv({ SVC_HTTP_TIMEOUT_MS: "30s" }, () => client()), {
    instanceOf: SettingError,
  });
  t.is(
    timeout?.message,
    'SVC_HTTP_TIMEOUT_MS="30s" is not a whole number of milliseconds from 1 up to 2147483647; use e.g. SVC_HTTP_TIMEOUT_MS=30000',
  );
  const cap = t.throws(() => withEnv({ SVC_HTTP_MAX_RESPONSE_MIB: "lots" }, () => client()), {
    instanceOf: SettingError,
  });
  t.is(
    cap?.message,
    'SVC_HTTP_MAX_RESPONSE_MIB="lots" is not a whole number from 1 up to 1024; use e.g. SVC_HTTP_MAX_RESPONSE_MIB=32',
  );
  t.is(withEnv({ SVC_HTTP_MAX_RESPONSE_MIB: "5" }, () => client()).maxResponseBytes, 5 * MIB);
  t.is(client({ maxResponseBytes: 7 }).maxResponseBytes, 7, "an explicit cap wins over the setting");
});

test("a refused connection rejects with BackendUnreachableError, never an unhandled 'error' event", async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const error = await t.throwsAsync(
    client().request({ method: "GET", url: `http://127.0.0.1:${port}/projects/demo/issues?since=x` }),
    { instanceOf: BackendUnreachableError },
  );
  t.is(
    error?.message,
    `cannot reach the backend: GET http://127.0.0.1:${port}/projects/demo/issues failed: nothing is listening at http://127.0.0.1:${port} (ECONNREFUSED); is the server running?`,
  );
  t.false(error?.sent, "a refused connection sent nothing");
});

test("a host name that does not resolve is named as such, not as a server that is down", async (t) => {
  const dns = new HttpClient({ agent: "http-test", allowedOrigins: "http://nonexistent.invalid:*" });
  const error = await t.throwsAsync(
    dns.request({ method: "GET", url: "http://nonexistent.invalid:7878/projects/demo/issues" }),
    { instanceOf: BackendUnreachableError },
  );
  t.regex(
    error?.message ?? "",
    /^cannot reach the backend: GET http:\/\/nonexistent\.invalid:7878\/projects\/demo\/issues failed: the host name nonexistent\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\); check the URL$/,
  );
  t.false(error?.sent);
});

test("no answer within the timeout names the setting", async (t) => {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
  const error = await t.throwsAsync(client().request({ method: "POST", url, timeoutMs: 50 }), {
    instanceOf: BackendUnreachableError,
  });
  t.is(
    error?.message,
    `cannot reach the backend: POST ${url} failed: no answer within 50 ms (SVC_HTTP_TIMEOUT_MS); is ${new URL(url).origin} overloaded or stuck?`,
  );
  t.true(error?.sent, "a request that timed out may have been acted on");
});

/** A server whose every answer is `status` with `location` (when given). */
async function givenRedirectingServer(
  t: ExecutionContext,
  status: number,
  location?: string,
): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(status, location === undefined ? {} : { location });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test("a redirect is never followed; the same path at another origin is offered as the remote URL", async (t) => {
  const origin = await givenRedirectingServer(t, 302, "http://localhost:9999/projects/demo/issues?since=x");
  const error = await t.throwsAsync(
    client().request({ method: "GET", url: `${origin}/projects/demo/issues?since=x` }),
    { instanceOf: RedirectError },
  );
  t.is(
    error?.message,
    `${origin} answered 302 with Location http://localhost:9999/projects/demo/issues?…; svc never follows ` +
      "redirects (a redirect could send your credentials elsewhere): if the new address is right, use it in " +
      "the remote URL: git remote set-url origin svc::http://localhost:9999/projects/demo",
  );
  t.is(error?.remoteUrl, "svc::http://localhost:9999/projects/demo");
});

const NAMED_ONLY: readonly (readonly [string, number, string | undefined, string])[] = [
  [
    "a login page elsewhere",
    302,
    "https://sso.example.com/login?next=%2F",
    "with Location https://sso.example.com/login?…",
  ],
  [
    "another path on the same origin",
    301,
    "/v2/projects/demo/issues",
    "with Location ORIGIN/v2/projects/demo/issues",
  ],
  ["no Location at all", 307, undefined, "without a usable Location"],
  [
    "a host that is no svc remote (not loopback, no backend marker)",
    308,
    "https://example.com/projects/demo/issues",
    "with Location https://example.com/projects/demo/issues",
  ],
];

for (const [name, status, location, named] of NAMED_ONLY) {
  test(`a redirect to ${name} is named, with no remote URL to set`, async (t) => {
    const origin = await givenRedirectingServer(t, status, location);
    const error = await t.throwsAsync(
      client().request({ method: "GET", url: `${origin}/projects/demo/issues` }),
      { instanceOf: RedirectError },
    );
    t.is(
      error?.message,
      `${origin} answered ${status} ${named.replace("ORIGIN", origin)}; svc never follows redirects (a redirect could send your credentials elsewhere)`,
    );
    t.is(error?.remoteUrl, undefined);
  });
}

test("a request that fails before it is sent still has its 'error' listened to: no crash when the socket fails later", async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const url = `http://127.0.0.1:${port}/`;
  // A NaN timeout is refused after the socket is already connecting (a bug of the caller: node would run
  // its timer after 1 ms).
  await t.throwsAsync(client().request({ method: "GET", url, timeoutMs: Number.NaN }), {
    instanceOf: RangeError,
  });
  // The first socket's ECONNREFUSED comes before this one's; unheard, it would have ended the process.
  await t.throwsAsync(client().request({ method: "GET", url }), { instanceOf: BackendUnreachableError });
});

test("an aborted request stops waiting at a closed rate-limit gate at once, even when the sleep returns early", async (t) => {
  const server = createServer((_req, res) => {
    res.writeHead(429, { "retry-after": "30", "content-type": "application/json" });
    res.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
  const controller = new AbortController();
  let sleeps = 0;
  // Like the listener's sleep: it returns at once once the signal is aborted.
  const client = new HttpClient({
    agent: "test",
    sleep: async () => {
      sleeps++;
      controller.abort(new Error("stopped"));
    },
  });
  const error = await t.throwsAsync(client.request({ method: "GET", url, signal: controller.signal }));
  t.is(error?.message, "stopped");
  t.true(sleeps <= 2, `slept ${sleeps} times`);
});

/** A server whose every answer is `answer`'s; returns its URL and the number of requests it had. */
async function givenServer(
  t: ExecutionContext,
  answer: (res: ServerResponse) => void,
): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/projects/demo/issues`,
    requests: () => requests,
  };
}

const INSTANT = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ";

test("parseRetryAfter reads whole seconds, uncapped; the date form and anything else is unreadable", (t) => {
  t.is(parseRetryAfter("3600"), 3600);
  t.is(parseRetryAfter(" 5 "), 5);
  t.is(parseRetryAfter("0"), 0);
  t.is(parseRetryAfter(undefined), undefined);
  t.is(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), undefined);
  t.is(parseRetryAfter("-1"), undefined);
  t.is(parseRetryAfter("1.5"), undefined);
  t.is(parseRetryAfter("12345678901"), undefined, "more than ten digits");
});

test("describeInstant names the instant to the second and how far ahead it is", (t) => {
  const now = Date.UTC(2025, 0, 6, 17, 40, 5, 400);
  t.is(describeInstant(now + 3600_000, now), "2025-01-06T18:40:05Z (in 60 min)");
  t.is(describeInstant(now + 90_000, now), "2025-01-06T17:41:35Z (in 90 s)");
  t.is(describeInstant(now + 3 * 3600_000 + 5 * 60_000, now), "2025-01-06T20:45:05Z (in 3 h 5 min)");
});

for (const status of [429, 503]) {
  test(`a ${status} with Retry-After: 3600 ends the request at once, naming the origin and the time; the next request to that origin is not sent`, async (t) => {
    const server = await givenServer(t, (res) => {
      res.writeHead(status, { "retry-after": "3600", "content-type": "application/json" });
      res.end("{}");
    });
    const sleeps: number[] = [];
    const waiting = new HttpClient({
      agent: "http-test",
      allowedOrigins: "http://127.0.0.1:*",
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    const origin = new URL(server.url).origin;
    const error = await t.throwsAsync(waiting.request({ method: "POST", url: server.url }), {
      instanceOf: RetryLaterError,
    });
    t.regex(
      error?.message ?? "",
      new RegExp(
        `^the server at ${origin.replaceAll(".", "\\.")} asked svc to send no request before ${INSTANT} \\(in 60 min\\) ` +
          `\\(${status} with Retry-After: 3600\\); svc waits at most 60 s for a server, so it stopped here$`,
      ),
    );
    t.true(Math.abs((error?.untilMs ?? 0) - (Date.now() + 3600_000)) < 60_000);
    t.is(error?.after, `after ${new Date(error?.untilMs ?? 0).toISOString().replace(/\.\d+Z$/, "Z")}`);
    t.deepEqual(sleeps, [], "no wait at all");
    t.is(server.requests(), 1);

    const next = await t.throwsAsync(waiting.request({ method: "GET", url: server.url }), {
      instanceOf: RetryLaterError,
    });
    t.regex(next?.message ?? "", /\(an earlier answer's Retry-After\); svc waits at most 60 s/);
    t.is(server.requests(), 1, "the gate held the second request back");
  });
}

test("a 429 with a short Retry-After is waited out and the request sent again; a 503 with one is the caller's", async (t) => {
  let answers = 0;
  const limited = await givenServer(t, (res) => {
    answers++;
    res.writeHead(answers === 1 ? 429 : 200, { "retry-after": "1" });
    res.end("ok");
  });
  const sleeps: number[] = [];
  const waiting = new HttpClient({
    agent: "http-test",
    allowedOrigins: "http://127.0.0.1:*",
    sleep: (ms) => {
      sleeps.push(ms);
      return new Promise((resolve) => setTimeout(resolve, ms));
    },
  });
  const response = await waiting.request({ method: "GET", url: limited.url });
  t.is(response.status, 200);
  t.is(limited.requests(), 2);
  t.true(sleeps.length > 0 && sleeps.every((ms) => ms > 0 && ms <= 1000), JSON.stringify(sleeps));

  const unavailable = await givenServer(t, (res) => {
    res.writeHead(503, { "retry-after": "5" });
    res.end("down for maintenance");
  });
  const answer = await waiting.request({ method: "GET", url: unavailable.url });
  t.is(answer.status, 503);
  t.is(unavailable.requests(), 1);
});

test("an answer cut off after its status line names the bytes read and announced; the request was sent", async (t) => {
  const server = await givenServer(t, (res) => {
    res.writeHead(200, { "content-length": "100" });
    res.write(Buffer.alloc(40, "a"), () => res.destroy());
  });
  const error = await t.throwsAsync(client().request({ method: "POST", url: server.url }), {
    instanceOf: BackendUnreachableError,
  });
  const origin = new URL(server.url).origin;
  t.is(
    error?.message,
    `cannot reach the backend: POST ${server.url} failed: ${origin} closed the connection in the middle of its ` +
      "answer (ECONNRESET, after 40 bytes of the 100 it announced)",
  );
  t.true(error?.sent);
});

test("json(): an answer that is not JSON names the request, the status and what came", async (t) => {
  const server = await givenServer(t, (res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html><body>Sign in</body></html>");
  });
  const error = await t.throwsAsync(client().json({ method: "GET", url: `${server.url}?token=secret` }), {
    instanceOf: NotJsonError,
  });
  t.is(
    error?.message,
    `GET ${server.url} answered 200 with a body that is not JSON: "<html><body>Sign in</body></html>" ` +
      "(a proxy or sign-in page between svc and the server may have answered in its place)",
  );
});

test("isServerFault: no answer, too slow, a listing past its time, a 5xx, 408, 429, an unexpected 2xx, not JSON, a long Retry-After; not a 4xx or the user's mistake", (t) => {
  const url = new URL("http://127.0.0.1:1/x");
  const withStatus = (status: number) => new SvcError("SVC_BACKEND", "x", { data: { status } });
  for (const fault of [
    new BackendUnreachableError("GET", url, { code: "ECONNRESET" }),
    new BackendUnreachableError("GET", url, { timeoutMs: 1000, slow: { received: 9 } }),
    new ListingTimeoutError("SVC_BACKEND", "listing issues at x did not end within 1000 ms"),
    new RetryLaterError(url, Date.now() + 3600_000, { status: 429, seconds: 3600 }),
    new NotJsonError("GET x", 200, Buffer.from("<html>")),
    new HttpError(502, "GET", "x", ""),
    withStatus(500),
    withStatus(408),
    withStatus(429),
    withStatus(200),
    // A backend's own words around a fault (the tracker's "created issue TEST-4, then …") keep it one.
    new SvcError("SVC_BACKEND", "created issue TEST-4, then x", { cause: withStatus(502) }),
  ])
    t.true(isServerFault(fault), fault.message);
  for (const other of [
    withStatus(400),
    withStatus(404),
    withStatus(409),
    new UserFacingError("SVC_USAGE", "bad setting"),
    new RedirectError(url, 302, "http://127.0.0.1:2/x"),
    new Error("a bug"),
    new SvcError("SVC_BACKEND", "created issue TEST-4, then x", { cause: withStatus(409) }),
  ])
    t.false(isServerFault(other), other.message);
});

// ---------------------------------------------------------------------------------------------------------
// SVC_HTTP_TIMEOUT_MS bounds a whole request, not the silence between two bytes.

/** `text` as a regular expression source that matches it literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A server that answers 200, then a space every 100 ms, forever (it never ends its answer); `hungUp`
 * resolves when the client closed the connection.
 */
async function givenDrippingServer(t: ExecutionContext): Promise<{ url: string; hungUp: Promise<void> }> {
  let hungUp: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    hungUp = resolve;
  });
  const server = await givenServer(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    const timer = setInterval(() => res.write(" "), 100);
    res.on("close", () => {
      clearInterval(timer);
      hungUp();
    });
  });
  return { url: server.url, hungUp: closed };
}

/** Every byte of the answer's body, streamed or not. */
async function bodyOf(response: Promise<{ body: Buffer; chunks?: AsyncIterable<Buffer> }>): Promise<Buffer> {
  const { body, chunks } = await response;
  if (chunks === undefined) return body;
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

for (const stream of [false, true]) {
  test(`a server that drips its answer a byte every 100 ms is cut off at SVC_HTTP_TIMEOUT_MS, not held while it drips (${stream ? "streamed" : "read whole"})`, async (t) => {
    const timeoutMs = 1000;
    const server = await givenDrippingServer(t);
    const origin = new URL(server.url).origin;
    const started = performance.now();
    const error = await t.throwsAsync(
      bodyOf(client().request({ method: "GET", url: server.url, timeoutMs, stream })),
      { instanceOf: BackendUnreachableError },
    );
    const ms = performance.now() - started;
    t.regex(
      error?.message ?? "",
      new RegExp(
        `^cannot reach the backend: GET ${literal(server.url)} failed: the answer came too slowly: \\d+ bytes ` +
          `of its body in 1000 ms \\(SVC_HTTP_TIMEOUT_MS\\); is ${literal(origin)} overloaded or stuck\\?$`,
      ),
    );
    t.true(error?.sent, "the server had the request");
    await server.hungUp;
    // Ended, and by the deadline: no sooner than it, nowhere near the forever of the drip (an idle timer
    // never fired). The upper bound is loose on purpose: the machine may be busy.
    t.true(ms >= timeoutMs - 20 && ms < 10 * timeoutMs, `ended after ${Math.round(ms)} ms`);
  });
}

test("a server that sends its status line and then nothing is cut off at SVC_HTTP_TIMEOUT_MS too", async (t) => {
  const server = await givenServer(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
  });
  const error = await t.throwsAsync(client().request({ method: "GET", url: server.url, timeoutMs: 1000 }), {
    instanceOf: BackendUnreachableError,
  });
  t.is(
    error?.message,
    `cannot reach the backend: GET ${server.url} failed: the answer came too slowly: 0 bytes of its body in ` +
      `1000 ms (SVC_HTTP_TIMEOUT_MS); is ${new URL(server.url).origin} overloaded or stuck?`,
  );
});

/** A server that sends `rounds` pieces of `bytes` bytes, one every `everyMs`, then ends its answer. */
async function givenSteadyServer(
  t: ExecutionContext,
  rounds: number,
  bytes: number,
  everyMs: number,
): Promise<string> {
  const server = await givenServer(t, (res) => {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(Buffer.alloc(bytes, "a"));
      if (++sent === rounds) {
        clearInterval(timer);
        res.end();
      }
    }, everyMs);
    res.on("close", () => clearInterval(timer));
  });
  return server.url;
}

test("a streamed answer gets SVC_HTTP_TIMEOUT_MS again for each response cap's worth of it; read whole, the same answer is too slow", async (t) => {
  // 8 pieces of 128 KiB, one every 300 ms: 2.4 s in all, two caps' worth in each 300 ms.
  const url = await givenSteadyServer(t, 8, 128 * 1024, 300);
  const http = new HttpClient({
    agent: "http-test",
    allowedOrigins: "http://127.0.0.1:*",
    maxResponseBytes: 64 * 1024,
  });
  const body = await bodyOf(http.request({ method: "GET", url, timeoutMs: 1000, stream: true }));
  t.is(body.length, 8 * 128 * 1024);

  const whole = await t.throwsAsync(
    http.request({ method: "GET", url, timeoutMs: 1000, maxResponseBytes: 2 * 1024 * 1024 }),
    { instanceOf: BackendUnreachableError },
  );
  t.regex(
    whole?.message ?? "",
    /the answer came too slowly: \d+ bytes of its body in 1000 ms \(SVC_HTTP_TIMEOUT_MS\)/,
  );
});

test("a streamed answer's clock stops while the caller holds a chunk: svc's own work is not the server's slowness", async (t) => {
  const server = await givenServer(t, (res) => {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end(Buffer.alloc(1000, "a"));
  });
  const response = await client().request({ method: "GET", url: server.url, timeoutMs: 1000, stream: true });
  let bytes = 0;
  for await (const chunk of response.chunks ?? []) {
    bytes += chunk.length;
    // Two and a half timeouts of the caller's own work on one chunk.
    await new Promise((resolve) => setTimeout(resolve, 2500));
  }
  t.is(bytes, 1000);
});

test("no timer of the client outlives its request: a process that made requests of every kind exits at once", async (t) => {
  const ok = await givenServer(t, (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end("[]");
  });
  const big = await givenStreamingServer(t, 4 * MIB, false);
  const dripping = await givenDrippingServer(t);
  const refused = createServer();
  await new Promise<void>((resolve) => refused.listen(0, "127.0.0.1", resolve));
  const refusedUrl = `http://127.0.0.1:${(refused.address() as AddressInfo).port}/x`;
  await new Promise<void>((resolve) => refused.close(() => resolve()));
  // With a timeout of a minute, one timer left behind would hold the process for that minute.
  const script = `
    import { HttpClient } from ${JSON.stringify(fileURLToPath(new URL("./http.js", import.meta.url)))};
    const http = new HttpClient({ agent: "timer-test", allowedOrigins: "http://127.0.0.1:*" });
    await http.request({ method: "GET", url: ${JSON.stringify(ok.url)} });
    const whole = await http.request({ method: "GET", url: ${JSON.stringify(ok.url)}, stream: true });
    for await (const chunk of whole.chunks) void chunk;
    const early = await http.request({ method: "GET", url: ${JSON.stringify(big.url)}, stream: true });
    for await (const chunk of early.chunks) break;
    await http.request({ method: "GET", url: ${JSON.stringify(refusedUrl)} }).catch(() => {});
    await http.request({ method: "GET", url: ${JSON.stringify(dripping.url)}, timeoutMs: 300 }).catch(() => {});
    await new Promise((resolve) => setImmediate(resolve));
    process.stdout.write(JSON.stringify(process.getActiveResourcesInfo()));
  `;
  const started = performance.now();
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, SVC_HTTP_TIMEOUT_MS: "60000" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const ms = performance.now() - started;
  t.is(code, 0);
  t.false((JSON.parse(out || "[]") as string[]).includes("Timeout"), `still active at the end: ${out}`);
  t.true(ms < 30_000, `the process took ${Math.round(ms)} ms to exit`);
  await dripping.hungUp;
});

test("a 429 with Retry-After: 0 forever is backed off from like one without it: the request ends after 4 attempts", async (t) => {
  const server = await givenServer(t, (res) => {
    res.writeHead(429, { "retry-after": "0", "content-type": "application/json" });
    res.end("{}");
  });
  const sleeps: number[] = [];
  const waiting = new HttpClient({
    agent: "http-test",
    allowedOrigins: "http://127.0.0.1:*",
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  const response = await waiting.request({ method: "GET", url: server.url });
  t.is(response.status, 429);
  t.is(server.requests(), 4);
  t.is(sleeps.length, 3, JSON.stringify(sleeps));
  t.true(
    sleeps.every((ms) => ms >= 500),
    JSON.stringify(sleeps),
  );
});
