/**
 * Test fixtures for the simulator: a real server on an ephemeral loopback port, in-process (`givenSim`) or
 * as the `svc sim` process a user runs (`spawnSim`), and `givenProject` to fill a project through the REST
 * surface. Every server is stopped by the test's teardown.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import { type RunningSim, type SimServerOptions, startSimServer } from "../server/sim/server.js";
import { repoRoot } from "./paths.js";
import { callSim } from "./sim-http.js";

export async function givenSim(
  t: ExecutionContext,
  options: Partial<SimServerOptions> = {},
): Promise<RunningSim> {
  const sim = await startSimServer({
    bind: "127.0.0.1:0",
    db: ":memory:",
    ephemeral: true,
    noSeed: false,
    rateLimit: 0,
    logError: (message) => t.log(message),
    ...options,
  });
  t.teardown(() => sim.close());
  return sim;
}

export interface SpawnedSim {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `bin/svc sim <args>` and waits for its `listening on` line (at most 10 s). */
export async function spawnSim(t: ExecutionContext, args: readonly string[]): Promise<SpawnedSim> {
  const child = spawn(
    process.execPath,
    [join(repoRoot, "bin", "svc"), "sim", "--bind", "127.0.0.1:0", ...args],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  // "close", not "exit": by then stderr has been read to its end.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`svc sim did not start within 10 s:\n${stderr}`)),
      10_000,
    );
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderr += chunk;
      const match = /svc-sim listening on (\S+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`svc sim exited with ${code} before listening:\n${stderr}`));
    });
  });
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  t.teardown(() => stop("SIGKILL").then(() => undefined));
  return { url, child, stderr: () => stderr, stop };
}

/** Runs `bin/svc <args>` to its exit (killed after 10 s); for the ways `svc sim` refuses to start. */
export async function runSvc(
  t: ExecutionContext,
  args: readonly string[],
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [join(repoRoot, "bin", "svc"), ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", (exit) => resolve(exit)));
  clearTimeout(timer);
  return { code, stderr };
}

export interface SeedIssue {
  readonly title: string;
  readonly status?: string;
  readonly labels?: readonly string[];
  readonly body?: string;
  readonly assignee?: string | null;
}

/** Creates the project `slug` with `issues` through POSTs; returns the created issues. */
export async function givenProject(
  url: string,
  slug: string,
  issues: readonly SeedIssue[],
): Promise<unknown[]> {
  const created: unknown[] = [];
  for (const issue of issues) {
    const response = await callSim(url, "POST", `/projects/${slug}/issues`, {
      json: issue,
      agent: "test-fixture",
    });
    if (response.status !== 201) throw new Error(`POST failed: ${response.status} ${response.text}`);
    created.push(response.json());
  }
  return created;
}

/** A temporary directory removed by the test's teardown. */
export function givenTempDir(t: ExecutionContext, prefix = "svc-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
