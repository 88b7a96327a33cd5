import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { openPulseDb } from "./db.js";
import { type NewPulse, parseScheduledAt } from "./pulse-input.js";
import { PulseQueue } from "./queue.js";

function givenQueues(t: ExecutionContext, count = 1, start = Date.UTC(2026, 10, 22, 9)) {
  const dir = mkdtempSync(join(tmpdir(), "svc-queue-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "pulse.db");
  openPulseDb(path, { migrate: true, create: true }).close();
  const clock = { now: start };
  const queues = Array.from({ length: count }, () => {
    const db = openPulseDb(path, { migrate: false });
    t.teardown(() => db.close());
    return new PulseQueue(db, { now: () => clock.now, leaseMs: 600_000, retryBaseMs: 1000, random: () => 1 });
  });
  return { clock, queues, queue: queues[0] as PulseQueue };
}

function pulse(fields: Partial<NewPulse> = {}): NewPulse {
  return {
    prompt: "p",
    source: "test",
    priority: "normal",
    scheduledAt: "2026-11-22T09:00:00.000Z",
    runAt: Date.UTC(2026, 10, 22, 9),
    ...fields,
  };
}

test("a late finisher cannot overwrite a pulse whose lease was recovered and claimed again (fencing)", (t) => {
  const { clock, queue } = givenQueues(t);
  const { pulse: row } = queue.enqueue(pulse());
  const first = queue.claim("daemon-a");
  t.truthy(first);
  clock.now += 600_001;
  t.deepEqual(
    queue.recoverExpired().map((p) => p.id),
    [row.id],
  );
  const second = queue.claim("daemon-b");
  t.is(second?.pulse.attempt, 2);
  if (!first || !second) return;
  t.false(queue.finish(first, { kind: "completed", exitCode: 0, outputTail: "stale" }));
  t.false(queue.renew(first));
  t.false(queue.release(first, "stale", true));
  t.like(queue.get(row.id), { status: "processing", lease_token: second.token });
  t.true(queue.finish(second, { kind: "completed", exitCode: 0, outputTail: "fresh" }));
  t.like(queue.get(row.id), { status: "completed", output_tail: "fresh", attempt: 2 });
  t.deepEqual(
    queue.attempts(row.id).map((a) => a.outcome),
    ["lost", "completed"],
  );
});

test("two connections claiming at once never get the same pulse", (t) => {
  const { queues } = givenQueues(t, 2);
  const [a, b] = queues as [PulseQueue, PulseQueue];
  for (let i = 0; i < 50; i++) a.enqueue(pulse({ prompt: `p${i}` }));
  const claimed: number[] = [];
  for (let i = 0; i < 30; i++) {
    for (const queue of [a, b]) {
      const claim = queue.claim(queue === a ? "a" : "b");
      if (claim) claimed.push(claim.pulse.id);
    }
  }
  t.is(claimed.length, 50);
  t.is(new Set(claimed).size, 50);
});

test("claim order: priority, then due time, then id; future pulses wait", (t) => {
  const { clock, queue } = givenQueues(t);
  const now = clock.now;
  const ids = {
    low: queue.enqueue(pulse({ priority: "low", runAt: now - 5000 })).pulse.id,
    normalLate: queue.enqueue(pulse({ runAt: now - 1000 })).pulse.id,
    normalEarly: queue.enqueue(pulse({ runAt: now - 2000 })).pulse.id,
    critical: queue.enqueue(pulse({ priority: "critical", runAt: now })).pulse.id,
    future: queue.enqueue(pulse({ priority: "critical", runAt: now + 60_000 })).pulse.id,
  };
  const order: number[] = [];
  for (let claim = queue.claim("x"); claim; claim = queue.claim("x")) order.push(claim.pulse.id);
  t.deepEqual(order, [ids.critical, ids.normalEarly, ids.normalLate, ids.low]);
  clock.now += 60_000;
  t.is(queue.claim("x")?.pulse.id, ids.future);
});

test("retries back off exponentially on the same row; the attempt history is kept", (t) => {
  const { clock, queue } = givenQueues(t);
  const { pulse: row } = queue.enqueue(pulse({ maxAttempts: 3 }));
  const failure = {
    kind: "failed",
    exitCode: 1,
    signal: null,
    outputTail: "",
    error: "exited with 1",
  } as const;
  const runAts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const claim = queue.claim("x");
    if (!claim) return t.fail(`no claim at attempt ${i + 1}`);
    t.true(queue.finish(claim, failure));
    const after = queue.get(row.id);
    runAts.push((after?.run_at ?? 0) - clock.now);
    if (after?.status === "pending") {
      t.is(queue.claim("x"), undefined, "not due before its backoff");
      clock.now = after.run_at;
    }
  }
  t.deepEqual(runAts.slice(0, 2), [1000, 2000]);
  t.like(queue.get(row.id), { status: "failed", attempt: 3 });
  t.deepEqual(
    queue.attempts(row.id).map((a) => a.outcome),
    ["retry", "retry", "failed"],
  );
});

test("release with refund gives the attempt back; recovery at the last attempt fails the pulse", (t) => {
  const { clock, queue } = givenQueues(t);
  const { pulse: row } = queue.enqueue(pulse({ maxAttempts: 1 }));
  const claim = queue.claim("x");
  if (!claim) return t.fail();
  t.true(queue.release(claim, "runner could not start (ENOENT)", true));
  t.like(queue.get(row.id), { status: "pending", attempt: 0 });
  queue.claim("x");
  clock.now += 600_001;
  queue.recoverExpired();
  t.like(queue.get(row.id), { status: "failed", attempt: 1 });
});

test("orphans: pulses of an unregistered or dead daemon are recovered at once, a live one's are not", (t) => {
  const { queue } = givenQueues(t);
  const alive = queue.registerDaemon();
  const a = queue.enqueue(pulse({ prompt: "a" })).pulse.id;
  const b = queue.enqueue(pulse({ prompt: "b" })).pulse.id;
  queue.claim(alive);
  queue.claim("gone-daemon:1:abc");
  const me = queue.registerDaemon();
  t.deepEqual(
    queue.recoverOrphans(me).map((p) => p.id),
    [b],
  );
  t.is(queue.get(a)?.status, "processing");
  t.is(queue.get(b)?.status, "pending");
});

test("dedup: the same key returns the first pulse, even after it completed", (t) => {
  const { queue } = givenQueues(t);
  const first = queue.enqueue(pulse({ dedupKey: "k" }));
  t.true(first.created);
  const claim = queue.claim("x");
  if (claim) queue.finish(claim, { kind: "completed", exitCode: 0, outputTail: "" });
  const again = queue.enqueue(pulse({ dedupKey: "k", prompt: "other" }));
  t.false(again.created);
  t.is(again.pulse.id, first.pulse.id);
  t.is(again.pulse.prompt, "p");
});

test("retention: finished pulses older than the retention go with their attempts and dedup keys; others stay", (t) => {
  const { clock, queue } = givenQueues(t);
  const day = 86_400_000;
  const done = queue.enqueue(pulse({ dedupKey: "done" })).pulse;
  const doneClaim = queue.claim("x");
  if (doneClaim) queue.finish(doneClaim, { kind: "completed", exitCode: 0, outputTail: "" });
  const cancelled = queue.enqueue(pulse({ dedupKey: "cancelled" })).pulse;
  queue.cancel(cancelled.id);
  // Queued long ago and still waiting (scheduled far ahead): never purged, whatever its age.
  const waiting = queue.enqueue(pulse({ dedupKey: "waiting", runAt: Date.UTC(2027, 0, 1) })).pulse;
  const finishedAt = clock.now;

  clock.now = finishedAt + 30 * day;
  t.is(queue.purgeFinished(30 * day), 0, "exactly 30 days after: still kept");
  t.false(queue.enqueue(pulse({ dedupKey: "done", prompt: "again" })).created);

  clock.now = finishedAt + 30 * day + 1;
  t.is(queue.purgeFinished(30 * day), 2);
  t.is(queue.get(done.id), undefined);
  t.is(queue.get(cancelled.id), undefined);
  t.is(queue.get(waiting.id)?.status, "pending");
  const attempts = queue.db.prepare("SELECT count(*) AS n FROM pulse_attempts").get() as { n: number };
  t.is(attempts.n, 0);
  // The key is free again: the same dedup key makes a new pulse.
  const again = queue.enqueue(pulse({ dedupKey: "done", prompt: "again" }));
  t.true(again.created);
  t.not(again.pulse.id, done.id);
  t.false(queue.enqueue(pulse({ dedupKey: "waiting" })).created);
});

test("retention purges in batches until none is left", (t) => {
  const { clock, queue } = givenQueues(t);
  for (let i = 0; i < 7; i++) {
    queue.enqueue(pulse({ dedupKey: `k${i}` }));
    const claim = queue.claim("x");
    if (claim)
      queue.finish(claim, {
        kind: "failed",
        exitCode: 1,
        signal: null,
        outputTail: "",
        error: "no",
        permanent: true,
      });
  }
  clock.now += 2 * 86_400_000;
  t.is(queue.purgeFinished(86_400_000, 3), 7);
  t.is((queue.db.prepare("SELECT count(*) AS n FROM pulses").get() as { n: number }).n, 0);
});

test("scheduled_at forms: now, RFC 3339 with a zone, relative; naive and impossible times refused", (t) => {
  const now = Date.UTC(2026, 10, 22, 9);
  t.is(parseScheduledAt("now", now), now);
  t.is(parseScheduledAt("NOW", now), now);
  t.is(parseScheduledAt("+15m", now), now + 900_000);
  t.is(parseScheduledAt("+2h", now), now + 7_200_000);
  t.is(parseScheduledAt("+1d", now), now + 86_400_000);
  t.is(parseScheduledAt("2026-11-22T10:00:00+01:00", now), now);
  t.is(parseScheduledAt("2026-11-22T09:00:00.5Z", now), now + 500);
  t.throws(() => parseScheduledAt("2026-11-22T09:00:00", now), { message: /no time zone/ });
  t.throws(() => parseScheduledAt("2026-13-01T00:00:00Z", now), { message: /not a real date/ });
  t.throws(() => parseScheduledAt("+400d", now), { message: /more than a year/ });
  t.throws(() => parseScheduledAt("in an hour", now), { message: /RFC 3339/ });
  // The other forms of the one time grammar (core/time-arg.ts).
  t.is(parseScheduledAt("+2h 30m", now), now + 9_000_000);
  t.is(parseScheduledAt("in 2 hours", now), now + 7_200_000);
  t.is(parseScheduledAt("3 hours ago", now), now - 10_800_000);
  t.is(parseScheduledAt(`@${now / 1000}`, now), now);
  t.throws(() => parseScheduledAt("2026-11-22 09:00", now), {
    message: /no time zone; add Z or an offset, e.g. "2026-11-22T09:00:00Z"/,
  });
  t.throws(() => parseScheduledAt("2026-11-22", now), { message: /no time zone/ });
});
