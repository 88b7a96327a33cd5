/**
 * The tracker backend's configuration (issue 15; Document 3 "Sanctioned test targets"; DESIGN.md §6):
 * `TRACKER_EMAIL` and `TRACKER_API_TOKEN` (Basic auth, never printed), `SVC_TRACKER_INSTANCE` (the
 * `<instance>` of `https://<instance>.atlassian.net`, checked like the wiki's tenant) and
 * `SVC_ALLOWED_ORIGINS`, every missing one named in one message; `SVC_TRACKER_BASE_URL` replaces the
 * instance's origin (tests, proxies). The project key, where none is given, follows Document 3's
 * precedence: `TRACKER_TEST_PROJECT`, then `SVC_TRACKER_PROJECT`, then `TEST`. Nothing is sent anywhere here.
 */
import { UserFacingError } from "../../core/errors.js";
import { checkSubdomain } from "../../core/subdomain.js";

export const TRACKER_VENDOR_DOMAIN = "atlassian.net";
const REQUIRED = [
  "TRACKER_EMAIL",
  "TRACKER_API_TOKEN",
  "SVC_TRACKER_INSTANCE",
  "SVC_ALLOWED_ORIGINS",
] as const;

export interface TrackerConfig {
  readonly email: string;
  readonly apiToken: string;
  /** `https://<instance>.atlassian.net`, or `SVC_TRACKER_BASE_URL`. No trailing slash. */
  readonly baseUrl: string;
  readonly allowedOrigins: string;
}

/** Throws unless `instance` is a bare subdomain: `[a-z0-9-]`, 1 to 63 characters. */
export function checkInstance(instance: string): void {
  checkSubdomain(instance, {
    what: "tracker instance",
    variable: "SVC_TRACKER_INSTANCE",
    domain: TRACKER_VENDOR_DOMAIN,
  });
}

/** `SVC_TRACKER_BASE_URL` checked, without a trailing slash; undefined when unset. */
function baseUrlOverride(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.SVC_TRACKER_BASE_URL;
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (
    !url ||
    (url.protocol !== "https:" && url.protocol !== "http:") ||
    url.username ||
    url.password ||
    url.search
  ) {
    throw new UserFacingError(
      "SVC_USAGE",
      `SVC_TRACKER_BASE_URL ${JSON.stringify(raw.slice(0, 200))} is not an http(s) URL without user name, password or query; set it to the site's origin, e.g. https://acme.${TRACKER_VENDOR_DOMAIN}, or unset it`,
    );
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

export function trackerConfig(env: NodeJS.ProcessEnv = process.env): TrackerConfig {
  // An instance that is set but empty is not missing: it gets the instance message.
  const missing = REQUIRED.filter(
    (name) => env[name] === undefined || (env[name] === "" && name !== "SVC_TRACKER_INSTANCE"),
  );
  if (missing.length > 0) {
    const one = missing.length === 1;
    throw new UserFacingError(
      "SVC_USAGE",
      `the tracker backend needs ${one ? "this environment variable" : "these environment variables"}, which ${one ? "is" : "are"} not set: ${missing.join(", ")}` +
        `\n  TRACKER_EMAIL (the account's email), TRACKER_API_TOKEN (an API token of that account), SVC_TRACKER_INSTANCE (the <instance> of https://<instance>.${TRACKER_VENDOR_DOMAIN}),` +
        ` SVC_ALLOWED_ORIGINS (must include that origin, e.g. https://<instance>.${TRACKER_VENDOR_DOMAIN})`,
      { data: { missing } },
    );
  }
  const instance = env.SVC_TRACKER_INSTANCE ?? "";
  checkInstance(instance);
  return {
    email: env.TRACKER_EMAIL ?? "",
    apiToken: env.TRACKER_API_TOKEN ?? "",
    baseUrl: baseUrlOverride(env) ?? `https://${instance}.${TRACKER_VENDOR_DOMAIN}`,
    allowedOrigins: env.SVC_ALLOWED_ORIGINS ?? "",
  };
}

/** Document 3's project key precedence: `TRACKER_TEST_PROJECT`, `SVC_TRACKER_PROJECT`, then `TEST`. */
export function defaultTrackerProject(env: NodeJS.ProcessEnv = process.env): string {
  return env.TRACKER_TEST_PROJECT || env.SVC_TRACKER_PROJECT || "TEST";
}

/**
 * Throws unless `key` is a project key as the tracker spells them: an upper-case letter, then upper-case
 * letters, digits or `_` (2 to 255 characters in all).
 */
export function checkProjectKey(key: string): void {
  if (/^[A-Z][A-Z0-9_]{1,254}$/.test(key)) return;
  throw new UserFacingError(
    "SVC_USAGE",
    `${JSON.stringify(key.slice(0, 80))} is not a tracker project key (an upper-case letter, then upper-case letters, digits or _, e.g. TEST); for example: svc init tracker::TEST test`,
  );
}

/** The remote URL of a project: `svc::https://<instance>.atlassian.net/tracker/projects/<KEY>`. */
export function trackerRemoteUrl(baseUrl: string, key: string): string {
  checkProjectKey(key);
  return `svc::${baseUrl}/tracker/projects/${key}`;
}
