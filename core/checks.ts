/**
 * Small checks more than one part of svc makes (DESIGN.md §1: shared infrastructure lives once, outside
 * `backends/`). Pure functions and patterns with no imports, so any part, the helper's start-up path
 * included, can use them for free.
 */

/** True for a plain JSON-style object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * True for a loopback host: `localhost`, `::1` (bare, or bracketed as `URL.hostname` writes it) or a
 * dotted-quad in 127.0.0.0/8. Exact text, no DNS and no case folding (`URL.hostname` is already lower case
 * and writes IPv4 canonically).
 */
export function isLoopbackHost(host: string): boolean {
  return (
    host === "localhost" ||
    host === "::1" ||
    host === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/** What an RFC 3339 pattern accepts beyond the strict form servers write (`T`, `Z`, at most 9 fraction digits). */
export interface Rfc3339Leniency {
  /** Also lower-case `t` and `z` (RFC 3339 §5.6 allows them). */
  readonly lowerCase?: boolean;
  /** Also a space between date and time (RFC 3339 §5.6 allows it). */
  readonly spaceSeparator?: boolean;
  /** Most fraction-of-second digits; default 9 (nanoseconds), `Infinity` for any number. */
  readonly maxFractionDigits?: number;
}

/**
 * The shape of an RFC 3339 date-time with a zone (`Z` or `±hh:mm`), whole string. Groups 1-6 capture year,
 * month, day, hour, minute and second. Shape only: `2026-02-30T25:00:00Z` matches, callers that need a real
 * instant check the calendar. Build it once per module, not per call.
 */
export function rfc3339Pattern(leniency: Rfc3339Leniency = {}): RegExp {
  const separator = `[T${leniency.lowerCase ? "t" : ""}${leniency.spaceSeparator ? " " : ""}]`;
  const max = leniency.maxFractionDigits ?? 9;
  const fraction = max === Number.POSITIVE_INFINITY ? "\\d+" : `\\d{1,${max}}`;
  const utc = leniency.lowerCase ? "[Zz]" : "Z";
  return new RegExp(
    `^(\\d{4})-(\\d{2})-(\\d{2})${separator}(\\d{2}):(\\d{2}):(\\d{2})(?:\\.${fraction})?(?:${utc}|[+-]\\d{2}:\\d{2})$`,
  );
}

/** The strict RFC 3339 shape: what records and backend responses carry (`2026-01-31T12:00:00.000Z`). */
export const RFC3339 = rfc3339Pattern();

/**
 * Deep equality of two JSON values (what `JSON.parse` gives: objects, arrays, strings, numbers, booleans,
 * null), member order ignored. `util.isDeepStrictEqual` answers the same for such values, several times
 * slower: it also weighs prototypes, symbols and the other things JSON cannot hold.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) if (!Object.hasOwn(right, key) || !jsonEqual(left[key], right[key])) return false;
  return true;
}
