/**
 * The fixes of the `remote` check when the folder has no usable svc remote: the clone to make, or the URL to
 * set. Each is a command with real values (the folder, the URL's origin and project, the simulator's
 * projects from one `GET /projects`) when svc can know them, and otherwise advice in words saying what svc
 * cannot know; never a command with a placeholder in it.
 */
import { readdirSync } from "node:fs";
import { simProjectSlugs } from "../../backends/sim/backend.js";
import { DEFAULT_ALLOWED_ORIGINS } from "../../core/allowlist.js";
import { isLoopbackHost } from "../../core/checks.js";
import { SvcError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import { DEFAULT_SIM_ORIGIN, parseRemoteUrl } from "../../core/remote-url.js";
import { gitIn, type Place, svcDoctor, words } from "./place.js";

export type Fix = string | { readonly advice: string };

/** How many projects advice lists, each with its command. */
const LISTED_PROJECTS = 5;

/** The projects the simulator at `origin` serves, or why svc does not know them. */
type SimProjects = { readonly slugs: readonly string[] } | { readonly why: string };

interface Asking {
  readonly env: NodeJS.ProcessEnv;
  /** `--offline`: no request, so the projects are unknown. */
  readonly offline: boolean;
}

async function simProjects(origin: string, asking: Asking): Promise<SimProjects> {
  if (asking.offline)
    return { why: `--offline sends no request, so svc did not ask it (GET ${origin}/projects)` };
  try {
    const http = new HttpClient({
      agent: `svc-doctor-${process.pid}`,
      allowedOrigins: asking.env.SVC_ALLOWED_ORIGINS ?? DEFAULT_ALLOWED_ORIGINS,
    });
    return { slugs: await simProjectSlugs(origin, http) };
  } catch (error) {
    if (!(error instanceof SvcError)) throw error;
    return { why: error.message };
  }
}

/** `url` without a user name or password (a non-svc remote may carry a token there). */
export function withoutUserinfo(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.href;
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//");
  }
}

/** Whether svc init can clone into `dir`: it does not exist, or is an empty folder. */
function usableForInit(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** `slug`, or `slug-2`, `slug-3`, …: the first folder here that svc init can clone into. */
function freeFolder(slug: string): string {
  for (let n = 1; ; n++) {
    const name = n === 1 ? slug : `${slug}-${n}`;
    if (usableForInit(name)) return name;
  }
}

/** Commands to choose from: `a; or b; or c`. */
function oneOf(commands: readonly string[]): string {
  return commands.join("; or ");
}

/**
 * For a folder that is no svc clone: `svc init sim::<a project of the simulator> <the folder>`, the
 * simulator being the one `svc init sim::…` would use ($SVC_SIM_ORIGIN, else the default), when it serves
 * exactly one project and the folder is new or empty; otherwise advice naming the commands to choose from.
 */
export async function cloneFix(place: Place, asking: Asking): Promise<Fix> {
  const origin = (asking.env.SVC_SIM_ORIGIN ?? DEFAULT_SIM_ORIGIN).replace(/\/+$/, "");
  const target = place.dir ?? ".";
  const named = place.dir === undefined ? "the current folder" : place.dir;
  const usable = usableForInit(target);
  const projects = await simProjects(origin, asking);
  if ("why" in projects) {
    return {
      advice: `svc cannot tell which project to clone: the simulator svc init uses, at ${origin}, did not say which it serves (${projects.why}); svc init --help shows how to name a simulator project, a wiki space, a tracker project or a forge repository`,
    };
  }
  const { slugs } = projects;
  if (slugs.length === 0) {
    return {
      advice: `the simulator at ${origin} serves no project, so svc cannot offer one to clone; svc init --help shows how to clone a wiki space, a tracker project or a forge repository instead`,
    };
  }
  const into = (slug: string) => (usable ? target : freeFolder(slug));
  const init = (slug: string) => words(["svc", "init", `sim::${slug}`, into(slug)]);
  const [only] = slugs;
  if (slugs.length === 1 && only !== undefined && usable) return init(only);
  const beside = `${named} holds files, and svc init clones only into a new or empty folder, so the clone goes beside it`;
  const then = (slug: string) =>
    usable ? init(slug) : `${init(slug)} && ${svcDoctor({ dir: into(slug), remote: "origin" })}`;
  if (slugs.length === 1 && only !== undefined) return { advice: `${beside}: run ${then(only)}` };
  const more =
    slugs.length > LISTED_PROJECTS
      ? `; ${slugs.length - LISTED_PROJECTS} more are listed by GET ${origin}/projects`
      : "";
  return {
    advice: `${usable ? "" : `${beside}; `}the simulator at ${origin} serves ${slugs.length} projects, and svc cannot know which one you want: run ${oneOf(slugs.slice(0, LISTED_PROJECTS).map(then))}${more}`,
  };
}

/**
 * For a remote URL that `parseRemoteUrl` refused with `error`: `git remote set-url` to the URL it must
 * have been, when svc can tell (the simulator at 127.0.0.1 for one on another host; the URL without its
 * user name and password; `http://` in front of a URL without a scheme; for a simulator URL without a
 * project the one that simulator serves, or the one the URL names), else advice.
 */
export async function urlFix(place: Place, url: string, error: SvcError, asking: Asking): Promise<Fix> {
  const setUrl = (to: string) => gitIn(place, ["remote", "set-url", place.remote, to]);
  if (typeof error.data.loopbackUrl === "string") return setUrl(error.data.loopbackUrl);
  const text = url.slice("svc::".length);
  const candidates = [withoutUserinfo(text), ...(text.includes("://") ? [] : [`http://${text}`])];
  for (const candidate of candidates) {
    try {
      parseRemoteUrl(candidate);
      if (candidate !== text) return setUrl(`svc::${candidate}`);
    } catch {
      // not this one
    }
  }
  const sim = simPart(text);
  if (sim === undefined) {
    return {
      advice: `svc cannot tell which URL was meant; set the one of the form the message gives with ${gitIn(place, ["remote", "set-url", place.remote])} followed by it, then run ${svcDoctor(place)}`,
    };
  }
  const projects = await simProjects(sim.origin, asking);
  if ("why" in projects) {
    return {
      advice: `svc cannot tell which project the URL means: the simulator at ${sim.origin} did not say which it serves (${projects.why}); set the URL with ${gitIn(place, ["remote", "set-url", place.remote])} followed by it, then run ${svcDoctor(place)}`,
    };
  }
  const at = (slug: string) => setUrl(`svc::${sim.origin}/projects/${encodeURIComponent(slug)}`);
  const { slugs } = projects;
  const [only] = slugs;
  if (sim.named !== undefined && slugs.includes(sim.named)) return at(sim.named);
  if (slugs.length === 1 && only !== undefined) return at(only);
  if (slugs.length === 0) {
    return {
      advice: `the simulator at ${sim.origin} serves no project, so no URL of it can name one; svc init --help shows the other backends`,
    };
  }
  const more =
    slugs.length > LISTED_PROJECTS
      ? `; ${slugs.length - LISTED_PROJECTS} more are listed by GET ${sim.origin}/projects`
      : "";
  return {
    advice: `the simulator at ${sim.origin} serves ${slugs.length} projects, and svc cannot know which one the URL means: run ${oneOf(slugs.slice(0, LISTED_PROJECTS).map(at))}${more}`,
  };
}

/**
 * The simulator a refused URL points at (an http(s) URL on a loopback host, with no backend named in its
 * path) and the project its path names after `/projects/`, if any.
 */
function simPart(text: string): { origin: string; named: string | undefined } | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (!isLoopbackHost(url.hostname) || /\/(wiki|tracker|forge)\/projects(\/|$)/.test(url.pathname))
    return undefined;
  const segment = /\/projects\/([^/]+)/.exec(url.pathname)?.[1];
  let named: string | undefined;
  try {
    named = segment === undefined ? undefined : decodeURIComponent(segment);
  } catch {
    named = undefined;
  }
  return { origin: url.origin, named };
}
