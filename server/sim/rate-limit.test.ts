/**
 * The rate limit (Document 1 "Limits" 1; DESIGN.md §5): a token bucket per `X-Svc-Agent` with rate and
 * burst `--rate-limit`, one shared bucket for requests without the header, `Retry-After` in whole seconds
 * (at least 1), `/healthz` exempt but audited, and 429s audited. The bucket arithmetic runs on a fake clock;
 * the server tests only rely on orderings that no scheduling delay can change.
 */
import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import { fuzzParams } from "../../testing/fuzz.js";
import { givenSim } from "../../testing/sim.js";
import { assertEnvelope, callSim, responseSummary, type SimResponse } from "../../testing/sim-http.js";
import { RateLimiter } from "./rate-limit.js";

function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let now = 1_000_000;
  return { now: () => now, advance: (ms) => (now += ms) };
}

test("a bucket allows its burst, then refuses with Retry-After until a token is back", (t) => {
  const clock = fakeClock();
  const limiter = new RateLimiter(3, clock.now);
  for (let i = 0; i < 3; i++) t.deepEqual(limiter.take("a"), { allowed: true });
  t.deepEqual(limiter.take("a"), { allowed: false, retryAfterSeconds: 1 });
  clock.advance(300);
  t.false(limiter.take("a").allowed);
  clock.advance(34);
  t.true(limiter.take("a").allowed);
  t.false(limiter.take("a").allowed);
  // Idle time refills up to the burst, not beyond.
  clock.advance(60_000);
  for (let i = 0; i < 3; i++) t.true(limiter.take("a").allowed);
  t.false(limiter.take("a").allowed);
});

test("buckets are per agent; the empty agent is one shared anonymous bucket", (t) => {
  const limiter = new RateLimiter(2, fakeClock().now);
  t.true(limiter.take("a").allowed);
  t.true(limiter.take("a").allowed);
  t.false(limiter.take("a").allowed);
  t.true(limiter.take("b").allowed);
  t.true(limiter.take("").allowed);
  t.true(limiter.take("").allowed);
  t.false(limiter.take("").allowed);
  t.true(limiter.take("b").allowed);
  t.false(limiter.take("b").allowed);
});

test("Retry-After rounds up to whole seconds at slow rates", (t) => {
  const clock = fakeClock();
  const limiter = new RateLimiter(0.25, clock.now);
  // Below one request per second the burst is still one request.
  t.true(limiter.take("a").allowed);
  t.deepEqual(limiter.take("a"), { allowed: false, retryAfterSeconds: 4 });
  clock.advance(1000);
  t.deepEqual(limiter.take("a"), { allowed: false, retryAfterSeconds: 3 });
  clock.advance(3000);
  t.true(limiter.take("a").allowed);
});

test("a rate of 0 turns the limit off", (t) => {
  const limiter = new RateLimiter(0, fakeClock().now);
  for (let i = 0; i < 1000; i++) t.true(limiter.take("a").allowed);
});

test("property: Retry-After is a whole number >= 1, waiting it out is enough, and no window passes more than burst + rate × time", (t) => {
  fc.assert(
    fc.property(
      fc.double({ min: 0.1, max: 500, noNaN: true }),
      fc.array(fc.record({ wait: fc.integer({ min: 0, max: 3000 }), agent: fc.constantFrom("a", "b", "") }), {
        maxLength: 200,
      }),
      (rate, steps) => {
        const clock = fakeClock();
        const limiter = new RateLimiter(rate, clock.now);
        const start = clock.now();
        const allowed = new Map<string, number>();
        for (const step of steps) {
          clock.advance(step.wait);
          const decision = limiter.take(step.agent);
          if (decision.allowed) {
            allowed.set(step.agent, (allowed.get(step.agent) ?? 0) + 1);
          } else {
            if (!Number.isInteger(decision.retryAfterSeconds) || decision.retryAfterSeconds < 1) return false;
            clock.advance(decision.retryAfterSeconds * 1000);
            if (!limiter.take(step.agent).allowed) return false;
            allowed.set(step.agent, (allowed.get(step.agent) ?? 0) + 1);
          }
        }
        const elapsedSeconds = (clock.now() - start) / 1000;
        for (const count of allowed.values()) {
          if (count > Math.max(1, rate) + rate * elapsedSeconds + 1e-6) return false;
        }
        return true;
      },
    ),
    fuzzParams(100),
  );
  t.pass();
});

// ---------------------------------------------------------------------------------------------------------
// Through the server. A burst of concurrent requests lands within far less time than refills the bucket of
// a slow rate, so "some were refused" holds however slow the machine is.

function assertRateLimited(t: ExecutionContext, response: SimResponse): void {
  const envelope = assertEnvelope(t, response, 429, "rate_limited");
  const retryAfter = response.headers["retry-after"] ?? "";
  t.regex(retryAfter, /^[1-9][0-9]*$/);
  t.deepEqual(envelope.details, { retry_after: Number(retryAfter) });
}

test("an agent over its quota gets 429 with Retry-After; another agent is unaffected", async (t) => {
  const sim = await givenSim(t, { rateLimit: 1 });
  const burst = await Promise.all(
    Array.from({ length: 20 }, () => callSim(sim.url, "GET", "/projects", { agent: "loop-1" })),
  );
  const refused = burst.filter((r) => r.status === 429);
  t.true(refused.length >= 1 && refused.length < 20, `${refused.length} of 20 refused`);
  t.true(burst.every((r) => r.status === 200 || r.status === 429));
  for (const response of refused) assertRateLimited(t, response);
  // Another agent has its own, full bucket.
  t.is((await callSim(sim.url, "GET", "/projects", { agent: "loop-2" })).status, 200);
});

test("requests without X-Svc-Agent share one anonymous bucket", async (t) => {
  const sim = await givenSim(t, { rateLimit: 1 });
  const burst = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      callSim(sim.url, "GET", "/projects", i % 2 === 0 ? {} : { agent: "" }),
    ),
  );
  const refused = burst.filter((r) => r.status === 429);
  t.true(refused.length >= 1, "20 anonymous requests at 1 per second all passed");
  for (const response of refused) assertRateLimited(t, response);
  t.is((await callSim(sim.url, "GET", "/projects", { agent: "named" })).status, 200);
});

test("/healthz is exempt from the limit but audited", async (t) => {
  const sim = await givenSim(t, { rateLimit: 1 });
  await Promise.all(Array.from({ length: 5 }, () => callSim(sim.url, "GET", "/projects", { agent: "a" })));
  const health = await Promise.all(
    Array.from({ length: 30 }, () => callSim(sim.url, "GET", "/healthz", { agent: "a" })),
  );
  t.true(health.every((r) => r.status === 200 && r.text === "ok"));
  t.is(sim.store.auditRows().filter((row) => row.path === "/healthz").length, 30);
});

test("every 429 leaves its audit row", async (t) => {
  const sim = await givenSim(t, { rateLimit: 1 });
  const burst = await Promise.all(
    Array.from({ length: 15 }, (_, i) =>
      callSim(sim.url, "POST", "/projects/p/issues", { json: { title: `t${i}` }, agent: "writer" }),
    ),
  );
  const rows = sim.store.auditRows();
  t.is(rows.length, 15);
  const refused = burst.filter((r) => r.status === 429);
  t.true(refused.length >= 1);
  t.is(rows.filter((row) => row.status === 429).length, refused.length);
  t.deepEqual(
    rows.map((row) => row.response_summary).sort(),
    burst.map((r) => responseSummary(r.status, r.bytes)).sort(),
  );
  for (const row of rows) t.is(row.agent_id, "writer");
  // A refused POST created nothing.
  const issues = (await callSim(sim.url, "GET", "/projects/p/issues", { agent: "reader" })).json<unknown[]>();
  t.is(issues.length, burst.filter((r) => r.status === 201).length);
});
