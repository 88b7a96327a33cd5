/**
 * The forge backend's configuration (issue 14; DESIGN.md §6): `FORGE_TOKEN` (sent as a Bearer token, never
 * printed) and `SVC_ALLOWED_ORIGINS` must be set, and both are named in one message when missing;
 * `SVC_FORGE_BASE_URL` replaces `https://api.github.com` (tests, GitHub Enterprise Server's
 * `https://<host>/api/v3`). Nothing is sent anywhere here.
 */
import { UserFacingError } from "../../core/errors.js";

export const FORGE_DEFAULT_BASE_URL = "https://api.github.com";
const REQUIRED = ["FORGE_TOKEN", "SVC_ALLOWED_ORIGINS"] as const;

export interface ForgeConfig {
  readonly token: string;
  /** The API root without a trailing slash: `https://api.github.com`, `https://ghe.example/api/v3`. */
  readonly baseUrl: string;
  readonly allowedOrigins: string;
}

/** The base URL `SVC_FORGE_BASE_URL` names, else the public forge's; no trailing slash. */
export function forgeBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env.SVC_FORGE_BASE_URL || FORGE_DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UserFacingError(
      "SVC_USAGE",
      `SVC_FORGE_BASE_URL ${JSON.stringify(raw.slice(0, 200))} is not a URL; set it to the API root, e.g. https://ghe.example.com/api/v3, or unset it for ${FORGE_DEFAULT_BASE_URL}`,
    );
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password || url.search) {
    throw new UserFacingError(
      "SVC_USAGE",
      `SVC_FORGE_BASE_URL must be an http(s) API root without user name, password or query, e.g. https://ghe.example.com/api/v3`,
    );
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

export function forgeConfig(env: NodeJS.ProcessEnv = process.env): ForgeConfig {
  const missing = REQUIRED.filter((name) => !env[name]);
  if (missing.length > 0) {
    const one = missing.length === 1;
    throw new UserFacingError(
      "SVC_USAGE",
      `the forge backend needs ${one ? "this environment variable" : "these environment variables"}, which ${one ? "is" : "are"} not set: ${missing.join(", ")}` +
        "\n  FORGE_TOKEN (a token that can read and write the repository's issues), SVC_ALLOWED_ORIGINS (must include the API origin, " +
        `e.g. ${new URL(forgeBaseUrl(env)).origin})`,
      { data: { missing } },
    );
  }
  return {
    token: env.FORGE_TOKEN ?? "",
    baseUrl: forgeBaseUrl(env),
    allowedOrigins: env.SVC_ALLOWED_ORIGINS ?? "",
  };
}

/** Throws unless `project` is `<owner>/<repo>` as the forge spells names. */
export function checkForgeProject(project: string): { owner: string; repo: string } {
  const match = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/.exec(project);
  if (!match || match[2] === "." || match[2] === "..") {
    throw new UserFacingError(
      "SVC_USAGE",
      `${JSON.stringify(project.slice(0, 200))} is not a forge repository <owner>/<repo>; for example: svc init forge::acme/widgets widgets`,
    );
  }
  return { owner: match[1] ?? "", repo: match[2] ?? "" };
}

/** The remote URL of a repository: `svc::https://api.github.com/forge/projects/<owner>/<repo>`. */
export function forgeRemoteUrl(baseUrl: string, project: string): string {
  const { owner, repo } = checkForgeProject(project);
  return `svc::${baseUrl}/forge/projects/${owner}/${repo}`;
}
