/**
 * The wiki adapter's configuration (Document 3 "Required environment variables"): all four variables, one
 * message naming every missing one, the tenant checked before anything else, nothing sent anywhere.
 */
import { UserFacingError } from "../../core/errors.js";
import { checkSubdomain } from "../../core/subdomain.js";

export const WIKI_VENDOR_DOMAIN = "atlassian.net";
const REQUIRED = ["VENDOR_API_KEY", "VENDOR_EMAIL", "SVC_WIKI_TENANT", "SVC_ALLOWED_ORIGINS"] as const;

export interface WikiConfig {
  readonly email: string;
  readonly apiToken: string;
  readonly tenant: string;
  /** `https://<tenant>.atlassian.net`, or `SVC_WIKI_BASE_URL` (tests, proxies). No trailing slash. */
  readonly baseUrl: string;
  readonly allowedOrigins: string;
}

/** Throws unless `tenant` is a bare subdomain: `[a-z0-9-]`, 1 to 63 characters. */
export function checkTenant(tenant: string): void {
  checkSubdomain(tenant, { what: "wiki tenant", variable: "SVC_WIKI_TENANT", domain: WIKI_VENDOR_DOMAIN });
}

export function wikiConfig(env: NodeJS.ProcessEnv = process.env): WikiConfig {
  // A tenant that is set but empty is not missing: it gets the tenant message (Document 3 "Errors").
  const missing = REQUIRED.filter(
    (name) => env[name] === undefined || (env[name] === "" && name !== "SVC_WIKI_TENANT"),
  );
  if (missing.length > 0) {
    throw new UserFacingError(
      "SVC_USAGE",
      `the wiki backend needs ${missing.length === 1 ? "this environment variable" : "these environment variables"}, which ${missing.length === 1 ? "is" : "are"} not set: ${missing.join(", ")}` +
        `\n  VENDOR_API_KEY (API token), VENDOR_EMAIL (the account it was issued to), SVC_WIKI_TENANT (the <tenant> of https://<tenant>.${WIKI_VENDOR_DOMAIN}),` +
        ` SVC_ALLOWED_ORIGINS (must include that origin, e.g. https://<tenant>.${WIKI_VENDOR_DOMAIN})`,
      { data: { missing } },
    );
  }
  const tenant = env.SVC_WIKI_TENANT ?? "";
  checkTenant(tenant);
  const baseUrl = (env.SVC_WIKI_BASE_URL || `https://${tenant}.${WIKI_VENDOR_DOMAIN}`).replace(/\/+$/, "");
  return {
    email: env.VENDOR_EMAIL ?? "",
    apiToken: env.VENDOR_API_KEY ?? "",
    tenant,
    baseUrl,
    allowedOrigins: env.SVC_ALLOWED_ORIGINS ?? "",
  };
}
