/**
 * Picks the backend for a remote URL. A backend's own configuration (credentials, tenant) is checked first,
 * without a request; then the egress allowlist, before anything is sent.
 */
import type { Backend } from "./backend.js";
import { UserFacingError } from "./errors.js";
import { HttpClient } from "./http.js";
import type { RemoteUrl } from "./remote-url.js";
import { SimBackend } from "./sim/backend.js";
import { WikiBackend } from "./wiki/backend.js";
import { wikiConfig } from "./wiki/config.js";

export function createBackend(
  remote: RemoteUrl,
  agent: string,
  env: NodeJS.ProcessEnv = process.env,
): Backend {
  if (remote.kind === "sim") {
    const http = new HttpClient({ agent });
    http.checkEgress(remote.origin);
    return new SimBackend(remote.origin, remote.project, http);
  }
  if (remote.kind === "wiki") {
    // The remote URL's origin is the site: `svc init` wrote it from the tenant (or SVC_WIKI_BASE_URL).
    const config = { ...wikiConfig(env), baseUrl: remote.origin };
    const http = new HttpClient({ agent, allowedOrigins: config.allowedOrigins });
    http.checkEgress(remote.origin);
    return new WikiBackend(config, remote.project, http);
  }
  throw new UserFacingError(
    "SVC_USAGE",
    `the ${remote.kind} backend is not available in this version of svc; it serves sim projects and wiki spaces`,
  );
}
