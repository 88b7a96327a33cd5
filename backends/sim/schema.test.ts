/** The simulator's record shape as DESIGN.md §2 fixes it: file names, field order, server-owned fields. */
import test from "ava";
import fc from "fast-check";
import { fuzzParams } from "../../testing/fuzz.js";
import { SIM_SCHEMA, SIM_STATUSES, simFileName } from "./schema.js";

const FILE_NAMES: readonly (readonly [number, string])[] = [
  [42, "issues/0042.md"],
  [7, "issues/0007.md"],
  [0, "issues/0000.md"],
  [1, "issues/0001.md"],
  [999, "issues/0999.md"],
  [9999, "issues/9999.md"],
  [10000, "issues/10000.md"],
  [12345, "issues/12345.md"],
];

for (const [id, expected] of FILE_NAMES) {
  test(`simFileName(${id}) is ${expected}`, (t) => {
    t.is(simFileName(id), expected);
  });
}

test("simFileName never truncates, pads to four digits, and sorts bytewise like the ids up to 9999", (t) => {
  const details = fc.check(
    fc.property(fc.maxSafeNat(), fc.nat({ max: 9999 }), fc.nat({ max: 9999 }), (id, a, b) => {
      const name = simFileName(id);
      const digits = /^issues\/(\d+)\.md$/.exec(name)?.[1];
      // git orders tree entries by bytes.
      const [nameA, nameB] = [simFileName(a), simFileName(b)];
      const sameOrder = a < b === nameA < nameB && (a === b) === (nameA === nameB);
      return digits !== undefined && Number(digits) === id && digits.length >= 4 && sameOrder;
    }),
    fuzzParams(500),
  );
  t.false(details.failed, fc.defaultReportMessage(details));
});

test("the sim collection folder is issues", (t) => {
  t.is(SIM_SCHEMA.kind, "sim");
  t.is(SIM_SCHEMA.folder, "issues");
});

test("the sim frontmatter order is id, title, status, labels, created_at, updated_at, version, assignee", (t) => {
  t.deepEqual(
    SIM_SCHEMA.fields.map((spec) => spec.name),
    ["id", "title", "status", "labels", "created_at", "updated_at", "version", "assignee"],
  );
});

test("the server owns id, created_at, updated_at and version", (t) => {
  t.deepEqual(
    SIM_SCHEMA.fields.filter((spec) => spec.serverControlled).map((spec) => spec.name),
    ["id", "created_at", "updated_at", "version"],
  );
});

test("only assignee is nullable and left out when absent", (t) => {
  t.deepEqual(
    SIM_SCHEMA.fields.filter((spec) => spec.nullable).map((spec) => spec.name),
    ["assignee"],
  );
  t.deepEqual(
    SIM_SCHEMA.fields.filter((spec) => spec.omitWhenAbsent).map((spec) => spec.name),
    ["assignee"],
  );
});

test("the sim statuses are the five of DESIGN.md §2, and status is restricted to them", (t) => {
  t.deepEqual([...SIM_STATUSES], ["open", "in_progress", "in_review", "done", "wont_fix"]);
  const status = SIM_SCHEMA.fields.find((spec) => spec.name === "status");
  t.deepEqual(status?.allowed, SIM_STATUSES);
});

test("field types: integers, strings, timestamps and a string list", (t) => {
  t.deepEqual(Object.fromEntries(SIM_SCHEMA.fields.map((spec) => [spec.name, spec.type])), {
    id: "integer",
    title: "string",
    status: "string",
    labels: "string-list",
    created_at: "timestamp",
    updated_at: "timestamp",
    version: "integer",
    assignee: "string",
  });
});
