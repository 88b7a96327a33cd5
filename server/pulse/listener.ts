/**
 * The messenger listener (`svc pulse listener`; Document 2 "What the service does" 4, DESIGN.md §7, notes
 * table row 15 and failure modes 5, 8, 9): a separate long-running process that long-polls a
 * Telegram-Bot-API-compatible `getUpdates`, keeps the messages of one chat (`MESSENGER_CHAT_ID`) and posts
 * each one to the daemon's `POST /api/pulse/trigger` with `source=messenger` and
 * `dedup_key=messenger:<chat_id>:<message_id>`.
 *
 * Contracts:
 * - The offset (the last update the listener is done with, plus one) moves only after the daemon answered
 *   2xx for that update's message (or 400: the daemon will never take it), and it is saved before the next
 *   `getUpdates` can confirm the update to the bot API. A daemon that is down therefore loses nothing: the
 *   listener stops polling and retries the same message with capped exponential backoff. A crash between the
 *   daemon's answer and the offset save replays the message, and its `dedup_key` makes the replay a no-op.
 * - No answer ends the process: a refused bot token (401), another poller (409), rate limits (429), a
 *   refused `PULSE_API_TOKEN` and network failures are logged (alerts once per cooldown) and retried with
 *   backoff, slowly (every `degradedRetryMs`) while a token is refused, re-reading the environment file so a
 *   rotated token is picked up without a restart. systemd's `StartLimitBurst=5` in 200 s is never reached.
 * - The bot token is part of every bot API URL (`/bot<token>/getUpdates`) and `HttpClient` puts URL paths in
 *   its error messages; every text that reaches the log or leaves `run()` is redacted first.
 * - `run(signal)` returns as soon as `signal` aborts, in-flight long poll or not. The signal is passed on
 *   to `HttpClient`, which hands it to node:http: the request in flight is destroyed at once, and its late
 *   rejection (the abort reason) is ignored.
 *
 * This file is the loop and its I/O; what it reads from the environment is listener-config.ts, what it makes
 * of an update and of an answer listener-updates.ts, its pauses listener-timing.ts, its offset listener-state.ts.
 */

import { formatDuration } from "../../core/duration.js";
import { SvcError } from "../../core/errors.js";
import { HttpClient, type HttpRequest, type HttpResponse } from "../../core/http.js";
import { parseRetryAfter } from "../../core/http-errors.js";
import { ConfigError } from "./config.js";
import type { ListenerConfig } from "./listener-config.js";
import { FileOffsetStore, type OffsetStore } from "./listener-state.js";
import {
  backoffDelay,
  DEFAULT_LISTENER_TIMING,
  type ListenerTiming,
  type Sleep,
  sleepUnlessAborted,
} from "./listener-timing.js";
import {
  type BotApiUpdate,
  daemonErrorText,
  decideUpdate,
  parseBotAnswer,
  parseJson,
  triggerBody,
  type UpdateDecision,
} from "./listener-updates.js";
import type { Logger } from "./log.js";
import { Redactor } from "./redact.js";

export const LISTENER_AGENT = "svc-pulse-listener";
/** How long the bot API keeps an update nobody confirmed (Bot API docs, getUpdates). */
const UPDATE_RETENTION_H = 24;

export interface MessengerListenerOptions {
  readonly config: ListenerConfig;
  /** Should have `secrets: [config.botToken, config.apiToken]`; tokens read later are redacted here too. */
  readonly logger: Logger;
  /** Re-reads the environment file (for rotated tokens). Only the two tokens are taken from it. */
  readonly reloadConfig?: () => ListenerConfig;
  /** Default: a `HttpClient` with `config.allowedOrigins`, agent `svc-pulse-listener`, and `sleep`. */
  readonly http?: HttpClient;
  /** Default: the state file at `config.statePath`. */
  readonly store?: OffsetStore;
  readonly sleep?: Sleep;
  readonly random?: () => number;
  readonly now?: () => number;
  readonly timing?: Partial<ListenerTiming>;
}

type PollOutcome =
  | { readonly kind: "updates"; readonly updates: BotApiUpdate[] }
  | { readonly kind: "unauthorized"; readonly status: number; readonly description: string }
  | { readonly kind: "conflict"; readonly description: string }
  | { readonly kind: "rate-limited"; readonly retryAfterS: number | undefined }
  | { readonly kind: "failed"; readonly reason: string }
  | { readonly kind: "aborted" };

type TriggerOutcome =
  | { readonly kind: "accepted"; readonly pulseId: unknown; readonly deduplicated: boolean }
  /** The daemon will never take this message (400, 413, 422): skip it. */
  | { readonly kind: "rejected"; readonly status: number; readonly reason: string }
  | { readonly kind: "unauthorized"; readonly status: number }
  /** Try the same message again later: daemon down, busy, or answering something unexpected. */
  | {
      readonly kind: "retry";
      readonly reason: string;
      readonly retryAfterS?: number;
      readonly misrouted?: boolean;
    }
  | { readonly kind: "aborted" };

/** Alert keys (Logger.alert): one alert per key and cooldown, a recovery line when it clears. */
export const LISTENER_ALERTS = {
  botTokenRefused: "messenger-token-refused",
  conflict: "messenger-conflict",
  apiTokenRefused: "pulse-api-token-refused",
  daemonMisrouted: "pulse-api-misrouted",
  backlog: "messenger-backlog",
  stateUnwritable: "listener-state-unwritable",
} as const;

export class MessengerListener {
  private readonly logger: Logger;
  private readonly http: HttpClient;
  private readonly store: OffsetStore;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly timing: ListenerTiming;
  /** URL-encoded forms too: the bot token sits in the path of every bot API URL an error may quote. */
  private readonly redactor = new Redactor(["uri-component"]);
  private readonly reportedChats = new Set<string>();
  private botToken: string;
  private apiToken: string;
  private offset: number | undefined;
  /** An offset advanced past skipped updates but not yet saved. */
  private unsaved = false;
  /** When the message now at the head of the queue was first refused or not answered. */
  private backlogSince: number | undefined;
  /** The `run()` signal, for the HttpClient's own waits. */
  private stopSignal: AbortSignal = new AbortController().signal;

  constructor(private readonly options: MessengerListenerOptions) {
    const config = options.config;
    this.logger = options.logger;
    this.sleep = options.sleep ?? sleepUnlessAborted;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.timing = { ...DEFAULT_LISTENER_TIMING, ...options.timing };
    this.store = options.store ?? new FileOffsetStore(config.statePath, this.now);
    this.http =
      options.http ??
      new HttpClient({
        allowedOrigins: config.allowedOrigins,
        agent: LISTENER_AGENT,
        sleep: (ms) => this.sleep(ms, this.stopSignal),
      });
    this.botToken = config.botToken;
    this.apiToken = config.apiToken;
    this.redactor.add(config.botToken, config.apiToken);
  }

  /** The offset the next `getUpdates` sends; `undefined` before the first update was handled. */
  get currentOffset(): number | undefined {
    return this.offset;
  }

  /**
   * Polls and delivers until `signal` aborts, then resolves. Rejects only on a `ConfigError` at start (the
   * state directory is not writable) or on a bug; the error's text is redacted.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.stopSignal = signal;
    try {
      await this.loop(signal);
    } catch (error) {
      throw this.redactError(error);
    }
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const config = this.options.config;
    this.store.prepare();
    const loaded = this.store.load();
    if (loaded.problem !== undefined) {
      this.logger.warn(
        "the listener state file is unreadable; starting without an offset (the bot API returns only unconfirmed " +
          "updates, and the daemon deduplicates any it already has)",
        { problem: this.clean(loaded.problem) },
      );
    }
    this.offset = loaded.offset;
    this.logger.info("messenger listener started", {
      chat_id: config.chatId,
      messenger: new URL(config.messengerBase).origin,
      daemon: config.apiBase,
      offset: this.offset ?? null,
      poll_timeout_s: config.pollTimeoutS,
    });
    let failures = 0;
    while (!signal.aborted) {
      const outcome = await this.getUpdates(signal);
      switch (outcome.kind) {
        case "aborted":
          break;
        case "updates":
          failures = 0;
          this.logger.recovered(
            LISTENER_ALERTS.botTokenRefused,
            "the messenger API accepts the bot token again",
          );
          this.logger.recovered(LISTENER_ALERTS.conflict, "getUpdates answers again without a conflict");
          await this.handleUpdates(outcome.updates, signal);
          break;
        case "unauthorized":
          await this.botTokenRefused(outcome.status, outcome.description, signal);
          break;
        case "conflict": {
          const wait = this.backoff(failures++);
          this.logger.alert(
            LISTENER_ALERTS.conflict,
            `getUpdates answered 409 Conflict (${this.clean(outcome.description)}): another listener or a webhook ` +
              "is using this bot token. Stop the other `svc pulse listener` (only one may run per bot), or remove " +
              "the webhook with the bot API's deleteWebhook; retrying with backoff",
            { retry_in_ms: wait },
          );
          await this.sleep(wait, signal);
          break;
        }
        case "rate-limited": {
          const wait =
            outcome.retryAfterS !== undefined
              ? Math.max(outcome.retryAfterS * 1000, this.timing.backoffBaseMs)
              : this.backoff(failures++);
          this.logger.warn("the messenger API is rate limiting getUpdates (429); waiting as told", {
            retry_in_ms: wait,
          });
          await this.sleep(wait, signal);
          break;
        }
        case "failed": {
          const wait = this.backoff(failures++);
          this.logger.warn("getUpdates failed; retrying", {
            reason: this.clean(outcome.reason),
            retry_in_ms: wait,
          });
          await this.sleep(wait, signal);
          break;
        }
      }
    }
    this.logger.info("messenger listener stopped", { offset: this.offset ?? null });
  }

  private async botTokenRefused(status: number, description: string, signal: AbortSignal): Promise<void> {
    if (this.reloadTokens().botToken) {
      this.logger.info("MESSENGER_BOT_TOKEN changed in the environment file; polling with the new token");
      return;
    }
    this.logger.alert(
      LISTENER_ALERTS.botTokenRefused,
      `the messenger API refused MESSENGER_BOT_TOKEN (${status}: ${this.clean(description)}); it was revoked or ` +
        "mistyped. Put the bot's current token (from @BotFather) in the environment file; the listener stays up, " +
        `re-reads the file every ${Math.round(this.timing.degradedRetryMs / 1000)} s and needs no restart`,
      { status },
    );
    await this.sleep(this.timing.degradedRetryMs, signal);
  }

  private async getUpdates(signal: AbortSignal): Promise<PollOutcome> {
    const config = this.options.config;
    const body: Record<string, unknown> = { timeout: config.pollTimeoutS, allowed_updates: ["message"] };
    if (this.offset !== undefined) body.offset = this.offset;
    const result = await this.exchange(
      {
        method: "POST",
        url: `${config.messengerBase}/bot${this.botToken}/getUpdates`,
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
        timeoutMs: config.pollTimeoutS * 1000 + this.timing.pollSlackMs,
      },
      signal,
    );
    if (result.kind === "aborted") return result;
    if (result.kind === "error") return { kind: "failed", reason: errorText(result.error) };
    const { status, headers } = result.response;
    const answer = parseBotAnswer(result.response.body);
    const description = answer?.description ?? `HTTP ${status}`;
    // A malformed token makes the real bot API answer 404 rather than 401.
    if (status === 401 || status === 404) return { kind: "unauthorized", status, description };
    if (status === 409) return { kind: "conflict", description };
    if (status === 429) {
      const retryAfter = answer?.retryAfter ?? parseRetryAfter(headers["retry-after"]);
      return { kind: "rate-limited", retryAfterS: retryAfter };
    }
    if (status !== 200 || answer === undefined || answer.ok !== true || !Array.isArray(answer.result)) {
      return { kind: "failed", reason: `getUpdates answered ${status}: ${description}` };
    }
    const updates = answer.result.filter(
      (update): update is BotApiUpdate =>
        typeof update === "object" &&
        update !== null &&
        Number.isSafeInteger((update as BotApiUpdate).update_id),
    );
    if (updates.length < answer.result.length) {
      this.logger.warn("getUpdates returned entries without an integer update_id; they are ignored", {
        ignored: answer.result.length - updates.length,
      });
    }
    return { kind: "updates", updates: updates.sort((a, b) => a.update_id - b.update_id) };
  }

  private async handleUpdates(updates: readonly BotApiUpdate[], signal: AbortSignal): Promise<void> {
    const chatId = this.options.config.chatId;
    for (const update of updates) {
      if (signal.aborted) break;
      // A compatible server may repeat an update the listener is done with; the offset says it is.
      if (this.offset !== undefined && update.update_id < this.offset) continue;
      const decision = decideUpdate(update, chatId);
      if (decision.action === "skip") {
        this.logSkip(update, decision);
        this.advance(update.update_id, false);
        continue;
      }
      const delivered = await this.deliver(update.update_id, decision, signal);
      if (!delivered) break;
    }
    if (this.unsaved && this.offset !== undefined) this.saveOffset();
  }

  private logSkip(update: BotApiUpdate, decision: Extract<UpdateDecision, { action: "skip" }>): void {
    const fields = { update_id: update.update_id, chat_id: decision.chatId ?? null };
    if (decision.reason === "other-chat") {
      // The first message from a stranger chat is worth an INFO line (a wrong MESSENGER_CHAT_ID shows up
      // this way); repeats go to DEBUG so a chatty stranger cannot flood the log. Never the text.
      const first = decision.chatId !== undefined && !this.reportedChats.has(decision.chatId);
      if (first && this.reportedChats.size < 1000) this.reportedChats.add(decision.chatId as string);
      const message = "ignored a message from a chat other than MESSENGER_CHAT_ID";
      if (first) this.logger.info(message, fields);
      else this.logger.debug(message, fields);
    } else if (decision.reason === "no-text") {
      this.logger.info(
        "skipped a message without text (photo, sticker, …); only text becomes a pulse",
        fields,
      );
    } else {
      this.logger.debug("skipped an update that is not a message", fields);
    }
  }

  /**
   * Posts one message until the daemon takes it (true) or rejects it for good (true: skipped), retrying
   * everything else; false only when `signal` aborted first.
   */
  private async deliver(
    updateId: number,
    decision: { chatId: string; messageId: number; text: string },
    signal: AbortSignal,
  ): Promise<boolean> {
    const body = triggerBody(decision);
    const ids = { update_id: updateId, message_id: decision.messageId, dedup_key: body.dedup_key };
    let failures = 0;
    while (!signal.aborted) {
      const outcome = await this.postTrigger(body, signal);
      switch (outcome.kind) {
        case "aborted":
          return false;
        case "accepted":
          this.logger.info(
            outcome.deduplicated ? "the daemon already had this message" : "message queued as a pulse",
            {
              ...ids,
              pulse_id: outcome.pulseId ?? null,
              deduplicated: outcome.deduplicated,
              chars: decision.text.length,
            },
          );
          this.backlogCleared();
          this.advance(updateId, true);
          return true;
        case "rejected":
          this.logger.error("the daemon refused this message for good; skipping it", {
            ...ids,
            status: outcome.status,
            reason: this.clean(outcome.reason),
          });
          this.backlogCleared();
          this.advance(updateId, true);
          return true;
        case "unauthorized": {
          this.noteBacklog();
          if (this.reloadTokens().apiToken) {
            this.logger.info("PULSE_API_TOKEN changed in the environment file; retrying with the new token");
            continue;
          }
          this.logger.alert(
            LISTENER_ALERTS.apiTokenRefused,
            `the daemon refused PULSE_API_TOKEN (${outcome.status}); the listener and the daemon must read the same ` +
              "token. Fix the environment file (then restart the daemon if its token changed); the listener " +
              `keeps the message, re-reads the file every ${Math.round(this.timing.degradedRetryMs / 1000)} s`,
            { status: outcome.status, daemon: this.options.config.apiBase },
          );
          await this.sleep(this.timing.degradedRetryMs, signal);
          break;
        }
        case "retry": {
          this.noteBacklog();
          const wait =
            outcome.retryAfterS !== undefined
              ? Math.max(outcome.retryAfterS * 1000, this.timing.backoffBaseMs)
              : this.backoff(failures);
          failures++;
          if (outcome.misrouted) {
            this.logger.alert(
              LISTENER_ALERTS.daemonMisrouted,
              `${this.options.config.apiBase}/api/pulse/trigger does not behave like the pulse daemon (${this.clean(outcome.reason)}); ` +
                "check PULSE_API_HOST and PULSE_API_PORT; the listener keeps the message and retries",
            );
          }
          this.logger.warn("the daemon did not take the message; keeping it and retrying", {
            ...ids,
            reason: this.clean(outcome.reason),
            retry_in_ms: wait,
          });
          await this.sleep(wait, signal);
          break;
        }
      }
    }
    return false;
  }

  private async postTrigger(body: Record<string, string>, signal: AbortSignal): Promise<TriggerOutcome> {
    const result = await this.exchange(
      {
        method: "POST",
        url: `${this.options.config.apiBase}/api/pulse/trigger`,
        headers: {
          authorization: `Bearer ${this.apiToken}`,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(body),
        timeoutMs: this.timing.triggerTimeoutMs,
      },
      signal,
    );
    if (result.kind === "aborted") return result;
    if (result.kind === "error") return { kind: "retry", reason: errorText(result.error) };
    const { status, headers } = result.response;
    const text = result.response.body.toString("utf8");
    if (status >= 200 && status < 300) {
      const answer = parseJson(text) as { pulse?: { id?: unknown }; deduplicated?: unknown } | undefined;
      return { kind: "accepted", pulseId: answer?.pulse?.id, deduplicated: answer?.deduplicated === true };
    }
    const reason = `${status}: ${daemonErrorText(text)}`;
    if (status === 401 || status === 403) return { kind: "unauthorized", status };
    if (status === 400 || status === 413 || status === 422) return { kind: "rejected", status, reason };
    const retryAfterS = parseRetryAfter(headers["retry-after"]);
    if (status === 408 || status === 425 || status === 429 || status >= 500) {
      return { kind: "retry", reason, ...(retryAfterS === undefined ? {} : { retryAfterS }) };
    }
    // 404, 405, 415, …: not what the daemon answers; probably another server on that port. The message stays.
    return { kind: "retry", reason, misrouted: true };
  }

  /** One request, ended (and its result ignored) as soon as `signal` aborts: a stop never waits for a long poll. */
  private async exchange(
    request: HttpRequest,
    signal: AbortSignal,
  ): Promise<
    { kind: "response"; response: HttpResponse } | { kind: "error"; error: unknown } | { kind: "aborted" }
  > {
    if (signal.aborted) return { kind: "aborted" };
    let onAbort = () => {};
    const aborted = new Promise<{ kind: "aborted" }>((resolve) => {
      onAbort = () => resolve({ kind: "aborted" });
      signal.addEventListener("abort", onAbort);
    });
    try {
      // Promise.race subscribes to the request, so its late rejection after an abort is handled, not unhandled.
      return await Promise.race([
        this.http.request({ ...request, signal }).then(
          (response) => ({ kind: "response" as const, response }),
          (error: unknown) => ({ kind: "error" as const, error }),
        ),
        aborted,
      ]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  private advance(updateId: number, save: boolean): void {
    this.offset = updateId + 1;
    this.unsaved = true;
    if (save) this.saveOffset();
  }

  private saveOffset(): void {
    if (this.offset === undefined) return;
    try {
      this.store.save(this.offset);
      this.unsaved = false;
      this.logger.recovered(LISTENER_ALERTS.stateUnwritable, "the listener state file is written again");
    } catch (error) {
      // Not fatal: a restart would replay from the older saved offset, and dedup_key absorbs the replay.
      this.logger.alert(
        LISTENER_ALERTS.stateUnwritable,
        "cannot save the listener offset; messages keep flowing, but a restart may re-send some (the daemon " +
          "deduplicates them). Check the disk and the permissions of LISTENER_STATE_PATH",
        { error: this.clean(errorText(error)) },
      );
    }
  }

  private noteBacklog(): void {
    const now = this.now();
    if (this.backlogSince === undefined) {
      this.backlogSince = now;
      return;
    }
    const waited = now - this.backlogSince;
    if (waited >= this.timing.backlogAlertMs) {
      this.logger.alert(
        LISTENER_ALERTS.backlog,
        `messages have waited ${formatDuration(waited)} for the pulse daemon at ${this.options.config.apiBase}; ` +
          `the messenger API drops unconfirmed updates after ${UPDATE_RETENTION_H} h. Start the daemon ` +
          "(e.g. systemctl start svc-pulse) or fix the reason logged above",
        { waited_ms: waited },
      );
    }
  }

  private backlogCleared(): void {
    this.backlogSince = undefined;
    this.logger.recovered(LISTENER_ALERTS.backlog, "the pulse daemon takes messages again");
    this.logger.recovered(LISTENER_ALERTS.apiTokenRefused, "the daemon accepts PULSE_API_TOKEN again");
    this.logger.recovered(
      LISTENER_ALERTS.daemonMisrouted,
      "the pulse daemon answers the trigger endpoint again",
    );
  }

  private backoff(failures: number): number {
    return backoffDelay(
      failures,
      { baseMs: this.timing.backoffBaseMs, capMs: this.timing.backoffCapMs },
      this.random,
    );
  }

  /** Re-reads the environment file; says which token changed. A file that cannot be read keeps the old ones. */
  private reloadTokens(): { botToken: boolean; apiToken: boolean } {
    const reload = this.options.reloadConfig;
    if (reload === undefined) return { botToken: false, apiToken: false };
    let fresh: ListenerConfig;
    try {
      fresh = reload();
    } catch (error) {
      this.logger.warn("cannot re-read the environment file; keeping the current settings", {
        error: this.clean(errorText(error)),
      });
      return { botToken: false, apiToken: false };
    }
    // Register first: nothing may log a new token unredacted, not even the lines below.
    this.redactor.add(fresh.botToken, fresh.apiToken);
    const changed = {
      botToken: fresh.botToken !== this.botToken,
      apiToken: fresh.apiToken !== this.apiToken,
    };
    this.botToken = fresh.botToken;
    this.apiToken = fresh.apiToken;
    return changed;
  }

  /** Replaces every token this listener has seen, then whatever the logger itself knows. */
  private clean(text: string): string {
    return this.logger.redact(this.redactor.redact(text));
  }

  private redactError(error: unknown): unknown {
    if (!(error instanceof Error)) return new Error(this.clean(String(error)));
    const message = this.clean(error.message);
    const stack = error.stack === undefined ? undefined : this.clean(error.stack);
    if (message === error.message && stack === error.stack && !(error.cause instanceof Error)) return error;
    // A copy without `cause` (which may carry the request URL), keeping the class for the CLI's exit code.
    const copy =
      error instanceof ConfigError
        ? new ConfigError(error.problems.map((problem) => this.clean(problem)))
        : error instanceof SvcError
          ? new SvcError(error.code, message, { data: {} })
          : new Error(message);
    if (stack !== undefined) copy.stack = stack;
    return copy;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
