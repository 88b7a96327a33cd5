/**
 * What the forge benchmark's two parts (forge.ts, forge-comments.ts) share: the fake forge they run against, the
 * environment that points svc at it, and the REST calls a step cost, counted from the fake's request log.
 */
import type { FakeForge } from "../../testing/fake-forge.js";

/** The 5,000-issue repository of forge.ts. */
export const ISSUES_REPO = "acme/widgets";
/** The 10,000-issue, 30,000-comment repository of forge-comments.ts. */
export const COMMENTS_REPO = "acme/gadgets";

/**
 * The fake forge is a test fixture: `dist/testing/` is left out of the npm package (package.json `files`)
 * while `dist/scripts/` ships. It is imported only when this benchmark runs, so the shipped `bench.js` still
 * loads and runs the other benchmarks; `npm run bench -- forge` needs a checkout of the project (it builds
 * `dist/testing/` first), which is where benchmarks are run.
 */
export async function startForge(): Promise<FakeForge> {
  const { startFakeForge } = await import("../../testing/fake-forge.js");
  const [owner, name] = ISSUES_REPO.split("/") as [string, string];
  const [commentsOwner, commentsName] = COMMENTS_REPO.split("/") as [string, string];
  return startFakeForge({
    // The benchmark times svc; judging every exchange against the vendor's description is the tests' job.
    vendorChecks: false,
    repos: [
      { owner, name },
      { owner: commentsOwner, name: commentsName },
    ],
  });
}

/** The variables that point svc at `forge` (without SVC_CACHE_DIR, which each init gets its own of). */
export function forgeVars(forge: FakeForge): Record<string, string> {
  return {
    FORGE_TOKEN: forge.token,
    SVC_FORGE_BASE_URL: forge.url,
    SVC_ALLOWED_ORIGINS: forge.origin,
    SVC_SYNC_INTERVAL: "0",
  };
}

export interface Calls {
  readonly calls: number;
  readonly notModified: number;
  readonly quota: number;
}

/** Runs `step`, returning its time and the REST calls the fake received meanwhile. */
export async function counted(
  forge: FakeForge,
  step: () => Promise<number>,
): Promise<Calls & { ms: number }> {
  const from = forge.requests.length;
  const quota = forge.quotaUsed;
  const ms = await step();
  const requests = forge.requests.slice(from);
  return {
    ms,
    calls: requests.length,
    notModified: requests.filter((request) => request.status === 304).length,
    quota: forge.quotaUsed - quota,
  };
}

export const ms = (value: number) => `${Math.round(value)} ms`;
export const calls = (step: Calls) => `${step.calls} (${step.notModified} x 304), quota ${step.quota}`;

/** What a no-op fetch that missed its goal (no quota, every answer a 304) spent; undefined when it met it. */
export function fetchMiss(name: string, step: Calls): string | undefined {
  return step.quota > 0 || step.notModified < step.calls
    ? `no-op ${name} spent quota ${step.quota} (${step.calls - step.notModified} not 304)`
    : undefined;
}
