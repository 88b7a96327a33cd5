/**
 * The pulse daemon's and listener's log: one JSON object per line, to `LOG_FILE` or to stderr.
 *
 * The file is opened, appended and closed for every line, so rotation by rename (logrotate's default)
 * needs no reload hook: the next line creates the new file. Logs are low-volume (a few lines per pulse), so
 * the extra open is cheap. Every secret the logger was given is replaced by `[redacted]` wherever it shows
 * up, so a token echoed back by a server in an error text never reaches the file.
 */
import { appendFileSync } from "node:fs";
import type { LogLevel } from "./config.js";
import { Redactor } from "./redact.js";

const RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Absent: lines go to `stderr`. */
  readonly file?: string;
  readonly stderr?: NodeJS.WritableStream;
  /** Values that must never be written (tokens); values under 4 characters are ignored. */
  readonly secrets?: readonly (string | undefined)[];
  /** The same alert key is logged at most once per this many ms (default 15 min). */
  readonly alertCooldownMs?: number;
  readonly now?: () => number;
  readonly component: string;
}

export class Logger {
  /** The secrets as given, not their URL-encoded forms: a log line holds no URLs built from them. */
  private readonly redactor = new Redactor([]);
  private readonly lastAlert = new Map<string, number>();
  private fileFailed = false;

  constructor(private readonly options: LoggerOptions) {
    this.redactor.add(...(options.secrets ?? []));
  }

  debug(message: string, fields: Record<string, unknown> = {}): void {
    this.write("DEBUG", message, fields);
  }

  info(message: string, fields: Record<string, unknown> = {}): void {
    this.write("INFO", message, fields);
  }

  warn(message: string, fields: Record<string, unknown> = {}): void {
    this.write("WARNING", message, fields);
  }

  error(message: string, fields: Record<string, unknown> = {}): void {
    this.write("ERROR", message, fields);
  }

  /**
   * An operator-facing alert (runner missing, messenger token revoked, …): logged at ERROR once per
   * cooldown for the same `key`; `recovered(key)` logs the recovery once and re-arms it.
   */
  alert(key: string, message: string, fields: Record<string, unknown> = {}): void {
    const now = (this.options.now ?? Date.now)();
    const last = this.lastAlert.get(key);
    if (last !== undefined && now - last < (this.options.alertCooldownMs ?? 15 * 60_000)) return;
    this.lastAlert.set(key, now);
    this.write("ERROR", message, { ...fields, alert: key });
  }

  recovered(key: string, message: string, fields: Record<string, unknown> = {}): void {
    if (!this.lastAlert.delete(key)) return;
    this.write("INFO", message, { ...fields, recovered: key });
  }

  redact(text: string): string {
    return this.redactor.redact(text);
  }

  private write(level: LogLevel, message: string, fields: Record<string, unknown>): void {
    if (RANK[level] < RANK[this.options.level]) return;
    const time = new Date((this.options.now ?? Date.now)()).toISOString();
    const line = this.redact(
      JSON.stringify({ time, level, component: this.options.component, message, ...fields }),
    );
    if (this.options.file !== undefined && !this.fileFailed) {
      try {
        appendFileSync(this.options.file, `${line}\n`, { mode: 0o640 });
        return;
      } catch (error) {
        // A log file that cannot be written must not stop the daemon: say so once, then use stderr.
        this.fileFailed = true;
        (this.options.stderr ?? process.stderr).write(
          `${JSON.stringify({ time, level: "ERROR", component: this.options.component, message: `cannot write LOG_FILE ${this.options.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; logging to stderr` })}\n`,
        );
      }
    }
    (this.options.stderr ?? process.stderr).write(`${line}\n`);
  }
}
