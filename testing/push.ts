/**
 * Fixtures for the push tests (issue 4): a simulator project with a clone of it (`givenSimClone`), what the
 * simulator was asked to write (its audit table), a recording proxy for the headers the audit does not keep
 * (`If-Match`), edits of record files in a working tree, and seed files for projects too large to fill
 * through POSTs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import type { SimIssue } from "../backends/sim/schema.js";
import type { RunningSim } from "../server/sim/server.js";
import { givenFaultProxy } from "./fault-proxy.js";
import { type GitEnv, gitOk, givenGitEnv, svcUrl } from "./git.js";
import { givenProject, givenSim, givenTempDir, type SeedIssue } from "./sim.js";
import { callSim } from "./sim-http.js";

export interface SimWrite {
  readonly method: string;
  readonly path: string;
  readonly status: number | null;
  /** The request body parsed as JSON; `null` when there was none. */
  readonly body: unknown;
}

/** The id of the simulator's newest audit row. */
export function lastSimAuditId(sim: RunningSim): number {
  const rows = sim.store.auditRows();
  return rows.length === 0 ? 0 : (rows[rows.length - 1]?.id ?? 0);
}

/** The POSTs, PATCHes and DELETEs the simulator answered after audit row `afterId`, in order. */
export function simWrites(sim: RunningSim, afterId = 0): SimWrite[] {
  return sim.store
    .auditRows()
    .filter((row) => row.id > afterId && row.method !== "GET")
    .map((row) => ({
      method: row.method,
      path: row.path,
      status: row.status,
      body: row.request_body ? (JSON.parse(row.request_body) as unknown) : null,
    }));
}

/** `GET /projects/<slug>/issues/<id>` over HTTP: its status and, for a 200, the issue. */
export async function getIssue(
  simUrl: string,
  slug: string,
  id: number,
): Promise<{ status: number; issue: SimIssue | undefined }> {
  const response = await callSim(simUrl, "GET", `/projects/${slug}/issues/${id}`);
  return {
    status: response.status,
    issue: response.status === 200 ? response.json<SimIssue>() : undefined,
  };
}

/** The issue, failing with the status when the simulator does not have it. */
export async function issueOnServer(simUrl: string, slug: string, id: number): Promise<SimIssue> {
  const { status, issue } = await getIssue(simUrl, slug, id);
  if (!issue) throw new Error(`GET issue ${id}: ${status}`);
  return issue;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** The `If-Match` header as sent, or undefined. */
  readonly ifMatch: string | undefined;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`: use it in place of the simulator's URL. */
  readonly url: string;
  readonly requests: RecordedRequest[];
}

/**
 * A loopback HTTP proxy in front of `target` that records every request's method, path and `If-Match`
 * header, and forwards everything unchanged (the fault proxy with no fault). Closed by the test's teardown.
 */
export async function givenRecordingProxy(t: ExecutionContext, target: string): Promise<RecordingProxy> {
  const proxy = await givenFaultProxy(t, target);
  return {
    url: proxy.url,
    get requests() {
      return proxy.requests.map(({ method, path, ifMatch }) => ({ method, path, ifMatch }));
    },
  };
}

/** `issues/0042.md` for id 42. */
/** git's line for a push the helper answered `error refs/heads/main fetch first`. */
export const FETCH_FIRST = /! \[rejected\] +main -> main \(fetch first\)/;

export function issuePath(id: number): string {
  return `issues/${String(id).padStart(4, "0")}.md`;
}

export function readWorkFile(env: GitEnv, dir: string, path: string): string {
  return readFileSync(join(env.dir, dir, path), "utf8");
}

export function writeWorkFile(env: GitEnv, dir: string, path: string, content: string | Buffer): void {
  writeFileSync(join(env.dir, dir, path), content);
}

/**
 * Replaces the frontmatter line `<name>: …` of a record file with `<name>: <value>` (value as YAML text),
 * failing when the file has no such line: an edit that silently did nothing would make a test pass for
 * the wrong reason.
 */
export function setField(text: string, name: string, value: string): string {
  const line = new RegExp(`^${name}: .*$`, "m");
  if (!line.test(text)) throw new Error(`no line ${name}: in\n${text}`);
  return text.replace(line, `${name}: ${value}`);
}

/** Edits a file of a working tree in place. */
export function editWorkFile(env: GitEnv, dir: string, path: string, edit: (text: string) => string): void {
  const before = readWorkFile(env, dir, path);
  const after = edit(before);
  if (after === before) throw new Error(`the edit of ${path} changed nothing`);
  writeWorkFile(env, dir, path, after);
}

/** `git add -A && git commit -m <message>` in `dir`; returns the new HEAD. */
export async function commitAll(
  t: ExecutionContext,
  env: GitEnv,
  dir: string,
  message: string,
): Promise<string> {
  await gitOk(t, env, ["add", "-A"], { cwd: dir });
  await gitOk(t, env, ["commit", "-q", "-m", message], { cwd: dir });
  return gitOk(t, env, ["rev-parse", "HEAD"], { cwd: dir });
}

/** `git clone --filter=blob:none svc::<simUrl>/projects/<slug> <dir>`. */
export async function givenClone(
  t: ExecutionContext,
  env: GitEnv,
  simUrl: string,
  slug: string,
  dir: string,
  extraArgs: readonly string[] = [],
): Promise<void> {
  await gitOk(t, env, ["clone", "-q", "--filter=blob:none", ...extraArgs, svcUrl(simUrl, slug), dir], {
    timeoutMs: 60_000,
  });
}

/**
 * A simulator with the project "demo" of `issues`, a fresh git environment (`options.env`: its extra
 * variables) and a clone of the project in `options.dir` (default `d`; `options.cloneArgs` before the URL).
 */
export async function givenSimClone(
  t: ExecutionContext,
  issues: readonly SeedIssue[],
  options: { env?: Readonly<Record<string, string>>; dir?: string; cloneArgs?: readonly string[] } = {},
): Promise<{ sim: RunningSim; env: GitEnv }> {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", issues);
  const env = givenGitEnv(t, options.env);
  await givenClone(t, env, sim.url, "demo", options.dir ?? "d", options.cloneArgs);
  return { sim, env };
}

/** A seed file (server/sim/seed.ts) with one project; for projects too large to fill through POSTs. */
export function givenSeedFile(t: ExecutionContext, slug: string, issues: readonly SeedIssue[]): string {
  const path = join(givenTempDir(t, "svc-seed-"), "seed.json");
  writeFileSync(path, JSON.stringify({ projects: [{ slug, name: slug, issues }] }));
  return path;
}
