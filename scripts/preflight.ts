/**
 * `npm run preflight` (Document 3, "Rules for test fixtures" 5): reads `.env` if present, then sends one
 * read-only GET to each configured real-backend target. Exit 0: every configured target answered and the
 * named test target exists; 1: at least one failed; 2: no backend credentials are configured at all.
 *
 * Targets and their variables (base URLs can be replaced for proxies with `SVC_<KIND>_BASE_URL`):
 * - wiki: VENDOR_API_KEY, VENDOR_EMAIL, SVC_WIKI_TENANT (+ SVC_WIKI_TEST_SPACE, the test space key or alias)
 * - forge: FORGE_TOKEN (+ SVC_FORGE_REPO, owner/repo of the project's own repository)
 * - scratch repository: FORGE_TOKEN and SVC_SCRATCH_REPO (owner/repo)
 * - tracker: TRACKER_EMAIL, TRACKER_API_TOKEN, SVC_TRACKER_INSTANCE; project TRACKER_TEST_PROJECT, then
 *   SVC_TRACKER_PROJECT, then TEST
 * Every request passes the egress allowlist (`SVC_ALLOWED_ORIGINS`); no credential is ever printed.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { defaultTrackerProject } from "../backends/tracker/config.js";
import { checkTenant, WIKI_VENDOR_DOMAIN } from "../backends/wiki/config.js";
import { SvcError } from "../core/errors.js";
import { HttpClient } from "../core/http.js";

/** `KEY=value` lines of a `.env` file; `#` comments, optional quotes. Variables already set win. */
export function parseDotEnv(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match || line.trimStart().startsWith("#")) continue;
    const [, name = "", raw = ""] = match;
    values[name] = /^(["']).*\1$/.test(raw) ? raw.slice(1, -1) : raw.replace(/\s+#.*$/, "");
  }
  return values;
}

interface Target {
  readonly name: string;
  readonly configured: boolean;
  /** What is missing when some but not all variables are set. */
  readonly missing: string[];
  readonly check: () => Promise<string>;
}

function basic(user: string, token: string): string {
  return `Basic ${Buffer.from(`${user}:${token}`).toString("base64")}`;
}

/** What to fix after a 401/403/404, per target; empty for other statuses. */
function refusalHint(what: string, status: number, headers: Readonly<Record<string, string>>): string {
  if (what === "wiki" && status === 401) {
    return headers["x-failure-category"] === "FAILURE_CLIENT_AUTH_MISMATCH"
      ? "; the token is valid but belongs to another account: set VENDOR_EMAIL to the email it was issued under"
      : "; VENDOR_API_KEY was refused: create a new API token, and check VENDOR_EMAIL is its account's email";
  }
  if (what === "tracker" && status === 401) {
    return "; TRACKER_API_TOKEN was refused: check the token and that TRACKER_EMAIL is its account's email";
  }
  if (what === "tracker" && status === 404) {
    return "; no such project, or the account cannot see it: check TRACKER_TEST_PROJECT / SVC_TRACKER_PROJECT";
  }
  if ((what === "forge" || what === "scratch repository") && status === 401) {
    return "; FORGE_TOKEN was refused (expired or revoked): create a new token";
  }
  if ((what === "forge" || what === "scratch repository") && (status === 404 || status === 403)) {
    return "; the repository does not exist or FORGE_TOKEN cannot see it: check the owner/repo and the token's access";
  }
  return "";
}

/** GETs a JSON answer; anything but 200 is an error naming the target and what to check. */
type GetJson = (url: string, headers: Record<string, string>, what: string) => Promise<unknown>;

function getJsonWith(http: HttpClient): GetJson {
  return async (url, headers, what) => {
    const response = await http.request({
      method: "GET",
      url,
      headers: { accept: "application/json", ...headers },
    });
    if (response.status !== 200) {
      throw new SvcError(
        "SVC_BACKEND",
        `${what}: GET ${url.split("?")[0]} answered ${response.status}${refusalHint(what, response.status, response.headers)}`,
      );
    }
    return JSON.parse(response.body.toString("utf8")) as unknown;
  };
}

/** The names among `names` that `env` lacks. */
function missingIn(env: NodeJS.ProcessEnv, ...names: string[]): string[] {
  return names.filter((name) => !env[name]);
}

function wikiTarget(env: NodeJS.ProcessEnv, get: GetJson): Target {
  const wikiMissing = missingIn(env, "VENDOR_API_KEY", "VENDOR_EMAIL", "SVC_WIKI_TENANT");
  return {
    name: "wiki",
    configured: wikiMissing.length < 3,
    missing: wikiMissing,
    async check() {
      checkTenant(env.SVC_WIKI_TENANT ?? "");
      const base = (env.SVC_WIKI_BASE_URL || `https://${env.SVC_WIKI_TENANT}.${WIKI_VENDOR_DOMAIN}`).replace(
        /\/+$/,
        "",
      );
      const space = env.SVC_WIKI_TEST_SPACE;
      const auth = { authorization: basic(env.VENDOR_EMAIL ?? "", env.VENDOR_API_KEY ?? "") };
      const value = (await get(
        `${base}/wiki/api/v2/spaces?${space ? `keys=${encodeURIComponent(space)}` : "limit=1"}`,
        auth,
        "wiki",
      )) as { results?: unknown[] };
      if (space && (value.results ?? []).length === 0)
        throw new SvcError("SVC_BACKEND", `wiki: space ${space} not found`);
      return space ? `space ${space} found` : "reachable (set SVC_WIKI_TEST_SPACE to check the test space)";
    },
  };
}

/** The forge token (and its repository, if named), then the scratch repository. */
function forgeTargets(env: NodeJS.ProcessEnv, get: GetJson): Target[] {
  const forgeBase = (env.SVC_FORGE_BASE_URL || "https://api.github.com").replace(/\/+$/, "");
  const forgeHeaders = () => ({
    authorization: `Bearer ${env.FORGE_TOKEN}`,
    "x-github-api-version": "2022-11-28",
  });
  return [
    {
      name: "forge",
      configured: Boolean(env.FORGE_TOKEN),
      missing: missingIn(env, "FORGE_TOKEN"),
      async check() {
        const repo = env.SVC_FORGE_REPO;
        await get(repo ? `${forgeBase}/repos/${repo}` : `${forgeBase}/user`, forgeHeaders(), "forge");
        return repo
          ? `repository ${repo} found`
          : "token accepted (set SVC_FORGE_REPO to check the repository)";
      },
    },
    {
      name: "scratch repository",
      configured: Boolean(env.FORGE_TOKEN && env.SVC_SCRATCH_REPO),
      missing: missingIn(env, "FORGE_TOKEN", "SVC_SCRATCH_REPO"),
      async check() {
        const value = (await get(
          `${forgeBase}/repos/${env.SVC_SCRATCH_REPO}`,
          forgeHeaders(),
          "scratch repository",
        )) as {
          archived?: boolean;
        };
        return value.archived
          ? "found, but archived: unarchive it through the forge API before use"
          : "found";
      },
    },
  ];
}

function trackerTarget(env: NodeJS.ProcessEnv, get: GetJson): Target {
  const trackerMissing = missingIn(env, "TRACKER_EMAIL", "TRACKER_API_TOKEN", "SVC_TRACKER_INSTANCE");
  return {
    name: "tracker",
    configured: trackerMissing.length < 3,
    missing: trackerMissing,
    async check() {
      const instance = env.SVC_TRACKER_INSTANCE ?? "";
      checkTenant(instance);
      const base = (env.SVC_TRACKER_BASE_URL || `https://${instance}.${WIKI_VENDOR_DOMAIN}`).replace(
        /\/+$/,
        "",
      );
      const project = defaultTrackerProject(env);
      await get(
        `${base}/rest/api/3/project/${encodeURIComponent(project)}`,
        { authorization: basic(env.TRACKER_EMAIL ?? "", env.TRACKER_API_TOKEN ?? "") },
        "tracker",
      );
      return `project ${project} found`;
    },
  };
}

export function targets(env: NodeJS.ProcessEnv, http: HttpClient): Target[] {
  const get = getJsonWith(http);
  return [wikiTarget(env, get), ...forgeTargets(env, get), trackerTarget(env, get)];
}

export async function preflight(env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  const http = new HttpClient({
    agent: `svc-preflight-${process.pid}`,
    allowedOrigins: env.SVC_ALLOWED_ORIGINS,
    timeoutMs: 15_000,
  });
  const all = targets(env, http);
  const configured = all.filter((target) => target.configured);
  if (configured.length === 0) {
    out(
      "preflight: no backend credentials are configured (wiki, forge, scratch repository, tracker); see Document 3",
    );
    return 2;
  }
  let failed = 0;
  for (const target of all) {
    if (!target.configured) {
      out(`${target.name}: not configured`);
      continue;
    }
    if (target.missing.length > 0) {
      failed++;
      out(`${target.name}: FAILED: partly configured; missing ${target.missing.join(", ")}`);
      continue;
    }
    try {
      out(`${target.name}: ok: ${await target.check()}`);
    } catch (error) {
      failed++;
      out(`${target.name}: FAILED: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  return failed === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (existsSync(".env")) {
    for (const [name, value] of Object.entries(parseDotEnv(readFileSync(".env", "utf8"))))
      env[name] ??= value;
  }
  return preflight(env, (line) => process.stdout.write(`${line}\n`));
}

// Run as a program (`node dist/scripts/preflight.js`), not when imported by its tests.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = await main();
}
