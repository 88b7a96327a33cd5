/**
 * The pulse daemon's configuration (Document 2 "Environment variables"; DESIGN.md §7). The daemon and the
 * listener read the same environment file: `--environment <path>` (or `PULSE_ENV_FILE`), in the
 * `KEY=value` form systemd's `EnvironmentFile=` also reads. Variables already set in the process environment
 * win over the file. (Not `--env-file`: Node 20 takes that flag for itself wherever it appears on the
 * command line, even after the script name, and exits 9 when the file is missing.)
 *
 * Every problem found is reported at once, in one `ConfigError` that lists each variable, what was wrong
 * and what to set instead. Secrets are never echoed: a bad token is described, not printed.
 */
import { readFileSync } from "node:fs";
import { SvcError } from "../../core/errors.js";

/** Exit status for a configuration error (sysexits EX_CONFIG); the systemd units list it in `RestartPreventExitStatus=`. */
export const EXIT_CONFIG = 78;

/** Backups older than this many days are deleted (Document 2 "Limits": 30). */
export const DEFAULT_KEEP_DAYS = 30;

export class ConfigError extends SvcError {
  constructor(readonly problems: readonly string[]) {
    super("SVC_CONFIG", `pulse configuration is not usable:\n${problems.map((p) => `  - ${p}`).join("\n")}`, {
      data: { problems },
    });
  }
}

/**
 * Parses an environment file. Accepts `KEY=value`, `export KEY=value`, blank lines and `#` comments;
 * values may be bare (trailing spaces trimmed), 'single-quoted' (literal) or "double-quoted" (with `\n`,
 * `\"`, `\\` escapes). Anything else is an error naming the line.
 */
export function parseEnvFile(text: string, path = "environment file"): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  lines.forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(trimmed);
    if (!match) {
      // The line itself is not shown: a malformed line is often a secret with a typo in it.
      const name = /^(?:export\s+)?([A-Z][A-Z0-9_]*)(?:\s|$)/.exec(trimmed)?.[1];
      throw new ConfigError([
        `${path}:${index + 1}: expected KEY=value` +
          (name === undefined ? "" : ` (the line starts with ${name} but has no = after it)`),
      ]);
    }
    const key = match[1] as string;
    const raw = match[2] as string;
    values[key] = unquote(raw, `${path}:${index + 1}`);
  });
  return values;
}

function unquote(raw: string, where: string): string {
  if (raw.startsWith("'")) {
    const end = raw.indexOf("'", 1);
    if (end < 0) throw new ConfigError([`${where}: the single quote is never closed`]);
    return raw.slice(1, end);
  }
  if (raw.startsWith('"')) {
    let out = "";
    for (let i = 1; i < raw.length; i++) {
      const c = raw[i] as string;
      if (c === '"') return out;
      if (c === "\\" && i + 1 < raw.length) {
        const next = raw[++i] as string;
        out += next === "n" ? "\n" : next === "t" ? "\t" : next;
      } else out += c;
    }
    throw new ConfigError([`${where}: the double quote is never closed`]);
  }
  const comment = raw.search(/\s#/);
  return (comment >= 0 ? raw.slice(0, comment) : raw).trim();
}

/** The process environment over the environment file (when one is named and exists). */
export function loadEnvironment(
  envFile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string | undefined> {
  const path = envFile ?? env.PULSE_ENV_FILE;
  if (path === undefined || path === "") return { ...env };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError([
      `cannot read the environment file ${path} (${code ?? (error as Error).message}); ` +
        (code === "ENOENT" ? "create it or pass the right --environment" : "check its permissions"),
    ]);
  }
  const fromFile = parseEnvFile(text, path);
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) merged[key] = value;
  return merged;
}

export type LogLevel = "DEBUG" | "INFO" | "WARNING" | "ERROR";
const LOG_LEVELS: Record<string, LogLevel> = {
  DEBUG: "DEBUG",
  INFO: "INFO",
  WARN: "WARNING",
  WARNING: "WARNING",
  ERROR: "ERROR",
};

/** Reads variables, collecting every problem instead of stopping at the first. */
export class ConfigReader {
  readonly problems: string[] = [];

  constructor(readonly env: Record<string, string | undefined>) {}

  optional(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === "" ? undefined : value.trim();
  }

  required(name: string, hint: string): string {
    const value = this.optional(name);
    if (value === undefined) this.problems.push(`${name} is not set; ${hint}`);
    return value ?? "";
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      this.problems.push(`${name}=${JSON.stringify(raw)} is not a whole number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  }

  /** A duration: whole milliseconds, or a number with `ms`, `s`, `m`, `h` (e.g. `30s`, `20m`). */
  duration(name: string, fallbackMs: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallbackMs;
    const ms = parseDuration(raw);
    if (ms === undefined) {
      this.problems.push(`${name}=${JSON.stringify(raw)} is not a duration; use e.g. 500ms, 30s, 20m or 6h`);
      return fallbackMs;
    }
    return ms;
  }

  logLevel(): LogLevel {
    const raw = this.optional("LOG_LEVEL");
    if (raw === undefined) return "INFO";
    const level = LOG_LEVELS[raw.toUpperCase()];
    if (level === undefined) {
      this.problems.push(`LOG_LEVEL=${JSON.stringify(raw)} is not one of DEBUG, INFO, WARNING, ERROR`);
      return "INFO";
    }
    return level;
  }

  timeZone(): string {
    const raw = this.optional("PULSE_TZ") ?? this.optional("TZ")?.replace(/^:/, "");
    const zone = raw ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: zone });
    } catch {
      this.problems.push(`PULSE_TZ=${JSON.stringify(zone)} is not an IANA time zone; use e.g. Europe/Berlin`);
      return "UTC";
    }
    return zone;
  }

  /** Throws one ConfigError listing everything found so far. */
  check(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}

export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? "ms"] as number;
  const value = Number(match[1]) * unit;
  return Number.isFinite(value) ? Math.round(value) : undefined;
}

const TOKEN_HINT =
  "generate one with: node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64url'))\"";

/** Checks a bearer secret without ever putting it in the message. */
export function checkToken(reader: ConfigReader, name: string, required: boolean): string | undefined {
  const value = required ? reader.required(name, TOKEN_HINT) : reader.optional(name);
  if (value === undefined || value === "") return undefined;
  if (value.length < 32 || !/^[A-Za-z0-9._~+/=-]+$/.test(value)) {
    reader.problems.push(
      `${name} must be at least 32 URL-safe characters (it has ${value.length}${/^[A-Za-z0-9._~+/=-]*$/.test(value) ? "" : " and characters outside A-Z a-z 0-9 . _ ~ + / = -"}); ${TOKEN_HINT}`,
    );
    return undefined;
  }
  return value;
}

export interface ApiAddress {
  readonly host: string;
  readonly port: number;
}

export const DEFAULT_API_PORT = 7879;

/** `PULSE_API_HOST` (default loopback) and `PULSE_API_PORT` (default 7879; 0 picks a free port). */
export function readApiAddress(reader: ConfigReader): ApiAddress {
  const host = reader.optional("PULSE_API_HOST") ?? "127.0.0.1";
  const port = reader.integer("PULSE_API_PORT", DEFAULT_API_PORT, 0, 65535);
  return { host, port };
}

/** The URL clients use to reach the API; a wildcard bind is reached over loopback. */
export function apiBaseUrl(address: ApiAddress): string {
  const host =
    address.host === "0.0.0.0"
      ? "127.0.0.1"
      : address.host === "::"
        ? "[::1]"
        : address.host.includes(":")
          ? `[${address.host}]`
          : address.host;
  return `http://${host}:${address.port}`;
}
