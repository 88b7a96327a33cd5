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
import { readRequestBody } from "../core/request-body.js";
import { InvalidPulse, parseTriggerBody } from "../server/pulse/pulse-input.js";
import { FailureSwitch } from "./failure-switch.js";

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
  const api = new FakePulseApiServer(options.token ?? FAKE_PULSE_API_TOKEN);
  await api.up();
  return api;
}

/** An answer: status, JSON body and extra headers. */
interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

class FakePulseApiServer implements FakePulseApi {
  readonly triggers: FakeTrigger[] = [];
  readonly pulses: FakePulse[] = [];
  onStored: ((pulse: FakePulse, deduplicated: boolean) => void) | undefined;
  private readonly byKey = new Map<string, FakePulse>();
  private readonly failures = new FailureSwitch<FakePulseApiFailure>();
  private server: Server | undefined;
  private port = 0;

  constructor(public token: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get isUp(): boolean {
    return this.server !== undefined;
  }

  /** Listens on the port of the first `up()` (a free one the first time). */
  async up(): Promise<void> {
    if (this.server) return;
    const next = createServer((req, res) => {
      this.handle(req, res).catch((cause: unknown) => {
        if (!res.headersSent)
          send(res, { status: 500, body: errorBody("internal", (cause as Error).message) });
      });
    });
    await new Promise<void>((resolve, reject) => {
      next.once("error", reject);
      next.listen(this.port, "127.0.0.1", () => {
        this.port = (next.address() as AddressInfo).port;
        resolve();
      });
    });
    this.server = next;
  }

  async down(): Promise<void> {
    const current = this.server;
    this.server = undefined;
    if (!current) return;
    await new Promise<void>((resolve) => {
      current.close(() => resolve());
      current.closeAllConnections();
    });
  }

  close(): Promise<void> {
    return this.down();
  }

  fail(spec: FakePulseApiFailure): void {
    this.failures.fail(spec);
  }

  clearFailure(): void {
    this.failures.clear();
  }

  setToken(next: string): void {
    this.token = next;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://fake.invalid").pathname;
    if (req.method === "GET" && path === "/api/health")
      return send(res, { status: 200, body: { status: "ok" } });
    if (path !== "/api/pulse/trigger") {
      return send(res, { status: 404, body: errorBody("not_found", `no route ${req.method} ${path}`) });
    }
    if (req.method !== "POST")
      return send(res, { status: 405, body: errorBody("method_not_allowed", "use POST") });
    const received = await readRequestBody(req);
    let body: unknown;
    try {
      body = JSON.parse(received.bytes.toString("utf8"));
    } catch {
      body = undefined;
    }
    const reply = this.trigger(req.headers.authorization, body);
    this.triggers.push({
      authorization: req.headers.authorization,
      contentType: req.headers["content-type"],
      body,
      status: reply.status,
    });
    if (reply.stored) this.onStored?.(reply.stored.pulse, reply.stored.deduplicated);
    send(res, reply);
  }

  /** What a trigger gets: 401, the switched-on failure, 400 for an invalid pulse, or the pulse stored. */
  private trigger(
    authorization: string | undefined,
    body: unknown,
  ): Reply & { stored?: { pulse: FakePulse; deduplicated: boolean } } {
    if (authorization !== `Bearer ${this.token}`) {
      return { status: 401, body: errorBody("unauthorized", "missing or wrong bearer token") };
    }
    const failure = this.failures.take();
    if (failure) {
      return {
        status: failure.status,
        body: errorBody("fake_failure", `fake pulse API answers ${failure.status}`),
        headers: failure.retryAfter === undefined ? {} : { "retry-after": String(failure.retryAfter) },
      };
    }
    let input: ReturnType<typeof parseTriggerBody>;
    try {
      input = parseTriggerBody(body, Date.now(), { source: "api", maxAttempts: 3 });
    } catch (error) {
      if (!(error instanceof InvalidPulse)) throw error;
      return {
        status: 400,
        body: { error: { code: "invalid_pulse", message: error.message, field: error.field } },
      };
    }
    const existing = input.dedupKey === undefined ? undefined : this.byKey.get(input.dedupKey);
    if (existing) {
      return {
        status: 200,
        body: { pulse: existing, deduplicated: true },
        stored: { pulse: existing, deduplicated: true },
      };
    }
    const pulse = this.store(input);
    return { status: 201, body: { pulse }, stored: { pulse, deduplicated: false } };
  }

  private store(input: ReturnType<typeof parseTriggerBody>): FakePulse {
    const pulse: FakePulse = {
      id: this.pulses.length + 1,
      prompt: input.prompt,
      source: input.source,
      priority: input.priority,
      scheduled_at: input.scheduledAt,
      dedup_key: input.dedupKey ?? null,
      status: "pending",
    };
    this.pulses.push(pulse);
    if (input.dedupKey !== undefined) this.byKey.set(input.dedupKey, pulse);
    return pulse;
  }
}

function errorBody(code: string, message: string): unknown {
  return { error: { code, message } };
}

function send(res: ServerResponse, reply: Reply): void {
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...reply.headers,
  });
  res.end(text);
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
