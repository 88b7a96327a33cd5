/**
 * A point in time as a user types it: the one grammar of `svc init --at`, `svc log --since` and the pulse
 * daemon's `scheduled_at` (`svc pulse trigger --at`). It reads the forms people use most, the way git reads
 * `--since`, and nothing looser: a guess at an ambiguous time would show a state, or run a pulse, the user
 * did not ask for.
 *
 * Forms: `now`; RFC 3339 with `Z` or an offset; a date and time without a zone and a date alone (local
 * time, local midnight, as git reads them); `<duration> ago`; `+<duration>` or `in <duration>` (ahead of
 * now); `@<seconds since 1970>`. Durations are core/duration.ts's (`15m`, `3 hours`, `2h 30m`).
 *
 * A time without a zone is read in local time only where the reader's clock is the user's: the pulse
 * daemon's API refuses one (whose clock would it be?), and `svc pulse trigger` sends it as UTC.
 */
import { parseDuration } from "./duration.js";
import { UserFacingError } from "./errors.js";

/** What the forms look like, for the refusal. */
const FORMS =
  "2026-11-23T14:30:00Z, 2026-11-23T14:30:00+01:00, 2026-11-23 14:30 (local time), 2026-11-23 (local midnight), 3 hours ago, +2h (from now), @1795530600 (seconds since 1970), now";

/** What `readTime` made of a text. */
export type TimeReading =
  /** The instant, epoch milliseconds. */
  | { readonly kind: "time"; readonly ms: number }
  /** A date, or a date and time, without a zone where one is required; `suggestion` is it in UTC (`…Z`). */
  | { readonly kind: "no-zone"; readonly suggestion: string }
  /** Shaped like a date and time, but not one (`2026-02-30`, `25:00`). */
  | { readonly kind: "not-real" }
  | { readonly kind: "unreadable" };

export interface ReadTimeOptions {
  /** `local`: a time without a zone is local time; `required`: it is refused as `no-zone`. */
  readonly zone: "local" | "required";
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?$/i;

/** `text` as an instant, relative forms counted from `now`; see the module's comment for the forms. */
export function readTime(text: string, now: number, options: ReadTimeOptions): TimeReading {
  const trimmed = text.trim();
  if (trimmed.toLowerCase() === "now") return { kind: "time", ms: now };
  const relative = readRelative(trimmed, now);
  if (relative !== undefined) return { kind: "time", ms: relative };
  const epoch = /^@(\d{1,12})$/.exec(trimmed);
  if (epoch) return { kind: "time", ms: Number(epoch[1]) * 1000 };
  const dateOnly = DATE_ONLY.exec(trimmed);
  if (dateOnly) {
    if (options.zone === "required") return { kind: "no-zone", suggestion: `${trimmed}T00:00:00Z` };
    const [year, month, day] = [Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3])];
    const local = new Date(year, month - 1, day);
    const real = local.getFullYear() === year && local.getMonth() === month - 1 && local.getDate() === day;
    return real ? { kind: "time", ms: local.getTime() } : { kind: "not-real" };
  }
  const dateTime = DATE_TIME.exec(trimmed);
  if (!dateTime) return { kind: "unreadable" };
  const [, day = "", time = ""] = dateTime;
  const zone = dateTime[3]?.toUpperCase() ?? "";
  if (zone === "" && options.zone === "required") {
    return { kind: "no-zone", suggestion: `${day}T${time}${time.length === 5 ? ":00" : ""}Z` };
  }
  const offset = /^[+-]\d{4}$/.test(zone) ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  // Without a zone, Date.parse of `YYYY-MM-DDTHH:MM` reads local time, as git does.
  const ms = Date.parse(`${day}T${time}${offset}`);
  return !Number.isNaN(ms) && sameCalendarDay(day, ms, offset) ? { kind: "time", ms } : { kind: "not-real" };
}

/** `<duration> ago`, `+<duration>`, `in <duration>`: the instant, or undefined for another form. */
function readRelative(text: string, now: number): number | undefined {
  const ago = /^(.+?) +ago$/i.exec(text);
  if (ago) {
    const back = parseDuration(ago[1] ?? "");
    return back === undefined ? undefined : now - back;
  }
  const ahead = /^(?:\+|in +)(.+)$/i.exec(text);
  if (ahead) {
    const forward = parseDuration(ahead[1] ?? "");
    return forward === undefined ? undefined : now + forward;
  }
  return undefined;
}

/**
 * Milliseconds since 1970 of `text` as a command-line time (`svc log --since`, `svc init --at`), relative
 * forms counted from `now`, a time without a zone in local time. `option` names the flag in the refusal.
 */
export function parseTimeArgument(option: string, text: string, now = Date.now()): number {
  const reading = readTime(text, now, { zone: "local" });
  if (reading.kind === "time") return reading.ms;
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
