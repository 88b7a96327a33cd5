import test from "ava";
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
