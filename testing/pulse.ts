/**
 * Fixtures for the pulse daemon: a temp directory with a migrated database, a desk, a fake runner script
 * and an environment; an in-process daemon (`givenDaemon`) or the `svc pulse daemon` process a user runs
 * (`spawnDaemon`). Everything is stopped and removed by the test's teardown.
 *
 * The fake runner appends one line per run to `<desk>/runs.log`: `<pulse id>|<attempt>|<pid>|<cwd>|<argc>|
 * <argv1>|<argv2>|<prompt with newlines as ~ and | as !>`, then acts on its prompt: `sleep:<s>` sleeps, `exit:<n>` exits with n,
 * `first-sleep:<s>` sleeps only on attempt 1, `once-sleep:<s>` only the first time it is run, `until:<file>`
 * waits until the file exists (a test's barrier; it gives up after 60 s or when the file's folder is gone, so
 * a test that ends without releasing it, killed or timed out, leaves no process behind),
 * `spawn-sleep:<s>` leaves a grandchild sleeping (its pid in
 * `<desk>/grandchild.pid`) and waits for it, `stubborn-sleep:<s>` the same with a grandchild that ignores
 * SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import { type DaemonOptions, PulseDaemon, readDaemonConfig } from "../server/pulse/daemon.js";
import { openPulseDb } from "../server/pulse/db.js";
import { Logger } from "../server/pulse/log.js";
import { repoRoot } from "./paths.js";

export const FAKE_RUNNER = `#!/bin/sh
if [ "$1" != run ] || [ "$2" != --text ]; then echo "bad arguments: $*" >&2; exit 64; fi
printf '%s|%s|%s|%s|%s|%s|%s|%s\\n' "$SVC_PULSE_ID" "$SVC_PULSE_ATTEMPT" "$$" "$(pwd)" "$#" "$1" "$2" "$(printf '%s' "$3" | tr '\\n|' '~!')" >> runs.log
case "$3" in
  sleep:*) sleep "\${3#sleep:}" ;;
  exit:*) echo "failing on purpose"; exit "\${3#exit:}" ;;
  first-sleep:*) if [ "$SVC_PULSE_ATTEMPT" = 1 ]; then sleep "\${3#first-sleep:}"; fi ;;
  once-sleep:*) if [ ! -e slept ]; then : > slept; sleep "\${3#once-sleep:}"; fi ;;
  until:*) n=0; while [ ! -e "\${3#until:}" ] && [ -d "$(dirname "\${3#until:}")" ] && [ $n -lt 3000 ]; do sleep 0.02; n=$((n+1)); done ;;
  spawn-sleep:*) sleep "\${3#spawn-sleep:}" & echo $! > grandchild.pid; wait ;;
  stubborn-sleep:*) (trap '' TERM; exec sleep "\${3#stubborn-sleep:}") & echo $! > grandchild.pid; wait ;;
  env) env | sort ;;
esac
echo "ran: $3"
`;

export interface PulseFixture {
  readonly dir: string;
  readonly desk: string;
  readonly dbPath: string;
  readonly runner: string;
  readonly token: string;
  readonly envFile: string;
  /** The variables written to `envFile`. */
  readonly env: Record<string, string>;
  /** Lines of `<desk>/runs.log`, parsed. */
  runs(): { id: number; attempt: number; pid: number; cwd: string; argc: number; args: string[] }[];
}

export interface FixtureOptions {
  /** Leave the runner out (written later with `installRunner`). */
  readonly withoutRunner?: boolean;
  readonly env?: Record<string, string>;
}

export function installRunner(path: string): void {
  writeFileSync(path, FAKE_RUNNER);
  chmodSync(path, 0o755);
}

export function givenPulseFixture(t: ExecutionContext, options: FixtureOptions = {}): PulseFixture {
  const dir = mkdtempSync(join(tmpdir(), "svc-pulse-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const desk = join(dir, "desk");
  mkdirSync(desk);
  const runner = join(dir, "bin", "fake-runner");
  mkdirSync(join(dir, "bin"));
  if (!options.withoutRunner) installRunner(runner);
  const dbPath = join(dir, "data", "pulse.db");
  openPulseDb(dbPath, { migrate: true, create: true }).close();
  const token = randomBytes(32).toString("base64url");
  const env: Record<string, string> = {
    PULSE_DB_PATH: dbPath,
    RUNNER_COMMAND: runner,
    SVC_DESK_PATH: desk,
    PULSE_API_HOST: "127.0.0.1",
    PULSE_API_PORT: "0",
    PULSE_API_TOKEN: token,
    PULSE_MAX_CONCURRENT: "1",
    PULSE_RETRY_BASE: "100ms",
    PULSE_RETRY_CAP: "1s",
    PULSE_KILL_GRACE: "500ms",
    PULSE_HEARTBEAT: "off",
    PULSE_TZ: "UTC",
    LOG_LEVEL: "DEBUG",
    LOG_FILE: join(dir, "pulse.log"),
    ...options.env,
  };
  const envFile = join(dir, "pulse.env");
  writeFileSync(
    envFile,
    `${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n")}\n`,
  );
  return {
    dir,
    desk,
    dbPath,
    runner,
    token,
    envFile,
    env,
    runs() {
      const log = join(desk, "runs.log");
      if (!existsSync(log)) return [];
      return readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => {
          const [id, attempt, pid, cwd, argc, ...args] = line.split("|");
          return {
            id: Number(id),
            attempt: Number(attempt),
            pid: Number(pid),
            cwd: cwd ?? "",
            argc: Number(argc),
            args,
          };
        });
    },
  };
}

/** A daemon in this process that lets a test wait for its scheduler. */
export type TestDaemon = PulseDaemon & {
  /**
   * Resolves once `count` more scheduler ticks have ended. A tick runs synchronously, so each one counted
   * began after this call: when it resolves, whatever a tick would have done since has been done.
   */
  afterTicks(count?: number): Promise<void>;
};

/** The daemon in this process, with a short tick; stopped (gracefully) by the teardown. */
export async function givenDaemon(
  t: ExecutionContext,
  fixture: PulseFixture,
  env: Record<string, string> = {},
  options: DaemonOptions = {},
): Promise<TestDaemon> {
  const config = readDaemonConfig({ PATH: process.env.PATH, ...fixture.env, ...env });
  const logger = new Logger({
    component: "pulse-daemon",
    level: "DEBUG",
    file: fixture.env.LOG_FILE as string,
    secrets: config.tokens,
  });
  let ticks = 0;
  const waiting: { at: number; resolve: () => void }[] = [];
  const onTick = () => {
    ticks += 1;
    for (const waiter of waiting.filter((w) => w.at <= ticks)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
    options.onTick?.();
  };
  const daemon = await PulseDaemon.start(config, { tickMs: 50, upkeepMs: 200, logger, ...options, onTick });
  t.teardown(() => daemon.close());
  return Object.assign(daemon, {
    afterTicks: (count = 1) => new Promise<void>((resolve) => waiting.push({ at: ticks + count, resolve })),
  });
}

export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test answers are inspected field by field
  readonly body: any;
}

/** One request to the daemon's API with the fixture's token (or `token`). */
export async function callApi(
  url: string,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiAnswer> {
  // A connection of its own, as testing/sim-http.ts callSim says why.
  const headers: Record<string, string> = { connection: "close", ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text) };
}

/** Polls `check` every 25 ms until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  ms = 15_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface SpawnedDaemon {
  readonly url: string;
  readonly child: ChildProcess;
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  readonly exited: Promise<number | string | null>;
}

/** Starts `svc pulse daemon --environment <fixture>` and waits for its `listening on` line (at most 15 s). */
export async function spawnDaemon(
  t: ExecutionContext,
  fixture: PulseFixture,
  extraEnv: Record<string, string> = {},
): Promise<SpawnedDaemon> {
  const child = spawn(
    process.execPath,
    [join(repoRoot, "dist", "cli", "bin.js"), "pulse", "daemon", "--environment", fixture.envFile],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: { PATH: process.env.PATH, HOME: fixture.dir, ...extraEnv },
    },
  );
  let stderr = "";
  const exited = new Promise<number | string | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal)),
  );
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const url = await eventually(
    "svc pulse daemon to listen",
    () => {
      if (child.exitCode !== null)
        throw new Error(`svc pulse daemon exited with ${child.exitCode}:\n${stderr}`);
      return /svc-pulse listening on (\S+)/.exec(stderr)?.[1];
    },
    15_000,
  );
  return { url, child, stderr: () => stderr, exited };
}
