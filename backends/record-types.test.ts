/**
 * The field types of issue 35 (backends/record.ts): a finite number, a YYYY-MM-DD date and read-only JSON on
 * one line; each renders to a line the parser reads back to the same value, and a wrong value is refused.
 */
import test from "ava";
import { field, parseRecordFile, RecordParseError, type RecordSchema, renderRecordFile } from "./record.js";

const SCHEMA: RecordSchema = {
  kind: "test",
  folder: "issues",
  fields: [
    field("points", "number", { nullable: true, omitWhenAbsent: true }),
    field("due", "date", { nullable: true, omitWhenAbsent: true }),
    field("raw", "json", { nullable: true, omitWhenAbsent: true }),
  ],
  tokenFields: { version: undefined, updatedAt: "updated_at" },
  fileName: (key) => `issues/${key}.md`,
};

const roundTrip = (fields: Record<string, string | number>) => {
  const text = renderRecordFile(SCHEMA, { fields, body: "" });
  return { text, parsed: parseRecordFile(SCHEMA, "x.md", text).fields };
};

test("number, date and json render to one line each and parse back", (t) => {
  const { text, parsed } = roundTrip({ points: 0.5, due: "2026-12-24", raw: '{"a":"it\'s","b":[1]}' });
  t.is(text, `---\npoints: 0.5\ndue: 2026-12-24\nraw: '{"a":"it''s","b":[1]}'\n---\n`);
  t.deepEqual(parsed, { points: 0.5, due: "2026-12-24", raw: '{"a":"it\'s","b":[1]}' });
  // JSON holding a character YAML must escape is double-quoted instead.
  const odd = roundTrip({ raw: '{"a":"\u0085"}' });
  t.regex(odd.text, /raw: "\{\\"a\\":\\"\\u0085\\"\}"/);
  t.is(odd.parsed.raw, '{"a":"\u0085"}');
  t.is(roundTrip({ points: 5 }).text, "---\npoints: 5\n---\n");
  t.is(roundTrip({ points: -1e21 }).parsed.points, -1e21);
});

test("a wrong value is refused naming the field and what it takes", (t) => {
  const parse = (line: string) => () => parseRecordFile(SCHEMA, "x.md", `---\n${line}\n---\n`);
  t.throws(parse("points: five"), { instanceOf: RecordParseError, message: /`points`.*\n.*a number/ });
  t.throws(parse("due: 2026-02-30"), { instanceOf: RecordParseError, message: /a date YYYY-MM-DD/ });
  t.throws(parse("due: 24.12.2026"), { instanceOf: RecordParseError, message: /a date YYYY-MM-DD/ });
  t.throws(parse("raw: '{oops'"), { instanceOf: RecordParseError, message: /read-only/ });
  t.is(parseRecordFile(SCHEMA, "x.md", "---\ndue: null\n---\n").fields.due, null);
});
