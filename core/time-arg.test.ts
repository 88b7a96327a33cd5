import test from "ava";
import { UserFacingError } from "./errors.js";
import { parseTimeArgument, readTime } from "./time-arg.js";

const NOW = Date.parse("2026-11-23T12:00:00.000Z");

test("RFC 3339 times with Z or an offset are read exactly", (t) => {
  t.is(parseTimeArgument("--at", "2026-11-23T10:00:00Z", NOW), Date.parse("2026-11-23T10:00:00Z"));
  t.is(parseTimeArgument("--at", "2026-11-23T10:00:00.123Z", NOW), Date.parse("2026-11-23T10:00:00.123Z"));
  t.is(parseTimeArgument("--at", "2026-11-23T11:00:00+01:00", NOW), Date.parse("2026-11-23T10:00:00Z"));
  t.is(parseTimeArgument("--at", "2026-11-23 11:00:00+0100", NOW), Date.parse("2026-11-23T10:00:00Z"));
  t.is(parseTimeArgument("--at", "2026-11-23t10:00z", NOW), Date.parse("2026-11-23T10:00:00Z"));
});

test("a time without a zone is local time, and a date alone is local midnight, as git reads them", (t) => {
  t.is(parseTimeArgument("--since", "2026-11-23 14:30", NOW), new Date(2026, 10, 23, 14, 30).getTime());
  t.is(parseTimeArgument("--since", "2026-11-23", NOW), new Date(2026, 10, 23).getTime());
});

test("relative forms count back from now; @seconds and now", (t) => {
  t.is(parseTimeArgument("--since", "3 hours ago", NOW), NOW - 3 * 3_600_000);
  t.is(parseTimeArgument("--since", "1 day ago", NOW), NOW - 86_400_000);
  t.is(parseTimeArgument("--since", "2 Weeks ago", NOW), NOW - 14 * 86_400_000);
  t.is(parseTimeArgument("--since", "@1795530600", NOW), 1_795_530_600_000);
  t.is(parseTimeArgument("--since", "now", NOW), NOW);
});

test("anything else is refused with the option, the text and the forms", (t) => {
  for (const text of [
    "last tuesday",
    "2026-02-30",
    "2026-02-30T10:00:00Z",
    "2026-11-23T25:00Z",
    "",
    "yesterday",
    "3 fortnights ago",
  ]) {
    const error = t.throws(() => parseTimeArgument("--at", text, NOW), { instanceOf: UserFacingError });
    t.true(
      error?.message.startsWith(`--at ${JSON.stringify(text)} is not a time svc can read; use one of: `),
      text,
    );
  }
});

test("every relative form of the one grammar: durations as the printer writes them, ahead and back", (t) => {
  t.is(parseTimeArgument("--since", "3h ago", NOW), NOW - 3 * 3_600_000);
  t.is(parseTimeArgument("--since", "2h 30m ago", NOW), NOW - 150 * 60_000);
  t.is(parseTimeArgument("--since", "12 min ago", NOW), NOW - 12 * 60_000);
  t.is(parseTimeArgument("--since", "3m 20s AGO", NOW), NOW - 200_000);
  t.is(parseTimeArgument("--at", "+15m", NOW), NOW + 15 * 60_000);
  t.is(parseTimeArgument("--at", "in 2 hours", NOW), NOW + 2 * 3_600_000);
  t.is(parseTimeArgument("--at", "NOW", NOW), NOW);
});

test("readTime: where a zone is required, a time without one is named as such, with its UTC spelling", (t) => {
  const required = { zone: "required" } as const;
  t.deepEqual(readTime("2026-11-22T09:00:00", NOW, required), {
    kind: "no-zone",
    suggestion: "2026-11-22T09:00:00Z",
  });
  t.deepEqual(readTime("2026-11-22 09:00", NOW, required), {
    kind: "no-zone",
    suggestion: "2026-11-22T09:00:00Z",
  });
  t.deepEqual(readTime("2026-11-22", NOW, required), { kind: "no-zone", suggestion: "2026-11-22T00:00:00Z" });
  t.deepEqual(readTime("2026-11-22T09:00:00+01:00", NOW, required), {
    kind: "time",
    ms: Date.parse("2026-11-22T08:00:00Z"),
  });
  t.deepEqual(readTime("3 hours ago", NOW, required), { kind: "time", ms: NOW - 3 * 3_600_000 });
  t.deepEqual(readTime("2026-02-30T09:00:00Z", NOW, required), { kind: "not-real" });
  t.deepEqual(readTime("2026-11-22T24:00:00Z", NOW, required), { kind: "not-real" });
  t.deepEqual(readTime("tomorrow", NOW, required), { kind: "unreadable" });
  t.deepEqual(readTime("in an hour", NOW, required), { kind: "unreadable" });
});
