/**
 * Durations as people read and write them: the one printer (`formatDuration`, in the three styles svc's
 * messages use) and the one reader (`parseDuration`), which reads every style the printer writes and the
 * forms people type (`15m`, `2h 30m`, `3 hours`, `1.5 days`). The time arguments of `svc init --at`,
 * `svc log --since` and `svc pulse trigger --at` read their relative forms with it (core/time-arg.ts).
 *
 * The styles differ on purpose, each where its wording is part of what a reader relies on: the helper's
 * "12 min" on git's stderr (tested end to end), the pulse daemon's "3m 20s" in its log and messages, and a
 * wait's "in 60 min" after a server's `Retry-After`. One algorithm prints them all.
 */

/** One unit a style may print: its name as printed, its length, and when it leads. */
interface StyleUnit {
  /** As printed after the number: `"m"` gives `3m`, `" min"` gives `3 min`. */
  readonly name: string;
  readonly ms: number;
  /** The least amount of this unit that the duration is printed in it (default 1): `2` keeps 90 min in minutes. */
  readonly from?: number;
  /** Printed with the next smaller unit after it: `5h 0m`, `3 h 5 min`. */
  readonly withNext?: boolean;
  /** Printed with this many decimals when it is the smallest unit (`1.4 s`). */
  readonly decimals?: number;
}

/** How a duration is printed: its units, largest first, each the next one's whole multiple. */
export interface DurationStyle {
  readonly units: readonly StyleUnit[];
  /** Whole units are counted down (`floor`: a duration is not more than it is) or to the nearest one. */
  readonly rounding: "floor" | "round";
  /** What a negative duration prints as: its absolute value, or zero. */
  readonly negative: "absolute" | "zero";
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

/** `5h 0m`, `3m 20s`, `2d 1h`, `45s`: the pulse daemon's log and messages. */
export const COMPACT: DurationStyle = {
  units: [
    { name: "d", ms: DAY, withNext: true },
    { name: "h", ms: HOUR, withNext: true },
    { name: "m", ms: MINUTE, withNext: true },
    { name: "s", ms: SECOND },
  ],
  rounding: "floor",
  negative: "absolute",
};

/** `1.4 s`, `12 min`, `5 h`, `3 days`: how old the cached state is (the helper's and `svc doctor`'s lines). */
export const AGE: DurationStyle = {
  units: [
    { name: " days", ms: DAY, from: 2 },
    { name: " h", ms: HOUR },
    { name: " min", ms: MINUTE },
    { name: " s", ms: SECOND, decimals: 1 },
  ],
  rounding: "floor",
  negative: "zero",
};

/** `90 s`, `60 min`, `3 h 5 min`: how long until an instant (a server's `Retry-After`), to the nearest unit. */
export const AHEAD: DurationStyle = {
  units: [
    { name: " h", ms: HOUR, from: 2, withNext: true },
    { name: " min", ms: MINUTE, from: 2 },
    { name: " s", ms: SECOND },
  ],
  rounding: "round",
  negative: "zero",
};

/** `1 min`, `52 min`, `2 h 0 min`: `AHEAD` to the minute, for a wait whose seconds mean nothing (a quota's reset). */
export const AHEAD_MINUTES: DurationStyle = { ...AHEAD, units: AHEAD.units.slice(0, 2) };

/**
 * `ms` in `style` (default `COMPACT`). Each unit's count is made from the next smaller one's (`round`: 149.5 s
 * is 150 s, then 3 min), so a duration is printed as the same number whichever unit it was counted in.
 */
export function formatDuration(ms: number, style: DurationStyle = COMPACT): string {
  const units = style.units;
  const last = units.length - 1;
  const smallest = unitAt(units, last);
  let length = style.negative === "zero" ? Math.max(0, ms) : Math.abs(ms);
  if (smallest.decimals !== undefined) {
    // Rounded to the decimals shown first: 59.96 s is 1 min, not "60.0 s".
    const step = smallest.ms / 10 ** smallest.decimals;
    length = Math.round(length / step) * step;
  }
  const count = style.rounding === "floor" ? Math.floor : Math.round;
  // counts[i]: the duration in whole units[i].
  const counts: number[] = new Array(units.length);
  counts[last] = count(length / smallest.ms);
  for (let i = last - 1; i >= 0; i--) counts[i] = count((counts[i + 1] ?? 0) / ratio(units, i));
  let lead = last;
  for (let i = 0; i < last; i++) {
    if ((counts[i + 1] ?? 0) >= (unitAt(units, i).from ?? 1) * ratio(units, i)) {
      lead = i;
      break;
    }
  }
  const unit = unitAt(units, lead);
  if (unit.withNext && lead < last) {
    const smaller = counts[lead + 1] ?? 0;
    const perUnit = ratio(units, lead);
    return `${Math.floor(smaller / perUnit)}${unit.name} ${smaller % perUnit}${unitAt(units, lead + 1).name}`;
  }
  if (unit.decimals !== undefined && lead === last)
    return `${(length / unit.ms).toFixed(unit.decimals)}${unit.name}`;
  return `${counts[lead]}${unit.name}`;
}

function unitAt(units: readonly StyleUnit[], index: number): StyleUnit {
  const unit = units[index];
  if (unit === undefined) throw new Error(`no unit ${index} in a duration style`);
  return unit;
}

/** How many of unit `index + 1` make one of unit `index`. */
function ratio(units: readonly StyleUnit[], index: number): number {
  return unitAt(units, index).ms / unitAt(units, index + 1).ms;
}

/** `1.4 s`, `12 min`, `5 h`, `3 days`: how old the cached state is, for people (the `AGE` style). */
export function formatAge(ms: number): string {
  return formatDuration(ms, AGE);
}

/** Every spelling of a unit that `parseDuration` reads, lower case. */
const UNIT_NAMES: Readonly<Record<string, number>> = {
  w: WEEK,
  week: WEEK,
  weeks: WEEK,
  d: DAY,
  day: DAY,
  days: DAY,
  h: HOUR,
  hr: HOUR,
  hrs: HOUR,
  hour: HOUR,
  hours: HOUR,
  m: MINUTE,
  min: MINUTE,
  mins: MINUTE,
  minute: MINUTE,
  minutes: MINUTE,
  s: SECOND,
  sec: SECOND,
  secs: SECOND,
  second: SECOND,
  seconds: SECOND,
};

/** One part of a duration: a number (up to 9 digits, a fraction allowed) and a unit, spaces between or not. */
const PART = /^(\d{1,9}(?:\.\d{1,9})?) *([a-z]+)(?: +|$|(?=\d))/i;

/** The forms `parseDuration` reads, for messages. */
export const DURATION_FORMS = "15m, 2h 30m, 3 hours, 1.5 days, 2 weeks";

/**
 * Milliseconds of a duration as people write it: one or more parts, each a number and a unit, the units
 * largest first (`2h 30m`, `3 hours`, `1.4 s`, `3m20s`); the units are w, d, h, m and s, and their words
 * (`min`, `hours`, `days`, …), in any case. Undefined for anything else: `5m 3h` (which is meant?), `3`
 * (which unit?), `an hour`.
 */
export function parseDuration(text: string): number | undefined {
  let rest = text.trim();
  if (rest === "") return undefined;
  let total = 0;
  let previous = Number.POSITIVE_INFINITY;
  while (rest !== "") {
    const part = PART.exec(rest);
    const unit = part === null ? undefined : UNIT_NAMES[(part[2] ?? "").toLowerCase()];
    if (part === null || unit === undefined || unit >= previous) return undefined;
    total += Number(part[1]) * unit;
    previous = unit;
    rest = rest.slice(part[0].length);
  }
  return Math.round(total);
}
