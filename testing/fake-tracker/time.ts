/**
 * Time zones for the fake tracker: JQL dates are wall-clock times in the account's zone, and timestamps may be
 * written in it (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`, as Jira writes them). Written apart from the tracker backend's
 * own zone arithmetic (backends/tracker/jql.ts) on purpose: the fake checks that conversion, and one function
 * shared by both sides would cancel its own mistakes.
 */
import { MINUTE } from "./vendor-data.js";

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zoneFormat(zone: string): Intl.DateTimeFormat {
  let format = zoneFormats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    zoneFormats.set(zone, format);
  }
  return format;
}

/** Throws unless `zone` is an IANA zone this Node knows. */
export function checkZone(zone: string): string {
  try {
    zoneFormat(zone);
  } catch (error) {
    throw new Error(`fake tracker: unknown time zone ${JSON.stringify(zone)}`, { cause: error });
  }
  return zone;
}

/** The zone's offset from UTC at the instant `ms`, in minutes (Pacific/Honolulu: -600). */
function zoneOffsetMinutes(ms: number, zone: string): number {
  if (zone === "UTC") return 0;
  const parts = new Map<string, number>();
  for (const part of zoneFormat(zone).formatToParts(ms)) parts.set(part.type, Number(part.value));
  const get = (type: string) => parts.get(type) ?? 0;
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / MINUTE);
}

/**
 * The instant a wall-clock time in `zone` names; `wall` is that wall-clock time read as if it were UTC.
 * ASSUMPTION: inside a DST gap or overlap the result is whatever the two passes give (Jira's Java may pick the
 * other side); no test should depend on it.
 */
export function wallClockToInstant(wall: number, zone: string): number {
  const firstGuess = wall - zoneOffsetMinutes(wall, zone) * MINUTE;
  return wall - zoneOffsetMinutes(firstGuess, zone) * MINUTE;
}

const pad2 = (value: number) => String(value).padStart(2, "0");

/** Jira's `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, in UTC or (with `zone`) in that zone with its offset. */
export function formatTimestamp(ms: number, zone: string | undefined): string {
  const offset = zone === undefined ? 0 : zoneOffsetMinutes(ms, zone);
  const local = new Date(ms + offset * MINUTE).toISOString().slice(0, 23);
  const magnitude = Math.abs(offset);
  return `${local}${offset < 0 ? "-" : "+"}${pad2(Math.floor(magnitude / 60))}${pad2(magnitude % 60)}`;
}
