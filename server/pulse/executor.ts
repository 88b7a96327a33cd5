/**
 * Running one pulse (Document 2 "What the service does" 2): `RUNNER_COMMAND run --text <prompt>` with
 * `SVC_DESK_PATH` as the working directory. No shell: the prompt is one argv string, so nothing in it is
 * interpreted. The runner starts its own process group (`detached`), so a timeout, a cancel or a stop
 * signals the runner and everything it started.
 *
 * `checkRunner` tells a runner problem (missing, not executable, desk missing) from a pulse problem: the
 * daemon does not claim while it fails, so pulses keep their attempts (DESIGN.md §7).
 */
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { type GroupRunResult, runProcessGroup, signalGroup } from "./group-run.js";

export type RunnerCheck =
  | { readonly ok: true; readonly path: string; readonly args: readonly string[] }
  | { readonly ok: false; readonly component: "runner" | "desk"; readonly reason: string };

/** Secrets of the daemon and listener that the agent has no business seeing. */
const SCRUBBED_VARIABLES = [
  "PULSE_API_TOKEN",
  "PULSE_API_TOKEN_PREVIOUS",
  "MESSENGER_BOT_TOKEN",
  "OAUTH_CLIENT_SECRET",
];

/**
 * Finds the runner and checks the desk; every failure says what to fix. `RUNNER_COMMAND` is a command name
 * or path; when no file has that exact name and it contains spaces (`node /opt/runner.js`), it is split on
 * whitespace into the program and its leading arguments. No shell is involved either way.
 */
export function checkRunner(command: string, desk: string, env: NodeJS.ProcessEnv): RunnerCheck {
  const whole = resolveRunner(command, desk, env);
  const words = command.trim().split(/\s+/);
  if (whole.ok || words.length < 2 || (!whole.ok && whole.component === "desk")) return whole;
  const split = resolveRunner(words[0] as string, desk, env);
  return split.ok ? { ...split, args: words.slice(1) } : whole;
}

function resolveRunner(command: string, desk: string, env: NodeJS.ProcessEnv): RunnerCheck {
  let deskStat: ReturnType<typeof statSync> | undefined;
  try {
    deskStat = statSync(desk);
  } catch (error) {
    return {
      ok: false,
      component: "desk",
      reason: `SVC_DESK_PATH ${desk} is not accessible (${(error as NodeJS.ErrnoException).code}); create it or fix the path`,
    };
  }
  if (!deskStat.isDirectory()) {
    return { ok: false, component: "desk", reason: `SVC_DESK_PATH ${desk} is not a directory` };
  }
  try {
    accessSync(desk, constants.R_OK | constants.X_OK);
  } catch {
    return { ok: false, component: "desk", reason: `SVC_DESK_PATH ${desk} is not readable by this user` };
  }
  const candidates = command.includes("/")
    ? [isAbsolute(command) ? command : resolve(desk, command)]
    : (env.PATH ?? "")
        .split(delimiter)
        .filter((dir) => dir !== "")
        .map((dir) => join(dir, command));
  let sawNonExecutable: string | undefined;
  for (const candidate of candidates) {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(candidate);
    } catch {
      continue;
    }
    if (!stat.isFile()) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return { ok: true, path: candidate, args: [] };
    } catch {
      sawNonExecutable ??= candidate;
    }
  }
  if (sawNonExecutable !== undefined) {
    return {
      ok: false,
      component: "runner",
      reason: `RUNNER_COMMAND ${sawNonExecutable} is not executable; run: chmod +x ${sawNonExecutable}`,
    };
  }
  return {
    ok: false,
    component: "runner",
    reason: command.includes("/")
      ? `RUNNER_COMMAND ${candidates[0]} does not exist; install the runner or fix RUNNER_COMMAND`
      : `RUNNER_COMMAND ${command} is not found on PATH; install it or set RUNNER_COMMAND to its full path`,
  };
}

export interface RunRequest {
  readonly path: string;
  /** Arguments before `run --text <prompt>` (from a RUNNER_COMMAND with spaces). */
  readonly args?: readonly string[];
  readonly desk: string;
  readonly prompt: string;
  readonly env: NodeJS.ProcessEnv;
  /** Added to the runner's environment (SVC_PULSE_ID, …). */
  readonly extraEnv: Record<string, string>;
  readonly timeoutMs: number;
  /** Between SIGTERM and SIGKILL of the process group. */
  readonly killGraceMs: number;
  /** Aborting stops the run like a timeout does (cancel, lost lease, shutdown). */
  readonly signal: AbortSignal;
  readonly onSpawn?: (pid: number) => void;
  readonly outputTailBytes?: number;
}

export type RunResult = GroupRunResult;

export function runnerEnvironment(env: NodeJS.ProcessEnv, extra: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, ...extra };
  for (const name of SCRUBBED_VARIABLES) delete out[name];
  return out;
}

export function runPulse(request: RunRequest): Promise<RunResult> {
  return runProcessGroup({
    path: request.path,
    args: [...(request.args ?? []), "run", "--text", request.prompt],
    cwd: request.desk,
    env: runnerEnvironment(request.env, request.extraEnv),
    timeoutMs: request.timeoutMs,
    killGraceMs: request.killGraceMs,
    signal: request.signal,
    ...(request.onSpawn === undefined ? {} : { onSpawn: request.onSpawn }),
    tailBytes: request.outputTailBytes ?? 4096,
    lingerMs: 200,
  });
}

/**
 * Stops a runner left over from a daemon that died (its process group), but only if that process still
 * carries the lease token it was started with: a recycled pid belonging to something else is left alone.
 * Linux only (reads /proc); elsewhere it does nothing and the fencing token still keeps the old run from
 * recording anything.
 */
export function stopOrphanRun(pid: number, leaseToken: string): boolean {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {
    return false;
  }
  if (!environ.split("\0").includes(`SVC_PULSE_LEASE=${leaseToken}`)) return false;
  signalGroup(pid, "SIGKILL");
  return true;
}
