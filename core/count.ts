/**
 * Counts for people: `10,000`. Not `toLocaleString("en-US")`: its first call in a process sets up ICU's
 * number formatting, measured at 15–19 ms (issue 18), and the helper shows a count on every fetch and push.
 */

/** `n` in decimal with a comma between each group of three digits (`-1,234,567`); non-integers as `String(n)` does. */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  const digits = String(Math.abs(n));
  const head = digits.length % 3 || 3;
  let text = digits.slice(0, head);
  for (let at = head; at < digits.length; at += 3) text += `,${digits.slice(at, at + 3)}`;
  return n < 0 ? `-${text}` : text;
}
