/**
 * JQL for the tracker's listings. Dates in JQL have minute precision and no zone: the tracker reads
 * `updated >= "2026/11/23 07:15"` as a wall-clock time in the zone of the account asking (its profile's
 * `timeZone`, from `/rest/api/3/myself`). A delta listing that wrote the cursor in UTC would, for an
 * account at UTC−10, ask for changes ten hours in its future and silently miss them; one at UTC+10 would
 * ask for ten hours more than needed.
 */

/** The longest a UTC offset is ahead of or behind UTC (UTC+14, UTC−12): the bound when the zone is unknown. */
const WIDEST_OFFSET_MS = 14 * 3600_000;
/** A zone's offset changes (daylight saving) are at most this far apart in either direction of a safe bound. */
const TRANSITION_MARGIN_MS = 3 * 3600_000;

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock parts of `ms` in `timeZone`; throws a RangeError for a zone the runtime does not know. */
function wallClock(ms: number, timeZone: string): Record<string, string> {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formats.set(timeZone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(ms))) parts[part.type] = part.value;
  return parts;
}

/** The zone's offset from UTC at `ms`, in whole minutes' milliseconds. */
function offsetAt(ms: number, timeZone: string): number {
  const p = wallClock(ms, timeZone);
  const asUtc = Date.UTC(
    Number(p.year),
    Number(p.month) - 1,
    Number(p.day),
    Number(p.hour),
    Number(p.minute),
    Number(p.second),
  );
  return asUtc - Math.floor(ms / 1000) * 1000;
}

function jqlDate(ms: number, timeZone: string): string {
  const p = wallClock(ms, timeZone);
  return `${p.year}/${p.month}/${p.day} ${p.hour}:${p.minute}`;
}

/**
 * The JQL date-time (`yyyy/MM/dd HH:mm`) that the tracker, reading it in `timeZone`, takes for an instant at
 * or before `ms`: the minute is rounded down, and near a daylight-saving change (where a wall-clock time can
 * mean two instants) it is the wall clock of three hours earlier. A zone the runtime does not know, or none,
 * gives the UTC wall clock of `ms` less the widest offset there is: early enough in every zone.
 */
export function jqlDateTime(ms: number, timeZone: string | undefined): string {
  if (timeZone !== undefined) {
    try {
      const offset = offsetAt(ms, timeZone);
      const steady =
        offsetAt(ms - TRANSITION_MARGIN_MS, timeZone) === offset &&
        offsetAt(ms + TRANSITION_MARGIN_MS, timeZone) === offset;
      return jqlDate(steady ? ms : ms - TRANSITION_MARGIN_MS, timeZone);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
    }
  }
  return jqlDate(ms - WIDEST_OFFSET_MS, "UTC");
}

/** `text` as a JQL string literal. */
export function jqlString(text: string): string {
  return `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}
