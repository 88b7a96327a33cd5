/**
 * The agent's credential file: its format (parse, and apply a grant to it, both pure) and its I/O (resolve,
 * read, replace atomically, lock). The format is described in oauth.ts. Error messages name keys and
 * types, never values: the file holds tokens.
 */
import { readFile, realpath } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomically } from "../../core/atomic-file.js";
import { isObject } from "../../core/checks.js";
import { formatDuration } from "../../core/duration.js";
import { acquireLock, type HeldLock, type LockOptions, LockWaitTimeoutError } from "./file-lock.js";
import { CredentialFileError, LockTimeoutError, OauthError } from "./oauth-errors.js";
import type { TokenGrant } from "./oauth-grant.js";

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

/** The symlink's target when the file is a link (the rename must replace the target, not the link). */
export async function resolveCredentialFile(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}

export async function readCredentials(file: string, key: string | undefined): Promise<Credentials> {
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

/** Replaces the credential file atomically, keeping its owner (see core/atomic-file.ts). */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  writeFileAtomically(path, text, { keepOwner: true });
}

/**
 * Takes `<file>.lock` for a refresh, waiting as `options` say; the lock's failures become the provider's
 * errors: a missing directory needs a login (2), an unwritable one or a holder that does not finish is 1.
 */
export async function lockCredentialFile(file: string, options: LockOptions): Promise<HeldLock> {
  const path = `${file}.lock`;
  try {
    return await acquireLock(path, options);
  } catch (error) {
    if (error instanceof LockWaitTimeoutError) {
      const who =
        error.holder === undefined
          ? "another process"
          : `pid ${error.holder.pid} on ${error.holder.host} since ${error.holder.since}`;
      throw new LockTimeoutError(
        1,
        "SVC_CONFLICT",
        `another refresh holds ${path} (${who}) and did not finish within ${formatDuration(options.waitMs)}; ` +
          `the next keep-alive run tries again (if no svc process is running, delete ${path})`,
      );
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new CredentialFileError(
        2,
        "SVC_CONFIG",
        `the credential file's directory ${dirname(path)} does not exist; log in to the agent (it writes the file) or fix OAUTH_CREDENTIALS_FILE`,
        { cause: error },
      );
    }
    throw new OauthError(
      1,
      "SVC_STORE",
      `cannot create the lock file ${path} (${code ?? (error as Error).message}); the credential file's directory must be writable`,
      { cause: error },
    );
  }
}
