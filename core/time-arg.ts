/**
 * A point in time as a user types it on the command line (`svc log --since`, `svc init --at`), read the way
 * git reads `--since` for the forms people use most, and nothing looser: a guess at an ambiguous time would
 * show a state the user did not ask for.
 */
import { UserFacingError } from "./errors.js";

const UNITS_MS: Record<string, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
};

/** What the forms look like, for the refusal. */
const FORMS =
  "2026-11-23T14:30:00Z, 2026-11-23T14:30:00+01:00, 2026-11-23 14:30 (local time), 2026-11-23 (local midnight), 3 hours ago, @1795530600 (seconds since 1970), now";

/**
 * Milliseconds since 1970 of `text`, relative forms counted back from `now`. Accepted: RFC 3339 with `Z` or an
 * offset; a date and time without a zone, in local time (as git reads it); a date alone, local midnight;
 * `<n> <second|minute|hour|day|week>[s] ago`; `@<seconds>`; `now`. `option` names the flag in the refusal.
 */
export function parseTimeArgument(option: string, text: string, now = Date.now()): number {
  const trimmed = text.trim();
  if (trimmed === "now") return now;
  const ago = /^(\d{1,9}) +(second|minute|hour|day|week)s? +ago$/i.exec(trimmed);
  if (ago) return now - Number(ago[1]) * (UNITS_MS[(ago[2] ?? "").toLowerCase()] ?? 0);
  const epoch = /^@(\d{1,12})$/.exec(trimmed);
  if (epoch) return Number(epoch[1]) * 1000;
  const dateOnly = /^(\d{4})-(\d{2})-(\d{2})$/.exec(trimmed);
  if (dateOnly) {
    const [year, month, day] = [Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3])];
    const local = new Date(year, month - 1, day);
    if (local.getFullYear() === year && local.getMonth() === month - 1 && local.getDate() === day)
      return local.getTime();
  }
  const dateTime =
    /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?$/i.exec(trimmed);
  if (dateTime) {
    const zone = dateTime[3]?.toUpperCase() ?? "";
    const offset = /^[+-]\d{4}$/.test(zone) ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
    // Without a zone, Date.parse of `YYYY-MM-DDTHH:MM` reads local time, as git does.
    const ms = Date.parse(`${dateTime[1]}T${dateTime[2]}${offset}`);
    if (!Number.isNaN(ms) && sameCalendarDay(dateTime[1] ?? "", ms, offset)) return ms;
  }
  throw new UserFacingError(
    "SVC_USAGE",
    `${option} ${JSON.stringify(text)} is not a time svc can read; use one of: ${FORMS}`,
  );
}

/** Whether the date `day` (YYYY-MM-DD) survived parsing: Date.parse rolls 2026-02-30 over into March. */
function sameCalendarDay(day: string, ms: number, offset: string): boolean {
  if (offset !== "") {
    const sign = offset === "Z" ? 0 : offset.startsWith("-") ? -1 : 1;
    const minutes = offset === "Z" ? 0 : Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6));
    return new Date(ms + sign * minutes * 60_000).toISOString().slice(0, 10) === day;
  }
  const local = new Date(ms);
  const [year, month, date] = day.split("-").map(Number);
  return local.getFullYear() === year && local.getMonth() + 1 === month && local.getDate() === date;
}
