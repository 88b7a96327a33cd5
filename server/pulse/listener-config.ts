/**
 * The messenger listener's configuration (`svc pulse listener`; Document 2 "What the service does" 4): the
 * bot token and chat, the messenger's API base, the daemon's API and token, where the offset is kept, the
 * long-poll timeout and the egress allowlist, read from the environment with every problem reported at once.
 */
import { dirname } from "node:path";
import { parseAllowlist } from "../../core/allowlist.js";
import { isLoopbackHost } from "../../core/checks.js";
import { apiBaseUrl, ConfigReader, checkToken, type LogLevel, readApiAddress } from "./config.js";

export const DEFAULT_MESSENGER_API_BASE = "https://api.telegram.org";
export const DEFAULT_POLL_TIMEOUT_S = 25;
/** The bot API's own upper bound for the long-poll `timeout`. */
const MAX_POLL_TIMEOUT_S = 50;

export interface ListenerConfig {
  readonly botToken: string;
  /** The chat id as the decimal text the bot API sends in `message.chat.id`, e.g. `-1001234567890`. */
  readonly chatId: string;
  /** `MESSENGER_API_BASE` without a trailing slash; requests go to `<base>/bot<token>/<method>`. */
  readonly messengerBase: string;
  /** The daemon's API, from `PULSE_API_HOST`/`PULSE_API_PORT`. */
  readonly apiBase: string;
  readonly apiToken: string;
  readonly statePath: string;
  readonly pollTimeoutS: number;
  readonly logLevel: LogLevel;
  readonly logFile: string | undefined;
  /** The egress allowlist: the messenger's origin, the daemon's origin, then `SVC_ALLOWED_ORIGINS`. */
  readonly allowedOrigins: string;
}

const BOT_TOKEN_HINT = "set it to the bot's token from @BotFather (the form is 123456789:AA…)";

/** Reads the listener's variables, reporting every problem at once in one `ConfigError`. */
export function readListenerConfig(env: Record<string, string | undefined>): ListenerConfig {
  const reader = new ConfigReader(env);
  const botToken = reader.required("MESSENGER_BOT_TOKEN", BOT_TOKEN_HINT);
  if (botToken !== "" && !/^[A-Za-z0-9:_.~-]{8,}$/.test(botToken)) {
    // Described, never printed: it is a secret.
    reader.problems.push(
      `MESSENGER_BOT_TOKEN is not a bot token: it has ${botToken.length} characters, expected at least 8 of ` +
        `A-Z a-z 0-9 : _ . ~ -; ${BOT_TOKEN_HINT}`,
    );
  }
  const chatId = reader.required(
    "MESSENGER_CHAT_ID",
    "set it to the numeric id of the chat to listen to, e.g. 123456789 (group ids are negative)",
  );
  if (chatId !== "" && !/^-?\d{1,20}$/.test(chatId)) {
    reader.problems.push(
      `MESSENGER_CHAT_ID=${JSON.stringify(chatId.slice(0, 40))} is not a numeric chat id; use the number the ` +
        "bot API reports as message.chat.id, e.g. 123456789 or -1001234567890",
    );
  }
  const messengerBase = readMessengerBase(reader);
  const address = readApiAddress(reader);
  if (address.port === 0) {
    reader.problems.push(
      "PULSE_API_PORT=0 lets the daemon pick a free port, which the listener cannot know; set the port the daemon listens on",
    );
  }
  const apiBase = apiBaseUrl(address);
  let apiOrigin: string | undefined;
  try {
    apiOrigin = new URL(apiBase).origin;
  } catch {
    reader.problems.push(
      `PULSE_API_HOST=${JSON.stringify(address.host)} does not make a URL; use a host name or an IP address`,
    );
  }
  const apiToken = checkToken(reader, "PULSE_API_TOKEN", true) ?? "";
  const pollTimeoutS = reader.integer(
    "MESSENGER_POLL_TIMEOUT_S",
    DEFAULT_POLL_TIMEOUT_S,
    1,
    MAX_POLL_TIMEOUT_S,
  );
  const statePath = readStatePath(reader);
  const logLevel = reader.logLevel();
  const logFile = reader.optional("LOG_FILE");
  const extraOrigins = reader.optional("SVC_ALLOWED_ORIGINS");
  if (extraOrigins !== undefined) {
    try {
      parseAllowlist(extraOrigins);
    } catch (error) {
      reader.problems.push((error as Error).message);
    }
  }
  const origins = [messengerBase === "" ? undefined : new URL(messengerBase).origin, apiOrigin, extraOrigins];
  reader.check();
  return {
    botToken,
    chatId,
    messengerBase,
    apiBase,
    apiToken,
    statePath,
    pollTimeoutS,
    logLevel,
    logFile,
    allowedOrigins: origins.filter((origin) => origin !== undefined).join(","),
  };
}

function readMessengerBase(reader: ConfigReader): string {
  const raw = reader.optional("MESSENGER_API_BASE") ?? DEFAULT_MESSENGER_API_BASE;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    reader.problems.push(
      `MESSENGER_API_BASE=${JSON.stringify(raw.slice(0, 80))} is not a URL; use e.g. ${DEFAULT_MESSENGER_API_BASE}`,
    );
    return "";
  }
  const problem =
    url.protocol !== "http:" && url.protocol !== "https:"
      ? "is not an http(s) URL"
      : url.username !== "" || url.password !== ""
        ? "carries credentials; they would end up in logs"
        : url.search !== "" || url.hash !== ""
          ? "has a query or fragment; give only scheme, host, port and an optional path prefix"
          : url.protocol === "http:" && !isLoopbackHost(url.hostname)
            ? "uses plain http to a host that is not loopback; the bot token would cross the network unencrypted, use https"
            : undefined;
  if (problem !== undefined) {
    reader.problems.push(
      `MESSENGER_API_BASE=${JSON.stringify(`${url.protocol}//${url.host}${url.pathname}`)} ${problem}`,
    );
    return "";
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

function readStatePath(reader: ConfigReader): string {
  const explicit = reader.optional("LISTENER_STATE_PATH");
  if (explicit !== undefined) return explicit;
  const db = reader.optional("PULSE_DB_PATH");
  if (db !== undefined) return `${dirname(db)}/listener-state.json`;
  reader.problems.push(
    "LISTENER_STATE_PATH is not set, and neither is PULSE_DB_PATH (whose directory holds listener-state.json by " +
      "default); set one of them, e.g. LISTENER_STATE_PATH=/var/lib/svc-pulse/listener-state.json",
  );
  return "";
}
