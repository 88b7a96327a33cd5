/**
 * Fixtures for the forge backend's end-to-end tests: the git environment with the variables of issue 14
 * pointed at a fake forge, its remote URL, and which requests were writes.
 */
import type { ExecutionContext } from "ava";
import type { FakeForge, FakeForgeRequest } from "./fake-forge.js";
import { type GitEnv, givenGitEnv } from "./git.js";

/** `FORGE_TOKEN`, the allowlist and the base URL override, for `forge`. */
export function forgeVars(forge: FakeForge): Record<string, string> {
  return {
    FORGE_TOKEN: forge.token,
    SVC_FORGE_BASE_URL: forge.url,
    SVC_ALLOWED_ORIGINS: forge.origin,
  };
}

/** `givenGitEnv` configured for `forge`; every fetch syncs (`SVC_SYNC_INTERVAL=0`). */
export function givenForgeEnv(
  t: ExecutionContext,
  forge: FakeForge,
  extra: Readonly<Record<string, string>> = {},
): GitEnv {
  return givenGitEnv(t, { ...forgeVars(forge), SVC_SYNC_INTERVAL: "0", ...extra });
}

/** `givenForgeEnv` with svc sent to `forge` through the proxy at `proxyUrl` (e.g. a fault proxy). */
export function givenProxiedForgeEnv(t: ExecutionContext, forge: FakeForge, proxyUrl: string): GitEnv {
  return givenForgeEnv(t, forge, { SVC_FORGE_BASE_URL: proxyUrl, SVC_ALLOWED_ORIGINS: "http://127.0.0.1:*" });
}

/** `svc::<base>/forge/projects/<owner>/<repo>`: the URL `svc init forge::<owner>/<repo>` writes. */
export function forgeRemote(baseUrl: string, repo: string): string {
  return `svc::${baseUrl}/forge/projects/${repo}`;
}

/** The requests after the first `from` that were not GETs (the writes), in order. */
export function forgeWrites(forge: FakeForge, from = 0): FakeForgeRequest[] {
  return forge.requests.slice(from).filter((request) => request.method !== "GET");
}
