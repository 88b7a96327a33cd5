import { isDeepStrictEqual } from "node:util";
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { isLoopbackHost, isObject, jsonEqual, RFC3339, rfc3339Pattern } from "./checks.js";

test("isObject: plain objects only", (t) => {
  const cases: readonly [unknown, boolean][] = [
    [{}, true],
    [{ a: 1 }, true],
    [Object.create(null), true],
    [[], false],
    [null, false],
    [undefined, false],
    ["{}", false],
    [1, false],
    [true, false],
  ];
  for (const [value, expected] of cases) t.is(isObject(value), expected, JSON.stringify(value));
});

test("isLoopbackHost: localhost, ::1 in either spelling, 127.0.0.0/8; nothing else", (t) => {
  const cases: readonly [string, boolean][] = [
    ["localhost", true],
    ["::1", true],
    ["[::1]", true],
    ["127.0.0.1", true],
    ["127.255.255.254", true],
    ["LOCALHOST", false],
    ["localhost.example.com", false],
    ["128.0.0.1", false],
    ["127.0.0.1.example.com", false],
    ["127.0000.0.1", false],
    ["[::2]", false],
    ["0.0.0.0", false],
    ["", false],
  ];
  for (const [host, expected] of cases) t.is(isLoopbackHost(host), expected, host);
});

test("isLoopbackHost agrees with what URL.hostname writes for any IPv4 address", (t) => {
  fc.assert(
    fc.property(fc.ipV4(), (address) => {
      const hostname = new URL(`http://${address}:1/`).hostname;
      return isLoopbackHost(hostname) === address.startsWith("127.");
    }),
    fuzzParams(100),
  );
  t.true(isLoopbackHost(new URL("http://[::1]:7878/").hostname));
  t.true(isLoopbackHost(new URL("http://127.1/").hostname));
});

test("RFC3339 (strict): upper-case T and Z, at most nine fraction digits, Z or an offset", (t) => {
  const cases: readonly [string, boolean][] = [
    ["2026-01-31T12:00:00Z", true],
    ["2026-01-31T12:00:00.000Z", true],
    ["2026-01-31T12:00:00.123456789+05:30", true],
    ["2026-01-31T12:00:00-04:00", true],
    ["2026-02-30T25:61:61Z", true], // shape only
    ["2026-01-31T12:00:00.1234567890Z", false],
    ["2026-01-31t12:00:00Z", false],
    ["2026-01-31T12:00:00z", false],
    ["2026-01-31 12:00:00Z", false],
    ["2026-01-31T12:00:00", false],
    ["2026-01-31T12:00Z", false],
    ["2026-01-31T12:00:00.Z", false],
    ["2026-01-31T12:00:00+0530", false],
    ["2026-01-31T12:00:00Z\n", false],
  ];
  for (const [text, expected] of cases) t.is(RFC3339.test(text), expected, text);
});

test("rfc3339Pattern captures year to second as groups 1-6", (t) => {
  const match = rfc3339Pattern({ lowerCase: true }).exec("2026-11-22t09:08:07.5+01:00");
  t.deepEqual(match?.slice(1, 7), ["2026", "11", "22", "09", "08", "07"]);
});

// The patterns each caller wrote before they shared one; the built patterns must accept exactly the same.
const BEFORE = [
  {
    name: "records and the sim and wiki backends (strict)",
    old: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/,
    built: RFC3339,
  },
  {
    name: "simulator `since` (lower case, any fraction length)",
    old: /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
    built: rfc3339Pattern({ lowerCase: true, maxFractionDigits: Number.POSITIVE_INFINITY }),
  },
  {
    name: "pulse `scheduled_at` (lower case, space separator)",
    old: /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/,
    built: rfc3339Pattern({ lowerCase: true, spaceSeparator: true }),
  },
] as const;

/** Strings near the RFC 3339 shape: a valid stamp with a few characters swapped, dropped or added. */
const nearTimestamp = fc
  .tuple(
    fc.constantFrom(
      "2026-01-31T12:00:00Z",
      "2026-01-31t12:00:00.123456789z",
      "0000-12-31 23:59:60.1234567890+05:30",
    ),
    fc.array(
      fc.tuple(
        fc.nat(40),
        fc.constantFrom("", "0", "9", "T", "t", " ", "Z", "z", ".", ":", "-", "+", "\n", "x", "00"),
        fc.boolean(),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([base, edits]) =>
    edits.reduce<string>(
      (text, [at, insert, replace]) => text.slice(0, at) + insert + text.slice(replace ? at + 1 : at),
      base,
    ),
  );

for (const { name, old, built } of BEFORE) {
  test(`rfc3339Pattern accepts what its caller's own pattern accepted: ${name}`, (t) => {
    fc.assert(
      fc.property(nearTimestamp, (text) => {
        const before = old.exec(text);
        const after = built.exec(text);
        if (before === null || after === null) return before === after;
        // The strict pattern captured nothing; the others captured year to second as groups 1-6.
        return before.length === 1 || after.slice(1, 7).join() === before.slice(1, 7).join();
      }),
      fuzzParams(5000),
    );
    t.pass();
  });
}

test("jsonEqual answers as util.isDeepStrictEqual for JSON values, member order ignored", (t) => {
  const json = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);
  /** The same value with each object's members in reverse order. */
  const reordered = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(reordered)
      : value !== null && typeof value === "object"
        ? Object.fromEntries(
            Object.entries(value)
              .reverse()
              .map(([key, item]) => [key, reordered(item)]),
          )
        : value;
  fc.assert(
    fc.property(
      json,
      json,
      (a, b) => jsonEqual(a, b) === isDeepStrictEqual(a, b) && jsonEqual(a, reordered(a)) && jsonEqual(a, a),
    ),
    fuzzParams(500),
  );
  t.true(jsonEqual({ a: [1, { b: null }], c: "x" }, { c: "x", a: [1, { b: null }] }));
  t.false(jsonEqual({ a: 1 }, { a: 1, b: undefined }));
  t.false(jsonEqual([1], { 0: 1 }));
  t.false(jsonEqual(null, {}));
});
