/**
 * The messenger listener's one piece of state: the `getUpdates` offset, i.e. the id of the last update the
 * listener is done with, plus one (DESIGN.md §7; notes table row 15). It lives in a small JSON file,
 * `{"version": 1, "offset": 1235, "saved_at": "…"}`, replaced atomically: write a temporary file beside it,
 * fsync, rename over the old one, fsync the directory. A reader therefore sees the old file or the new one,
 * never half of one, even across a power cut.
 *
 * Losing the file is not a disaster: the bot API has already dropped every update below the last offset
 * the listener sent, so a listener starting without an offset gets only updates it has not confirmed, and
 * the daemon's `dedup_key` turns a re-delivered one into a no-op. That is why an unreadable file is
 * reported and then treated as absent rather than stopping the listener.
 */
import { accessSync, constants, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomically } from "../../core/atomic-file.js";
import { ConfigError } from "./config.js";

export interface ListenerStateFile {
  readonly version: 1;
  readonly offset: number;
  readonly saved_at: string;
}

/** What the listener needs from its state; tests substitute an in-memory or failing one. */
export interface OffsetStore {
  /** Creates the directory if needed and proves it writable; a `ConfigError` otherwise. */
  prepare(): void;
  /** The saved offset, `undefined` when there is none (first start) or the file is unreadable (see `problem`). */
  load(): { offset: number | undefined; problem?: string };
  /** Replaces the saved offset atomically; throws (errno error) when the disk refuses. */
  save(offset: number): void;
}

/** Parses the state file's text; `undefined` plus the reason when it is not a state file. */
export function parseListenerState(text: string): { offset?: number; problem?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "it is not JSON" };
  }
  const offset = (value as { offset?: unknown } | null)?.offset;
  if (typeof value !== "object" || value === null || (value as { version?: unknown }).version !== 1) {
    return { problem: 'it is not {"version": 1, "offset": <integer>, …}' };
  }
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) {
    return { problem: `its offset ${JSON.stringify(offset)} is not a non-negative integer` };
  }
  return { offset };
}

export function renderListenerState(offset: number, now: Date): string {
  const state: ListenerStateFile = { version: 1, offset, saved_at: now.toISOString() };
  return `${JSON.stringify(state)}\n`;
}

export class FileOffsetStore implements OffsetStore {
  constructor(
    readonly path: string,
    private readonly now: () => number = Date.now,
  ) {}

  prepare(): void {
    const directory = dirname(this.path);
    try {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      accessSync(directory, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      // `mkdir -p` over a regular file says EEXIST, which reads as if all were well.
      const what =
        code === "EEXIST" || code === "ENOTDIR" ? "is not a directory" : "cannot be created or written";
      throw new ConfigError([
        `LISTENER_STATE_PATH=${this.path}: ${directory} ${what} (${code}); ` +
          "create the directory for the listener's user or point LISTENER_STATE_PATH elsewhere",
      ]);
    }
  }

  load(): { offset: number | undefined; problem?: string } {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { offset: undefined };
      return { offset: undefined, problem: `cannot read ${this.path} (${code ?? (error as Error).message})` };
    }
    const parsed = parseListenerState(text);
    if (parsed.offset === undefined) return { offset: undefined, problem: `${this.path}: ${parsed.problem}` };
    return { offset: parsed.offset };
  }

  save(offset: number): void {
    writeFileAtomically(this.path, renderListenerState(offset, new Date(this.now())));
  }
}
