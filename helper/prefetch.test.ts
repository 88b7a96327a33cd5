import test from "ava";
import { choosePrefetch, DEFAULT_PREFETCH_BYTES, readPrefetchBytes } from "./prefetch.js";

const candidates = [
  { oid: "a", bytes: 100 },
  { oid: "b", bytes: 100 },
  { oid: "c", bytes: 500 },
  { oid: "d", bytes: 100 },
  { oid: "e", bytes: 100 },
];

test("choosePrefetch takes candidates in order, leaving out wanted and present ones", (t) => {
  const choice = choosePrefetch({
    candidates,
    wanted: new Set(["a"]),
    present: (oid) => oid === "d",
    budgetBytes: 10_000,
    maxBlobs: Infinity,
  });
  t.deepEqual(choice, { oids: ["b", "c", "e"], bytes: 700, complete: true });
});

test("choosePrefetch keeps to the byte budget, skipping what does not fit and taking smaller ones after it", (t) => {
  const choice = choosePrefetch({
    candidates,
    wanted: new Set(),
    present: () => false,
    budgetBytes: 350,
    maxBlobs: Infinity,
  });
  t.deepEqual(choice, { oids: ["a", "b", "d"], bytes: 300, complete: false }, "c did not fit");
});

test("choosePrefetch keeps to what a blob limit leaves, and a budget of 0 takes nothing", (t) => {
  const base = { candidates, wanted: new Set<string>(), present: () => false };
  t.deepEqual(choosePrefetch({ ...base, budgetBytes: 10_000, maxBlobs: 2 }), {
    oids: ["a", "b"],
    bytes: 200,
    complete: false,
  });
  t.true(
    choosePrefetch({ ...base, present: (oid) => !["a", "b"].includes(oid), budgetBytes: 10_000, maxBlobs: 2 })
      .complete,
    "the limit left out nothing the user lacks",
  );
  t.deepEqual(choosePrefetch({ ...base, budgetBytes: 10_000, maxBlobs: 0 }).oids, []);
  t.deepEqual(choosePrefetch({ ...base, budgetBytes: 0, maxBlobs: Infinity }).oids, []);
});

test("svc.prefetchBytes wins over SVC_PREFETCH_BYTES; both default to 32 MiB and are validated", (t) => {
  t.is(DEFAULT_PREFETCH_BYTES, 33_554_432);
  t.is(readPrefetchBytes(new Map(), {}), DEFAULT_PREFETCH_BYTES);
  t.is(readPrefetchBytes(new Map(), { SVC_PREFETCH_BYTES: "0" }), 0);
  t.is(readPrefetchBytes(new Map([["svc.prefetchbytes", "1000"]]), { SVC_PREFETCH_BYTES: "0" }), 1000);
  t.throws(() => readPrefetchBytes(new Map([["svc.prefetchbytes", "32M"]]), {}), {
    message:
      'git config svc.prefetchBytes "32M" is not a whole number (0 for no prefetch); use e.g. git config svc.prefetchBytes 33554432',
  });
  t.throws(() => readPrefetchBytes(new Map(), { SVC_PREFETCH_BYTES: "-1" }), {
    message:
      'SVC_PREFETCH_BYTES="-1" is not a whole number (0 for no prefetch); use e.g. SVC_PREFETCH_BYTES=33554432',
  });
});
