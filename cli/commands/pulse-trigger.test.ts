/**
 * What `svc pulse trigger --at` sends the daemon: a time without a zone is this machine's local time, sent
 * as UTC; every other form goes as typed, for the daemon to read against its own clock or refuse.
 */
import test from "ava";
import { UserFacingError } from "../../core/errors.js";
import { scheduledAtToSend } from "./pulse-trigger.js";

const NOW = Date.parse("2026-11-23T12:00:00.000Z");

test("forms the daemon reads are sent as typed", (t) => {
  for (const at of [
    "now",
    "+15m",
    "in 2 hours",
    "3 hours ago",
    "2026-11-23T14:30:00+01:00",
    "@1795530600",
    "tomorrow",
  ]) {
    t.is(scheduledAtToSend(at, NOW), at);
  }
});

test("a local time or date is sent as the UTC instant it is here", (t) => {
  t.is(scheduledAtToSend("2026-11-23 14:30", NOW), new Date(2026, 10, 23, 14, 30).toISOString());
  t.is(scheduledAtToSend("2026-11-24", NOW), new Date(2026, 10, 24).toISOString());
});

test("a local time that is not a real one is refused before anything is sent", (t) => {
  t.throws(() => scheduledAtToSend("2026-02-30 10:00", NOW), {
    instanceOf: UserFacingError,
    message: /^--at "2026-02-30 10:00" is not a time svc can read/,
  });
});
