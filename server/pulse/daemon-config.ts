/**
 * The pulse daemon's configuration (Document 2 "Configuration"; DESIGN.md §7): every variable it reads from
 * its environment file, checked at once, with one ConfigError listing every problem.
 */
import { type ApiAddress, ConfigReader, checkToken, readApiAddress } from "./config.js";
import { type KeepaliveConfig, readKeepaliveConfig } from "./keepalive.js";
import { DEFAULT_LEASE_MS } from "./queue.js";

export const DAY_MS = 86_400_000;
/** Finished pulses and their dedup keys are kept this many days unless `PULSE_RETENTION_DAYS` says otherwise. */
export const DEFAULT_RETENTION_DAYS = 30;

export interface DaemonConfig {
  readonly dbPath: string;
  readonly runnerCommand: string;
  readonly deskPath: string;
  readonly api: ApiAddress;
  readonly tokens: readonly string[];
  readonly maxConcurrent: number;
  readonly maxAttempts: number;
  readonly runTimeoutMs: number;
  readonly killGraceMs: number;
  readonly leaseMs: number;
  /** How long finished pulses (and so their dedup keys) are kept: `PULSE_RETENTION_DAYS`, default 30. */
  readonly retentionMs: number;
  readonly retryBaseMs: number;
  readonly retryCapMs: number;
  readonly shutdownGraceMs: number;
  readonly timeZone: string;
  readonly heartbeat: boolean;
  readonly keepalive: KeepaliveConfig;
  readonly logLevel: ReturnType<ConfigReader["logLevel"]>;
  readonly logFile: string | undefined;
  /** The environment the runner and the providers inherit (secrets scrubbed by the executor). */
  readonly env: NodeJS.ProcessEnv;
}

/** Reads and checks every variable the daemon uses; one ConfigError lists all problems. */
export function readDaemonConfig(env: Record<string, string | undefined>): DaemonConfig {
  const reader = new ConfigReader(env);
  const dbPath = reader.required("PULSE_DB_PATH", "set it to the SQLite file, e.g. /var/lib/svc/pulse.db");
  const runnerCommand = reader.required(
    "RUNNER_COMMAND",
    "set it to the agent runner (a command on PATH or a full path); it is run as <RUNNER_COMMAND> run --text <prompt>",
  );
  const deskPath = reader.required("SVC_DESK_PATH", "set it to the runner's working directory");
  const api = readApiAddress(reader);
  const token = checkToken(reader, "PULSE_API_TOKEN", true);
  const previous = checkToken(reader, "PULSE_API_TOKEN_PREVIOUS", false);
  const config: DaemonConfig = {
    dbPath,
    runnerCommand,
    deskPath,
    api,
    tokens: [token, previous].filter((t): t is string => t !== undefined),
    maxConcurrent: reader.integer("PULSE_MAX_CONCURRENT", 1, 1, 64),
    maxAttempts: reader.integer("PULSE_MAX_ATTEMPTS", 3, 1, 20),
    runTimeoutMs: reader.duration("PULSE_RUN_TIMEOUT", 30 * 60_000),
    killGraceMs: reader.duration("PULSE_KILL_GRACE", 10_000),
    leaseMs: reader.duration("PULSE_LEASE", DEFAULT_LEASE_MS),
    retentionMs: reader.integer("PULSE_RETENTION_DAYS", DEFAULT_RETENTION_DAYS, 1, 36_500) * DAY_MS,
    retryBaseMs: reader.duration("PULSE_RETRY_BASE", 30_000),
    retryCapMs: reader.duration("PULSE_RETRY_CAP", 30 * 60_000),
    shutdownGraceMs: reader.duration("PULSE_SHUTDOWN_GRACE", 60_000),
    timeZone: reader.timeZone(),
    heartbeat: (reader.optional("PULSE_HEARTBEAT") ?? "on") !== "off",
    keepalive: readKeepaliveConfig(reader),
    logLevel: reader.logLevel(),
    logFile: reader.optional("LOG_FILE"),
    env: env as NodeJS.ProcessEnv,
  };
  if (config.leaseMs < 5_000) reader.problems.push("PULSE_LEASE must be at least 5s");
  reader.check();
  return config;
}
