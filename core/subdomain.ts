/**
 * The one check of a site's subdomain setting (the wiki's tenant, the tracker's instance): the `<name>` of
 * `https://<name>.atlassian.net`, alone, so the setting can never point svc at another host.
 */
import { UserFacingError } from "./errors.js";

export interface SubdomainSetting {
  /** What it is, for the message: `wiki tenant`, `tracker instance`. */
  readonly what: string;
  /** The variable that sets it: `SVC_WIKI_TENANT`. */
  readonly variable: string;
  /** The domain it is a subdomain of: `atlassian.net`. */
  readonly domain: string;
}

/** Throws unless `value` is a bare subdomain: `[a-z0-9-]`, 1 to 63 characters. */
export function checkSubdomain(value: string, setting: SubdomainSetting): void {
  if (/^[a-z0-9-]{1,63}$/.test(value)) return;
  const why =
    value === ""
      ? "it is empty"
      : value.length > 63
        ? `it has ${value.length} characters, at most 63 are allowed`
        : "only lower-case letters, digits and '-' are allowed (the subdomain alone: no scheme, no dots)";
  throw new UserFacingError(
    "SVC_USAGE",
    `invalid ${setting.what} subdomain: ${JSON.stringify(value.slice(0, 80))}: ${why}; set ${setting.variable} to e.g. acme for https://acme.${setting.domain}`,
  );
}
