/**
 * A create's fields of issue 35 checked against its issue type's create screen (edit-check.ts,
 * create-screen.ts) in-process against the fake tracker, without git: the screen is asked only for creates
 * that send such a field, once per issue type however many creates, every page of it; the type is the one
 * the create sends (workflow.ts `pickIssueType`: the file's, else the project's default); a value not
 * allowed, a field off the screen and a type the project lacks are named.
 */
import test, { type ExecutionContext } from "ava";
import { HttpClient } from "../../core/http.js";
import {
  type FakeTracker,
  type FakeTrackerCustomField,
  givenFakeTracker,
} from "../../testing/fake-tracker.js";
import { trackerVars } from "../../testing/tracker.js";
import type { WriteToCheck } from "../backend.js";
import type { FieldValue } from "../record.js";
import { TrackerBackend } from "./backend.js";
import { trackerConfig } from "./config.js";
import { pickIssueType } from "./workflow.js";

const FIELDS: readonly FakeTrackerCustomField[] = [
  { id: "customfield_10016", name: "Story Points", kind: "number" },
  { id: "customfield_10050", name: "Team", kind: "option", options: ["Core", "Web"] },
  { id: "customfield_10100", name: "Approver", kind: "string", onCreateScreen: false },
];

async function givenBackend(t: ExecutionContext): Promise<{ tracker: FakeTracker; backend: TrackerBackend }> {
  // Four fields a page: the create screen (13 fields) takes four pages.
  const tracker = await givenFakeTracker(t, { customFields: FIELDS, metaPageSize: 4 });
  const config = trackerConfig(trackerVars(tracker));
  const http = new HttpClient({ agent: "tracker-create-check-test", allowedOrigins: config.allowedOrigins });
  return { tracker, backend: new TrackerBackend(config, "TEST", http) };
}

const create = (path: string, fields: Record<string, FieldValue>): WriteToCheck => ({
  kind: "create",
  path,
  changes: { fields: { title: "New", ...fields } },
});

/** The create-screen requests since `from`, as `<type id> <startAt>`. */
function screenAsks(tracker: FakeTracker, from = 0): string[] {
  return tracker.requests.slice(from).flatMap((request) => {
    const match = /\/createmeta\/TEST\/issuetypes\/(\d+)\?startAt=(\d+)/.exec(request.path);
    return match ? [`${match[1]} ${match[2]}`] : [];
  });
}

test("pickIssueType: the named type whatever its case, else the first standard type of level 0; an unknown name names the types", (t) => {
  const types = [
    { id: "1", name: "Epic", subtask: false, hierarchyLevel: 1 },
    { id: "2", name: "Subtask", subtask: true, hierarchyLevel: -1 },
    { id: "3", name: "Task", subtask: false, hierarchyLevel: 0 },
  ];
  t.is(pickIssueType(types, "subTASK", "TEST", "creating an issue").id, "2");
  t.is(pickIssueType(types, undefined, "TEST", "creating an issue").id, "3");
  t.is(pickIssueType(types.slice(0, 2), null, "TEST", "creating an issue").id, "1");
  t.throws(() => pickIssueType(types, "Bug", "TEST", "creating an issue"), {
    message:
      'creating an issue: project TEST has no issue type "Bug"; its types are "Epic", "Subtask", "Task"',
  });
  t.throws(() => pickIssueType(types.slice(1, 2), undefined, "TEST", "x"), {
    message: "x: project TEST offers no issue type to create",
  });
});

test("creates that send no field of issue 35 ask no create screen; those that do ask each type's once, every page", async (t) => {
  const { tracker, backend } = await givenBackend(t);
  t.deepEqual(
    await backend.checkWrites([
      create("issues/a.md", {}),
      // Cleared or empty: a create leaves them out, so there is nothing to check.
      create("issues/b.md", { components: [], due: null, story_points: null }),
    ]),
    [],
  );
  t.deepEqual(screenAsks(tracker), []);
  const problems = await backend.checkWrites([
    create("issues/c.md", { story_points: 3, team: "Core" }),
    create("issues/d.md", { components: ["API"], fix_versions: ["2.0"], due: "2026-12-24" }),
    create("issues/e.md", { type: "bug", team: "Web" }),
    create("issues/f.md", { type: "Task", team: "Core" }),
  ]);
  t.deepEqual(problems, []);
  // Task (10001, the default and f.md's) and Bug (10002), each walked once to its end.
  t.deepEqual(screenAsks(tracker), [
    "10001 0",
    "10001 4",
    "10001 8",
    "10001 12",
    "10002 0",
    "10002 4",
    "10002 8",
    "10002 12",
  ]);
});

test("a value not allowed, a field off the create screen and an unknown type are named, the file's line to change", async (t) => {
  const { tracker, backend } = await givenBackend(t);
  const problems = await backend.checkWrites([
    create("issues/a.md", { team: "Bogus", components: ["API", "Nope"] }),
    create("issues/b.md", { approver: "me" }),
    create("issues/c.md", { type: "Story Bug", story_points: 2 }),
  ]);
  t.deepEqual(problems, [
    {
      path: "issues/a.md",
      message:
        'field `team` (customfield_10050): "Bogus" is not allowed on the create screen of issue type "Task" in project TEST; the allowed values are "Core", "Web"; change the `team` line of the new file or remove it\n' +
        'field `components`: "Nope" is not allowed on the create screen of issue type "Task" in project TEST; the allowed values are "API", "Web", "CLI"; change the `components` line of the new file or remove it',
    },
    {
      path: "issues/b.md",
      message:
        'field `approver` (customfield_10100) is not on the create screen of issue type "Task" in project TEST, so the tracker does not let it be set on a new issue (an administrator can add it to the screen); change the `approver` line of the new file or remove it',
    },
    {
      path: "issues/c.md",
      message:
        'creating an issue: project TEST has no issue type "Story Bug"; its types are "Task", "Bug", "Story", "Epic", "Subtask"; change the `type` line of the new file or remove it',
    },
  ]);
  t.deepEqual(
    [...new Set(screenAsks(tracker).map((ask) => ask.split(" ")[0]))],
    ["10001"],
    "an unknown type asks no screen",
  );
  t.deepEqual(
    tracker.requests.filter((request) => request.method !== "GET"),
    [],
  );
});
