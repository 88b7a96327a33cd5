/** How testing/fuzz.ts reads its three variables, and that a bad value is a SettingError, not a shorter run. */
import test from "ava";
import { SettingError } from "../core/settings.js";
import { FUZZ_FACTOR, fuzzParams, fuzzRuns, fuzzSeed } from "./fuzz.js";

test("the base count normally, FUZZ_FACTOR times it under SVC_FUZZ=1, SVC_FUZZ_RUNS for every property", (t) => {
  t.is(fuzzRuns(40, {}), 40);
  t.is(fuzzRuns(40, { SVC_FUZZ: "0" }), 40);
  t.is(fuzzRuns(40, { SVC_FUZZ: "1" }), 40 * FUZZ_FACTOR);
  t.is(fuzzRuns(40, { SVC_FUZZ: "1", SVC_FUZZ_RUNS: "3" }), 3);
  t.is(fuzzRuns(5000, { SVC_FUZZ_RUNS: "1" }), 1);
});

test("SVC_FUZZ_SEED gives every property that seed, negative ones too; unset leaves fast-check's own", (t) => {
  t.is(fuzzSeed({}), undefined);
  t.is(fuzzSeed({ SVC_FUZZ_SEED: "-1062623640" }), -1062623640);
  t.deepEqual(fuzzParams(10, { SVC_FUZZ_SEED: "42" }), { numRuns: 10, seed: 42 });
  t.deepEqual(fuzzParams(10, {}), { numRuns: 10 });
});

test("a bad value names the variable and a value to use", (t) => {
  t.throws(() => fuzzRuns(1, { SVC_FUZZ: "yes" }), {
    instanceOf: SettingError,
    message: 'SVC_FUZZ="yes" is not a whole number up to 1; use e.g. SVC_FUZZ=0',
  });
  t.throws(() => fuzzRuns(1, { SVC_FUZZ_RUNS: "0" }), {
    instanceOf: SettingError,
    message: /^SVC_FUZZ_RUNS="0"/,
  });
  t.throws(() => fuzzSeed({ SVC_FUZZ_SEED: "1e3" }), {
    instanceOf: SettingError,
    message:
      'SVC_FUZZ_SEED="1e3" is not a whole number as fast-check prints its seeds; use e.g. SVC_FUZZ_SEED=42',
  });
});
