/** The OAuth keep-alive provider's errors; the command exits with `exitCode` (the provider contract of keepalive.ts). */
import { type ErrorCode, UserFacingError } from "../../core/errors.js";

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

/** Another refresher held the credential file's lock for longer than the provider waits. */
export class LockTimeoutError extends OauthError {}
