/**
 * What the credential keep-alive needs to know (read from the environment by oauth.ts `readOauthConfig`).
 * A module of its own so that the grant (oauth-grant.ts) and the entry (oauth.ts) share it without importing
 * each other.
 */

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
