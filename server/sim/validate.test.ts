/**
 * What the simulator accepts from clients (DESIGN.md §5), as tables and properties over the pure
 * validators: issue ids, slugs, `If-Match`, `since` and request bodies. The HTTP tests in app.test.ts check
 * the same rules end to end; these pin the edges.
 */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../../testing/fuzz.js";
import {
  InvalidRequest,
  isValidSlug,
  LIMITS,
  parseIfMatch,
  parseIssueId,
  parseIssueInput,
  parseSince,
} from "./validate.js";

test("parseIssueId takes positive decimal safe integers only", (t) => {
  const table: [string, number | undefined][] = [
    ["1", 1],
    ["42", 42],
    ["9007199254740991", 9007199254740991],
    ["9007199254740992", undefined],
    ["99999999999999999999", undefined],
    ["0", undefined],
    ["01", undefined],
    ["-1", undefined],
    ["+1", undefined],
    ["1e3", undefined],
    ["1e309", undefined],
    ["1.0", undefined],
    ["0x10", undefined],
    [" 1", undefined],
    ["1 ", undefined],
    ["", undefined],
    ["١", undefined],
    ["Infinity", undefined],
  ];
  for (const [segment, expected] of table) t.is(parseIssueId(segment), expected, JSON.stringify(segment));
});

test("property: parseIssueId reads back every positive safe integer it is given in decimal", (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      (id) => parseIssueId(String(id)) === id,
    ),
    fuzzParams(100),
  );
  t.pass();
});

test("isValidSlug refuses anything that could leave the project namespace", (t) => {
  for (const slug of ["demo", "a", "A-b_c.d", "x".repeat(64), "v1.2"]) t.true(isValidSlug(slug), slug);
  for (const slug of [
    "",
    "..",
    "../..",
    "a..b",
    ".hidden",
    "-dash",
    "_under",
    "a/b",
    "a\\b",
    "a b",
    "a\u0000",
    "x".repeat(65),
    "é",
    "%2e%2e",
  ]) {
    t.false(isValidSlug(slug), JSON.stringify(slug));
  }
});

test("parseIfMatch: quoted or bare version, * or absent as wildcard, anything else refused", (t) => {
  const accepted: [string | undefined, number | undefined][] = [
    [undefined, undefined],
    ["*", undefined],
    [" * ", undefined],
    ['"3"', 3],
    ["3", 3],
    [' "3" ', 3],
    ['"0"', 0],
    ['"007"', 7],
    ['"999999999999999"', 999999999999999],
  ];
  for (const [header, expected] of accepted) t.is(parseIfMatch(header), expected, String(header));
  for (const header of [
    "",
    '""',
    'W/"3"',
    '"3',
    '3"',
    "'3'",
    '"3", "4"',
    "3,4",
    "-1",
    "1.5",
    "1e3",
    "0x3",
    "abc",
    '"*"',
    "**",
    '"9999999999999999"',
  ]) {
    const error = t.throws(() => parseIfMatch(header), { instanceOf: InvalidRequest }, header);
    t.deepEqual(error?.details, { header: "If-Match" });
  }
});

test("parseSince normalizes RFC 3339 to UTC with milliseconds", (t) => {
  const table: [string, string][] = [
    ["2026-01-31T12:00:00Z", "2026-01-31T12:00:00.000Z"],
    ["2026-01-31T12:00:00.5Z", "2026-01-31T12:00:00.500Z"],
    ["2026-01-31T12:00:00.123456789Z", "2026-01-31T12:00:00.123Z"],
    ["2026-01-31t12:00:00z", "2026-01-31T12:00:00.000Z"],
    ["2026-01-31T13:30:00+01:30", "2026-01-31T12:00:00.000Z"],
    ["2026-01-31T07:00:00-05:00", "2026-01-31T12:00:00.000Z"],
    ["2026-01-31T13:00:00 01:00", "2026-01-31T12:00:00.000Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"],
    ["2000-02-29T00:00:00Z", "2000-02-29T00:00:00.000Z"],
    ["0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
    // Offsets that leave four-digit years are clamped, so text comparison stays right.
    ["0000-01-01T00:00:00+01:00", "0000-01-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59-01:00", "9999-12-31T23:59:59.999Z"],
  ];
  for (const [raw, expected] of table) t.is(parseSince(raw), expected, raw);
});

test("parseSince refuses what is not a real RFC 3339 instant", (t) => {
  for (const raw of [
    "",
    "now",
    "2026-01-31",
    "2026-01-31T12:00Z",
    "2026-01-31T12:00:00",
    "2026-01-31 12:00:00Z",
    "2026-1-31T12:00:00Z",
    "2026-01-31T12:00:00+0100",
    "2026-01-31T12:00:00+01",
    "2026-01-31T12:00:00.Z",
    "2026-00-10T00:00:00Z",
    "2026-13-10T00:00:00Z",
    "2026-01-00T00:00:00Z",
    "2026-01-32T00:00:00Z",
    "2026-02-29T00:00:00Z",
    "2100-02-29T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-01-31T24:00:00Z",
    "2026-01-31T23:60:00Z",
    "2026-01-31T23:59:61Z",
    "2026-01-31T12:00:00+24:00",
    "+02026-01-31T12:00:00Z",
    "1769860800000",
  ]) {
    const error = t.throws(() => parseSince(raw), { instanceOf: InvalidRequest }, raw);
    t.is(error?.details.parameter, "since", raw);
  }
});

test("property: parseSince of an instant's ISO form is that form, and order of instants is order of text", (t) => {
  const instant = fc.date({
    min: new Date("0000-01-01T00:00:00.000Z"),
    max: new Date("9999-12-31T23:59:59.999Z"),
    noInvalidDate: true,
  });
  const offset = fc.record({
    sign: fc.constantFrom("+", "-"),
    hours: fc.integer({ min: 0, max: 23 }),
    minutes: fc.integer({ min: 0, max: 59 }),
  });
  fc.assert(
    fc.property(instant, instant, offset, (a, b, { sign, hours, minutes }) => {
      const iso = a.toISOString();
      if (parseSince(iso) !== iso) return false;
      // The same instant written with an offset (when that stays within four-digit years).
      const shift = (sign === "+" ? 1 : -1) * (hours * 60 + minutes) * 60_000;
      const local = new Date(a.getTime() + shift).toISOString();
      if (/^\d{4}-/.test(local)) {
        const pad = (n: number) => String(n).padStart(2, "0");
        const written = `${local.slice(0, 23)}${sign}${pad(hours)}:${pad(minutes)}`;
        if (parseSince(written) !== iso) return false;
      }
      const [sa, sb] = [parseSince(a.toISOString()), parseSince(b.toISOString())];
      const textOrder = sa < sb ? -1 : sa > sb ? 1 : 0;
      return Math.sign(a.getTime() - b.getTime()) === textOrder;
    }),
    fuzzParams(500),
  );
  t.pass();
});

test("parseIssueInput accepts the writable fields with the right types", (t) => {
  t.deepEqual(
    parseIssueInput(
      { title: "t", status: "wont_fix", labels: ["a", "b"], body: "", assignee: null },
      "create",
    ),
    { title: "t", status: "wont_fix", labels: ["a", "b"], body: "", assignee: null },
  );
  t.deepEqual(parseIssueInput({ status: "in_review" }, "update"), { status: "in_review" });
  t.deepEqual(parseIssueInput({ labels: [] }, "update"), { labels: [] });
  const max = Array.from({ length: LIMITS.labelCount }, (_, i) => `l${i}`);
  t.deepEqual(parseIssueInput({ title: "t", labels: max }, "create").labels, max);
});

test("parseIssueInput refuses server-controlled, unknown, missing and mistyped fields", (t) => {
  const table: [unknown, "create" | "update", string | undefined][] = [
    [null, "create", undefined],
    [[], "create", undefined],
    ["t", "create", undefined],
    [{}, "create", "title"],
    [{}, "update", undefined],
    [{ id: 1, title: "t" }, "create", "id"],
    [{ version: 1 }, "update", "version"],
    [{ created_at: "2026-01-01T00:00:00.000Z" }, "update", "created_at"],
    [{ updated_at: "2026-01-01T00:00:00.000Z" }, "update", "updated_at"],
    [{ title: "t", Title: "t" }, "create", "Title"],
    [{ title: "t", frontmatter: {} }, "create", "frontmatter"],
    [JSON.parse('{"title":"t","__proto__":{}}'), "create", "__proto__"],
    [{ title: 1 }, "create", "title"],
    [{ title: " " }, "update", "title"],
    [{ title: "x".repeat(LIMITS.titleLength + 1) }, "create", "title"],
    [{ title: "a\ud800" }, "create", "title"],
    [{ status: "closed" }, "update", "status"],
    [{ status: null }, "update", "status"],
    [{ labels: null }, "update", "labels"],
    [{ labels: [1] }, "update", "labels"],
    [{ labels: [" "] }, "update", "labels"],
    [{ labels: ["x".repeat(LIMITS.labelLength + 1)] }, "update", "labels"],
    [{ labels: Array.from({ length: LIMITS.labelCount + 1 }, () => "l") }, "update", "labels"],
    [{ labels: Array.from({ length: 10_000 }, () => "l") }, "update", "labels"],
    [{ labels: ["\udc00"] }, "update", "labels"],
    [{ body: 1 }, "update", "body"],
    [{ body: "x\udfffy" }, "update", "body"],
    [{ assignee: "" }, "update", "assignee"],
    [{ assignee: ["a"] }, "update", "assignee"],
    [{ assignee: "\ud83d" }, "update", "assignee"],
  ];
  for (const [value, mode, field] of table) {
    const label = `${mode} ${JSON.stringify(value)?.slice(0, 60)}`;
    const error = t.throws(() => parseIssueInput(value, mode), { instanceOf: InvalidRequest }, label);
    if (field !== undefined) t.is(error?.details.field, field, label);
  }
});

test("property: well-formed text in the writable string fields is kept as sent", (t) => {
  fc.assert(
    fc.property(
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 50 }).filter((s) => s.trim() !== ""),
      fc.string({ unit: "grapheme", maxLength: 200 }),
      (title, body) => {
        const input = parseIssueInput({ title, body }, "create");
        return input.title === title && input.body === body;
      },
    ),
    fuzzParams(100),
  );
  t.pass();
});
