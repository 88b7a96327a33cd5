/**
 * The fault matrix of the server-fault suites (e2e/server-faults.test.ts against the simulator,
 * e2e/wiki-faults.test.ts against the fake wiki): which faults the proxy injects, what each means for the
 * server and for the message, and the checks every case shares: the command a message prints, the cache's
 * database intact, the tree of a ref as path → blob id.
 */
import type { ExecutionContext } from "ava";
import type { Fault } from "./fault-proxy.js";
import { cacheFolders, type GitEnv, gitOk, openCacheDb, run } from "./git.js";

/** The milliseconds `SVC_HTTP_TIMEOUT_MS` gives the command that meets a `hang` or a `drip`. */
export const HANG_TIMEOUT_MS = 1500;

export interface FaultCase {
  readonly name: string;
  readonly fault: Fault;
  /** The server acted on the request before the fault: a write it met was done. */
  readonly committed: boolean;
  /** Only a write makes it differ from another case (after forwarding, a GET is like before). */
  readonly writesOnly?: boolean;
  /**
   * How the message says when to run the command again: `back` (no whole answer came), `works` (an
   * answer that is not the API's), `after` (a Retry-After longer than svc waits: the instant).
   */
  readonly when: "back" | "works" | "after";
}

export const FAULTS: readonly FaultCase[] = [
  {
    name: "500",
    fault: { kind: "answer", status: 500, body: { error: "internal" } },
    committed: false,
    when: "works",
  },
  {
    name: "502",
    fault: { kind: "answer", status: 502, body: { error: "bad gateway" } },
    committed: false,
    when: "works",
  },
  { name: "garbage JSON", fault: { kind: "garbage" }, committed: false, when: "works" },
  {
    name: "garbage JSON after the write",
    fault: { kind: "garbage", forward: true },
    committed: true,
    writesOnly: true,
    when: "works",
  },
  { name: "a truncated body", fault: { kind: "truncated" }, committed: true, when: "back" },
  {
    name: "a reset before forwarding",
    fault: { kind: "reset", before: true },
    committed: false,
    when: "back",
  },
  {
    name: "a reset after forwarding",
    fault: { kind: "reset" },
    committed: true,
    writesOnly: true,
    when: "back",
  },
  { name: "a hang past the timeout", fault: { kind: "hang", forward: true }, committed: true, when: "back" },
  {
    name: "an answer dripping a byte every 100 ms",
    fault: { kind: "drip", forward: true },
    committed: true,
    when: "back",
  },
  {
    name: "429 with Retry-After: 3600",
    fault: { kind: "retryAfter", status: 429, seconds: 3600 },
    committed: false,
    when: "after",
  },
];

/** `SVC_HTTP_TIMEOUT_MS` for the command that meets `fault` (only a hang and a drip need a short one). */
export function faultEnv(fault: FaultCase): Record<string, string> {
  const kind = fault.fault.kind;
  return kind === "hang" || kind === "drip" ? { SVC_HTTP_TIMEOUT_MS: String(HANG_TIMEOUT_MS) } : {};
}

/** The instant a Retry-After message names, as a pattern (`2025-01-06T18:40:05Z`). */
export const INSTANT = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ";

/** `text` as a regular expression source that matches it literally. */
export function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The words of a message that say when to run the command again, as a pattern. */
export function whenPattern(fault: FaultCase): string {
  switch (fault.when) {
    case "back":
      return "when the server is back";
    case "works":
      return "when the server works again";
    case "after":
      return `after ${INSTANT}`;
  }
}

/**
 * What `git fetch` prints when its sync met `fault` (`reason`: a pattern of the client's words for it): it
 * fails, nothing is fetched, and it names the command for when the server works again and the one that
 * works from the cache on purpose (issue 31), then git's own line.
 */
export function fetchFailedPattern(description: string, reason: string, fault: FaultCase): RegExp {
  const when = whenPattern(fault);
  const first = `cannot sync with ${literal(description)} \\(${reason}\\); nothing was fetched`;
  return new RegExp(
    `^svc: ${first}\n${when.charAt(0).toUpperCase()}${when.slice(1)}, run: git fetch\n` +
      "To work from the cache's state from \\d+\\.\\d s ago on purpose, run: git -c svc\\.offline=true fetch\n" +
      `fatal: remote error: ${first}; the svc: lines above say what to run\n$`,
  );
}

/** The line of a failed fetch that names the command for when the server works again. */
export const WHEN_AGAIN_LINE = /^(When|After) .*, run: /m;

/**
 * What the HTTP client says about a fault that is not an answer of the server's API, as a pattern:
 * `undefined` for an answer the backend itself describes (a 5xx, a body that is not JSON).
 */
export function transportPattern(fault: FaultCase, method: string, url: string): string | undefined {
  const origin = literal(new URL(url).origin);
  const request = `cannot reach the backend: ${method} ${literal(url)} failed: `;
  switch (fault.fault.kind) {
    case "truncated":
      return `${request}${origin} closed the connection in the middle of its answer \\(ECONNRESET, after \\d+ bytes of the \\d+ it announced\\)`;
    case "reset":
      return `${request}${origin} closed the connection before it answered \\(ECONNRESET\\)`;
    case "hang":
      return `${request}no answer within ${HANG_TIMEOUT_MS} ms \\(SVC_HTTP_TIMEOUT_MS\\); is ${origin} overloaded or stuck\\?`;
    case "drip":
      return `${request}the answer came too slowly: \\d+ bytes of its body in ${HANG_TIMEOUT_MS} ms \\(SVC_HTTP_TIMEOUT_MS\\); is ${origin} overloaded or stuck\\?`;
    case "retryAfter":
      return (
        `the server at ${origin} asked svc to send no request before ${INSTANT} \\(in 60 min\\) ` +
        `\\(${fault.fault.status} with Retry-After: 3600\\); svc waits at most 60 s for a server, so it stopped here`
      );
    default:
      return undefined;
  }
}

/**
 * The command at the end of the stderr line matching `line` (a pattern whose last part is `run: `):
 * what a user following the message runs.
 */
export function printedCommand(t: ExecutionContext, stderr: string, line: RegExp): string {
  const match = line.exec(stderr);
  t.truthy(match, `no line ${line} in\n${stderr}`);
  const at = stderr.indexOf("run: ", match?.index ?? 0);
  return stderr.slice(at + "run: ".length, stderr.indexOf("\n", at));
}

/** Runs `command` as a user pasting it would, from `cwd`; an editor prompt fails it. */
export async function runPrinted(
  t: ExecutionContext,
  env: GitEnv,
  command: string,
  cwd?: string,
): Promise<void> {
  const ran = await run(env, "sh", ["-c", command], { cwd, env: { GIT_EDITOR: "false" } });
  t.is(ran.code, 0, `${command}\n${ran.stderr}`);
}

/** `PRAGMA integrity_check` of the one project cache's database; "none" when there is no cache. */
export function cacheIntegrity(env: GitEnv): string {
  if (cacheFolders(env).length === 0) return "none";
  const db = openCacheDb(env);
  try {
    return db.pragma("integrity_check", { simple: true }) as string;
  } finally {
    db.close();
  }
}

/** The files of `ref`'s tree in the repository at `cwd`: path → blob id. */
export async function treeOf(
  t: ExecutionContext,
  env: GitEnv,
  cwd: string,
  ref: string,
): Promise<Map<string, string>> {
  const listing = await gitOk(t, env, ["ls-tree", "-r", "-z", ref], { cwd });
  const files = new Map<string, string>();
  for (const entry of listing.split("\0")) {
    const tab = entry.indexOf("\t");
    if (tab !== -1) files.set(entry.slice(tab + 1), entry.slice(0, tab).split(" ")[2] ?? "");
  }
  return files;
}

/** A limit on how many cases run at once (each starts git and the helper; the hang's timeout is short). */
export function concurrency(limit: number): () => Promise<() => void> {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    running--;
    waiting.shift()?.();
  };
  return async () => {
    while (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    return release;
  };
}
