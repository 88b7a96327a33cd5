/**
 * Reading svc's settings: the one validated reader of numeric, duration and on/off settings (environment
 * variables and `git config svc.*` keys alike), whose refusals name the setting and a line to run instead.
 * (The schema-migration runner the cache, the simulator and the pulse daemon share is core/sqlite-store.ts.)
 */

import { UserFacingError } from "./errors.js";

/**
 * Set by `svc init` in its `git clone`'s environment: the helper may answer the clone's fetch with every
 * record file (helper/stateless-connect.ts, `TunnelOptions.cloneWithBlobs`).
 */
export const CLONE_WITH_BLOBS_VARIABLE = "SVC_CLONE_WITH_BLOBS";

/**
 * A setting as its user names it: an environment variable (`SVC_BLOB_LIMIT`) or a git configuration key
 * prefixed `git config ` (`git config svc.syncInterval`). Messages show it that way, and their example is a
 * line the user can run: `SVC_BLOB_LIMIT=500`, `git config svc.syncInterval 2`.
 */
export type SettingName = string;

const GIT_CONFIG = "git config ";

function shown(name: SettingName, raw: string): string {
  return name.startsWith(GIT_CONFIG) ? `${name} ${JSON.stringify(raw)}` : `${name}=${JSON.stringify(raw)}`;
}

function example(name: SettingName, value: number): string {
  return name.startsWith(GIT_CONFIG) ? `${name} ${value}` : `${name}=${value}`;
}

/** A bad value of a setting: names the setting, the value, the form expected and a line to run instead. */
export class SettingError extends UserFacingError {
  constructor(name: SettingName, raw: string, expected: string, suggestion: number) {
    super("SVC_USAGE", `${shown(name, raw)} is not ${expected}; use e.g. ${example(name, suggestion)}`, {
      data: { setting: name, value: raw },
    });
  }
}

export interface CountOptions {
  /** The value when the setting is unset or empty. */
  readonly fallback: number;
  /** Default 0. */
  readonly min?: number;
  /** Default: no bound but `Number.MAX_SAFE_INTEGER`. */
  readonly max?: number;
  /** What 0 means, when it means something special (`"no limit"`); said in the message. */
  readonly zero?: string;
}

/** ` from 1 up to 1024`, ` (0 for no limit)`: the bounds worth saying. */
function range(min: number, max: number | undefined, zero: string | undefined): string {
  const bottom = min === 0 ? "" : ` from ${min}`;
  const top = max === undefined ? "" : ` up to ${max}`;
  return `${bottom}${top}${zero && min === 0 ? ` (0 for ${zero})` : ""}`;
}

/** A whole number (digits only, no sign, unit or exponent) within the bounds, or `fallback` when unset. */
export function readCount(name: SettingName, raw: string | undefined, options: CountOptions): number {
  if (raw === undefined || raw.trim() === "") return options.fallback;
  const { min = 0, max } = options;
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || value < min || value > (max ?? Number.MAX_SAFE_INTEGER)) {
    throw new SettingError(name, raw, `a whole number${range(min, max, options.zero)}`, options.fallback);
  }
  return value;
}

export interface DurationOptions {
  /** The unit the setting is written in: `ms` takes whole numbers, `s` also decimals (`0.5`). */
  readonly unit: "s" | "ms";
  /** The value in milliseconds when the setting is unset or empty. */
  readonly fallbackMs: number;
  /** In milliseconds; default 0. */
  readonly minMs?: number;
  /** In milliseconds; default: no bound but `Number.MAX_SAFE_INTEGER`. */
  readonly maxMs?: number;
}

/** A duration written in `unit` without a suffix (`30000` for ms, `2` or `0.5` for s), in milliseconds. */
export function readDurationMs(name: SettingName, raw: string | undefined, options: DurationOptions): number {
  if (raw === undefined || raw.trim() === "") return options.fallbackMs;
  const { unit, minMs = 0, maxMs } = options;
  const scale = unit === "s" ? 1000 : 1;
  const text = raw.trim();
  const form = unit === "s" ? /^\d+(\.\d+)?$/ : /^\d+$/;
  const ms = Math.round(Number(text) * scale);
  if (!form.test(text) || ms < minMs || ms > (maxMs ?? Number.MAX_SAFE_INTEGER)) {
    const what = unit === "s" ? "a number of seconds" : "a whole number of milliseconds";
    const bounds = range(
      Math.ceil(minMs / scale),
      maxMs === undefined ? undefined : Math.floor(maxMs / scale),
      undefined,
    );
    throw new SettingError(name, raw, `${what}${bounds}`, options.fallbackMs / scale);
  }
  return ms;
}

/**
 * A yes/no setting in git's spellings (`true`/`yes`/`on`/`1`, `false`/`no`/`off`/`0`, any case), or
 * `fallback` when unset or empty; anything else is refused naming the setting.
 */
export function readFlag(name: SettingName, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw.trim() === "") return fallback;
  const text = raw.trim().toLowerCase();
  if (["true", "yes", "on", "1"].includes(text)) return true;
  if (["false", "no", "off", "0"].includes(text)) return false;
  throw new UserFacingError(
    "SVC_USAGE",
    `${shown(name, raw)} is not true or false; use e.g. ${name.startsWith(GIT_CONFIG) ? `${name} true` : `${name}=1`}`,
    { data: { setting: name, value: raw } },
  );
}

/** `readCount` of the environment variable `name` (an `SVC_*` limit). */
export function envCount(name: string, options: CountOptions, env: NodeJS.ProcessEnv = process.env): number {
  return readCount(name, env[name], options);
}
