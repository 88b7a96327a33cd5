/**
 * The one reader of numeric settings: what it accepts, and for everything else the exact message, which
 * names the setting as the user wrote it (a variable or a `git config` key), the value, the form expected,
 * and a line to run instead.
 */
import test from "ava";
import { envCount, readCount, readDurationMs, SettingError } from "./settings.js";

test("readCount: unset or empty gives the fallback; digits within the bounds are the value", (t) => {
  t.is(readCount("SVC_BLOB_LIMIT", undefined, { fallback: 500 }), 500);
  t.is(readCount("SVC_BLOB_LIMIT", "", { fallback: 500 }), 500);
  t.is(readCount("SVC_BLOB_LIMIT", " 0 ", { fallback: 500 }), 0);
  t.is(readCount("SVC_BLOB_LIMIT", "12", { fallback: 500, min: 1, max: 12 }), 12);
  t.is(envCount("SVC_BULK_DELETE_LIMIT", { fallback: 5 }, { SVC_BULK_DELETE_LIMIT: "9" }), 9);
  t.is(envCount("SVC_BULK_DELETE_LIMIT", { fallback: 5 }, {}), 5);
});

const badCounts: readonly [
  string,
  string,
  { fallback: number; min?: number; max?: number; zero?: string },
  string,
][] = [
  [
    "SVC_BLOB_LIMIT",
    "5k",
    { fallback: 500, zero: "no limit" },
    'SVC_BLOB_LIMIT="5k" is not a whole number (0 for no limit); use e.g. SVC_BLOB_LIMIT=500',
  ],
  [
    "SVC_BLOB_LIMIT",
    "-1",
    { fallback: 500 },
    'SVC_BLOB_LIMIT="-1" is not a whole number; use e.g. SVC_BLOB_LIMIT=500',
  ],
  [
    "SVC_BLOB_LIMIT",
    "1e3",
    { fallback: 500 },
    'SVC_BLOB_LIMIT="1e3" is not a whole number; use e.g. SVC_BLOB_LIMIT=500',
  ],
  [
    "SVC_BLOB_LIMIT",
    "2.5",
    { fallback: 500 },
    'SVC_BLOB_LIMIT="2.5" is not a whole number; use e.g. SVC_BLOB_LIMIT=500',
  ],
  [
    "SVC_HTTP_MAX_RESPONSE_MIB",
    "0",
    { fallback: 32, min: 1, max: 1024 },
    'SVC_HTTP_MAX_RESPONSE_MIB="0" is not a whole number from 1 up to 1024; use e.g. SVC_HTTP_MAX_RESPONSE_MIB=32',
  ],
  [
    "git config svc.maxThings",
    "many",
    { fallback: 3 },
    'git config svc.maxThings "many" is not a whole number; use e.g. git config svc.maxThings 3',
  ],
];

for (const [name, raw, options, message] of badCounts) {
  test(`readCount refuses ${name}=${raw}`, (t) => {
    const error = t.throws(() => readCount(name, raw, options), { instanceOf: SettingError });
    t.is(error?.message, message);
    t.is(error?.code, "SVC_USAGE");
    t.deepEqual(error?.data, { setting: name, value: raw });
  });
}

test("readDurationMs: milliseconds are whole numbers; seconds may have decimals; unset gives the fallback", (t) => {
  const ms = { unit: "ms", fallbackMs: 30_000, minMs: 1, maxMs: 2 ** 31 - 1 } as const;
  t.is(readDurationMs("SVC_HTTP_TIMEOUT_MS", undefined, ms), 30_000);
  t.is(readDurationMs("SVC_HTTP_TIMEOUT_MS", "250", ms), 250);
  const s = { unit: "s", fallbackMs: 2000 } as const;
  t.is(readDurationMs("git config svc.syncInterval", "0", s), 0);
  t.is(readDurationMs("git config svc.syncInterval", "0.5", s), 500);
  t.is(readDurationMs("SVC_SYNC_INTERVAL", "600", s), 600_000);
});

const badDurations: readonly [string, string, Parameters<typeof readDurationMs>[2], string][] = [
  [
    "SVC_HTTP_TIMEOUT_MS",
    "30s",
    { unit: "ms", fallbackMs: 30_000, minMs: 1, maxMs: 2 ** 31 - 1 },
    'SVC_HTTP_TIMEOUT_MS="30s" is not a whole number of milliseconds from 1 up to 2147483647; use e.g. SVC_HTTP_TIMEOUT_MS=30000',
  ],
  [
    "SVC_HTTP_TIMEOUT_MS",
    "0",
    { unit: "ms", fallbackMs: 30_000, minMs: 1, maxMs: 2 ** 31 - 1 },
    'SVC_HTTP_TIMEOUT_MS="0" is not a whole number of milliseconds from 1 up to 2147483647; use e.g. SVC_HTTP_TIMEOUT_MS=30000',
  ],
  [
    "SVC_HTTP_TIMEOUT_MS",
    "2147483648",
    { unit: "ms", fallbackMs: 30_000, minMs: 1, maxMs: 2 ** 31 - 1 },
    'SVC_HTTP_TIMEOUT_MS="2147483648" is not a whole number of milliseconds from 1 up to 2147483647; use e.g. SVC_HTTP_TIMEOUT_MS=30000',
  ],
  [
    "git config svc.syncInterval",
    "2m",
    { unit: "s", fallbackMs: 2000 },
    'git config svc.syncInterval "2m" is not a number of seconds; use e.g. git config svc.syncInterval 2',
  ],
  [
    "SVC_SYNC_INTERVAL",
    "-1",
    { unit: "s", fallbackMs: 2000 },
    'SVC_SYNC_INTERVAL="-1" is not a number of seconds; use e.g. SVC_SYNC_INTERVAL=2',
  ],
  [
    "git config svc.reconcileInterval",
    "Infinity",
    { unit: "s", fallbackMs: 600_000 },
    'git config svc.reconcileInterval "Infinity" is not a number of seconds; use e.g. git config svc.reconcileInterval 600',
  ],
];

for (const [name, raw, options, message] of badDurations) {
  test(`readDurationMs refuses ${name}=${raw}`, (t) => {
    const error = t.throws(() => readDurationMs(name, raw, options), { instanceOf: SettingError });
    t.is(error?.message, message);
    t.is(error?.code, "SVC_USAGE");
  });
}
