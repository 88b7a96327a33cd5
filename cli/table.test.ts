import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../testing/fuzz.js";
import { displayWidth, formatTable, tableCell } from "./table.js";

test("widths are terminal columns: wide CJK and emoji count two, combining marks none", (t) => {
  t.is(displayWidth("abc"), 3);
  t.is(displayWidth("日本語"), 6);
  t.is(displayWidth("e\u0301"), 1);
  t.is(displayWidth("🚀x"), 3);
  t.is(displayWidth("ｗｉｄｅ"), 8);
});

test("columns line up by display width", (t) => {
  const table = formatTable(
    ["KEY", "NAME", "URL"],
    [
      ["日本", "設計", "u1"],
      ["ABC", "Design", "u2"],
    ],
  );
  const lines = table.trimEnd().split("\n");
  const lastColumnAt = lines.map((line, row) =>
    displayWidth(line.slice(0, line.indexOf(["URL", "u1", "u2"][row] ?? ""))),
  );
  t.deepEqual(lastColumnAt, [14, 14, 14]);
});

test("control characters in untrusted cells cannot reach the terminal", (t) => {
  t.is(tableCell("red\u001b[31m alert\r\nnext\u0007"), "red\ufffd[31m alert next\ufffd");
  t.is(tableCell("rtl\u202eevil"), "rtl\ufffdevil");
  t.false(formatTable(["T"], [["\u001b]0;title\u0007"]]).includes("\u001b"));
});

test("widths count a grapheme cluster once: emoji sequences, skin tones, flags, CJK, combining marks", (t) => {
  const cases: readonly [string, string, number][] = [
    ["emoji", "\u{1f680}", 2],
    ["emoji with text presentation selector", "\u2764\ufe0f", 2],
    ["ZWJ family", "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}", 2],
    ["skin tone", "\u{1f44d}\u{1f3fd}", 2],
    ["ZWJ sequence with skin tone", "\u{1f469}\u{1f3fe}\u200d\u{1f4bb}", 2],
    ["flag", "\u{1f1ef}\u{1f1f5}", 2],
    ["CJK", "\u6f22\u5b57", 4],
    ["Hangul", "\ud55c\uae00", 4],
    ["fullwidth", "\uff21", 2],
    ["combining acute", "e\u0301", 1],
    ["stacked combining marks", "a\u0300\u0316\u0317", 1],
    ["zero-width space", "a\u200bb", 2],
    ["replacement character", "\ufffd", 1],
    ["ambiguous width counts narrow", "\u00b1\u2264", 2],
  ];
  for (const [name, text, width] of cases) t.is(displayWidth(text), width, name);
});

test("a ZWJ family and a skin tone in a cell keep the next column aligned", (t) => {
  const table = formatTable(
    ["WHO", "NOTE"],
    [
      ["\u{1f468}\u200d\u{1f469}\u200d\u{1f467}", "family"],
      ["\u{1f44d}\u{1f3fd}x", "thumbs"],
      ["ab", "plain"],
    ],
  );
  t.is(
    table,
    "WHO  NOTE\n\u{1f468}\u200d\u{1f469}\u200d\u{1f467}   family\n\u{1f44d}\u{1f3fd}x  thumbs\nab   plain\n",
  );
});

test("right-aligned columns pad at the start, the last one too; rows take the header's columns", (t) => {
  const table = formatTable(
    ["NAME", "N", "M"],
    [
      ["a", "1", "10"],
      ["bb", "100"],
      ["c", "2", "3", "extra"],
    ],
    { rightAligned: [false, true, true] },
  );
  t.is(table, "NAME    N   M\na       1  10\nbb    100\nc       2   3\n");
});

/** Graphemes whose widths differ: ASCII, CJK, emoji sequences, combining, ambiguous, a control, a tab. */
const GRAPHEMES = [
  "a",
  "Z",
  "\u6f22",
  "\uff21",
  "\u{1f680}",
  "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}",
  "\u{1f44d}\u{1f3fd}",
  "\u{1f1ef}\u{1f1f5}",
  "e\u0301",
  "\u00b1",
  "\u001b",
  "\t",
] as const;
const cellText = fc.array(fc.constantFrom(...GRAPHEMES), { maxLength: 6 }).map((parts) => parts.join(""));

test("property: in every row the last column starts at the same terminal column", (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(cellText, cellText, fc.constantFrom(...GRAPHEMES.slice(0, 8))), {
        minLength: 1,
        maxLength: 5,
      }),
      (rows) => {
        const lines = formatTable(["A", "B", "C"], rows).split("\n").slice(0, -1);
        const starts = lines.map((line, row) => {
          const last = tableCell(row === 0 ? "C" : (rows[row - 1]?.[2] ?? ""));
          return displayWidth(line) - displayWidth(last);
        });
        return starts.every((start) => start === starts[0]);
      },
    ),
    fuzzParams(100),
  );
  t.pass();
});
