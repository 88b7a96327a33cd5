/** The wiki's content ids (pages, spaces, comments): digits, sent as a string or, by some answers, a number. */

/** The id as a string of digits, or undefined when `value` is none. */
export function digits(value: unknown): string | undefined {
  if (typeof value === "string" && /^[0-9]+$/.test(value)) return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return String(value);
  return undefined;
}
