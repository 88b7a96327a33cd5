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
 *
 * This module is the provider (its configuration, `check` and `refresh`); the credential file's format and
 * I/O are in oauth-credentials.ts, the grant in oauth-grant.ts, the lock in file-lock.ts, the errors in
 * oauth-errors.ts and the redaction in redact.ts.
 */
import { isLoopbackHost } from "../../core/checks.js";
import { formatDuration } from "../../core/duration.js";
import { SvcError } from "../../core/errors.js";
import type { ConfigReader } from "./config.js";
import type { LockHolder } from "./file-lock.js";
import type { Logger } from "./log.js";
import type { OauthConfig } from "./oauth-config.js";
import {
  applyGrant,
  type Credentials,
  lockCredentialFile,
  parseCredentials,
  readCredentials,
  resolveCredentialFile,
  writeFileAtomic,
} from "./oauth-credentials.js";
import { CredentialFileError, OauthError } from "./oauth-errors.js";
import { requestGrant, type TokenGrant } from "./oauth-grant.js";

export type { OauthConfig } from "./oauth-config.js";

import { ALL_SECRET_ENCODINGS, Redactor } from "./redact.js";

// The provider's public surface, for the command and the tests.
export { parseCredentials } from "./oauth-credentials.js";
export {
  CredentialFileError,
  InvalidGrantError,
  LockTimeoutError,
  OauthError,
} from "./oauth-errors.js";

export const DEFAULT_REFRESH_THRESHOLD_MS = 6 * 3_600_000;
/** A lock not refreshed for this long is abandoned (the holder refreshes it every quarter of this). */
export const LOCK_STALE_MS = 2 * 60_000;
export const DEFAULT_LOCK_WAIT_MS = 45_000;
export const DEFAULT_OAUTH_HTTP_TIMEOUT_MS = 30_000;

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
      if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
        reader.problems.push(
          `OAUTH_TOKEN_ENDPOINT must be an https URL (plain http only on loopback: 127.0.0.0/8, localhost or [::1]): refresh tokens travel in the request`,
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
  const lock = await lockCredentialFile(file, {
    waitMs: options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS,
    staleMs: options.lockStaleMs ?? LOCK_STALE_MS,
    now,
    onWait: options.onLockWait,
    onTakeover: (reason) =>
      options.logger?.warn(`oauth: took over a stale lock on ${file}: ${reason}`, { file }),
  });
  try {
    return await refreshLocked(config, file, redactor, now, options.logger);
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

/** The read-check-grant-write of `refreshCredential`, lock held; every token read joins `redactor`. */
async function refreshLocked(
  config: OauthConfig,
  file: string,
  redactor: Redactor,
  now: () => number,
  logger: Logger | undefined,
): Promise<RefreshOutcome> {
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
  const written = await writeGrant(config, file, before, grant, grantedMs);
  const message = `refreshed ${describeToken(file, written)}: it ${describeExpiry(written.expiresAtMs, grantedMs)}`;
  logger?.info(`oauth: ${message}`, {
    file,
    expiresAt: new Date(written.expiresAtMs).toISOString(),
  });
  return { state: "refreshed", exitCode: 0, message, expiresAtMs: written.expiresAtMs };
}

/** Writes `grant` into the credential file; returns what was written, parsed. */
async function writeGrant(
  config: OauthConfig,
  file: string,
  before: Credentials,
  grant: TokenGrant,
  grantedMs: number,
): Promise<Credentials> {
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
  return parseCredentials(text, file, base.key);
}
