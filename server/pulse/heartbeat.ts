/**
 * The hourly heartbeat's slots and prompts (Document 2 "What the service does" 5; DESIGN.md §7; notes
 * §2.1 row 8, §2.2 failure mode 7): pure functions of an instant and an IANA zone, no I/O.
 *
 * A slot is a real instant (epoch ms, UTC) at which the zone's wall clock reads hh:00:00. So there is one
 * slot per real hour: 23 on a spring-forward day (the skipped local hour has none), 25 on a fall-back day
 * (the repeated local hour has two, one per offset). Zones whose offset is not whole hours (Asia/Kolkata
 * +05:30, Asia/Kathmandu +05:45) and 30-minute DST shifts (Australia/Lord_Howe) work the same way: the
 * slot is where the *local* minute and second are zero, whatever that is in UTC.
 *
 * Local time comes from `Intl.DateTimeFormat` with `timeZone` (the tz database ICU ships with Node); no
 * dependency. Offsets are resolved to the second, which covers every offset in the database.
 */
import type { NewPulse } from "./pulse-input.js";

export const HOUR_MS = 3_600_000;
/** The keep-alive's period (Document 2 "What the service does" 6). */
export const KEEPALIVE_EVERY_MS = 4 * HOUR_MS;

export interface LocalParts {
  readonly year: number;
  /** 1–12. */
  readonly month: number;
  readonly day: number;
  /** 0–23. */
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  /** Local time minus UTC at this instant, in ms (−4 h in New York in summer). */
  readonly offsetMs: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(tz: string): Intl.DateTimeFormat {
  let formatter = formatters.get(tz);
  if (formatter === undefined) {
    // Throws a RangeError for a zone ICU does not know; config.ts checks PULSE_TZ before we get here.
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(tz, formatter);
  }
  return formatter;
}

/** The wall-clock reading of `instant` in zone `tz`, and the zone's offset from UTC at that instant. */
export function localParts(instant: number, tz: string): LocalParts {
  const wholeSecond = Math.floor(instant / 1000) * 1000;
  const fields: Record<string, string> = {};
  for (const part of formatterFor(tz).formatToParts(wholeSecond)) fields[part.type] = part.value;
  // Years before 1 CE would need the era; pulses live in this century.
  const year = Number(fields.year);
  const month = Number(fields.month);
  const day = Number(fields.day);
  const hour = Number(fields.hour);
  const minute = Number(fields.minute);
  const second = Number(fields.second);
  const asUtc = new Date(0);
  asUtc.setUTCFullYear(year, month - 1, day);
  asUtc.setUTCHours(hour, minute, second, 0);
  return { year, month, day, hour, minute, second, offsetMs: asUtc.getTime() - wholeSecond };
}

function offsetAt(instant: number, tz: string): number {
  return localParts(instant, tz).offsetMs;
}

function floorMod(value: number, modulus: number): number {
  return ((value % modulus) + modulus) % modulus;
}

/**
 * The latest instant ≤ `now` at which the local time in `tz` is hh:00:00.000.
 *
 * Within a stretch of constant offset the slots are the instants t with (t + offset) a multiple of an
 * hour, so the candidate is found arithmetically. If the offset changed between the candidate and `now`
 * (a DST change inside the last hour), the candidate belongs to the other offset and is not a slot of
 * ours: find the change by bisection and look again just before it. Assumes offsets change at most once
 * in any hour, which holds for every zone in the tz database since 1900.
 */
export function hourlySlotAtOrBefore(now: number, tz: string): number {
  let t = now;
  for (;;) {
    const offset = offsetAt(t, tz);
    const candidate = t - floorMod(t + offset, HOUR_MS);
    if (offsetAt(candidate, tz) === offset) return candidate;
    // The offset changed in (candidate, t]: `change` is the first instant with the new offset.
    let before = candidate;
    let change = t;
    while (change - before > 1) {
      const middle = before + Math.floor((change - before) / 2);
      if (offsetAt(middle, tz) === offset) change = middle;
      else before = middle;
    }
    // No slot in [change, t] (the candidate for this offset lies before `change`); look before it.
    t = change - 1;
  }
}

/** The slots in (`afterExclusive`, `untilInclusive`], oldest first. */
export function hourlySlotsBetween(afterExclusive: number, untilInclusive: number, tz: string): number[] {
  const slots: number[] = [];
  let slot = hourlySlotAtOrBefore(untilInclusive, tz);
  while (slot > afterExclusive) {
    slots.push(slot);
    slot = hourlySlotAtOrBefore(slot - 1, tz);
  }
  return slots.reverse();
}

/**
 * The number of slots in (`afterExclusive`, `untilInclusive`), counted only up to `limit` (a daemon down
 * for a year should not walk 8760 slots to write one warning).
 */
export function countHourlySlotsBetween(
  afterExclusive: number,
  untilExclusive: number,
  tz: string,
  limit = 10_000,
): number {
  let count = 0;
  let slot = hourlySlotAtOrBefore(untilExclusive - 1, tz);
  while (slot > afterExclusive && count < limit) {
    count++;
    slot = hourlySlotAtOrBefore(slot - 1, tz);
  }
  return count;
}

/**
 * The start of the `everyMs`-long period that contains `now`, aligned to multiples of `everyMs` since the
 * epoch (so 00:00, 04:00, … UTC for the keep-alive). Not wall-clock sensitive on purpose: a credential
 * expires in real time, not local time.
 */
export function slotAtOrBefore(now: number, everyMs: number): number {
  return now - floorMod(now, everyMs);
}

export type TimeOfDay = "morning" | "afternoon" | "evening" | "night";

/** Document 2's buckets by local hour: morning 06–12, afternoon 12–18, evening 18–22, night 22–06. */
export function timeOfDay(localHour: number): TimeOfDay {
  if (localHour >= 6 && localHour < 12) return "morning";
  if (localHour >= 12 && localHour < 18) return "afternoon";
  if (localHour >= 18 && localHour < 22) return "evening";
  return "night";
}

const TASKS: Record<TimeOfDay, string> = {
  morning: "review today's priorities and the calendar.",
  afternoon: "check upcoming meetings and pending tasks.",
  evening: "wrap up the day and list the tasks that remain.",
  night: "light check only; defer non-urgent items to the morning.",
};

function pad(value: number, width = 2): string {
  return String(value).padStart(width, "0");
}

/** `+05:30`, `-04:00`: the offset as RFC 3339 writes it. */
export function formatOffset(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  return `${offsetMs < 0 ? "-" : "+"}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** The slot as local RFC 3339 with its offset, e.g. `2026-11-01T01:00-05:00`; unambiguous on fall-back days. */
export function formatLocalSlot(slot: number, tz: string): string {
  const local = localParts(slot, tz);
  return `${pad(local.year, 4)}-${pad(local.month)}-${pad(local.day)}T${pad(local.hour)}:${pad(local.minute)}${formatOffset(local.offsetMs)}`;
}

/**
 * The prompt for a slot, from the slot's own local hour (not the time the pulse happens to be created or
 * run). It names the local time, the zone and its offset, so the two 01:00 pulses of a fall-back day in
 * New York read differently: `Hourly heartbeat, 01:00 America/New_York (UTC-04:00), night: …`.
 */
export function heartbeatPrompt(slot: number, tz: string): string {
  const local = localParts(slot, tz);
  const bucket = timeOfDay(local.hour);
  return `Hourly heartbeat, ${pad(local.hour)}:${pad(local.minute)} ${tz} (UTC${formatOffset(local.offsetMs)}), ${bucket}: ${TASKS[bucket]}`;
}

/**
 * The heartbeat's `dedup_key`: the slot's UTC instant, e.g. `heartbeat:2026-11-01T05:00:00.000Z`.
 *
 * DESIGN.md §7 says `heartbeat:<local date>T<hour>`, but on a fall-back day the local hour 01:00 (New York)
 * or 02:00 (Berlin) happens twice, and a local key would merge those two real slots into one pulse (24 on
 * a 25-hour day). The UTC instant is unique per slot, and independent of the zone the daemon runs in.
 */
export function heartbeatDedupKey(slot: number): string {
  return `heartbeat:${new Date(slot).toISOString()}`;
}

/** The pulse for a slot: source `heartbeat`, priority `normal`, scheduled at the slot itself. */
export function heartbeatPulse(slot: number, tz: string, backfilled: boolean): NewPulse {
  return {
    prompt: heartbeatPrompt(slot, tz),
    source: "heartbeat",
    priority: "normal",
    scheduledAt: new Date(slot).toISOString(),
    runAt: slot,
    dedupKey: heartbeatDedupKey(slot),
    backfilled,
  };
}
