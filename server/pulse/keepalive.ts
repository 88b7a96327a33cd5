/**
 * Credential keep-alive (Document 2 "What the service does" 6; DESIGN.md §7; notes row 16): runs every
 * provider found in the providers directory (`PULSE_PROVIDERS_DIR`) once and reports each one.
 *
 * The provider contract. A provider is an executable regular file directly in the directory (a symlink to
 * one counts; hidden names, directories and non-executables are skipped, the last with a warning). Providers
 * run one after another in name order, without a shell, in the directory, with the given environment, each
 * run limited to `timeoutMs` (the whole process group is killed, TERM then KILL). Output (stdout and stderr
 * together) is kept, capped, for the report.
 *
 * - `<provider> check` exits 0: healthy, nothing to do; 1: expires soon; 2: expired (or unreadable).
 *   Any other exit, a signal or a timeout: the check failed and nothing is refreshed.
 * - After 1 or 2: `<provider> refresh`; exit 0: refreshed. Exit 2: it cannot be refreshed without a person
 *   (the shipped OAuth provider: the refresh token was revoked; log in to the agent again), reported as
 *   `needsLogin`. Anything else: the refresh failed.
 *
 * `runKeepalive` never throws for a provider or a missing directory: everything lands in the report.
 */
import { constants } from "node:fs";
import { access, readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ConfigReader } from "./config.js";
import { runProcessGroup } from "./group-run.js";
import type { Logger } from "./log.js";

export const DEFAULT_PROVIDER_TIMEOUT_MS = 60_000;
/** How long a provider may take to exit after SIGTERM before the group gets SIGKILL. */
const KILL_GRACE_MS = 2_000;
/** Output kept per run (the tail); a provider that prints megabytes cannot grow the daemon. */
const MAX_CAPTURE_BYTES = 64 * 1024;
/** Output carried in a report. */
const REPORT_TAIL_CHARS = 2_000;

export interface KeepaliveConfig {
  /** `PULSE_PROVIDERS_DIR`; undefined when unset (the daemon then runs no keep-alive). */
  readonly providersDir: string | undefined;
  /** `PULSE_PROVIDER_TIMEOUT` (duration, default 60 s): the limit for one `check` or `refresh` run. */
  readonly timeoutMs: number;
}

export function readKeepaliveConfig(reader: ConfigReader): KeepaliveConfig {
  const dir = reader.optional("PULSE_PROVIDERS_DIR");
  const timeoutMs = reader.duration("PULSE_PROVIDER_TIMEOUT", DEFAULT_PROVIDER_TIMEOUT_MS);
  if (timeoutMs <= 0) reader.problems.push("PULSE_PROVIDER_TIMEOUT must be longer than 0, e.g. 60s");
  return { providersDir: dir === undefined ? undefined : resolve(dir), timeoutMs };
}

export interface KeepaliveOptions {
  readonly dir: string;
  /** The providers' environment; default `process.env`. Pass the daemon's merged environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
  /** Limit per `check` or `refresh` run; default 60 s. */
  readonly timeoutMs?: number;
  /** SIGTERM → SIGKILL grace on timeout; default 2 s. */
  readonly killGraceMs?: number;
}

export type ProviderAction = "check" | "refresh";

/** One run of a provider. */
export interface ProviderRun {
  readonly action: ProviderAction;
  /** null when it was ended by a signal or never started. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  /** The process could not be started (ENOEXEC for a script without `#!`, EACCES, …). */
  readonly spawnError?: string;
  /** The last part of stdout and stderr, interleaved as they arrived. */
  readonly output: string;
}

/** What `check` said: exit 0, 1, 2, or anything else. */
export type CheckResult = "healthy" | "expiring" | "expired" | "failed";

export interface ProviderReport {
  readonly name: string;
  readonly path: string;
  readonly check: CheckResult;
  /** `refresh` ran (check said expiring or expired). */
  readonly refreshAttempted: boolean;
  /** `refresh` exited 0. */
  readonly refreshed: boolean;
  /** `refresh` exited 2: the credential needs a person to log in again. */
  readonly needsLogin: boolean;
  /** Healthy, or refreshed. */
  readonly ok: boolean;
  /** Why it is not ok, in one line; absent when ok. */
  readonly error?: string;
  /** The tail of the last run's output. */
  readonly outputTail: string;
  readonly runs: readonly ProviderRun[];
}

export type SkipReason = "not-executable" | "not-a-regular-file" | "unreadable";

export interface SkippedEntry {
  readonly name: string;
  readonly reason: SkipReason;
  readonly message: string;
}

export interface KeepaliveReport {
  readonly dir: string;
  /** Every provider healthy or refreshed, and the directory readable. Skipped files do not count against it. */
  readonly ok: boolean;
  /** The directory itself is missing or unreadable: what is wrong and what to create. */
  readonly error?: string;
  readonly providers: readonly ProviderReport[];
  /** Files that look like providers but were not run (hidden files and directories are not listed). */
  readonly skipped: readonly SkippedEntry[];
}

const CHECK_RESULTS: Readonly<Record<number, CheckResult>> = { 0: "healthy", 1: "expiring", 2: "expired" };

export async function runKeepalive(options: KeepaliveOptions): Promise<KeepaliveReport> {
  const dir = resolve(options.dir);
  const logger = options.logger;
  const listing = await discoverProviders(dir);
  if ("error" in listing) {
    logger?.alert("keepalive:dir", `credential keep-alive cannot run: ${listing.error}`, { dir });
    return { dir, ok: false, error: listing.error, providers: [], skipped: [] };
  }
  logger?.recovered("keepalive:dir", "credential keep-alive: providers directory is readable again", { dir });
  for (const entry of listing.skipped)
    logger?.warn(`keepalive: skipped ${entry.message}`, { dir, provider: entry.name });
  if (listing.providers.length === 0) {
    logger?.warn(
      `keepalive: no providers in ${dir}; link one in, e.g. ln -s <svc>/scripts/providers/oauth-token ${dir}/`,
      { dir },
    );
  }
  const providers: ProviderReport[] = [];
  for (const name of listing.providers) {
    const report = await runProvider(dir, name, options);
    providers.push(report);
    const fields = {
      provider: name,
      check: report.check,
      refreshed: report.refreshed,
      output: report.outputTail,
    };
    if (!report.ok) {
      logger?.alert(`keepalive:${name}`, `keepalive: ${formatProviderSummary(report)}`, fields);
    } else if (report.check === "expired") {
      // Refreshed, but it had already expired: anything that used it in between failed. Say so once.
      logger?.alert(`keepalive:${name}`, `keepalive: ${formatProviderSummary(report)}`, fields);
    } else {
      logger?.info(`keepalive: ${formatProviderSummary(report)}`, fields);
      logger?.recovered(`keepalive:${name}`, `keepalive: ${name} is healthy again`, { provider: name });
    }
  }
  return { dir, ok: providers.every((p) => p.ok), providers, skipped: listing.skipped };
}

/** One line per provider for people (the CLI, alerts): `oauth-token: expiring soon, refreshed`. */
export function formatProviderSummary(report: ProviderReport): string {
  const state = { healthy: "healthy", expiring: "expiring soon", expired: "expired", failed: "check failed" }[
    report.check
  ];
  if (report.ok) return `${report.name}: ${state}${report.refreshed ? ", refreshed" : ""}`;
  return `${report.name}: ${report.error ?? state}`;
}

/** The directory's summary for people, including skipped files and a directory error. */
export function formatKeepaliveSummary(report: KeepaliveReport): string[] {
  if (report.error !== undefined) return [`keepalive: ${report.error}`];
  const lines = report.providers.map(formatProviderSummary);
  for (const entry of report.skipped) lines.push(`${entry.name}: skipped: ${entry.message}`);
  if (report.providers.length === 0) lines.push(`keepalive: no providers in ${report.dir}`);
  return lines;
}

type Listing = { providers: string[]; skipped: SkippedEntry[] } | { error: string };

async function discoverProviders(dir: string): Promise<Listing> {
  let names: string[];
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) {
      return {
        error: `PULSE_PROVIDERS_DIR ${dir} is not a directory; point it at a directory of provider scripts`,
      };
    }
    names = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      return {
        error:
          `the providers directory ${dir} does not exist; create it (mkdir -p ${dir}) and link or copy ` +
          `providers into it, e.g. ln -s <svc>/scripts/providers/oauth-token ${dir}/`,
      };
    }
    return {
      error: `cannot read the providers directory ${dir} (${code ?? (error as Error).message}); check its permissions`,
    };
  }
  const providers: string[] = [];
  const skipped: SkippedEntry[] = [];
  // Sorted by code unit, not locale: the order must not depend on the daemon's LANG.
  for (const name of names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      skipped.push({
        name,
        reason: "unreadable",
        message: `${name} cannot be read (${code}${code === "ENOENT" ? ": a dangling symlink?" : ""})`,
      });
      continue;
    }
    if (info.isDirectory()) continue;
    if (!info.isFile()) {
      skipped.push({ name, reason: "not-a-regular-file", message: `${name} is not a regular file` });
      continue;
    }
    try {
      await access(path, constants.X_OK);
    } catch {
      skipped.push({
        name,
        reason: "not-executable",
        message: `${name} is not executable; make it a provider with chmod +x ${path}, or move it out of ${dir}`,
      });
      continue;
    }
    providers.push(name);
  }
  return { providers, skipped };
}

async function runProvider(dir: string, name: string, options: KeepaliveOptions): Promise<ProviderReport> {
  const path = join(dir, name);
  const base = { name, path };
  const check = await runOnce(dir, path, "check", options);
  const checkResult: CheckResult =
    check.exitCode !== null && !check.timedOut ? (CHECK_RESULTS[check.exitCode] ?? "failed") : "failed";
  if (checkResult === "healthy" || checkResult === "failed") {
    const ok = checkResult === "healthy";
    return {
      ...base,
      check: checkResult,
      refreshAttempted: false,
      refreshed: false,
      needsLogin: false,
      ok,
      ...(ok ? {} : { error: `check ${describeFailure(check)}${lastLine(check.output)}` }),
      outputTail: check.output,
      runs: [check],
    };
  }
  const refresh = await runOnce(dir, path, "refresh", options);
  const refreshed = refresh.exitCode === 0 && !refresh.timedOut;
  const needsLogin = refresh.exitCode === 2 && !refresh.timedOut;
  const state = checkResult === "expired" ? "expired" : "expiring soon";
  return {
    ...base,
    check: checkResult,
    refreshAttempted: true,
    refreshed,
    needsLogin,
    ok: refreshed,
    ...(refreshed
      ? {}
      : {
          error:
            `${state}, refresh ${describeFailure(refresh)}${needsLogin ? " (a new login is needed)" : ""}` +
            lastLine(refresh.output),
        }),
    outputTail: refresh.output,
    runs: [check, refresh],
  };
}

function describeFailure(run: ProviderRun): string {
  if (run.spawnError !== undefined) return `could not start (${run.spawnError})`;
  if (run.timedOut) return "timed out and was killed";
  if (run.signal !== null) return `was killed by ${run.signal}`;
  if (run.exitCode === 78) return "exited 78 (configuration error)";
  return `exited ${run.exitCode}`;
}

function lastLine(output: string): string {
  const line = output.trimEnd().split("\n").pop()?.trim() ?? "";
  return line === "" ? "" : `: ${line.length > 300 ? `${line.slice(0, 299)}…` : line}`;
}

/** Runs `<provider> <action>`; never rejects. */
async function runOnce(
  dir: string,
  path: string,
  action: ProviderAction,
  options: KeepaliveOptions,
): Promise<ProviderRun> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(options.env ?? process.env))
    if (value !== undefined) env[key] = value;
  const run = await runProcessGroup({
    path,
    args: [action],
    cwd: dir,
    env,
    timeoutMs: options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS,
    killGraceMs: options.killGraceMs ?? KILL_GRACE_MS,
    tailBytes: MAX_CAPTURE_BYTES,
    lingerMs: 1_000,
  });
  const text = run.outputTail;
  return {
    action,
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    ...(run.spawnError === undefined ? {} : { spawnError: run.spawnError }),
    output: text.length > REPORT_TAIL_CHARS ? `…${text.slice(-REPORT_TAIL_CHARS)}` : text,
  };
}
