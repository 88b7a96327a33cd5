/**
 * The working tree's svc remote and what reaching its server takes: the URL (core/remote-url.ts), the egress
 * allowlist (core/http.ts decides, as for every request), the backend's variables (its own config module
 * names the missing ones) and one read-only request (`Backend.probe`). Credentials are named, never shown.
 */
import { forgeConfig } from "../../backends/forge/config.js";
import { TRACKER_VENDOR_DOMAIN, trackerConfig } from "../../backends/tracker/config.js";
import { WIKI_VENDOR_DOMAIN, wikiConfig } from "../../backends/wiki/config.js";
import { DEFAULT_ALLOWED_ORIGINS, isOriginAllowed, parseAllowlist } from "../../core/allowlist.js";
import { isObject } from "../../core/checks.js";
import { SvcError } from "../../core/errors.js";
import { type BackendKind, parseRemoteUrlLookingUp, type RemoteUrl } from "../../core/remote-url.js";
import { remoteUrlOf, userGit } from "../../git/user-git.js";
import { exportCommand, type Place, svcDoctor } from "./place.js";
import { cloneFix, type Fix, urlFix, withoutUserinfo } from "./remote-fix.js";
import { type Finding, fail, ok, skipped } from "./report.js";

/** A variable a backend needs and where its value comes from (README), in words. */
interface Variable {
  readonly name: string;
  readonly source: string;
}

const VARIABLES: Record<string, Variable> = {
  VENDOR_EMAIL: {
    name: "VENDOR_EMAIL",
    source: "the email of the wiki account the API token was issued to",
  },
  VENDOR_API_KEY: {
    name: "VENDOR_API_KEY",
    source: "a user API token of that wiki account",
  },
  SVC_WIKI_TENANT: {
    name: "SVC_WIKI_TENANT",
    source: `the name before .${WIKI_VENDOR_DOMAIN} in the wiki site's address (acme for https://acme.${WIKI_VENDOR_DOMAIN})`,
  },
  FORGE_TOKEN: {
    name: "FORGE_TOKEN",
    source: "a forge token that can read and write the repository's issues",
  },
  TRACKER_EMAIL: {
    name: "TRACKER_EMAIL",
    source: "the email of the tracker account",
  },
  TRACKER_API_TOKEN: {
    name: "TRACKER_API_TOKEN",
    source: "an API token of that tracker account",
  },
  SVC_TRACKER_INSTANCE: {
    name: "SVC_TRACKER_INSTANCE",
    source: `the name before .${TRACKER_VENDOR_DOMAIN} in the tracker site's address (acme for https://acme.${TRACKER_VENDOR_DOMAIN})`,
  },
};

/** The variables that carry the account: what a 401 or 403 asks to check. */
const CREDENTIALS: Record<BackendKind, readonly string[]> = {
  sim: [],
  wiki: ["VENDOR_EMAIL", "VENDOR_API_KEY"],
  forge: ["FORGE_TOKEN"],
  tracker: ["TRACKER_EMAIL", "TRACKER_API_TOKEN"],
};

/**
 * The working tree and its remote's URL; `remote` is undefined when there is no usable svc remote. Only
 * then, and not `--offline`, may the fix ask the simulator which projects it serves (cli/doctor/remote-fix.ts).
 */
export async function checkRemote(
  place: Place,
  asking: { env: NodeJS.ProcessEnv; offline: boolean },
): Promise<{ finding: Finding; remote?: RemoteUrl }> {
  const cwd = place.dir ?? ".";
  const initFix = () => cloneFix(place, asking);
  const named = place.dir === undefined ? "the current folder" : place.dir;
  const tree = await userGit(["rev-parse", "--is-inside-work-tree"], { cwd });
  if (tree.code === null) {
    return {
      finding: fail("remote", `${named} does not exist; make a clone there with svc init`, await initFix()),
    };
  }
  if (tree.code !== 0 || tree.stdout.trim() !== "true") {
    return {
      finding: fail(
        "remote",
        `${named} is not in a git working tree (${tree.stderr.trim().split("\n")[0] || tree.stdout.trim()}); make a clone with svc init`,
        await initFix(),
      ),
    };
  }
  const url = await remoteUrlOf(place.remote, cwd);
  if (url === undefined) {
    return {
      finding: fail(
        "remote",
        `${named} is a git working tree without a remote named ${place.remote}; svc's are made by svc init`,
        await initFix(),
      ),
    };
  }
  if (!url.startsWith("svc::")) {
    return {
      finding: fail(
        "remote",
        `the remote ${place.remote} of ${named} is ${withoutUserinfo(url)}, not an svc:: URL; svc's are made by svc init`,
        await initFix(),
      ),
    };
  }
  let remote: RemoteUrl;
  try {
    remote = await parseRemoteUrlLookingUp(url);
  } catch (error) {
    if (!(error instanceof SvcError)) throw error;
    return { finding: fail("remote", error.message, await urlFix(place, url, error, asking)) };
  }
  return {
    finding: ok("remote", `${place.remote} is svc::${remote.url}: ${remote.kind} project ${remote.project}`, {
      url: `svc::${remote.url}`,
      kind: remote.kind,
      project: remote.project,
      origin: remote.origin,
    }),
    remote,
  };
}

/**
 * Whether the egress allowlist lets svc reach `remote.origin`. The simulator's requests fall back to the
 * default list when `SVC_ALLOWED_ORIGINS` is unset; the other backends require the variable.
 */
export function checkAllowlist(remote: RemoteUrl, env: NodeJS.ProcessEnv): Finding {
  const set = env.SVC_ALLOWED_ORIGINS;
  const current = set ?? (remote.kind === "sim" ? DEFAULT_ALLOWED_ORIGINS : "");
  const entries = current
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  // The entries the client accepts, each checked alone: a fix keeps them and drops the malformed ones.
  const valid = entries.filter((entry) => {
    try {
      parseAllowlist(entry);
      return true;
    } catch {
      return false;
    }
  });
  const fix = exportCommand([["SVC_ALLOWED_ORIGINS", [...valid, remote.origin].join(",")]]);
  const where =
    set === undefined ? `SVC_ALLOWED_ORIGINS is not set` : `SVC_ALLOWED_ORIGINS is ${JSON.stringify(set)}`;
  if (valid.length < entries.length) {
    const bad = entries.filter((entry) => !valid.includes(entry));
    return fail(
      "allowlist",
      `${where}: ${bad.map((entry) => JSON.stringify(entry)).join(", ")} is not scheme://host[:port|:*]`,
      fix,
    );
  }
  if (!isOriginAllowed(new URL(remote.origin), parseAllowlist(current))) {
    const fallback =
      set === undefined && remote.kind === "sim" ? ` (the default is ${DEFAULT_ALLOWED_ORIGINS})` : "";
    return fail(
      "allowlist",
      `${where}${fallback}: it does not include ${remote.origin}, so svc refuses to send it anything; the fix adds it, if you trust it`,
      fix,
      { origin: remote.origin },
    );
  }
  return ok(
    "allowlist",
    `${remote.origin} is allowed by ${set === undefined ? `the default ${DEFAULT_ALLOWED_ORIGINS}` : "SVC_ALLOWED_ORIGINS"}`,
    { origin: remote.origin },
  );
}

/** The subdomain of `origin` under `domain` (`acme` of `https://acme.atlassian.net`), if it is one. */
function subdomainOf(origin: string, domain: string): string | undefined {
  const host = new URL(origin).hostname;
  const name = host.endsWith(`.${domain}`) ? host.slice(0, -domain.length - 1) : "";
  return /^[a-z0-9-]{1,63}$/.test(name) ? name : undefined;
}

/**
 * What sets `names`: `export` with the values the remote URL tells (the wiki tenant, the tracker
 * instance); when any other is needed (a credential: svc cannot know it), advice naming each and where its
 * value comes from, with that `export` for the rest, then svc doctor again.
 */
function variablesFix(names: readonly string[], remote: RemoteUrl, place: Place): Fix {
  const known: [string, string][] = [];
  const unknown: string[] = [];
  for (const name of names) {
    const value =
      name === "SVC_WIKI_TENANT"
        ? subdomainOf(remote.origin, WIKI_VENDOR_DOMAIN)
        : name === "SVC_TRACKER_INSTANCE"
          ? subdomainOf(remote.origin, TRACKER_VENDOR_DOMAIN)
          : undefined;
    if (value === undefined) unknown.push(name);
    else known.push([name, value]);
  }
  if (unknown.length === 0) return exportCommand(known);
  const each = unknown.map(
    (name) => `${name} to ${VARIABLES[name]?.source ?? "the value README.md gives under Configuration"}`,
  );
  return {
    advice:
      `svc cannot know ${unknown.join(" or ")}: set ${each.join(", and ")}, in the environment svc and git run in` +
      `${known.length > 0 ? `, and run ${exportCommand(known)}` : ""}; then run ${svcDoctor(place)}`,
  };
}

function sources(names: readonly string[]): string {
  return names
    .map((name) => `${name}: ${VARIABLES[name]?.source ?? "see svc's README, Configuration"}`)
    .join("; ");
}

/** Variables whose value the backend refuses, and the fix for each (the remote URL already names the server). */
const REFUSED_VALUE_FIXES: readonly [string, (remote: RemoteUrl, place: Place) => Fix][] = [
  ["SVC_WIKI_TENANT", (remote, place) => variablesFix(["SVC_WIKI_TENANT"], remote, place)],
  ["SVC_TRACKER_INSTANCE", (remote, place) => variablesFix(["SVC_TRACKER_INSTANCE"], remote, place)],
  ["SVC_FORGE_BASE_URL", () => "unset SVC_FORGE_BASE_URL"],
  ["SVC_TRACKER_BASE_URL", () => "unset SVC_TRACKER_BASE_URL"],
];

/**
 * Every variable the backend needs is set and has a value it accepts, by the backend's own config function
 * (which names the missing ones). `SVC_ALLOWED_ORIGINS` is the allowlist check's.
 */
export function checkCredentials(remote: RemoteUrl, env: NodeJS.ProcessEnv, place: Place): Finding {
  if (remote.kind === "sim") return ok("credentials", "the simulator needs none");
  const read = { wiki: wikiConfig, forge: forgeConfig, tracker: trackerConfig }[remote.kind];
  const names = CREDENTIALS[remote.kind];
  try {
    read({ ...env, SVC_ALLOWED_ORIGINS: env.SVC_ALLOWED_ORIGINS || remote.origin });
  } catch (error) {
    if (!(error instanceof SvcError)) throw error;
    const missing = Array.isArray(error.data.missing) ? (error.data.missing as string[]) : [];
    if (missing.length > 0) {
      return fail(
        "credentials",
        `the ${remote.kind} backend needs ${missing.join(", ")}, not set (${sources(missing)})`,
        variablesFix(missing, remote, place),
        { missing },
      );
    }
    const refused = REFUSED_VALUE_FIXES.find(([name]) => error.message.includes(name));
    return refused
      ? fail("credentials", error.message, refused[1](remote, place))
      : fail("credentials", error.message, {
          advice: "set the variable it names, then run svc doctor again",
        });
  }
  return ok("credentials", `${names.join(" and ")} set (values not shown)`, { variables: names });
}

/** The status a backend's error carries (`data.status`), if any. */
function statusOf(error: unknown): number | undefined {
  const data = error instanceof SvcError ? error.data : undefined;
  return isObject(data) && typeof data.status === "number" ? data.status : undefined;
}

/** One read-only request to the server (`Backend.probe`); skipped `--offline` or when the checks before it failed. */
export async function checkServer(
  remote: RemoteUrl,
  options: { offline: boolean; blockedBy: readonly Finding[]; env: NodeJS.ProcessEnv; place: Place },
): Promise<Finding> {
  if (options.offline) return skipped("server", "--offline: no request sent");
  const blockers = options.blockedBy.filter((finding) => finding.status === "fail");
  if (blockers.length > 0) {
    return skipped(
      "server",
      `no request sent until ${blockers.map((finding) => finding.id).join(" and ")} is fixed`,
    );
  }
  const { createBackend } = await import("../../backends/create.js");
  try {
    const backend = await createBackend(remote, `svc-doctor-${process.pid}`, options.env);
    if (!backend.probe) return skipped("server", `the ${remote.kind} backend has no read-only probe`);
    await backend.probe();
    return ok("server", `${backend.description} answered`);
  } catch (error) {
    if (!(error instanceof SvcError)) throw error;
    const status = statusOf(error);
    const names = CREDENTIALS[remote.kind];
    if ((status === 401 || status === 403) && names.length > 0) {
      return fail(
        "server",
        `the server answered ${status} to a read-only request: ${error.message}; check ${names.join(" and ")} (${sources(names)})`,
        variablesFix(names, remote, options.place),
        { httpStatus: status },
      );
    }
    return fail(
      "server",
      error.message,
      { advice: "the message says what to change; then run svc doctor again" },
      {
        ...(status === undefined ? {} : { httpStatus: status }),
      },
    );
  }
}
