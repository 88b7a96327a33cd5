/**
 * The egress allowlist `SVC_ALLOWED_ORIGINS` (DESIGN.md §4, §6), the security boundary every request of
 * core/http.ts crosses before it is sent: which origins are allowed, and the refusal.
 */
import { UserFacingError } from "./errors.js";

export const DEFAULT_ALLOWED_ORIGINS = "http://127.0.0.1:*,http://localhost:*";

export interface OriginPattern {
  readonly protocol: string;
  readonly host: string;
  readonly port: string;
}

function defaultPort(protocol: string): string {
  return protocol === "https:" ? "443" : "80";
}

/**
 * `SVC_ALLOWED_ORIGINS`: comma-separated entries `scheme://host[:port|:*]`, the host optionally `*.<domain>`
 * (any name under the domain, not the domain itself). An entry's scheme and host are read as a URL's are
 * (WHATWG URL): case folded, `127.1` is `127.0.0.1`, `[0:0::1]` is `[::1]`, a Unicode name is its punycode.
 * So an entry allows exactly the URLs whose origin it names, however either is spelled. Anything beyond an
 * origin (a user name, a path, a query, a port above 65535, a wildcard over an IP address) is refused: such
 * an entry could match nothing. Throws a `UserFacingError` naming the first bad entry.
 */
export function parseAllowlist(text: string): OriginPattern[] {
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .map(parseOriginPattern);
}

function parseOriginPattern(item: string): OriginPattern {
  const refused = () =>
    new UserFacingError(
      "SVC_USAGE",
      `SVC_ALLOWED_ORIGINS entry ${JSON.stringify(item)} is not scheme://host[:port|:*], e.g. http://127.0.0.1:*`,
    );
  const match = /^(https?):\/\/(\*\.)?(\[[^\]]*\]|[^:/?#@\\[\]]+)(?::(\*|\d+))?\/?$/i.exec(item);
  if (!match) throw refused();
  const [, scheme = "", wildcard = "", host = "", port] = match;
  const protocol = `${scheme.toLowerCase()}:`;
  let url: URL;
  try {
    url = new URL(`${protocol}//${host}${port === undefined || port === "*" ? "" : `:${port}`}/`);
  } catch {
    throw refused();
  }
  if (wildcard && (url.hostname.startsWith("[") || /^[\d.]+$/.test(url.hostname))) throw refused();
  return {
    protocol,
    host: `${wildcard.toLowerCase()}${url.hostname}`,
    port: port === "*" ? "*" : url.port || defaultPort(protocol),
  };
}

/** Whether `url`'s origin (scheme, host and port as WHATWG URL normalises them) is one `patterns` allow. */
export function isOriginAllowed(url: URL, patterns: readonly OriginPattern[]): boolean {
  const port = url.port || defaultPort(url.protocol);
  const host = url.hostname;
  return patterns.some(
    (pattern) =>
      pattern.protocol === url.protocol &&
      (pattern.host === host || (pattern.host.startsWith("*.") && host.endsWith(pattern.host.slice(1)))) &&
      (pattern.port === "*" || pattern.port === port),
  );
}

export class EgressDeniedError extends UserFacingError {
  constructor(url: URL) {
    super(
      "SVC_EGRESS_DENIED",
      `origin not allowlisted: ${url.origin}; add it to SVC_ALLOWED_ORIGINS (comma-separated, e.g. ` +
        `SVC_ALLOWED_ORIGINS="${DEFAULT_ALLOWED_ORIGINS},${url.origin}") if you trust it`,
      { data: { origin: url.origin } },
    );
  }
}
