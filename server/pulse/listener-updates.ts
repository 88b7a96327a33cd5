/**
 * What the messenger listener reads and sends, as pure functions: the bot API's shapes
 * (https://core.telegram.org/bots/api#getupdates) as far as the listener reads them, what it does with one
 * update, the trigger body it posts to the daemon, and the bot API's and the daemon's answers.
 */

export interface BotApiMessage {
  readonly message_id: number;
  readonly chat: { readonly id: number | string; readonly type?: string };
  readonly date?: number;
  readonly text?: string;
}

export interface BotApiUpdate {
  readonly update_id: number;
  readonly message?: BotApiMessage;
}

/** What the listener does with one update, decided without I/O. */
export type UpdateDecision =
  | { readonly action: "deliver"; readonly chatId: string; readonly messageId: number; readonly text: string }
  | {
      readonly action: "skip";
      readonly reason: "not-a-message" | "other-chat" | "no-text";
      readonly chatId?: string;
    };

export function decideUpdate(update: BotApiUpdate, chatId: string): UpdateDecision {
  const message = update.message;
  if (
    typeof message !== "object" ||
    message === null ||
    typeof message.chat !== "object" ||
    message.chat === null
  ) {
    return { action: "skip", reason: "not-a-message" };
  }
  const from = String(message.chat.id);
  if (from !== chatId) return { action: "skip", reason: "other-chat", chatId: from };
  if (
    typeof message.text !== "string" ||
    message.text.trim() === "" ||
    !Number.isSafeInteger(message.message_id)
  ) {
    return { action: "skip", reason: "no-text", chatId: from };
  }
  return { action: "deliver", chatId: from, messageId: message.message_id, text: message.text };
}

/**
 * The trigger body for one accepted message. Its `dedup_key` names the message, `messenger:<chat_id>:
 * <message_id>` (DESIGN.md §7 writes `messenger:<update_id>`, which this does not send): the bot API
 * re-delivers an update with the same message, so a replay after a crash is a no-op at the daemon.
 */
export function triggerBody(decision: {
  chatId: string;
  messageId: number;
  text: string;
}): Record<string, string> {
  return {
    prompt: decision.text,
    scheduled_at: "now",
    priority: "normal",
    source: "messenger",
    dedup_key: `messenger:${decision.chatId}:${decision.messageId}`,
  };
}

export interface BotAnswer {
  readonly ok?: unknown;
  readonly result?: unknown[];
  readonly description?: string;
  readonly retryAfter?: number;
}

/** The bot API's envelope `{ok, result | error_code, description, parameters: {retry_after}}`; undefined if not JSON. */
export function parseBotAnswer(body: Buffer): BotAnswer | undefined {
  const value = parseJson(body.toString("utf8"));
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const retryAfter = (record.parameters as { retry_after?: unknown } | undefined)?.retry_after;
  return {
    ok: record.ok,
    ...(Array.isArray(record.result) ? { result: record.result as unknown[] } : {}),
    ...(typeof record.description === "string" ? { description: record.description.slice(0, 300) } : {}),
    ...(typeof retryAfter === "number" && Number.isFinite(retryAfter) && retryAfter >= 0
      ? { retryAfter: Math.ceil(retryAfter) }
      : {}),
  };
}

/** `text` parsed as JSON; undefined if it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `{error: {code, message}}` from the daemon, else an excerpt of the body. */
export function daemonErrorText(text: string): string {
  const error = (parseJson(text) as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (typeof error?.message === "string") {
    return typeof error.code === "string" ? `${error.code}: ${error.message}` : error.message;
  }
  return text === "" ? "(empty body)" : JSON.stringify(text.slice(0, 200));
}
