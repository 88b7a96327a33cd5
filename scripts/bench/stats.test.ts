import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../../testing/fuzz.js";
import { median } from "./stats.js";

test("median: the middle value in numeric order, the upper middle of an even count, NaN for none", (t) => {
  const cases: readonly [readonly number[], number][] = [
    [[5], 5],
    [[3, 1, 2], 2],
    [[10, 9, 100], 10],
    [[4, 1, 3, 2], 3],
    [[], Number.NaN],
  ];
  for (const [values, expected] of cases) t.is(median(values), expected, JSON.stringify(values));
});

test("property: the median is one of the values, with at least half of them on each side", (t) => {
  fc.assert(
    fc.property(fc.array(fc.double({ noNaN: true }), { minLength: 1 }), (values) => {
      const m = median(values);
      const below = values.filter((v) => v <= m).length;
      const above = values.filter((v) => v >= m).length;
      return values.includes(m) && below * 2 >= values.length && above * 2 >= values.length;
    }),
    fuzzParams(100),
  );
  t.pass();
});
