import test from "ava";
import { formatRate, formatRatio, renderTable } from "./table.js";

test("rates get thousands separators; small rates keep a decimal", (t) => {
  t.is(formatRate(12345.6), "12,346");
  t.is(formatRate(42.25), "42.3");
  t.is(formatRate(Number.NaN), "n/a");
});

test("a ratio against an empty baseline is n/a, not Infinity", (t) => {
  t.is(formatRatio(500, 1000), "0.50");
  t.is(formatRatio(500, 0), "n/a");
});

test("numeric columns are right-aligned, text columns left-aligned", (t) => {
  const text = renderTable(
    ["scenario", "req/s", "note"],
    [
      ["GET", "12,000", "ok"],
      ["PATCH one", "900", ""],
    ],
  );
  t.is(text, ["scenario    req/s  note", "GET        12,000  ok", "PATCH one     900", ""].join("\n"));
});
