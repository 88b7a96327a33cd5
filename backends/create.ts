/** Picks the backend for a remote URL; the egress allowlist is checked before anything else happens. */
import type { Backend } from "./backend.js";
import { UserFacingError } from "./errors.js";
import { HttpClient } from "./http.js";
import type { RemoteUrl } from "./remote-url.js";
import { SimBackend } from "./sim/backend.js";

export function createBackend(remote: RemoteUrl, agent: string): Backend {
  const http = new HttpClient({ agent });
  http.checkEgress(remote.origin);
  if (remote.kind === "sim") return new SimBackend(remote.origin, remote.project, http);
  throw new UserFacingError(
    "SVC_USAGE",
    `the ${remote.kind} backend is not available in this version of svc; it serves sim projects (svc::http://127.0.0.1:7878/projects/<slug>)`,
  );
}
