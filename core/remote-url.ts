/**
 * Remote URLs (DESIGN.md §4 "URL forms"): `svc::http://127.0.0.1:7878/projects/<slug>` for the simulator;
 * `/<kind>/projects/<…>` names another adapter (`wiki`, `tracker`, `forge`). A loopback origin without a
 * marker is the simulator. Pure parsing; the egress allowlist is checked by the HTTP client.
 */
import { createRequire } from "node:module";
import { isLoopbackHost } from "./checks.js";
import { shellWord, UserFacingError } from "./errors.js";

export type BackendKind = "sim" | "wiki" | "tracker" | "forge";

export interface RemoteUrl {
  readonly kind: BackendKind;
  /** `http://127.0.0.1:7878` */
  readonly origin: string;
  /** The project: sim slug, wiki space key, tracker project key, forge `owner/repo`. */
  readonly project: string;
  /** The URL without `svc::`. */
  readonly url: string;
}

/** Where `svc init sim::…` finds the simulator when neither `--origin` nor `SVC_SIM_ORIGIN` says. */
export const DEFAULT_SIM_ORIGIN = "http://127.0.0.1:7878";

const EXAMPLE = "svc::http://127.0.0.1:7878/projects/demo";

/**
 * `input` as a message may show it: whatever sits between `://` and an `@` before the path (a user name and
 * password) is replaced, so a URL refused for another reason does not echo its credentials.
 */
function shownUrl(input: string): string {
  return JSON.stringify(input.replace(/^(.*?:\/\/)[^/?#]*@/, "$1<user:password>@"));
}

export function parseRemoteUrl(input: string): RemoteUrl {
  const text = input.startsWith("svc::") ? input.slice(5) : input;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UserFacingError(
      "SVC_USAGE",
      `remote URL ${shownUrl(input)} is not a URL; expected for example ${EXAMPLE}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UserFacingError(
      "SVC_USAGE",
      `remote URL ${shownUrl(input)} must use http or https, like ${EXAMPLE}`,
    );
  }
  if (url.username || url.password) {
    // Never echoed: the message names the URL without them.
    url.username = "";
    url.password = "";
    const clean = `svc::${url.href}`;
    throw new UserFacingError(
      "SVC_USAGE",
      "a remote URL must not carry a user name or password; svc reads credentials from the environment " +
        "(VENDOR_EMAIL and VENDOR_API_KEY for a wiki, TRACKER_EMAIL and TRACKER_API_TOKEN for a tracker, FORGE_TOKEN for a forge; the simulator needs none). Use the URL without them: " +
        `git clone ${clean} (in an existing clone: git remote set-url origin ${clean})`,
    );
  }
  const segments = url.pathname.split("/").filter((segment) => segment !== "");
  const at = segments.indexOf("projects");
  const marker = at > 0 ? segments[at - 1] : undefined;
  const rest = at === -1 ? [] : segments.slice(at + 1).map((segment) => decodeSegment(input, segment));
  let kind: BackendKind | undefined;
  if (marker === "wiki" || marker === "tracker" || marker === "forge") kind = marker;
  else if (at === 0 && isLoopbackHost(url.hostname)) kind = "sim";
  const wanted = kind === "forge" ? 2 : 1;
  if (!kind && at === 0 && rest.length === 1 && rest[0] !== "") throw simOffLoopback(input, url);
  if (!kind || rest.length !== wanted || rest.some((part) => part === "")) {
    throw new UserFacingError(
      "SVC_USAGE",
      `remote URL ${shownUrl(input)} does not name a project; expected ${EXAMPLE}, ` +
        "or …/wiki/projects/<SPACE>, …/tracker/projects/<KEY>, …/forge/projects/<owner>/<repo>",
    );
  }
  return { kind, origin: url.origin, project: rest.join("/"), url: text };
}

/**
 * The refusal of a simulator URL (`…/projects/<slug>` with no backend before it) whose host is not a loopback
 * address as written. The simulator listens only on loopback, by design (it has no authentication), so the
 * URL that works is the same one at 127.0.0.1, on the machine it runs on. `unresolved`: why the host name
 * does not resolve, when a lookup said so (`parseRemoteUrlLookingUp`). `data.loopbackUrl` is that URL and
 * `data.cause` the words after "on" (`sim.example, which is not a loopback address: …`), for the commands
 * that name their own next step (`svc init --origin`, `svc doctor`).
 */
function simOffLoopback(input: string, url: URL, unresolved?: string): UserFacingError {
  const loopback = new URL(url.href);
  loopback.protocol = "http:";
  loopback.hostname = "127.0.0.1";
  const working = `svc::${loopback.href.replace(/\/$/, "")}`;
  const host = url.hostname;
  const cause =
    unresolved === undefined
      ? `${host}, which is not a loopback address: the simulator listens only on loopback (127.0.0.1, localhost, [::1]), by design, as it has no authentication`
      : `${host}, and the host name ${host} does not resolve (${unresolved}); the simulator listens only on loopback (127.0.0.1, localhost, [::1])`;
  const marked = (kind: string) =>
    `svc::${url.origin}${url.pathname.replace(/^\/projects\//, `/${kind}/projects/`)}`;
  const otherKinds =
    unresolved === undefined
      ? `; for a wiki space or a tracker project there, name its kind: ${marked("wiki")} or ${marked("tracker")}`
      : "";
  return new UserFacingError(
    "SVC_USAGE",
    `remote URL ${shownUrl(input)} names a simulator project (no wiki/, tracker/ or forge/ before /projects/) on ${cause}. ` +
      `For a simulator on this machine: git clone ${working} (in an existing clone: git remote set-url origin ${working})${otherKinds}`,
    { data: { simHost: host, cause, loopbackUrl: working } },
  );
}

/** How long `parseRemoteUrlLookingUp` waits for a host name's lookup before it leaves the cause unsaid. */
const LOOKUP_WAIT_MS = 3000;

/**
 * `parseRemoteUrl`, and when it refuses a simulator URL on a host name that is not loopback, that name looked
 * up, so that the refusal names the real cause: a name that does not resolve (a typo) rather than the
 * simulator's being loopback-only. Only that refusal costs a lookup.
 */
export async function parseRemoteUrlLookingUp(input: string): Promise<RemoteUrl> {
  try {
    return parseRemoteUrl(input);
  } catch (error) {
    const host = error instanceof UserFacingError ? error.data.simHost : undefined;
    // An address written as such has nothing to look up.
    if (typeof host !== "string" || /^(\d+\.){3}\d+$|^\[/.test(host)) throw error;
    const unresolved = await lookupFailure(host);
    if (unresolved === undefined) throw error;
    const text = input.startsWith("svc::") ? input.slice(5) : input;
    throw simOffLoopback(input, new URL(text), unresolved);
  }
}

/** The error code of looking `host` up, or undefined when it resolves or the lookup takes too long. */
async function lookupFailure(host: string): Promise<string | undefined> {
  // Loaded here, with require (a dynamic import() cannot run in the bundle): only this refusal needs it.
  const { lookup } = (createRequire(import.meta.url)("node:dns") as typeof import("node:dns")).promises;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), LOOKUP_WAIT_MS);
  });
  try {
    await Promise.race([lookup(host), waited]);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  } finally {
    clearTimeout(timer);
  }
}

/** A path segment without its percent-escapes; one that is not UTF-8 (`%E0%A4`) is the user's error. */
function decodeSegment(input: string, segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new UserFacingError(
      "SVC_USAGE",
      `remote URL ${shownUrl(input)} has ${JSON.stringify(segment)} in its project, whose %-escapes are ` +
        `not UTF-8; write the project's name as it is, like ${EXAMPLE}`,
    );
  }
}

/**
 * The `svc init` command line that makes a working tree of `remote` in `dir` (the simulator's origin as
 * `--origin`; the other backends take theirs from the same environment as before).
 */
export function initCommandFor(remote: RemoteUrl, dir: string): string {
  const words = ["svc", "init", `${remote.kind}::${remote.project}`, dir];
  if (remote.kind === "sim") words.push("--origin", remote.origin);
  return words.map(shellWord).join(" ");
}
