/**
 * The shipped keep-alive provider: keeps an assistant agent's OAuth access token fresh (Document 2 "What the
 * service does" 6; DESIGN.md §7; notes row 16 and failure mode 8). `check` and `refresh` follow the
 * provider contract of `keepalive.ts`.
 *
 * The credential file (`OAUTH_CREDENTIALS_FILE`) is a JSON object. The token object is either the file's
 * top level or the value of one top-level key (`OAUTH_CREDENTIALS_KEY`; without it, the one key whose value
 * holds an access token, e.g. `{"claudeAiOauth": {...}}`). A token object is read in one of two styles,
 * chosen by the access-token key present:
 *
 * - camelCase: `accessToken` (string), `refreshToken` (string), `expiresAt` (number, epoch MILLISECONDS);
 *   on refresh also `scopes` (array, from the answer's space-separated `scope`) and `tokenType`, each only
 *   when the object already has it.
 * - snake_case: `access_token`, `refresh_token`, `expires_at` (number, epoch SECONDS); on refresh also
 *   `scope`, `token_type` and `expires_in`, each only when the object already has it.
 *
 * Nothing else is accepted (no numeric strings, no mixed styles); every other key of the object and of the
 * file is kept as it is when the file is rewritten (key order kept; two-space indentation when the file had
 * line breaks, compact otherwise).
 *
 * `refresh` holds `<file>.lock` (O_EXCL, holding pid, host and time; refreshed every 30 s while held) for
 * the whole read-check-grant-write, re-reads the file after taking it and sends no grant when the token is
 * no longer within the threshold, so concurrent refreshers send one grant between them. A lock whose holder
 * is not running (same host) or that was not refreshed for 2 minutes is taken over. The refresh token, the
 * access tokens and the client secret never appear in output, logs or error messages.
 */
import { randomBytes } from "node:crypto";
import { open, readFile, realpath, rm, stat, unlink, utimes } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { performance } from "node:perf_hooks";
import { type ErrorCode, SvcError, UserFacingError } from "../../backends/errors.js";
import { HttpClient, type HttpResponse } from "../../backends/http.js";
import { writeFileAtomically } from "./atomic-file.js";
import type { ConfigReader } from "./config.js";
import type { Logger } from "./log.js";
import { ALL_SECRET_ENCODINGS, Redactor } from "./redact.js";

export const DEFAULT_REFRESH_THRESHOLD_MS = 6 * 3_600_000;
/** A lock not refreshed for this long is abandoned (the holder refreshes it every quarter of this). */
export const LOCK_STALE_MS = 2 * 60_000;
export const DEFAULT_LOCK_WAIT_MS = 45_000;
export const DEFAULT_OAUTH_HTTP_TIMEOUT_MS = 30_000;
export const OAUTH_AGENT = "svc-pulse-keepalive";

export interface OauthConfig {
  readonly credentialsFile: string;
  /** The key the token object sits under; undefined: top level or the only key holding a token. */
  readonly credentialsKey: string | undefined;
  readonly tokenEndpoint: string;
  readonly clientId: string;
  readonly clientSecret: string | undefined;
  /** Sent as `scope` when set; absent means "the scope granted before" (RFC 6749 §6). */
  readonly scope: string | undefined;
  readonly thresholdMs: number;
  /** The token endpoint's origin plus `SVC_ALLOWED_ORIGINS`. */
  readonly allowedOrigins: string;
  readonly httpTimeoutMs: number;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * `OAUTH_CREDENTIALS_FILE`, `OAUTH_TOKEN_ENDPOINT` (https, or http on loopback), `OAUTH_CLIENT_ID` (required);
 * `OAUTH_CLIENT_SECRET`, `OAUTH_SCOPE`, `OAUTH_CREDENTIALS_KEY`, `OAUTH_REFRESH_THRESHOLD` (default 6h),
 * `SVC_ALLOWED_ORIGINS`, `SVC_HTTP_TIMEOUT_MS` (optional). `check` needs them all too, so a broken
 * configuration shows up at the first check, not hours later at the first refresh.
 */
export function readOauthConfig(reader: ConfigReader): OauthConfig {
  const credentialsFile = reader.required(
    "OAUTH_CREDENTIALS_FILE",
    "set it to the agent's credential JSON file, e.g. OAUTH_CREDENTIALS_FILE=/home/agent/.claude/.credentials.json",
  );
  const tokenEndpoint = reader.required(
    "OAUTH_TOKEN_ENDPOINT",
    "set it to the OAuth token endpoint URL the agent uses, e.g. https://auth.example.com/oauth/token",
  );
  const clientId = reader.required("OAUTH_CLIENT_ID", "set it to the agent's OAuth client id");
  let origin = "";
  if (tokenEndpoint !== "") {
    let url: URL | undefined;
    try {
      url = new URL(tokenEndpoint);
    } catch {
      reader.problems.push(
        `OAUTH_TOKEN_ENDPOINT is not a URL; use e.g. https://auth.example.com/oauth/token`,
      );
    }
    if (url !== undefined) {
      if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
        reader.problems.push(
          `OAUTH_TOKEN_ENDPOINT must be an https URL (plain http only on 127.0.0.1, localhost or [::1]): refresh tokens travel in the request`,
        );
      } else if (url.username !== "" || url.password !== "" || url.hash !== "") {
        reader.problems.push(
          "OAUTH_TOKEN_ENDPOINT must not carry user info or a #fragment; put the client secret in OAUTH_CLIENT_SECRET",
        );
      } else origin = url.origin;
    }
  }
  const thresholdMs = reader.duration("OAUTH_REFRESH_THRESHOLD", DEFAULT_REFRESH_THRESHOLD_MS);
  if (thresholdMs <= 0) reader.problems.push("OAUTH_REFRESH_THRESHOLD must be longer than 0, e.g. 6h");
  const extra = reader.optional("SVC_ALLOWED_ORIGINS");
  return {
    credentialsFile,
    credentialsKey: reader.optional("OAUTH_CREDENTIALS_KEY"),
    tokenEndpoint,
    clientId,
    clientSecret: reader.optional("OAUTH_CLIENT_SECRET"),
    scope: reader.optional("OAUTH_SCOPE"),
    thresholdMs,
    allowedOrigins: extra === undefined ? origin : `${origin},${extra}`,
    httpTimeoutMs: reader.integer("SVC_HTTP_TIMEOUT_MS", DEFAULT_OAUTH_HTTP_TIMEOUT_MS, 1, 600_000),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Errors

/**
 * A failure of the provider; `exitCode` is what the command exits with: 2 when only a new login helps
 * (revoked refresh token, unreadable credentials), 1 otherwise (network, server error, lock busy). The
 * message never contains a token.
 */
export class OauthError extends UserFacingError {
  constructor(
    readonly exitCode: 1 | 2,
    code: ErrorCode,
    message: string,
    options: { data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(code, message, options);
  }
}

/** The token endpoint answered `invalid_grant`: the refresh token is revoked or expired. */
export class InvalidGrantError extends OauthError {}

/** The credential file is missing, not JSON, or holds no readable token object. */
export class CredentialFileError extends OauthError {}

// ---------------------------------------------------------------------------------------------------------
// The credential document (pure)

export type TokenStyle = "camelCase" | "snake_case";

export interface Credentials {
  /** The whole file, parsed. */
  readonly document: Record<string, unknown>;
  /** Where the token object sits; undefined: the top level. */
  readonly key: string | undefined;
  readonly style: TokenStyle;
  readonly accessToken: string;
  readonly refreshToken: string | undefined;
  readonly expiresAtMs: number;
  /** The file had line breaks: rewrite it indented. */
  readonly pretty: boolean;
}

const STYLE_KEYS = {
  camelCase: { access: "accessToken", refresh: "refreshToken", expires: "expiresAt" },
  snake_case: { access: "access_token", refresh: "refresh_token", expires: "expires_at" },
} as const;

const ACCEPTED =
  'expected {"accessToken", "refreshToken", "expiresAt": <epoch ms>} or {"access_token", "refresh_token", ' +
  '"expires_at": <epoch s>}, at the top level or under one key such as "claudeAiOauth"';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function holdsToken(value: unknown): value is Record<string, unknown> {
  return isObject(value) && ("accessToken" in value || "access_token" in value);
}

/** Parses the credential file's text. Error messages name keys and types, never values. */
export function parseCredentials(text: string, path: string, key?: string): Credentials {
  const fail = (what: string): never => {
    throw new CredentialFileError(2, "SVC_CONFIG", `the credential file ${path} ${what}`, { data: { path } });
  };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    // Not the parser's message: V8 quotes the text around the error, which may be a token.
    return fail(`is not valid JSON (${text.length} characters); ${ACCEPTED}`);
  }
  if (!isObject(document)) return fail(`does not hold a JSON object; ${ACCEPTED}`);
  let where: string | undefined;
  if (key !== undefined) {
    if (!isObject(document[key])) return fail(`has no object under "${key}" (OAUTH_CREDENTIALS_KEY)`);
    where = key;
  } else if (!holdsToken(document)) {
    const candidates = Object.keys(document).filter((name) => holdsToken(document[name]));
    if (candidates.length === 0) return fail(`holds no token object; ${ACCEPTED}`);
    if (candidates.length > 1) {
      return fail(
        `holds several token objects (${candidates.map((c) => `"${c}"`).join(", ")}); set OAUTH_CREDENTIALS_KEY to the one to refresh`,
      );
    }
    where = candidates[0];
  }
  const token = (where === undefined ? document : document[where]) as Record<string, unknown>;
  const inside = where === undefined ? "at its top level" : `under "${where}"`;
  const style: TokenStyle = "accessToken" in token ? "camelCase" : "snake_case";
  const keys = STYLE_KEYS[style];
  const accessToken = token[keys.access];
  if (typeof accessToken !== "string" || accessToken === "") {
    return fail(`has no "${keys.access}" string ${inside}; ${ACCEPTED}`);
  }
  const refreshToken = token[keys.refresh];
  if (refreshToken !== undefined && refreshToken !== null && typeof refreshToken !== "string") {
    return fail(`has a "${keys.refresh}" ${inside} that is not a string`);
  }
  const expires = token[keys.expires];
  if (typeof expires !== "number" || !Number.isFinite(expires)) {
    return fail(
      `has no numeric "${keys.expires}" ${inside} (${style === "camelCase" ? "epoch milliseconds" : "epoch seconds"}; got ${expires === undefined ? "nothing" : typeof expires})`,
    );
  }
  const expiresAtMs = style === "camelCase" ? expires : expires * 1000;
  // Beyond what a Date can hold (±8.64e15 ms): a corrupt number, not a real expiry.
  if (Math.abs(expiresAtMs) > 8.64e15) return fail(`has a "${keys.expires}" ${inside} that is out of range`);
  return {
    document,
    key: where,
    style,
    accessToken,
    refreshToken: typeof refreshToken === "string" && refreshToken !== "" ? refreshToken : undefined,
    expiresAtMs,
    pretty: text.includes("\n"),
  };
}

/** A successful refresh-token grant (RFC 6749 §5.1). */
export interface TokenGrant {
  readonly accessToken: string;
  /** Absent: the server did not rotate it; the old one stays valid. */
  readonly refreshToken: string | undefined;
  /** Seconds; absent when the server did not say. */
  readonly expiresIn: number | undefined;
  readonly tokenType: string | undefined;
  readonly scope: string | undefined;
}

/**
 * The new file text: the grant applied to `credentials`' token object, everything else as it was. Without
 * `expires_in` the lifetime is unknown; `unknownLifetimeMs` is used (the threshold: the next keep-alive
 * run refreshes again rather than trusting a guess).
 */
export function applyGrant(
  credentials: Credentials,
  grant: TokenGrant,
  nowMs: number,
  unknownLifetimeMs: number,
): string {
  const token: Record<string, unknown> = {
    ...((credentials.key === undefined
      ? credentials.document
      : credentials.document[credentials.key]) as Record<string, unknown>),
  };
  const lifetimeMs = grant.expiresIn === undefined ? unknownLifetimeMs : grant.expiresIn * 1000;
  if (credentials.style === "camelCase") {
    token.accessToken = grant.accessToken;
    if (grant.refreshToken !== undefined) token.refreshToken = grant.refreshToken;
    token.expiresAt = nowMs + lifetimeMs;
    if (grant.scope !== undefined && Array.isArray(token.scopes))
      token.scopes = grant.scope.split(" ").filter(Boolean);
    if (grant.tokenType !== undefined && "tokenType" in token) token.tokenType = grant.tokenType;
  } else {
    token.access_token = grant.accessToken;
    if (grant.refreshToken !== undefined) token.refresh_token = grant.refreshToken;
    token.expires_at = Math.floor((nowMs + lifetimeMs) / 1000);
    if (grant.expiresIn !== undefined && "expires_in" in token) token.expires_in = grant.expiresIn;
    if (grant.scope !== undefined && typeof token.scope === "string") token.scope = grant.scope;
    if (grant.tokenType !== undefined && "token_type" in token) token.token_type = grant.tokenType;
  }
  const document =
    credentials.key === undefined ? token : { ...credentials.document, [credentials.key]: token };
  return credentials.pretty ? `${JSON.stringify(document, null, 2)}\n` : JSON.stringify(document);
}

/** Parses a 200 answer of the token endpoint; messages name fields, never values. */
export function parseGrant(text: string): TokenGrant {
  const fail = (what: string): never => {
    throw new OauthError(
      1,
      "SVC_BACKEND",
      `the token endpoint's answer ${what}; expected RFC 6749 §5.1 JSON`,
    );
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail(`is not JSON (${text.length} characters)`);
  }
  if (!isObject(value)) return fail("is not a JSON object");
  const { access_token, refresh_token, expires_in, token_type, scope } = value;
  if (typeof access_token !== "string" || access_token === "") return fail('has no "access_token" string');
  if (refresh_token !== undefined && refresh_token !== null && typeof refresh_token !== "string") {
    return fail('has a "refresh_token" that is not a string');
  }
  // Some servers send the number as a string; the RFC's examples use a number.
  const seconds =
    typeof expires_in === "number"
      ? expires_in
      : typeof expires_in === "string"
        ? Number(expires_in)
        : undefined;
  if (expires_in !== undefined && expires_in !== null && (seconds === undefined || !(seconds > 0))) {
    return fail('has an "expires_in" that is not a positive number of seconds');
  }
  return {
    accessToken: access_token,
    refreshToken: typeof refresh_token === "string" && refresh_token !== "" ? refresh_token : undefined,
    expiresIn: seconds !== undefined && seconds > 0 ? seconds : undefined,
    tokenType: typeof token_type === "string" ? token_type : undefined,
    scope: typeof scope === "string" ? scope : undefined,
  };
}

/** "5h 0m", "3m 20s", "2d 1h"; negative durations are written as their absolute value. */
export function formatDuration(ms: number): string {
  const total = Math.floor(Math.abs(ms) / 1000);
  const d = Math.floor(total / 86_400);
  const h = Math.floor((total % 86_400) / 3_600);
  const m = Math.floor((total % 3_600) / 60);
  const s = total % 60;
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}

// ---------------------------------------------------------------------------------------------------------
// check and refresh

export interface OauthRunOptions {
  readonly now?: () => number;
  readonly logger?: Logger;
  /** The longest `refresh` waits for another refresher's lock; default 45 s. */
  readonly lockWaitMs?: number;
  /** Default 2 min. */
  readonly lockStaleMs?: number;
  /** Called once when `refresh` starts waiting for a lock someone else holds. */
  readonly onLockWait?: (holder: LockHolder | undefined) => void;
}

export type CheckState = "healthy" | "expiring" | "expired" | "unreadable";

export interface CheckOutcome {
  readonly state: CheckState;
  /** 0 healthy, 1 expiring within the threshold, 2 expired or unreadable. */
  readonly exitCode: 0 | 1 | 2;
  readonly message: string;
  readonly expiresAtMs?: number;
}

export interface RefreshOutcome {
  /** `not-needed`: after taking the lock the token was (no longer) within the threshold. */
  readonly state: "refreshed" | "not-needed";
  readonly exitCode: 0;
  readonly message: string;
  readonly expiresAtMs: number;
}

function describeToken(file: string, credentials: Credentials): string {
  return `the token in ${file}${credentials.key === undefined ? "" : ` (under "${credentials.key}")`}`;
}

function describeExpiry(expiresAtMs: number, nowMs: number): string {
  const when = new Date(expiresAtMs).toISOString();
  return expiresAtMs <= nowMs
    ? `expired ${formatDuration(nowMs - expiresAtMs)} ago (${when})`
    : `expires in ${formatDuration(expiresAtMs - nowMs)} (${when})`;
}

/** The symlink's target when the file is a link (the rename must replace the target, not the link). */
async function resolveCredentialFile(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}

async function readCredentials(file: string, key: string | undefined): Promise<Credentials> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new CredentialFileError(
      2,
      "SVC_CONFIG",
      code === "ENOENT"
        ? `the credential file ${file} does not exist; log in to the agent (it writes the file) or fix OAUTH_CREDENTIALS_FILE`
        : `cannot read the credential file ${file} (${code}); check its permissions`,
      { data: { path: file } },
    );
  }
  return parseCredentials(text, file, key);
}

export async function checkCredential(
  config: OauthConfig,
  options: OauthRunOptions = {},
): Promise<CheckOutcome> {
  const nowMs = (options.now ?? Date.now)();
  const file = await resolveCredentialFile(config.credentialsFile);
  let credentials: Credentials;
  try {
    credentials = await readCredentials(file, config.credentialsKey);
  } catch (error) {
    if (error instanceof CredentialFileError)
      return { state: "unreadable", exitCode: 2, message: error.message };
    throw error;
  }
  const remaining = credentials.expiresAtMs - nowMs;
  const what = `${describeToken(file, credentials)} ${describeExpiry(credentials.expiresAtMs, nowMs)}`;
  const threshold = formatDuration(config.thresholdMs);
  if (remaining <= 0) {
    return {
      state: "expired",
      exitCode: 2,
      message: `${what}; refresh it now`,
      expiresAtMs: credentials.expiresAtMs,
    };
  }
  if (remaining <= config.thresholdMs) {
    return {
      state: "expiring",
      exitCode: 1,
      message: `${what}, within the ${threshold} threshold; refresh it`,
      expiresAtMs: credentials.expiresAtMs,
    };
  }
  return {
    state: "healthy",
    exitCode: 0,
    message: `${what}, beyond the ${threshold} threshold; nothing to do`,
    expiresAtMs: credentials.expiresAtMs,
  };
}

/**
 * Refreshes the token when it is within the threshold (or expired), under the file's lock. Throws an
 * `OauthError` (with its exit code) when it cannot; the file is then unchanged.
 */
export async function refreshCredential(
  config: OauthConfig,
  options: OauthRunOptions = {},
): Promise<RefreshOutcome> {
  const now = options.now ?? Date.now;
  const file = await resolveCredentialFile(config.credentialsFile);
  const redactor = new Redactor(ALL_SECRET_ENCODINGS).add(config.clientSecret);
  const lock = await acquireLock(`${file}.lock`, {
    waitMs: options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS,
    staleMs: options.lockStaleMs ?? LOCK_STALE_MS,
    now,
    onWait: options.onLockWait,
    onTakeover: (reason) =>
      options.logger?.warn(`oauth: took over a stale lock on ${file}: ${reason}`, { file }),
  });
  try {
    // Read only now, under the lock: a refresher that held it before us may have written a fresh token.
    const before = await readCredentials(file, config.credentialsKey);
    redactor.add(before.accessToken, before.refreshToken);
    const startMs = now();
    if (before.expiresAtMs - startMs > config.thresholdMs) {
      return {
        state: "not-needed",
        exitCode: 0,
        message: `${describeToken(file, before)} ${describeExpiry(before.expiresAtMs, startMs)}; no refresh needed`,
        expiresAtMs: before.expiresAtMs,
      };
    }
    if (before.refreshToken === undefined) {
      throw new OauthError(
        2,
        "SVC_CONFIG",
        `${describeToken(file, before)} has no refresh token, so it cannot be refreshed; log in to the agent again`,
      );
    }
    const grant = await requestGrant(config, before.refreshToken, redactor);
    redactor.add(grant.accessToken, grant.refreshToken);
    const grantedMs = now();
    // The agent refreshes on its own without our lock: apply the grant to what is in the file now, so
    // fields it changed meanwhile are kept. Our grant is the newest either way.
    let base = before;
    try {
      base = await readCredentials(file, config.credentialsKey);
    } catch {
      // Gone or broken since we read it: write the grant onto what we read.
    }
    const text = applyGrant(base, grant, grantedMs, config.thresholdMs);
    try {
      await writeFileAtomic(file, text);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new OauthError(
        1,
        "SVC_STORE",
        `the token endpoint issued a new token but writing ${file} failed (${code}); free space or fix permissions and ` +
          `run refresh again${grant.refreshToken === undefined ? "" : " (the server rotated the refresh token: if the next refresh answers invalid_grant, log in to the agent again)"}`,
        { cause: error },
      );
    }
    const written = parseCredentials(text, file, base.key);
    const message = `refreshed ${describeToken(file, written)}: it ${describeExpiry(written.expiresAtMs, grantedMs)}`;
    options.logger?.info(`oauth: ${message}`, {
      file,
      expiresAt: new Date(written.expiresAtMs).toISOString(),
    });
    return { state: "refreshed", exitCode: 0, message, expiresAtMs: written.expiresAtMs };
  } catch (error) {
    if (error instanceof SvcError) {
      error.message = redactor.redact(error.message);
      options.logger?.warn(`oauth: refresh failed: ${error.message}`, { file });
    }
    throw error;
  } finally {
    await lock.release();
  }
}

/** RFC 6749 §6: the refresh-token grant, form-encoded, client credentials in the body. */
async function requestGrant(
  config: OauthConfig,
  refreshToken: string,
  redactor: Redactor,
): Promise<TokenGrant> {
  const client = new HttpClient({
    allowedOrigins: config.allowedOrigins,
    agent: OAUTH_AGENT,
    timeoutMs: config.httpTimeoutMs,
    maxResponseBytes: 1024 * 1024,
  });
  const form = new URLSearchParams({
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: config.clientId,
  });
  if (config.clientSecret !== undefined) form.set("client_secret", config.clientSecret);
  if (config.scope !== undefined) form.set("scope", config.scope);
  const url = new URL(config.tokenEndpoint);
  const where = `${url.origin}${url.pathname}`;
  let response: HttpResponse;
  try {
    response = await client.request({
      method: "POST",
      url: config.tokenEndpoint,
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: form.toString(),
    });
  } catch (error) {
    if (!(error instanceof SvcError)) throw error;
    throw new OauthError(1, error.code, `token refresh failed: ${redactor.redact(error.message)}`, {
      cause: error,
    });
  }
  const text = response.body.toString("utf8");
  if (response.status === 200) return parseGrant(text);
  const { error, description } = parseErrorAnswer(text);
  const said =
    error === undefined
      ? `a body that is not an OAuth error object (${response.body.length} bytes${response.headers["content-type"] ? `, ${response.headers["content-type"]}` : ""})`
      : `error=${error}${description === undefined ? "" : ` (${description})`}`;
  const clean = (message: string): string => redactor.redact(message);
  if (error === "invalid_grant") {
    throw new InvalidGrantError(
      2,
      "SVC_BACKEND",
      clean(
        `the refresh token was rejected by ${where} (${response.status} ${said}): it was revoked or has expired. ` +
          `Log in to the agent again (interactively, on this machine) so it writes a new token to ${config.credentialsFile}`,
      ),
      { data: { status: response.status, error } },
    );
  }
  const hint =
    error === "invalid_client" || error === "unauthorized_client"
      ? "; check OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET"
      : response.status >= 500
        ? "; the server failed, the next keep-alive run tries again"
        : "";
  throw new OauthError(
    1,
    "SVC_BACKEND",
    clean(`token refresh failed: POST ${where} answered ${response.status} with ${said}${hint}`),
    {
      data: { status: response.status, ...(error === undefined ? {} : { error }) },
    },
  );
}

/** RFC 6749 §5.2 `error` and `error_description`, shortened and stripped of control characters. */
function parseErrorAnswer(text: string): { error?: string; description?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  if (!isObject(value) || typeof value.error !== "string") return {};
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const tidy = (s: string): string => s.replace(/[\u0000-\u001f\u007f]+/g, " ").slice(0, 200);
  return {
    error: tidy(value.error),
    ...(typeof value.error_description === "string" ? { description: tidy(value.error_description) } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Atomic write

/** Replaces the credential file atomically, keeping its owner (see atomic-file.ts). */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  writeFileAtomically(path, text, { keepOwner: true });
}

// ---------------------------------------------------------------------------------------------------------
// The lock

export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** RFC 3339, when the lock was taken. */
  readonly since: string;
  readonly nonce: string;
}

export interface LockOptions {
  readonly waitMs: number;
  readonly staleMs: number;
  readonly now?: () => number;
  readonly pollMs?: number;
  readonly onWait?: ((holder: LockHolder | undefined) => void) | undefined;
  readonly onTakeover?: (reason: string) => void;
}

export interface HeldLock {
  readonly path: string;
  release(): Promise<void>;
}

export class LockTimeoutError extends OauthError {}

interface LockState {
  readonly text: string;
  readonly holder: LockHolder | undefined;
  readonly mtimeMs: number;
  readonly ino: number;
}

/** A lock file whose content cannot be read yet is being written; give its creator this long. */
const UNREADABLE_LOCK_GRACE_MS = 5_000;
/** The lock that guards taking over a stale lock; held for a few ms, so older means its holder died. */
const BREAK_LOCK_STALE_MS = 10_000;

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (
      isObject(value) &&
      Number.isSafeInteger(value.pid) &&
      typeof value.host === "string" &&
      typeof value.since === "string" &&
      typeof value.nonce === "string"
    ) {
      return value as unknown as LockHolder;
    }
  } catch {
    // Being written, or not ours.
  }
  return undefined;
}

async function inspectLock(path: string): Promise<LockState | undefined> {
  try {
    const info = await stat(path);
    const text = await readFile(path, "utf8");
    return { text, holder: parseHolder(text), mtimeMs: info.mtimeMs, ino: info.ino };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Why the lock is abandoned, or undefined while its holder may still be at work. */
function staleReason(state: LockState, nowMs: number, staleMs: number): string | undefined {
  const age = nowMs - state.mtimeMs;
  if (state.holder === undefined) {
    return age > UNREADABLE_LOCK_GRACE_MS
      ? `unreadable lock file, last touched ${formatDuration(age)} ago`
      : undefined;
  }
  if (state.holder.host === hostname() && state.holder.pid !== process.pid && !isRunning(state.holder.pid)) {
    return `its holder, pid ${state.holder.pid}, is not running`;
  }
  return age > staleMs
    ? `its holder, pid ${state.holder.pid}, has not touched it for ${formatDuration(age)}`
    : undefined;
}

/**
 * Takes `path` with O_EXCL, waiting at most `waitMs`. A stale lock is removed under a second, short-lived
 * lock (`<path>.break`) after checking it is still the same file, so two waiters that both judged it stale
 * cannot remove each other's fresh lock.
 */
export async function acquireLock(path: string, options: LockOptions): Promise<HeldLock> {
  const now = options.now ?? Date.now;
  const pollMs = options.pollMs ?? 50;
  const deadline = performance.now() + options.waitMs;
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    since: new Date(now()).toISOString(),
    nonce: randomBytes(8).toString("hex"),
  };
  const text = `${JSON.stringify(holder)}\n`;
  let waited = false;
  for (;;) {
    try {
      const handle = await open(path, "wx", 0o600);
      try {
        await handle.writeFile(text, "utf8");
      } finally {
        await handle.close();
      }
      return heldLock(path, text, options.staleMs);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        throw new CredentialFileError(
          2,
          "SVC_CONFIG",
          `the credential file's directory ${dirname(path)} does not exist; log in to the agent (it writes the file) or fix OAUTH_CREDENTIALS_FILE`,
          { cause: error },
        );
      }
      if (code !== "EEXIST") {
        throw new OauthError(
          1,
          "SVC_STORE",
          `cannot create the lock file ${path} (${code ?? (error as Error).message}); the credential file's directory must be writable`,
          { cause: error },
        );
      }
    }
    const state = await inspectLock(path);
    if (state === undefined) continue;
    const reason = staleReason(state, now(), options.staleMs);
    if (reason !== undefined && (await breakStaleLock(path, state))) {
      options.onTakeover?.(reason);
      continue;
    }
    if (!waited) {
      waited = true;
      options.onWait?.(state.holder);
    }
    if (performance.now() >= deadline) {
      const who =
        state.holder === undefined
          ? "another process"
          : `pid ${state.holder.pid} on ${state.holder.host} since ${state.holder.since}`;
      throw new LockTimeoutError(
        1,
        "SVC_CONFLICT",
        `another refresh holds ${path} (${who}) and did not finish within ${formatDuration(options.waitMs)}; ` +
          `the next keep-alive run tries again (if no svc process is running, delete ${path})`,
      );
    }
    await sleep(pollMs + Math.floor(Math.random() * pollMs));
  }
}

async function breakStaleLock(path: string, judged: LockState): Promise<boolean> {
  const breakPath = `${path}.break`;
  try {
    await (await open(breakPath, "wx", 0o600)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
    try {
      const info = await stat(breakPath);
      // Its holder died between two syscalls: the tiny window in which two removers race is accepted.
      if (Date.now() - info.mtimeMs > BREAK_LOCK_STALE_MS) await rm(breakPath, { force: true });
    } catch {
      // Gone already.
    }
    return false;
  }
  try {
    const current = await inspectLock(path);
    if (current === undefined) return true;
    if (current.ino !== judged.ino || current.mtimeMs !== judged.mtimeMs || current.text !== judged.text)
      return false;
    await rm(path, { force: true });
    return true;
  } finally {
    await rm(breakPath, { force: true });
  }
}

function heldLock(path: string, text: string, staleMs: number): HeldLock {
  // Touch the lock while held, so a slow grant (429 waits, a slow server) is not mistaken for a dead holder.
  const heartbeat = setInterval(
    () => {
      const t = new Date();
      utimes(path, t, t).catch(() => undefined);
    },
    Math.max(10, Math.floor(staleMs / 4)),
  );
  heartbeat.unref();
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      try {
        // Only our own: if we were taken over as stale, the file is someone else's now.
        if ((await readFile(path, "utf8")) === text) await unlink(path);
      } catch {
        // Already gone.
      }
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
