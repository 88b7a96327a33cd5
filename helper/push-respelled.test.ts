/**
 * The note after a push whose bodies the server gives back in its own spelling (push-respelled.ts): which
 * writes it names (creates and updates whose body the tracker respells; not deletes, not bodies it keeps
 * as written, not a backend that converts nothing) and what it says.
 */
import test from "ava";
import { SIM_SCHEMA } from "../backends/sim/schema.js";
import { TRACKER_SCHEMA } from "../backends/tracker/schema.js";
import type { PlannedWrite } from "./push-plan.js";
import { respelledBodies, respelledNotes } from "./push-respelled.js";

const create = (path: string, body: string): PlannedWrite => ({
  kind: "create",
  path,
  oid: "0".repeat(40),
  changes: { fields: { title: "t" }, body },
});

test("creates and updates whose description reads back otherwise are named with their first such line", (t) => {
  const writes: PlannedWrite[] = [
    create("issues/new.md", "Intro\n\nSome *em*\n"),
    create("issues/same.md", "Some _em_\n"),
    { kind: "delete", key: "TEST-9", path: "issues/TEST-9.md", base: { updatedAt: "x" } as never },
  ];
  const found = respelledBodies(TRACKER_SCHEMA, writes);
  t.deepEqual(found, [{ path: "issues/new.md", line: 3, wrote: "Some *em*", reads: "Some _em_" }]);
  t.deepEqual(respelledNotes(found, "tracker"), [
    'svc: issues/new.md: the tracker keeps what you wrote and gives it back in its own Markdown spelling, so after git pull the file reads differently with the same meaning (line 3 of the body, "Some *em*", reads "Some _em_")',
    "  nothing was lost and there is nothing to fix: git pull --ff-only brings that spelling",
  ]);
  t.deepEqual(respelledNotes([], "tracker"), []);
});

test("a body that differs only by its final line break says so; a backend that converts nothing is never named", (t) => {
  const found = respelledBodies(TRACKER_SCHEMA, [create("issues/a.md", "Text")]);
  t.is(found.length, 1);
  t.regex(respelledNotes(found, "tracker")[0] ?? "", /only the line breaks at its end differ/);
  t.deepEqual(respelledBodies(SIM_SCHEMA, [create("issues/a.md", "Some *em*\n")]), []);
});
