/**
 * The refresh-token grant (RFC 6749 §6) against the token endpoint, and the parsing of its answers
 * (§5.1 success, §5.2 error). No token reaches a message: every text is passed through the caller's
 * redactor, and parse errors name fields, never values.
 */
import { isObject } from "../../core/checks.js";
import { SvcError } from "../../core/errors.js";
import { HttpClient, type HttpResponse } from "../../core/http.js";
import type { OauthConfig } from "./oauth-config.js";
import { InvalidGrantError, OauthError } from "./oauth-errors.js";
import type { Redactor } from "./redact.js";

export const OAUTH_AGENT = "svc-pulse-keepalive";

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

/** RFC 6749 §6: the refresh-token grant, form-encoded, client credentials in the body. */
export async function requestGrant(
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
