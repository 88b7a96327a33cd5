/**
 * A fake of the pulse daemon's trigger endpoint on a loopback port, for the messenger listener's tests: the
 * listener's view of the daemon without SQLite, the scheduler or the runner.
 *
 * - `POST /api/pulse/trigger` checks `Authorization: Bearer <token>` (401 otherwise), validates the body
 *   with the daemon's own `parseTriggerBody` (400 `{error: {code, message, field}}`), and enforces
 *   `dedup_key` like the daemon: a new key answers 201 `{pulse}`, a known one 200 `{pulse, deduplicated:
 *   true}` with the existing pulse.
 * - `GET /api/health` answers 200.
 * - `down()` closes the listening socket (clients get ECONNREFUSED); `up()` listens on the same port again.
 * - `fail()` answers the next triggers (or all of them) with a given status, e.g. 503 with `Retry-After`.
 * - `onStored` runs after a pulse is stored and before the answer is written: the place to simulate a
 *   listener crash between the daemon's commit and the listener's offset save.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ExecutionContext } from "ava";
import { InvalidPulse, parseTriggerBody } from "../server/pulse/pulse-input.js";

export const FAKE_PULSE_API_TOKEN = "fake-pulse-api-token-0123456789abcdefghijklmnop";

export interface FakePulse {
  readonly id: number;
  readonly prompt: string;
  readonly source: string;
  readonly priority: string;
  readonly scheduled_at: string;
  readonly dedup_key: string | null;
  readonly status: "pending";
}

export interface FakeTrigger {
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  /** The parsed JSON body (`undefined` when it was not JSON). */
  readonly body: unknown;
  readonly status: number;
}

export interface FakePulseApiFailure {
  readonly status: number;
  /** Seconds, sent as `Retry-After`. */
  readonly retryAfter?: number;
  /** Default: until `clearFailure()`. */
  readonly times?: number;
}

export interface FakePulseApi {
  readonly url: string;
  readonly token: string;
  /** Every trigger request that got an answer, oldest first. */
  readonly triggers: readonly FakeTrigger[];
  /** Pulses created, in id order. */
  readonly pulses: readonly FakePulse[];
  readonly isUp: boolean;
  down(): Promise<void>;
  up(): Promise<void>;
  fail(failure: FakePulseApiFailure): void;
  clearFailure(): void;
  setToken(token: string): void;
  onStored: ((pulse: FakePulse, deduplicated: boolean) => void) | undefined;
  close(): Promise<void>;
}

export async function startFakePulseApi(options: { token?: string } = {}): Promise<FakePulseApi> {
  let token = options.token ?? FAKE_PULSE_API_TOKEN;
  const triggers: FakeTrigger[] = [];
  const pulses: FakePulse[] = [];
  const byKey = new Map<string, FakePulse>();
  let failure: { spec: FakePulseApiFailure; left: number } | undefined;
  let server: Server | undefined;
  let port = 0;

  function send(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://fake.invalid").pathname;
    if (req.method === "GET" && path === "/api/health") return send(res, 200, { status: "ok" });
    if (path !== "/api/pulse/trigger") {
      return send(res, 404, { error: { code: "not_found", message: `no route ${req.method} ${path}` } });
    }
    if (req.method !== "POST")
      return send(res, 405, { error: { code: "method_not_allowed", message: "use POST" } });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      body = undefined;
    }
    const authorization = req.headers.authorization;
    const record = (status: number) =>
      triggers.push({ authorization, contentType: req.headers["content-type"], body, status });
    if (authorization !== `Bearer ${token}`) {
      record(401);
      return send(res, 401, { error: { code: "unauthorized", message: "missing or wrong bearer token" } });
    }
    if (failure) {
      const { spec } = failure;
      if (--failure.left <= 0) failure = undefined;
      record(spec.status);
      return send(
        res,
        spec.status,
        { error: { code: "fake_failure", message: `fake pulse API answers ${spec.status}` } },
        spec.retryAfter === undefined ? {} : { "retry-after": String(spec.retryAfter) },
      );
    }
    let input: ReturnType<typeof parseTriggerBody>;
    try {
      input = parseTriggerBody(body, Date.now(), { source: "api", maxAttempts: 3 });
    } catch (error) {
      if (!(error instanceof InvalidPulse)) throw error;
      record(400);
      return send(res, 400, { error: { code: "invalid_pulse", message: error.message, field: error.field } });
    }
    const existing = input.dedupKey === undefined ? undefined : byKey.get(input.dedupKey);
    if (existing) {
      record(200);
      fakeApi.onStored?.(existing, true);
      return send(res, 200, { pulse: existing, deduplicated: true });
    }
    const pulse: FakePulse = {
      id: pulses.length + 1,
      prompt: input.prompt,
      source: input.source,
      priority: input.priority,
      scheduled_at: input.scheduledAt,
      dedup_key: input.dedupKey ?? null,
      status: "pending",
    };
    pulses.push(pulse);
    if (input.dedupKey !== undefined) byKey.set(input.dedupKey, pulse);
    record(201);
    fakeApi.onStored?.(pulse, false);
    return send(res, 201, { pulse });
  }

  async function listen(): Promise<void> {
    const next = createServer((req, res) => {
      handle(req, res).catch((cause: unknown) => {
        if (!res.headersSent)
          send(res, 500, { error: { code: "internal", message: (cause as Error).message } });
      });
    });
    await new Promise<void>((resolve, reject) => {
      next.once("error", reject);
      next.listen(port, "127.0.0.1", () => {
        port = (next.address() as AddressInfo).port;
        resolve();
      });
    });
    server = next;
  }

  async function stop(): Promise<void> {
    const current = server;
    server = undefined;
    if (!current) return;
    await new Promise<void>((resolve) => {
      current.close(() => resolve());
      current.closeAllConnections();
    });
  }

  await listen();
  const fakeApi: FakePulseApi = {
    url: `http://127.0.0.1:${port}`,
    get token() {
      return token;
    },
    triggers,
    pulses,
    get isUp() {
      return server !== undefined;
    },
    down: stop,
    async up() {
      if (!server) await listen();
    },
    fail(spec) {
      failure = { spec, left: spec.times ?? Number.POSITIVE_INFINITY };
    },
    clearFailure() {
      failure = undefined;
    },
    setToken(next) {
      token = next;
    },
    onStored: undefined,
    close: stop,
  };
  return fakeApi;
}

/** `startFakePulseApi` for one ava test; the test's teardown closes it. */
export async function givenFakePulseApi(
  t: ExecutionContext,
  options: { token?: string } = {},
): Promise<FakePulseApi> {
  const api = await startFakePulseApi(options);
  t.teardown(() => api.close());
  return api;
}
