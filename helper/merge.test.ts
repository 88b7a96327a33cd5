/**
 * The three-way record merge behind `svc.autoMerge` (DESIGN.md §4): frontmatter field by field, the body line
 * by line. Edits of different fields or different lines merge; different edits of the same field or the same
 * lines are a conflict (undefined), never a silent pick of one side.
 */
import test from "ava";
import fc from "fast-check";
import type { RecordContent, RecordFields } from "../backends/record.js";
import { SIM_SCHEMA } from "../backends/sim/schema.js";
import { fuzzParams } from "../testing/fuzz.js";
import { mergeBody, mergeRecord } from "./merge.js";

const FIELDS = {
  id: 42,
  title: "Fix login",
  status: "open",
  labels: ["bug"],
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-02T00:00:00.000Z",
  version: 3,
} as const satisfies RecordFields;

const BODY = "one\ntwo\nthree\nfour\nfive\n";

function content(
  fields: Partial<Record<keyof typeof FIELDS | "assignee", unknown>>,
  body = BODY,
): RecordContent {
  return { fields: { ...FIELDS, ...fields } as RecordFields, body };
}

/** What the merge keeps: the writable fields (server-controlled ones are never part of a write). */
function writable(fields: RecordFields): RecordFields {
  const { id: _id, created_at: _c, updated_at: _u, version: _v, ...rest } = fields;
  return rest;
}

const RECORD_CASES: readonly {
  readonly name: string;
  readonly base: RecordContent;
  readonly ours: RecordContent;
  readonly theirs: RecordContent;
  /** undefined: a conflict. */
  readonly expected: RecordContent | undefined;
}[] = [
  {
    name: "different fields merge",
    base: content({}),
    ours: content({ status: "done" }),
    theirs: content({ title: "Fix login on Safari", version: 4 }),
    expected: {
      fields: writable(content({ status: "done", title: "Fix login on Safari" }).fields),
      body: BODY,
    },
  },
  {
    name: "the same field changed to different values conflicts",
    base: content({}),
    ours: content({ status: "done" }),
    theirs: content({ status: "wont_fix" }),
    expected: undefined,
  },
  {
    name: "the same field changed to the same value merges",
    base: content({}),
    ours: content({ status: "done" }),
    theirs: content({ status: "done" }),
    expected: { fields: writable(content({ status: "done" }).fields), body: BODY },
  },
  {
    name: "labels changed on both sides differently conflict (a list is one value)",
    base: content({}),
    ours: content({ labels: ["bug", "ui"] }),
    theirs: content({ labels: ["bug", "auth"] }),
    expected: undefined,
  },
  {
    name: "an assignee added on one side and a title on the other merge",
    base: content({}),
    ours: content({ assignee: "dana" }),
    theirs: content({ title: "New title" }),
    expected: { fields: writable(content({ assignee: "dana", title: "New title" }).fields), body: BODY },
  },
  {
    name: "an assignee cleared on one side while the other changed it conflicts",
    base: content({ assignee: "dana" }),
    ours: content({ assignee: null }),
    theirs: content({ assignee: "lee" }),
    expected: undefined,
  },
  {
    name: "server-controlled fields never conflict and are not part of the merge",
    base: content({}),
    ours: content({ version: 999, id: 1, status: "done" }),
    theirs: content({ version: 5, updated_at: "2026-02-01T00:00:00.000Z" }),
    expected: { fields: writable(content({ status: "done" }).fields), body: BODY },
  },
  {
    name: "body edits of different lines merge",
    base: content({}),
    ours: content({}, "ONE\ntwo\nthree\nfour\nfive\n"),
    theirs: content({}, "one\ntwo\nthree\nfour\nFIVE\n"),
    expected: { fields: writable(FIELDS), body: "ONE\ntwo\nthree\nfour\nFIVE\n" },
  },
  {
    name: "body edits of the same line conflict",
    base: content({}),
    ours: content({}, "one\ntwo\nTHREE\nfour\nfive\n"),
    theirs: content({}, "one\ntwo\nthree!\nfour\nfive\n"),
    expected: undefined,
  },
  {
    name: "a field edit on one side and a body edit on the other merge",
    base: content({}),
    ours: content({ title: "Ours" }),
    theirs: content({}, "one\ntwo\nthree\nfour\nfive\nsix\n"),
    expected: {
      fields: writable(content({ title: "Ours" }).fields),
      body: "one\ntwo\nthree\nfour\nfive\nsix\n",
    },
  },
  {
    name: "a clean body merge does not rescue a field conflict",
    base: content({}),
    ours: content({ status: "done" }, "ONE\ntwo\nthree\nfour\nfive\n"),
    theirs: content({ status: "in_review" }, "one\ntwo\nthree\nfour\nFIVE\n"),
    expected: undefined,
  },
];

for (const c of RECORD_CASES) {
  test(`mergeRecord: ${c.name}`, (t) => {
    t.deepEqual(mergeRecord(SIM_SCHEMA, c.base, c.ours, c.theirs), c.expected);
  });
}

const BODY_CASES: readonly (readonly [string, string, string, string, string | undefined])[] = [
  ["only ours changed", "a\nb\n", "a\nB\n", "a\nb\n", "a\nB\n"],
  ["only theirs changed", "a\nb\n", "a\nb\n", "A\nb\n", "A\nb\n"],
  ["both made the same change", "a\nb\n", "a\nc\n", "a\nc\n", "a\nc\n"],
  ["separate lines", "a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n", "A\nb\nc\nD\n"],
  ["both appended different lines", "a\n", "a\nours\n", "a\ntheirs\n", undefined],
  ["same line, different text", "a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", undefined],
  ["one deleted a line the other changed", "a\nb\nc\n", "a\nc\n", "a\nB\nc\n", undefined],
  ["no final newline: separate lines still merge", "a\nb\nc\nd", "A\nb\nc\nd", "a\nb\nc\nD", "A\nb\nc\nD"],
  ["empty base, both wrote different text", "", "mine\n", "theirs\n", undefined],
  [
    "CRLF lines are kept as they are",
    "a\r\nb\r\nc\r\nd\r\n",
    "A\r\nb\r\nc\r\nd\r\n",
    "a\r\nb\r\nc\r\nD\r\n",
    "A\r\nb\r\nc\r\nD\r\n",
  ],
];

for (const [name, base, ours, theirs, expected] of BODY_CASES) {
  test(`mergeBody: ${name}`, (t) => {
    t.is(mergeBody(base, ours, theirs), expected);
  });
}

test("mergeBody: one side unchanged gives the other side; merging is symmetric when clean", (t) => {
  const text = fc
    .array(fc.constantFrom("a\n", "b\n", "c\n", "d\n", "e"), { maxLength: 8 })
    .map((l) => l.join(""));
  fc.assert(
    fc.property(text, text, text, (base, ours, theirs) => {
      t.is(mergeBody(base, base, theirs), theirs);
      t.is(mergeBody(base, ours, base), ours);
      const merged = mergeBody(base, ours, theirs);
      const swapped = mergeBody(base, theirs, ours);
      t.is(merged === undefined, swapped === undefined, JSON.stringify({ base, ours, theirs }));
    }),
    fuzzParams(100),
  );
});
