/**
 * Remote URLs (DESIGN.md §4 "URL forms"): `svc::http://127.0.0.1:7878/projects/<slug>` for the simulator;
 * `/<kind>/projects/<…>` names another adapter (`wiki`, `tracker`, `forge`). A loopback origin without a
 * marker is the simulator. Pure parsing; the egress allowlist is checked by the HTTP client.
 */
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
  if (!kind || rest.length !== wanted || rest.some((part) => part === "")) {
    throw new UserFacingError(
      "SVC_USAGE",
      `remote URL ${shownUrl(input)} does not name a project; expected ${EXAMPLE}, ` +
        "or …/wiki/projects/<SPACE>, …/tracker/projects/<KEY>, …/forge/projects/<owner>/<repo>",
    );
  }
  return { kind, origin: url.origin, project: rest.join("/"), url: text };
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
