/**
 * The built-in schedules over a real SQLite file (notes §2.2 failure modes 6 and 7): a fake clock walked
 * minute by minute through the 2026 DST days of New York and Berlin gives 23 and 25 heartbeat pulses, one
 * per slot; restarts, a second daemon on the same file, a clock stepped back or forward, and downtime never
 * give two pulses for a slot; the keep-alive slot goes to one scheduler only.
 */

import { join } from "node:path";
import { Writable } from "node:stream";
import test, { type ExecutionContext } from "ava";
import type { Database } from "../../core/sqlite.js";
import { givenTempDir } from "../../testing/sim.js";
import { openPulseDb } from "./db.js";
import { formatLocalSlot } from "./heartbeat.js";
import { Logger } from "./log.js";
import { type Pulse, PulseQueue } from "./queue.js";
import { HEARTBEAT_SCHEDULE, KEEPALIVE_DONE_SCHEDULE, KEEPALIVE_SCHEDULE, Schedules } from "./schedules.js";

const at = (iso: string): number => Date.parse(iso);
const MINUTE = 60_000;
const HOUR = 3_600_000;

interface Clock {
  now: number;
}

interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly [field: string]: unknown;
}

/** A migrated pulse database in a temp dir; returns its path. */
function givenPulseDb(t: ExecutionContext): string {
  const path = join(givenTempDir(t, "svc-schedules-"), "pulse.db");
  openPulseDb(path, { migrate: true, create: true }).close();
  return path;
}

interface Daemon {
  readonly db: Database;
  readonly schedules: Schedules;
  readonly logs: LogLine[];
}

/** One "daemon": its own connection to the file, its own Schedules, the shared fake clock, captured logs. */
function givenDaemon(t: ExecutionContext, path: string, clock: Clock, tz: string): Daemon {
  const db = openPulseDb(path, { migrate: false });
  t.teardown(() => {
    if (db.open) db.close();
  });
  const logs: LogLine[] = [];
  const stderr = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line !== "") logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const logger = new Logger({ level: "DEBUG", stderr, component: "test", now: () => clock.now });
  const schedules = new Schedules(new PulseQueue(db, { now: () => clock.now }), { tz, logger });
  return { db, schedules, logs };
}

function pulses(db: Database): Pulse[] {
  return db.prepare("SELECT * FROM pulses ORDER BY run_at, id").all() as Pulse[];
}

function warnings(daemon: Daemon): string[] {
  return daemon.logs.filter((line) => line.level === "WARNING").map((line) => line.message);
}

/** Local hh:mm±hh:mm of a pulse's slot. */
function localLabel(pulse: Pulse, tz: string): string {
  return formatLocalSlot(Date.parse(pulse.scheduled_at), tz).slice(11);
}

const DAYS = [
  {
    name: "New York 2026-03-08 (spring forward)",
    tz: "America/New_York",
    from: "2026-03-08T05:00:00Z",
    until: "2026-03-09T04:00:00Z",
    count: 23,
    hours: [0, 1, ...Array.from({ length: 21 }, (_, i) => i + 3)],
  },
  {
    name: "New York 2026-11-01 (fall back)",
    tz: "America/New_York",
    from: "2026-11-01T04:00:00Z",
    until: "2026-11-02T05:00:00Z",
    count: 25,
    hours: [0, 1, 1, ...Array.from({ length: 22 }, (_, i) => i + 2)],
  },
  {
    name: "Berlin 2026-03-29 (spring forward)",
    tz: "Europe/Berlin",
    from: "2026-03-28T23:00:00Z",
    until: "2026-03-29T22:00:00Z",
    count: 23,
    hours: [0, 1, ...Array.from({ length: 21 }, (_, i) => i + 3)],
  },
  {
    name: "Berlin 2026-10-25 (fall back)",
    tz: "Europe/Berlin",
    from: "2026-10-24T22:00:00Z",
    until: "2026-10-25T23:00:00Z",
    count: 25,
    hours: [0, 1, 2, 2, ...Array.from({ length: 21 }, (_, i) => i + 3)],
  },
  {
    name: "New York 2026-06-15 (ordinary)",
    tz: "America/New_York",
    from: "2026-06-15T04:00:00Z",
    until: "2026-06-16T04:00:00Z",
    count: 24,
    hours: Array.from({ length: 24 }, (_, i) => i),
  },
];

/** Document 2's bucket, written out here rather than taken from heartbeat.ts. */
function expectedBucket(hour: number): string {
  if (hour >= 6 && hour <= 11) return "morning";
  if (hour >= 12 && hour <= 17) return "afternoon";
  if (hour >= 18 && hour <= 21) return "evening";
  return "night";
}

for (const day of DAYS) {
  test(`a whole local day minute by minute gives one heartbeat per slot: ${day.name}`, (t) => {
    const path = givenPulseDb(t);
    const clock = { now: at(day.from) };
    const daemon = givenDaemon(t, path, clock, day.tz);
    let returned = 0;
    for (; clock.now < at(day.until); clock.now += MINUTE) {
      const queued = daemon.schedules.heartbeat();
      if (queued === undefined) continue;
      returned++;
      t.true(queued.created, `a second pulse was offered for ${queued.pulse.scheduled_at}`);
    }
    const all = pulses(daemon.db);
    t.is(all.length, day.count);
    t.is(returned, day.count);
    // One real hour apart, from local midnight on (both zones have whole-hour offsets), all distinct.
    t.deepEqual(
      all.map((pulse) => pulse.scheduled_at),
      Array.from({ length: day.count }, (_, i) => new Date(at(day.from) + i * HOUR).toISOString()),
    );
    t.is(new Set(all.map((pulse) => pulse.dedup_key)).size, day.count);
    t.is(new Set(all.map((pulse) => pulse.run_at)).size, day.count);
    t.deepEqual(
      all.map((pulse) => Number(localLabel(pulse, day.tz).slice(0, 2))),
      day.hours,
    );
    all.forEach((pulse, i) => {
      const hour = day.hours[i] as number;
      const prefix = `Hourly heartbeat, ${String(hour).padStart(2, "0")}:00 ${day.tz} `;
      t.true(pulse.prompt.startsWith(prefix), pulse.prompt);
      t.true(pulse.prompt.includes(`, ${expectedBucket(hour)}: `), pulse.prompt);
      t.like(pulse, { source: "heartbeat", priority: "normal", status: "pending", backfilled: 0 });
      t.is(pulse.dedup_key, `heartbeat:${pulse.scheduled_at}`);
    });
    t.deepEqual(warnings(daemon), []);
  });
}

test("the doubled New York 01:00 has two night pulses; 05:00/06:00 and 21:00/22:00 switch buckets", (t) => {
  const tz = "America/New_York";
  const clock = { now: at("2026-11-01T04:00:00Z") };
  const daemon = givenDaemon(t, givenPulseDb(t), clock, tz);
  for (; clock.now < at("2026-11-02T05:00:00Z"); clock.now += 5 * MINUTE) daemon.schedules.heartbeat();
  const byLabel = new Map(pulses(daemon.db).map((pulse) => [localLabel(pulse, tz), pulse.prompt]));
  t.regex(
    byLabel.get("01:00-04:00") ?? "",
    /^Hourly heartbeat, 01:00 America\/New_York \(UTC-04:00\), night: /,
  );
  t.regex(
    byLabel.get("01:00-05:00") ?? "",
    /^Hourly heartbeat, 01:00 America\/New_York \(UTC-05:00\), night: /,
  );
  t.regex(byLabel.get("05:00-05:00") ?? "", /, night: /);
  t.regex(byLabel.get("06:00-05:00") ?? "", /, morning: /);
  t.regex(byLabel.get("21:00-05:00") ?? "", /, evening: /);
  t.regex(byLabel.get("22:00-05:00") ?? "", /, night: /);
});

test("a restart inside the hour (new connection, new Schedules) does not queue the slot again", (t) => {
  const path = givenPulseDb(t);
  const clock = { now: at("2026-06-15T10:05:00Z") };
  const first = givenDaemon(t, path, clock, "Europe/Berlin");
  const queued = first.schedules.heartbeat();
  t.like(queued, { created: true, pulse: { scheduled_at: "2026-06-15T10:00:00.000Z", backfilled: 1 } });
  first.db.close();
  clock.now = at("2026-06-15T10:40:00Z");
  const second = givenDaemon(t, path, clock, "Europe/Berlin");
  t.is(second.schedules.heartbeat(), undefined);
  t.is(second.schedules.heartbeatPulseFor(at("2026-06-15T10:00:00Z"))?.id, queued?.pulse.id);
  t.is(pulses(second.db).length, 1);
  clock.now = at("2026-06-15T11:00:00Z");
  t.like(second.schedules.heartbeat(), { created: true, pulse: { backfilled: 0 } });
  t.is(pulses(second.db).length, 2);
});

test("two daemons on one file, ticking interleaved for a day, queue one pulse per slot between them", (t) => {
  const path = givenPulseDb(t);
  const clock = { now: at("2026-10-24T22:00:00Z") };
  const a = givenDaemon(t, path, clock, "Europe/Berlin");
  const b = givenDaemon(t, path, clock, "Europe/Berlin");
  const created = { a: 0, b: 0 };
  let step = 0;
  for (; clock.now < at("2026-10-25T23:00:00Z"); clock.now += MINUTE, step++) {
    // Alternate who ticks first from one hour to the next, so each daemon wins some slots.
    const order: ["a" | "b", Daemon][] =
      Math.floor(step / 60) % 2 === 0
        ? [
            ["a", a],
            ["b", b],
          ]
        : [
            ["b", b],
            ["a", a],
          ];
    for (const [name, daemon] of order) if (daemon.schedules.heartbeat()?.created) created[name]++;
  }
  t.is(pulses(a.db).length, 25);
  t.is(created.a + created.b, 25);
  t.true(created.a > 0 && created.b > 0, JSON.stringify(created));
});

test("a schedules row behind the queue (restored backup, lost race) cannot queue a slot twice: the dedup key holds", (t) => {
  const path = givenPulseDb(t);
  const clock = { now: at("2026-06-15T10:00:30Z") };
  const a = givenDaemon(t, path, clock, "UTC");
  const b = givenDaemon(t, path, clock, "UTC");
  const first = a.schedules.heartbeat();
  t.true(first?.created);
  b.db.prepare("UPDATE schedules SET last_slot = last_slot - ? WHERE name = ?").run(HOUR, HEARTBEAT_SCHEDULE);
  const again = b.schedules.heartbeat();
  t.like(again, { created: false, pulse: { id: first?.pulse.id } });
  t.is(pulses(b.db).length, 1);
  t.is(b.schedules.lastSlot(HEARTBEAT_SCHEDULE), at("2026-06-15T10:00:00Z"));
});

test("a heartbeat that meets a locked database throws and changes nothing; the next tick queues it", (t) => {
  const path = givenPulseDb(t);
  const clock = { now: at("2026-06-15T10:00:00Z") };
  const holder = givenDaemon(t, path, clock, "UTC");
  const daemon = givenDaemon(t, path, clock, "UTC");
  daemon.db.pragma("busy_timeout = 0");
  holder.db.exec("BEGIN IMMEDIATE");
  t.throws(() => daemon.schedules.heartbeat(), { any: true, code: "SQLITE_BUSY" });
  holder.db.exec("ROLLBACK");
  t.is(pulses(daemon.db).length, 0);
  t.is(daemon.schedules.lastSlot(HEARTBEAT_SCHEDULE), undefined);
  t.like(daemon.schedules.heartbeat(), {
    created: true,
    pulse: { scheduled_at: "2026-06-15T10:00:00.000Z" },
  });
});

test("a clock stepped back an hour re-fires nothing, and last_slot does not move back", (t) => {
  const clock = { now: at("2026-06-15T09:00:00Z") };
  const daemon = givenDaemon(t, givenPulseDb(t), clock, "Europe/Berlin");
  t.truthy(daemon.schedules.heartbeat());
  clock.now = at("2026-06-15T10:05:00Z");
  t.truthy(daemon.schedules.heartbeat());
  // NTP steps the clock back to 09:05: the 09:00 and 10:00 slots were handled; walk forward again.
  for (clock.now = at("2026-06-15T09:05:00Z"); clock.now < at("2026-06-15T11:00:00Z"); clock.now += MINUTE) {
    t.is(daemon.schedules.heartbeat(), undefined, new Date(clock.now).toISOString());
    t.is(daemon.schedules.lastSlot(HEARTBEAT_SCHEDULE), at("2026-06-15T10:00:00Z"));
  }
  t.like(daemon.schedules.heartbeat(), {
    created: true,
    pulse: { scheduled_at: "2026-06-15T11:00:00.000Z" },
  });
  t.deepEqual(
    pulses(daemon.db).map((pulse) => pulse.scheduled_at),
    ["2026-06-15T09:00:00.000Z", "2026-06-15T10:00:00.000Z", "2026-06-15T11:00:00.000Z"],
  );
  // One notice for the whole time behind, not one per tick; a 1-hour step is not a "correction".
  const messages = warnings(daemon);
  t.is(messages.filter((message) => message.includes("clock is behind")).length, 1);
  t.false(messages.some((message) => message.includes("clock correction")));
});

test("a clock stepped forward 2 h: one catch-up pulse for the newest slot, marked backfilled, skipped slot warned", (t) => {
  const clock = { now: at("2026-06-15T10:00:10Z") };
  const daemon = givenDaemon(t, givenPulseDb(t), clock, "UTC");
  t.like(daemon.schedules.heartbeat(), { pulse: { backfilled: 0 } });
  clock.now = at("2026-06-15T12:20:00Z");
  t.like(daemon.schedules.heartbeat(), {
    created: true,
    pulse: { scheduled_at: "2026-06-15T12:00:00.000Z", backfilled: 1 },
  });
  t.is(daemon.schedules.heartbeat(), undefined);
  t.deepEqual(
    pulses(daemon.db).map((pulse) => pulse.scheduled_at),
    ["2026-06-15T10:00:00.000Z", "2026-06-15T12:00:00.000Z"],
  );
  const missed = daemon.logs.find((line) => line.message.startsWith("heartbeat missed"));
  t.like(missed, { level: "WARNING", skipped: 1, slot: "2026-06-15T12:00:00.000Z" });
  t.false(warnings(daemon).some((message) => message.includes("clock correction")));
});

test("a jump of more than 3 h between two checks is logged as a clock correction", (t) => {
  const clock = { now: at("2026-06-15T10:00:00Z") };
  const daemon = givenDaemon(t, givenPulseDb(t), clock, "UTC");
  daemon.schedules.heartbeat();
  clock.now = at("2026-06-15T15:30:00Z");
  t.like(daemon.schedules.heartbeat(), {
    pulse: { scheduled_at: "2026-06-15T15:00:00.000Z", backfilled: 1 },
  });
  const correction = daemon.logs.find((line) => line.message.includes("clock correction"));
  t.like(correction, { level: "WARNING", jumpMs: 5.5 * HOUR });
  t.regex(correction?.message ?? "", /jumped forward by 5h 30m /);
  clock.now = at("2026-06-15T11:00:00Z");
  t.is(daemon.schedules.heartbeat(), undefined);
  t.is(daemon.logs.filter((line) => line.message.includes("clock correction")).length, 2);
  t.is(pulses(daemon.db).length, 2);
});

test("a daemon down for 5 h queues one catch-up pulse on restart, marked backfilled, and warns of 4 skipped slots", (t) => {
  const path = givenPulseDb(t);
  const clock = { now: at("2026-06-15T10:00:00Z") };
  const before = givenDaemon(t, path, clock, "Europe/Berlin");
  before.schedules.heartbeat();
  before.db.close();
  clock.now = at("2026-06-15T15:30:00Z");
  const after = givenDaemon(t, path, clock, "Europe/Berlin");
  t.like(after.schedules.heartbeat(), {
    created: true,
    pulse: { scheduled_at: "2026-06-15T15:00:00.000Z", backfilled: 1 },
  });
  t.is(pulses(after.db).length, 2);
  t.like(
    after.logs.find((line) => line.message.startsWith("heartbeat missed")),
    { level: "WARNING", skipped: 4, lastSlot: "2026-06-15T10:00:00.000Z" },
  );
  t.regex(warnings(after).join("\n"), /missed 4 slots since 2026-06-15T12:00\+02:00/);
});

test("the keep-alive slot is claimed by exactly one of two schedulers, once per 4-hour period", (t) => {
  const path = givenPulseDb(t);
  const clock = { now: at("2026-06-15T01:30:00Z") };
  const a = givenDaemon(t, path, clock, "UTC");
  const b = givenDaemon(t, path, clock, "UTC");
  t.is(a.schedules.claimKeepalive(), at("2026-06-15T00:00:00Z"));
  t.is(b.schedules.claimKeepalive(), undefined);
  t.is(a.schedules.claimKeepalive(), undefined);
  a.schedules.finishKeepalive(at("2026-06-15T00:00:00Z"));
  clock.now = at("2026-06-15T03:59:59Z");
  t.is(b.schedules.claimKeepalive(), undefined);
  clock.now = at("2026-06-15T04:00:00Z");
  t.is(b.schedules.claimKeepalive(), at("2026-06-15T04:00:00Z"));
  t.is(a.schedules.claimKeepalive(), undefined);
  b.schedules.finishKeepalive(at("2026-06-15T04:00:00Z"));
  // Clock back across the period boundary: no slot is claimed again.
  clock.now = at("2026-06-15T02:00:00Z");
  t.is(a.schedules.claimKeepalive(), undefined);
  t.is(b.schedules.claimKeepalive(), undefined);
  t.is(a.schedules.lastSlot(KEEPALIVE_SCHEDULE), at("2026-06-15T04:00:00Z"));
  // Down 11 h: one claim for the current period, not one per missed period.
  clock.now = at("2026-06-15T15:00:00Z");
  t.is(b.schedules.claimKeepalive(), at("2026-06-15T12:00:00Z"));
  t.is(a.schedules.claimKeepalive(), undefined);
  b.schedules.finishKeepalive(at("2026-06-15T12:00:00Z"));
  // The keep-alive does not touch the heartbeat's row, nor queue pulses.
  t.is(a.schedules.lastSlot(HEARTBEAT_SCHEDULE), undefined);
  t.is(pulses(a.db).length, 0);
});

test("a keep-alive whose daemon died mid-run is claimed again once its lease lapses, and only once", (t) => {
  const path = givenPulseDb(t);
  const clock = { now: at("2026-06-15T04:10:00Z") };
  const dead = givenDaemon(t, path, clock, "UTC");
  const slot = at("2026-06-15T04:00:00Z");
  t.is(dead.schedules.claimKeepalive(), slot);
  // The running daemon renews its claim; while it does, nobody else takes the slot.
  clock.now = at("2026-06-15T04:19:00Z");
  dead.schedules.renewKeepalive(slot);
  const other = givenDaemon(t, path, clock, "UTC");
  clock.now = at("2026-06-15T04:28:59Z");
  t.is(other.schedules.claimKeepalive(), undefined);
  // It dies without finishing: ten minutes after the last renewal the slot is claimed again, by one daemon.
  clock.now = at("2026-06-15T04:29:00Z");
  const third = givenDaemon(t, path, clock, "UTC");
  t.is(other.schedules.claimKeepalive(), slot);
  t.is(third.schedules.claimKeepalive(), undefined);
  t.regex(warnings(other).join("\n"), /never finished/);
  other.schedules.finishKeepalive(slot);
  clock.now = at("2026-06-15T07:59:00Z");
  t.is(third.schedules.claimKeepalive(), undefined);
  t.is(other.schedules.claimKeepalive(), undefined);
  t.is(other.schedules.lastSlot(KEEPALIVE_DONE_SCHEDULE), slot);
  // A finished slot is not run again even long after; the next slot is claimed as usual.
  clock.now = at("2026-06-15T08:00:00Z");
  t.is(third.schedules.claimKeepalive(), at("2026-06-15T08:00:00Z"));
});
