import test from "ava";
import fc from "fast-check";
import { holds } from "../testing/fuzz.js";
import { formatCount } from "./count.js";

test("formatCount groups digits in threes with commas", (t) => {
  t.is(formatCount(0), "0");
  t.is(formatCount(999), "999");
  t.is(formatCount(1000), "1,000");
  t.is(formatCount(10_000), "10,000");
  t.is(formatCount(1_000_000), "1,000,000");
  t.is(formatCount(-1234567), "-1,234,567");
  t.is(formatCount(1.5), "1.5");
});

test("formatCount equals toLocaleString('en-US') for every safe integer", (t) => {
  holds(
    t,
    fc.property(
      fc.oneof(
        fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: -99_999, max: 99_999 }),
      ),
      (n) => formatCount(n) === n.toLocaleString("en-US"),
    ),
    200,
  );
});
