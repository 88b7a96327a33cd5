/**
 * A fake of the Telegram Bot API's `getUpdates` (https://core.telegram.org/bots/api#getupdates) on an
 * ephemeral loopback port, for the messenger listener's tests. Point `MESSENGER_API_BASE` at `url`.
 *
 * What it copies from the real service:
 * - `GET` (query) or `POST` (JSON or form) `/bot<token>/getUpdates` with `offset`, `limit` (1–100, default
 *   100), `timeout` (long-poll seconds, default 0) and `allowed_updates` (a JSON array).
 * - Answers `{ok: true, result: Update[]}` in `update_id` order; errors `{ok: false, error_code, description,
 *   parameters?: {retry_after}}`.
 * - Confirming: a request with `offset` drops every held update whose id is below it, for good. A negative
 *   offset keeps only the last `-offset` updates. Unconfirmed updates stay and are returned again.
 * - Long polling: with nothing to return, the request waits until an update arrives or `timeout` ends.
 * - A second `getUpdates` while one is waiting ends the first with 409 "Conflict: terminated by other
 *   getUpdates request; …", as when two pollers share a token.
 * - A wrong token answers 401 `Unauthorized`.
 * ASSUMPTION: 429 carries `parameters.retry_after` in the body and, only when asked (`retryAfterHeader`), a
 * `Retry-After` header; reports of the real service show the body field, not the header.
 *
 * Failure switches (`fail`) answer every `getUpdates` (or the next `times`) with 401, 409, 429 or 5xx.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ExecutionContext } from "ava";
import { readRequestBody } from "../core/request-body.js";
import { FailureSwitch } from "./failure-switch.js";
import { givenFake } from "./fake-server.js";
import { closeServer, listenOnLoopback } from "./loopback.js";

export const FAKE_BOT_TOKEN = "123456789:AAFakeBotToken_0123456789-abcdefghijk";

export interface FakeMessage {
  readonly message_id: number;
  readonly from: { readonly id: number; readonly is_bot: false; readonly first_name: string };
  readonly chat: { readonly id: number; readonly type: "private" | "group" | "supergroup" };
  readonly date: number;
  readonly text?: string;
  readonly photo?: readonly { readonly file_id: string; readonly width: number; readonly height: number }[];
}

export interface FakeUpdate {
  readonly update_id: number;
  readonly message?: FakeMessage;
  readonly edited_message?: FakeMessage;
}

export interface FakeGetUpdatesRequest {
  readonly method: string;
  readonly tokenOk: boolean;
  readonly offset: number | undefined;
  readonly timeout: number | undefined;
  readonly allowedUpdates: readonly string[] | undefined;
  /** The status it was answered with; `undefined` while it is still waiting. */
  status: number | undefined;
}

export interface FakeMessengerFailure {
  readonly status: 401 | 409 | 429 | 500 | 502;
  readonly description?: string;
  /** For 429: `parameters.retry_after`, seconds. */
  readonly retryAfter?: number;
  /** For 429: also send `Retry-After`. */
  readonly retryAfterHeader?: boolean;
  /** Answer this many requests so, then behave again; default: until `clearFailure()`. */
  readonly times?: number;
}

export interface FakeMessengerOptions {
  readonly token?: string;
  /** The first `update_id`; default 100000 (real ids are large, so no code may assume they start at 1). */
  readonly firstUpdateId?: number;
}

export interface FakeMessenger {
  /** The base URL, for `MESSENGER_API_BASE`. */
  readonly url: string;
  /** The token the fake accepts now (`setToken` changes it, as revoking in @BotFather does). */
  readonly token: string;
  /** Every `getUpdates` request, oldest first. */
  readonly requests: readonly FakeGetUpdatesRequest[];
  /** Updates held, i.e. not yet confirmed. */
  pending(): readonly FakeUpdate[];
  /** Queues a message from `chatId` (text, or a photo when `text` is absent) and wakes waiting polls. */
  sendMessage(chatId: number, text?: string): FakeUpdate;
  /** Queues an update that is not a message (an edited message). */
  sendEdit(chatId: number, text: string): FakeUpdate;
  fail(failure: FakeMessengerFailure): void;
  clearFailure(): void;
  setToken(token: string): void;
  close(): Promise<void>;
}

interface Waiter {
  readonly request: FakeGetUpdatesRequest;
  readonly res: ServerResponse;
  readonly limit: number;
  readonly timer: NodeJS.Timeout;
}

const CONFLICT =
  "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";
const FAILURE_DESCRIPTIONS: Record<number, string> = {
  401: "Unauthorized",
  409: CONFLICT,
  500: "Internal Server Error",
  502: "Bad Gateway",
};

export async function startFakeMessenger(options: FakeMessengerOptions = {}): Promise<FakeMessenger> {
  const messenger = new FakeMessengerServer(options);
  await messenger.listen();
  return messenger;
}

class FakeMessengerServer implements FakeMessenger {
  url = "";
  token: string;
  readonly requests: FakeGetUpdatesRequest[] = [];
  private nextUpdateId: number;
  private readonly nextMessageId = new Map<number, number>();
  private held: FakeUpdate[] = [];
  private waiter: Waiter | undefined;
  private readonly failures = new FailureSwitch<FakeMessengerFailure>();
  private readonly server: Server;

  constructor(options: FakeMessengerOptions) {
    this.token = options.token ?? FAKE_BOT_TOKEN;
    this.nextUpdateId = options.firstUpdateId ?? 100_000;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((cause: unknown) => {
        if (!res.headersSent) error(res, undefined, 500, `fake messenger: ${(cause as Error).message}`);
      });
    });
  }

  async listen(): Promise<void> {
    this.url = await listenOnLoopback(this.server);
  }

  pending(): readonly FakeUpdate[] {
    return [...this.held];
  }

  sendMessage(chatId: number, text?: string): FakeUpdate {
    return this.queue({ message: this.message(chatId, text) });
  }

  sendEdit(chatId: number, text: string): FakeUpdate {
    return this.queue({ edited_message: this.message(chatId, text) });
  }

  fail(spec: FakeMessengerFailure): void {
    this.failures.fail(spec);
  }

  clearFailure(): void {
    this.failures.clear();
  }

  setToken(next: string): void {
    this.token = next;
  }

  close(): Promise<void> {
    if (this.waiter) clearTimeout(this.waiter.timer);
    this.waiter = undefined;
    return closeServer(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake.invalid");
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) return error(res, undefined, 404, "Not Found");
    const body = (await readRequestBody(req)).bytes.toString("utf8");
    const params = readParams(url, req.headers["content-type"], body);
    if (params === undefined) return error(res, undefined, 400, "Bad Request: can't parse request body");
    const tokenOk = decodeURIComponent(match[1] as string) === this.token;
    if (match[2] !== "getUpdates") {
      return tokenOk ? error(res, undefined, 404, "Not Found") : error(res, undefined, 401, "Unauthorized");
    }
    const request: FakeGetUpdatesRequest = {
      method: req.method ?? "GET",
      tokenOk,
      offset: integerParam(params.offset),
      timeout: integerParam(params.timeout),
      allowedUpdates: arrayParam(params.allowed_updates),
      status: undefined,
    };
    this.requests.push(request);
    if (!tokenOk) return error(res, request, 401, "Unauthorized");
    const failure = this.failures.take();
    if (failure) return answerFailure(res, request, failure);
    this.getUpdates(res, request, params);
  }

  /** Confirms by `offset`, then answers at once or holds the request as the one long poll. */
  private getUpdates(
    res: ServerResponse,
    request: FakeGetUpdatesRequest,
    params: Record<string, unknown>,
  ): void {
    if (this.waiter) {
      // The real service ends the older poll when a newer one arrives.
      const older = this.waiter;
      this.waiter = undefined;
      clearTimeout(older.timer);
      error(older.res, older.request, 409, CONFLICT);
    }
    this.confirm(request.offset);
    const limit = Math.min(Math.max(integerParam(params.limit) ?? 100, 1), 100);
    const timeoutS = Math.min(Math.max(request.timeout ?? 0, 0), 50);
    if (this.held.length > 0 || timeoutS === 0) {
      answer(res, request, 200, { ok: true, result: this.held.slice(0, limit) });
      return;
    }
    const timer = setTimeout(() => {
      if (this.waiter?.res === res) this.waiter = undefined;
      answer(res, request, 200, { ok: true, result: [] });
    }, timeoutS * 1000);
    this.waiter = { request, res, limit, timer };
    res.on("close", () => {
      if (this.waiter?.res === res) {
        clearTimeout(timer);
        this.waiter = undefined;
      }
    });
  }

  private confirm(offset: number | undefined): void {
    if (offset === undefined) return;
    if (offset < 0) this.held = this.held.slice(offset);
    else this.held = this.held.filter((update) => update.update_id >= offset);
  }

  /** Answers the waiting long poll, if there is one and something to give it. */
  private release(): void {
    const current = this.waiter;
    if (!current || this.held.length === 0) return;
    this.waiter = undefined;
    clearTimeout(current.timer);
    answer(current.res, current.request, 200, { ok: true, result: this.held.slice(0, current.limit) });
  }

  private queue(update: Omit<FakeUpdate, "update_id">): FakeUpdate {
    const full = { update_id: this.nextUpdateId++, ...update };
    this.held.push(full);
    this.release();
    return full;
  }

  private message(chatId: number, text: string | undefined): FakeMessage {
    const id = (this.nextMessageId.get(chatId) ?? 0) + 1;
    this.nextMessageId.set(chatId, id);
    return {
      message_id: id,
      from: { id: Math.abs(chatId), is_bot: false, first_name: "Fake" },
      chat: { id: chatId, type: chatId < 0 ? "supergroup" : "private" },
      date: Math.floor(Date.now() / 1000),
      ...(text === undefined ? { photo: [{ file_id: `photo-${id}`, width: 90, height: 90 }] } : { text }),
    };
  }
}

function answerFailure(
  res: ServerResponse,
  request: FakeGetUpdatesRequest,
  spec: FakeMessengerFailure,
): void {
  if (spec.status === 429) {
    const retryAfter = spec.retryAfter ?? 1;
    error(
      res,
      request,
      429,
      spec.description ?? `Too Many Requests: retry after ${retryAfter}`,
      { retry_after: retryAfter },
      spec.retryAfterHeader ? { "retry-after": String(retryAfter) } : {},
    );
    return;
  }
  error(res, request, spec.status, spec.description ?? FAILURE_DESCRIPTIONS[spec.status] ?? "Error");
}

function answer(
  res: ServerResponse,
  request: FakeGetUpdatesRequest | undefined,
  status: number,
  body: unknown,
) {
  if (request) request.status = status;
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function error(
  res: ServerResponse,
  request: FakeGetUpdatesRequest | undefined,
  status: number,
  description: string,
  parameters?: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  answer(res, request, status, {
    ok: false,
    error_code: status,
    description,
    ...(parameters ? { parameters } : {}),
  });
}

/** `startFakeMessenger` for one ava test; the test's teardown closes it. */
export function givenFakeMessenger(
  t: ExecutionContext,
  options: FakeMessengerOptions = {},
): Promise<FakeMessenger> {
  return givenFake(t, () => startFakeMessenger(options));
}

/** Query parameters, overlaid by a JSON or form body; `undefined` when the body cannot be parsed. */
function readParams(
  url: URL,
  contentType: string | undefined,
  body: string,
): Record<string, unknown> | undefined {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (body === "") return params;
  if (contentType?.startsWith("application/json")) {
    try {
      const value: unknown = JSON.parse(body);
      if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
      return { ...params, ...(value as Record<string, unknown>) };
    } catch {
      return undefined;
    }
  }
  return { ...params, ...Object.fromEntries(new URLSearchParams(body)) };
}

function integerParam(value: unknown): number | undefined {
  const number = typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value;
  return typeof number === "number" && Number.isSafeInteger(number) ? number : undefined;
}

function arrayParam(value: unknown): string[] | undefined {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return Array.isArray(parsed) ? parsed.map(String) : undefined;
}
