/**
 * The one backoff function: each caller's numbers written out by hand (not computed with the code under
 * test), and properties over any exponent and random value: the delay stays within its jitter's bounds,
 * never exceeds the cap (plus an additive jitter), and its ceiling never shrinks as the exponent grows.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { type BackoffPolicy, backoffCeilingMs, backoffMs } from "./backoff.js";

const http: BackoffPolicy = { baseMs: 250, jitter: { kind: "add", maxMs: 250 } };
const listener: BackoffPolicy = { baseMs: 1000, capMs: 30_000, jitter: { kind: "down-to-half" } };
const queue: BackoffPolicy = { baseMs: 30_000, capMs: 30 * 60_000, jitter: { kind: "half-and-up" } };

const table: Array<[string, BackoffPolicy, number, number, number]> = [
  ["http first retry, random 0", http, 1, 0, 500],
  ["http first retry, random near 1", http, 1, 0.999, 749],
  ["http third retry, random 0.5", http, 3, 0.5, 2125],
  ["listener first failure, random 0", listener, 0, 0, 1000],
  ["listener third failure, random near 1", listener, 2, 0.999_999, 2000],
  ["listener capped, random 0", listener, 5, 0, 30_000],
  ["listener capped, random 0.5", listener, 5, 0.5, 22_500],
  ["listener huge exponent stays at the cap", listener, 1000, 0, 30_000],
  ["queue attempt 1, random 1", queue, 0, 1, 30_000],
  ["queue attempt 1, random 0", queue, 0, 0, 15_000],
  ["queue attempt 3, random 0.5", queue, 2, 0.5, 90_000],
  ["queue capped, random 1", queue, 10, 1, 1_800_000],
  ["queue negative exponent counts as 0", queue, -1, 1, 30_000],
];

for (const [name, policy, exponent, random, expected] of table) {
  test(`backoffMs: ${name}`, (t) => {
    t.is(
      backoffMs(exponent, policy, () => random),
      expected,
    );
  });
}

const policies = fc.record({
  baseMs: fc.integer({ min: 1, max: 100_000 }),
  capMs: fc.option(fc.integer({ min: 1, max: 10_000_000 }), { nil: undefined }),
  jitter: fc.oneof(
    fc.record({ kind: fc.constant("add" as const), maxMs: fc.integer({ min: 0, max: 10_000 }) }),
    fc.record({ kind: fc.constant("down-to-half" as const) }),
    fc.record({ kind: fc.constant("half-and-up" as const) }),
  ),
});
const randoms = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

test("backoffMs stays within its jitter's bounds and never exceeds the cap", (t) => {
  fc.assert(
    fc.property(policies, fc.integer({ min: -5, max: 200 }), randoms, (policy, exponent, random) => {
      const ceiling = backoffCeilingMs(exponent, policy);
      const delay = backoffMs(exponent, policy, () => random);
      if (policy.capMs !== undefined && ceiling > policy.capMs) return false;
      if (policy.jitter.kind === "add")
        return delay >= ceiling && delay < ceiling + Math.max(1, policy.jitter.maxMs);
      return delay >= Math.floor(ceiling / 2) && delay <= ceiling;
    }),
    fuzzParams(100),
  );
  t.pass();
});

test("the ceiling doubles until the cap and then stays there", (t) => {
  fc.assert(
    fc.property(policies, fc.integer({ min: 0, max: 100 }), (policy, exponent) => {
      const here = backoffCeilingMs(exponent, policy);
      const next = backoffCeilingMs(exponent + 1, policy);
      const cap = policy.capMs ?? Number.POSITIVE_INFINITY;
      return (
        next >= here && next <= cap && (here === cap || exponent >= 30 || next === Math.min(cap, here * 2))
      );
    }),
    fuzzParams(100),
  );
  t.pass();
});
