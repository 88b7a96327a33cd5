/**
 * The fake wiki's authentication: Basic `base64(email:token)` against the one configured account (Document 3
 * "Authentication"), refused with the vendor's recorded answers.
 */
import { type Answer, vendorError } from "./http.js";
import { BASIC_REJECTED } from "./vendor-data.js";

/** `Authorization` header value for Basic authentication. */
export function basicAuthorization(email: string, token: string): string {
  return `Basic ${Buffer.from(`${email}:${token}`, "utf8").toString("base64")}`;
}

/** The refusal of a request whose `Authorization` does not name the account; undefined when it does. */
export function authFailure(header: string | undefined, email: string, token: string): Answer | undefined {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? "");
  if (!match?.[1]) {
    // ASSUMPTION: without usable Basic credentials (none, or a Bearer token, which user API tokens are not)
    // the answer is the v2 error envelope.
    return vendorError(
      401,
      "UNAUTHORIZED",
      "Unauthorized",
      "Basic authentication with an API token is required",
    );
  }
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  const givenEmail = colon < 0 ? decoded : decoded.slice(0, colon);
  const givenToken = colon < 0 ? "" : decoded.slice(colon + 1);
  if (givenEmail === email && givenToken === token) return undefined;
  // A valid token presented with another account's email is the mismatch Document 3 names; an unknown
  // token is just rejected.
  const headers: Record<string, string> =
    givenToken === token ? { "x-failure-category": "FAILURE_CLIENT_AUTH_MISMATCH" } : {};
  return { status: 401, headers, body: BASIC_REJECTED };
}
