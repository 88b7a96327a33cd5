/**
 * The one duration printer and reader: each style's wording (what the helper, the pulse daemon and a wait
 * after Retry-After print, pinned here because messages and tests elsewhere rely on it), the forms read, and
 * the properties that tie them: what is printed reads back as the duration printed (exactly, where the
 * style shows every unit the duration has), and print(parse(print(d))) is print(d) everywhere.
 */
import test from "ava";
import fc from "fast-check";
import {
  AGE,
  AHEAD,
  COMPACT,
  type DurationStyle,
  formatAge,
  formatDuration,
  parseDuration,
} from "./duration.js";

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const PRINTED: [DurationStyle, string, number, string][] = [
  [COMPACT, "COMPACT", 0, "0s"],
  [COMPACT, "COMPACT", 45 * S + 999, "45s"],
  [COMPACT, "COMPACT", 3 * M + 20 * S, "3m 20s"],
  [COMPACT, "COMPACT", 5 * H, "5h 0m"],
  [COMPACT, "COMPACT", 5 * H + 59 * M + 59 * S, "5h 59m"],
  [COMPACT, "COMPACT", 2 * D + H + 30 * M, "2d 1h"],
  [COMPACT, "COMPACT", -(3 * M + 20 * S), "3m 20s"],
  [AGE, "AGE", 0, "0.0 s"],
  [AGE, "AGE", 1400, "1.4 s"],
  [AGE, "AGE", 59_940, "59.9 s"],
  [AGE, "AGE", 12 * M + 59 * S, "12 min"],
  [AGE, "AGE", 5 * H + 59 * M, "5 h"],
  [AGE, "AGE", 47 * H + 59 * M, "47 h"],
  [AGE, "AGE", 3 * D + 5 * H, "3 days"],
  [AGE, "AGE", -5000, "0.0 s"],
  [AHEAD, "AHEAD", 90 * S, "90 s"],
  [AHEAD, "AHEAD", 119 * S + 400, "119 s"],
  [AHEAD, "AHEAD", 119 * S + 500, "2 min"],
  [AHEAD, "AHEAD", H, "60 min"],
  [AHEAD, "AHEAD", 149 * S + 500, "3 min"],
  [AHEAD, "AHEAD", 119 * M + 29 * S, "119 min"],
  [AHEAD, "AHEAD", 119 * M + 30 * S, "2 h 0 min"],
  [AHEAD, "AHEAD", 3 * H + 5 * M, "3 h 5 min"],
  [AHEAD, "AHEAD", 30 * H, "30 h 0 min"],
  [AHEAD, "AHEAD", -S, "0 s"],
];

for (const [style, name, ms, printed] of PRINTED) {
  test(`${name} prints ${ms} ms as ${printed}`, (t) => {
    t.is(formatDuration(ms, style), printed);
  });
}

test("formatDuration prints COMPACT unless told; formatAge is the AGE style", (t) => {
  t.is(formatDuration(200 * S), "3m 20s");
  t.is(formatAge(12 * M), "12 min");
});

const READ: [string, number][] = [
  ["15m", 15 * M],
  ["3m 20s", 3 * M + 20 * S],
  ["3m20s", 3 * M + 20 * S],
  ["5h 0m", 5 * H],
  ["2d 1h", 2 * D + H],
  ["1.4 s", 1400],
  ["12 min", 12 * M],
  ["3 days", 3 * D],
  ["1 day", D],
  ["3 h 5 min", 3 * H + 5 * M],
  ["3 hours", 3 * H],
  ["2 Weeks", 14 * D],
  ["1.5h", 90 * M],
  ["  45 S  ", 45 * S],
  ["0s", 0],
];

for (const [text, ms] of READ) {
  test(`parseDuration reads ${JSON.stringify(text)} as ${ms} ms`, (t) => {
    t.is(parseDuration(text), ms);
  });
}

test("parseDuration refuses what is not a duration, and units out of order", (t) => {
  for (const text of [
    "",
    "3",
    "an hour",
    "5m 3h",
    "3 fortnights",
    "1h 1h",
    "-5m",
    "1e3s",
    "1234567890s",
    "3 h,",
  ]) {
    t.is(parseDuration(text), undefined, text);
  }
});

const STYLES: [string, DurationStyle][] = [
  ["COMPACT", COMPACT],
  ["AGE", AGE],
  ["AHEAD", AHEAD],
];

for (const [name, style] of STYLES) {
  test(`${name}: reading what is printed and printing it again gives the same text`, (t) => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 * D }), (ms) => {
        const printed = formatDuration(ms, style);
        const read = parseDuration(printed);
        return read !== undefined && formatDuration(read, style) === printed;
      }),
    );
    t.pass();
  });
}

test("COMPACT reads back exactly whatever it shows in full: whole seconds under an hour, minutes under a day, hours", (t) => {
  const exact = fc.oneof(
    fc.integer({ min: 0, max: 3599 }).map((seconds) => seconds * S),
    fc.integer({ min: 60, max: 24 * 60 - 1 }).map((minutes) => minutes * M),
    fc.integer({ min: 24, max: 24 * 400 }).map((hours) => hours * H),
  );
  fc.assert(fc.property(exact, (ms) => parseDuration(formatDuration(ms, COMPACT)) === ms));
  t.pass();
});

test("AHEAD reads back exactly at its own precision: seconds under 2 min, minutes after", (t) => {
  const exact = fc.oneof(
    fc.integer({ min: 0, max: 119 }).map((seconds) => seconds * S),
    fc.integer({ min: 2, max: 48 * 60 }).map((minutes) => minutes * M),
  );
  fc.assert(fc.property(exact, (ms) => parseDuration(formatDuration(ms, AHEAD)) === ms));
  t.pass();
});

test("AGE rounds to the tenth of a second it shows before choosing the unit: 59.96 s is 1 min", (t) => {
  t.is(formatDuration(59_960, AGE), "1 min");
  t.is(formatDuration(59_940, AGE), "59.9 s");
});
