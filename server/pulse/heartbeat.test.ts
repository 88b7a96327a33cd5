/**
 * The heartbeat's slot arithmetic (Document 2 "What the service does" 5; notes §2.2 failure mode 7), pure:
 * one slot per real hour at local hh:00 in the zone, 23 on spring-forward days and 25 on fall-back days,
 * buckets and prompts from the slot's own local hour, and keys that keep the doubled hour's two slots apart.
 * The expected slots below are written out as UTC instants, not computed with the code under test.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../../testing/fuzz.js";
import {
  countHourlySlotsBetween,
  formatLocalSlot,
  HOUR_MS,
  heartbeatDedupKey,
  heartbeatPrompt,
  heartbeatPulse,
  hourlySlotAtOrBefore,
  hourlySlotsBetween,
  KEEPALIVE_EVERY_MS,
  localParts,
  slotAtOrBefore,
  timeOfDay,
} from "./heartbeat.js";

const at = (iso: string): number => Date.parse(iso);
const MINUTE = 60_000;

/** Consecutive UTC hours from `firstIso`, `count` of them: the slots of a whole-hour-offset zone. */
function utcHours(firstIso: string, count: number): number[] {
  return Array.from({ length: count }, (_, i) => at(firstIso) + i * HOUR_MS);
}

/** The local hh:mm±hh:mm labels of a day's slots, as the test expects them. */
function labels(slots: readonly number[], tz: string): string[] {
  return slots.map((slot) => formatLocalSlot(slot, tz).slice(11));
}

test("localParts reads the wall clock and the offset of the zone at the instant", (t) => {
  t.deepEqual(localParts(at("2026-07-01T12:34:56.789Z"), "Europe/Berlin"), {
    year: 2026,
    month: 7,
    day: 1,
    hour: 14,
    minute: 34,
    second: 56,
    offsetMs: 2 * HOUR_MS,
  });
  t.like(localParts(at("2026-01-01T00:00:00Z"), "America/New_York"), {
    year: 2025,
    month: 12,
    day: 31,
    hour: 19,
    offsetMs: -5 * HOUR_MS,
  });
  t.like(localParts(at("2026-01-01T00:00:00Z"), "Asia/Kathmandu"), {
    hour: 5,
    minute: 45,
    offsetMs: 345 * MINUTE,
  });
  // Midnight is hour 0, not 24 (en-US with hour12: false says 24 on some ICU versions).
  t.like(localParts(at("2026-01-01T05:00:00Z"), "America/New_York"), { day: 1, hour: 0 });
});

const DAYS: readonly {
  name: string;
  tz: string;
  from: string;
  until: string;
  slots: number[];
  local: string[];
}[] = [
  {
    name: "New York spring forward 2026-03-08: no 02:00",
    tz: "America/New_York",
    from: "2026-03-08T05:00:00Z",
    until: "2026-03-09T04:00:00Z",
    slots: utcHours("2026-03-08T05:00:00Z", 23),
    local: ["00:00-05:00", "01:00-05:00", "03:00-04:00", "04:00-04:00"],
  },
  {
    name: "New York fall back 2026-11-01: 01:00 twice",
    tz: "America/New_York",
    from: "2026-11-01T04:00:00Z",
    until: "2026-11-02T05:00:00Z",
    slots: utcHours("2026-11-01T04:00:00Z", 25),
    local: ["00:00-04:00", "01:00-04:00", "01:00-05:00", "02:00-05:00"],
  },
  {
    name: "Berlin spring forward 2026-03-29: no 02:00",
    tz: "Europe/Berlin",
    from: "2026-03-28T23:00:00Z",
    until: "2026-03-29T22:00:00Z",
    slots: utcHours("2026-03-28T23:00:00Z", 23),
    local: ["00:00+01:00", "01:00+01:00", "03:00+02:00", "04:00+02:00"],
  },
  {
    name: "Berlin fall back 2026-10-25: 02:00 twice",
    tz: "Europe/Berlin",
    from: "2026-10-24T22:00:00Z",
    until: "2026-10-25T23:00:00Z",
    slots: utcHours("2026-10-24T22:00:00Z", 25),
    local: ["00:00+02:00", "01:00+02:00", "02:00+02:00", "02:00+01:00"],
  },
  {
    name: "an ordinary New York day",
    tz: "America/New_York",
    from: "2026-06-15T04:00:00Z",
    until: "2026-06-16T04:00:00Z",
    slots: utcHours("2026-06-15T04:00:00Z", 24),
    local: ["00:00-04:00", "01:00-04:00", "02:00-04:00", "03:00-04:00"],
  },
  {
    name: "an ordinary Kolkata day: slots at :30 UTC",
    tz: "Asia/Kolkata",
    from: "2026-06-14T18:30:00Z",
    until: "2026-06-15T18:30:00Z",
    slots: utcHours("2026-06-14T18:30:00Z", 24),
    local: ["00:00+05:30", "01:00+05:30", "02:00+05:30", "03:00+05:30"],
  },
  {
    // Lord Howe's DST is 30 minutes: 02:00 (+10:30) becomes 02:30 (+11), so local 02:00 never happens.
    name: "Lord Howe spring forward 2026-10-04: 30-minute shift, no 02:00",
    tz: "Australia/Lord_Howe",
    from: "2026-10-03T13:30:00Z",
    until: "2026-10-04T13:00:00Z",
    slots: [
      at("2026-10-03T13:30:00Z"),
      ...utcHours("2026-10-03T14:30:00Z", 1),
      ...utcHours("2026-10-03T16:00:00Z", 21),
    ],
    local: ["00:00+10:30", "01:00+10:30", "03:00+11:00", "04:00+11:00"],
  },
  {
    // 02:00 (+11) becomes 01:30 (+10:30): 01:30–02:00 repeats, but no hh:00 does, so 24 slots in 24.5 h.
    name: "Lord Howe fall back 2026-04-05: 30-minute shift, 24 slots",
    tz: "Australia/Lord_Howe",
    from: "2026-04-04T13:00:00Z",
    until: "2026-04-05T13:30:00Z",
    slots: [...utcHours("2026-04-04T13:00:00Z", 2), ...utcHours("2026-04-04T15:30:00Z", 22)],
    local: ["00:00+11:00", "01:00+11:00", "02:00+10:30", "03:00+10:30"],
  },
];

for (const day of DAYS) {
  test(`slots of a local day: ${day.name}`, (t) => {
    const slots = hourlySlotsBetween(at(day.from) - 1, at(day.until) - 1, day.tz);
    t.deepEqual(
      slots.map((slot) => new Date(slot).toISOString()),
      day.slots.map((slot) => new Date(slot).toISOString()),
    );
    t.deepEqual(labels(slots, day.tz).slice(0, 4), day.local);
    t.is(labels(slots, day.tz).at(-1)?.slice(0, 5), "23:00");
    t.is(new Set(slots.map(heartbeatDedupKey)).size, slots.length);
    t.is(countHourlySlotsBetween(at(day.from) - 1, at(day.until), day.tz), slots.length);
  });
}

test("the slot at or before an instant: inside, at and after the New York spring-forward jump", (t) => {
  const tz = "America/New_York";
  // 01:59:59.999 EST still belongs to the 01:00 slot; the jump instant is 03:00 EDT, a slot itself.
  t.is(hourlySlotAtOrBefore(at("2026-03-08T06:59:59.999Z"), tz), at("2026-03-08T06:00:00Z"));
  t.is(hourlySlotAtOrBefore(at("2026-03-08T07:00:00Z"), tz), at("2026-03-08T07:00:00Z"));
  t.is(hourlySlotAtOrBefore(at("2026-03-08T07:30:00Z"), tz), at("2026-03-08T07:00:00Z"));
  // Fall back: 01:30 EDT and 01:30 EST are an hour apart and belong to different slots.
  t.is(hourlySlotAtOrBefore(at("2026-11-01T05:30:00Z"), tz), at("2026-11-01T05:00:00Z"));
  t.is(hourlySlotAtOrBefore(at("2026-11-01T06:30:00Z"), tz), at("2026-11-01T06:00:00Z"));
  // Lord Howe 02:45 (+11), just after its 30-minute jump: the slot is 01:00 (+10:30), 1 h 15 min back.
  t.is(hourlySlotAtOrBefore(at("2026-10-03T15:45:00Z"), "Australia/Lord_Howe"), at("2026-10-03T14:30:00Z"));
  // Chatham's DST jumps 02:45 (+12:45) → 03:45 (+13:45): at 03:55 local 03:00 never was; 02:00 is the slot.
  t.is(
    formatLocalSlot(hourlySlotAtOrBefore(at("2026-09-26T14:10:00Z"), "Pacific/Chatham"), "Pacific/Chatham"),
    "2026-09-27T02:00+12:45",
  );
});

test("buckets follow Document 2: morning 06–12, afternoon 12–18, evening 18–22, night 22–06", (t) => {
  const expected = [
    ...Array(6).fill("night"),
    ...Array(6).fill("morning"),
    ...Array(6).fill("afternoon"),
    ...Array(4).fill("evening"),
    ...Array(2).fill("night"),
  ];
  t.deepEqual(
    Array.from({ length: 24 }, (_, hour) => timeOfDay(hour)),
    expected,
  );
});

test("the prompt names the slot's local time, zone, offset and bucket, from the slot's own local hour", (t) => {
  const tz = "Europe/Berlin";
  t.is(
    heartbeatPrompt(at("2026-07-01T07:00:00Z"), tz),
    "Hourly heartbeat, 09:00 Europe/Berlin (UTC+02:00), morning: review today's priorities and the calendar.",
  );
  const cases: [string, string, string][] = [
    ["2026-01-15T04:00:00Z", "05:00", "night"],
    ["2026-01-15T05:00:00Z", "06:00", "morning"],
    ["2026-01-15T10:00:00Z", "11:00", "morning"],
    ["2026-01-15T11:00:00Z", "12:00", "afternoon"],
    ["2026-01-15T17:00:00Z", "18:00", "evening"],
    ["2026-01-15T20:00:00Z", "21:00", "evening"],
    ["2026-01-15T21:00:00Z", "22:00", "night"],
  ];
  for (const [slot, local, bucket] of cases) {
    t.true(
      heartbeatPrompt(at(slot), tz).startsWith(
        `Hourly heartbeat, ${local} Europe/Berlin (UTC+01:00), ${bucket}: `,
      ),
      slot,
    );
  }
  t.regex(
    heartbeatPrompt(at("2026-01-15T12:00:00Z"), tz),
    /afternoon: check upcoming meetings and pending tasks/,
  );
  t.regex(
    heartbeatPrompt(at("2026-01-15T19:00:00Z"), tz),
    /evening: wrap up the day and list the tasks that remain/,
  );
  t.regex(heartbeatPrompt(at("2026-01-15T23:00:00Z"), tz), /night: light check only; defer non-urgent items/);
  // The doubled New York 01:00: both night, told apart by the offset.
  t.is(
    heartbeatPrompt(at("2026-11-01T05:00:00Z"), "America/New_York"),
    "Hourly heartbeat, 01:00 America/New_York (UTC-04:00), night: light check only; defer non-urgent items to the morning.",
  );
  t.regex(
    heartbeatPrompt(at("2026-11-01T06:00:00Z"), "America/New_York"),
    /^Hourly heartbeat, 01:00 America\/New_York \(UTC-05:00\), night: /,
  );
});

test("the dedup key is the slot's UTC instant, so the doubled local hour keeps two keys", (t) => {
  t.is(heartbeatDedupKey(at("2026-11-01T05:00:00Z")), "heartbeat:2026-11-01T05:00:00.000Z");
  t.not(heartbeatDedupKey(at("2026-11-01T05:00:00Z")), heartbeatDedupKey(at("2026-11-01T06:00:00Z")));
  t.deepEqual(heartbeatPulse(at("2026-11-01T06:00:00Z"), "America/New_York", true), {
    prompt: heartbeatPrompt(at("2026-11-01T06:00:00Z"), "America/New_York"),
    source: "heartbeat",
    priority: "normal",
    scheduledAt: "2026-11-01T06:00:00.000Z",
    runAt: at("2026-11-01T06:00:00Z"),
    dedupKey: "heartbeat:2026-11-01T06:00:00.000Z",
    backfilled: true,
  });
});

test("keep-alive slots are 4-hour periods aligned to the epoch, whatever the zone", (t) => {
  t.is(slotAtOrBefore(at("2026-06-15T03:59:59.999Z"), KEEPALIVE_EVERY_MS), at("2026-06-15T00:00:00Z"));
  t.is(slotAtOrBefore(at("2026-06-15T04:00:00Z"), KEEPALIVE_EVERY_MS), at("2026-06-15T04:00:00Z"));
  t.is(slotAtOrBefore(at("2026-06-15T23:10:00Z"), KEEPALIVE_EVERY_MS), at("2026-06-15T20:00:00Z"));
});

const ZONES = [
  "UTC",
  "America/New_York",
  "Europe/Berlin",
  "Asia/Kolkata",
  "Asia/Kathmandu",
  "Australia/Lord_Howe",
  "Pacific/Chatham",
  "America/St_Johns",
];

// Instants next to 2026 offset changes of the zones below, where the interesting cases are.
const TRANSITIONS = [
  "2026-03-08T07:00:00Z", // New York
  "2026-11-01T06:00:00Z",
  "2026-03-29T01:00:00Z", // Berlin
  "2026-10-25T01:00:00Z",
  "2026-10-03T15:30:00Z", // Lord Howe, 30 minutes
  "2026-04-04T15:00:00Z",
  "2026-09-26T14:00:00Z", // Chatham, at 02:45 local
  "2026-04-04T14:00:00Z",
  "2026-03-08T05:30:00Z", // St John's
  "2026-11-01T04:30:00Z",
].map(at);

// 2000–2040, half of them within 3 h of a transition. Every offset of these zones in that range is whole
// minutes, so local second 0 ⇔ UTC second 0.
const instant = fc.oneof(
  fc.integer({ min: at("2000-01-01T00:00:00Z"), max: at("2040-01-01T00:00:00Z") }),
  fc
    .tuple(fc.constantFrom(...TRANSITIONS), fc.integer({ min: -3 * HOUR_MS, max: 3 * HOUR_MS }))
    .map(([center, delta]) => center + delta),
);

test("property: the slot is ≤ t, at local hh:00:00, and no other slot lies in (slot, t]", (t) => {
  fc.assert(
    fc.property(instant, fc.constantFrom(...ZONES), (now, tz) => {
      const slot = hourlySlotAtOrBefore(now, tz);
      if (slot > now || now - slot >= 2 * HOUR_MS) return false;
      const local = localParts(slot, tz);
      if (local.minute !== 0 || local.second !== 0 || slot % 1000 !== 0) return false;
      // Brute force over every whole minute in (slot, now]: none reads hh:00 locally.
      for (let minute = slot + MINUTE; minute <= now; minute += MINUTE) {
        if (localParts(minute, tz).minute === 0) return false;
      }
      return hourlySlotAtOrBefore(slot, tz) === slot;
    }),
    fuzzParams(500),
  );
  t.pass();
});

test("property: slots around DST changes come once each, in order, an hour or so apart", (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom(...TRANSITIONS),
      fc.integer({ min: -3 * HOUR_MS, max: 3 * HOUR_MS }),
      fc.constantFrom(...ZONES),
      (center, delta, tz) => {
        const slots = hourlySlotsBetween(center + delta - 6 * HOUR_MS, center + delta, tz);
        for (let i = 1; i < slots.length; i++) {
          const gap = (slots[i] as number) - (slots[i - 1] as number);
          if (gap < HOUR_MS / 2 || gap > 2 * HOUR_MS) return false;
        }
        return slots.length >= 5 && slots.length <= 7;
      },
    ),
    fuzzParams(300),
  );
  t.pass();
});
