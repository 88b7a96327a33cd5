/**
 * Picks the backend for a remote URL. A backend's own configuration (credentials, tenant) is checked first,
 * without a request; then the egress allowlist, before anything is sent.
 *
 * Each backend's module is loaded only when its kind is asked for: git starts the helper once per fetch
 * and once per lazy blob batch, and loading every backend on each start cost milliseconds every time.
 */

import { HttpClient } from "../core/http.js";
import type { RemoteUrl } from "../core/remote-url.js";
import type { Backend, ValidatorStore } from "./backend.js";
import type { RecordSchema } from "./record.js";

/** `options.comments`: false leaves the records' comments out (`git config svc.comments false`). */
export async function createBackend(
  remote: RemoteUrl,
  agent: string,
  env: NodeJS.ProcessEnv = process.env,
  options: { readonly comments?: boolean } = {},
): Promise<Backend> {
  if (remote.kind === "sim") {
    const { SimBackend } = await import("./sim/backend.js");
    const http = new HttpClient({ agent });
    http.checkEgress(remote.origin);
    return new SimBackend(remote.origin, remote.project, http, options);
  }
  if (remote.kind === "wiki") {
    const [{ WikiBackend }, { wikiConfig }] = await Promise.all([
      import("./wiki/backend.js"),
      import("./wiki/config.js"),
    ]);
    // The remote URL's origin is the site: `svc init` wrote it from the tenant (or SVC_WIKI_BASE_URL).
    const config = { ...wikiConfig(env), baseUrl: remote.origin };
    const http = new HttpClient({ agent, allowedOrigins: config.allowedOrigins });
    http.checkEgress(remote.origin);
    return new WikiBackend(config, remote.project, http, options);
  }
  if (remote.kind === "forge") {
    const [{ ForgeBackend }, { forgeConfig }] = await Promise.all([
      import("./forge/backend.js"),
      import("./forge/config.js"),
    ]);
    // The remote URL names the API root (`svc init` wrote it from SVC_FORGE_BASE_URL, or the public forge's):
    // everything before `/forge/projects/`, which keeps a GitHub Enterprise `/api/v3` path.
    const url = new URL(remote.url);
    const root = url.pathname.slice(0, url.pathname.lastIndexOf("/forge/projects/"));
    return ForgeBackend.create(
      { ...forgeConfig(env), baseUrl: `${url.origin}${root}` },
      remote.project,
      agent,
      options,
    );
  }
  // remote.kind === "tracker"
  const [{ TrackerBackend }, { trackerConfig }] = await Promise.all([
    import("./tracker/backend.js"),
    import("./tracker/config.js"),
  ]);
  // The remote URL names the site: everything before `/tracker/projects/` (`svc init` wrote it from the
  // instance, or SVC_TRACKER_BASE_URL).
  const url = new URL(remote.url);
  const root = url.pathname.slice(0, url.pathname.lastIndexOf("/tracker/projects/"));
  return TrackerBackend.create(
    { ...trackerConfig(env), baseUrl: `${url.origin}${root}` },
    remote.project,
    agent,
    options,
  );
}

/**
 * The record schema of a backend kind, without its configuration or a request (`svc log` needs no server).
 * `kept`: the project's cache's validators, where the tracker keeps the field list its schema is built from
 * (backends/tracker/field-catalog.ts); without it, the tracker's fixed fields only.
 */
export async function schemaOf(kind: RemoteUrl["kind"], kept?: ValidatorStore): Promise<RecordSchema> {
  if (kind === "sim") return (await import("./sim/schema.js")).SIM_SCHEMA;
  if (kind === "wiki") return (await import("./wiki/schema.js")).WIKI_SCHEMA;
  if (kind === "forge") return (await import("./forge/schema.js")).FORGE_SCHEMA;
  return (await import("./tracker/field-catalog.js")).keptTrackerSchema(kept);
}
