/**
 * The tracker's fields beyond the fixed ones (issue 35), read: real git against the fake tracker, whose site
 * has Story Points (a number), Sprint, Team (a single select) and, here, a second field named Team, a
 * multi select and a cascading select. The clone shows components, fix versions, due date, reporter,
 * resolution and each custom field with a value, sorted by slug, in pinned bytes; the field list is asked
 * once and kept in the cache (a fetch does not ask it again).
 */
import test from "ava";
import type { FakeTrackerCustomField } from "../testing/fake-tracker.js";
import { givenFakeTracker } from "../testing/fake-tracker.js";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { git, gitOk, run, svc } from "../testing/git.js";
import { commitAll, editWorkFile, readWorkFile, setField } from "../testing/push.js";
import { givenProxiedTrackerEnv, givenTrackerEnv, trackerPath, trackerRemote } from "../testing/tracker.js";

const FIELDS: readonly FakeTrackerCustomField[] = [
  { id: "customfield_10016", name: "Story Points", kind: "number" },
  { id: "customfield_10020", name: "Sprint", kind: "sprint" },
  { id: "customfield_10050", name: "Team", kind: "option", options: ["Core", "Platform", "Web"] },
  { id: "customfield_10060", name: "team", kind: "string" },
  { id: "customfield_10070", name: "Platforms", kind: "options", options: ["Linux", "macOS"] },
  { id: "customfield_10080", name: "Area / Sub-area", kind: "cascading", options: ["Backend", "Storage"] },
  { id: "customfield_10090", name: "Labels", kind: "string" },
  { id: "customfield_10100", name: "Approver", kind: "string", onEditScreen: false },
];

test("a clone shows components, versions, due, reporter, resolution and the custom fields by slug, in canonical bytes", async (t) => {
  const tracker = await givenFakeTracker(t, { customFields: FIELDS });
  tracker.addIssue(
    "TEST",
    {
      summary: "Planned work",
      labels: ["api"],
      components: ["API", "Web"],
      fixVersions: ["2.0"],
      duedate: "2026-12-24",
      reporter: "557058:alice-0002",
      resolution: "Done",
      custom: {
        customfield_10016: 3,
        customfield_10020: ["Sprint 7"],
        customfield_10050: "Core",
        customfield_10060: "the other team",
        customfield_10070: ["Linux", "macOS"],
        customfield_10080: { value: "Backend", child: "Storage" },
        customfield_10090: "x",
      },
    },
    Date.UTC(2026, 10, 20, 10, 0, 0),
  );
  tracker.addIssue("TEST", { summary: "Plain" }, Date.UTC(2026, 10, 20, 11, 0, 0));
  const env = givenTrackerEnv(t, tracker);
  await gitOk(t, env, ["clone", "-q", trackerRemote(tracker.url, "TEST"), "d"]);

  t.is(
    readWorkFile(env, "d", trackerPath("TEST-1")),
    [
      "---",
      "id: 10001",
      "key: TEST-1",
      "type: Task",
      'title: "Planned work"',
      'status: "To Do"',
      "priority: Medium",
      "labels: [api]",
      "assignee: null",
      "parent: null",
      "created_at: 2026-11-20T10:00:00.000Z",
      "updated_at: 2026-11-20T10:00:00.000Z",
      "components: [API, Web]",
      'fix_versions: ["2.0"]',
      "due: 2026-12-24",
      'reporter: "557058:alice-0002"',
      "resolution: Done",
      `area_sub_area: '{"child":{"id":"100801","self":"${tracker.url}/rest/api/3/customFieldOption/100801","value":"Storage"},"id":"100800","self":"${tracker.url}/rest/api/3/customFieldOption/100800","value":"Backend"}'`,
      "labels_10090: x",
      "platforms: [Linux, macOS]",
      'sprint: ["Sprint 7"]',
      "story_points: 3",
      "team: Core",
      'team_10060: "the other team"',
      "---",
      "",
    ].join("\n"),
  );
  // An issue without them has none of the lines.
  t.notRegex(readWorkFile(env, "d", trackerPath("TEST-2")), /components|due|story_points|team|sprint/);

  const fieldLists = () => tracker.requests.filter((request) => request.path === "/rest/api/3/field");
  t.is(fieldLists().length, 1);
  const search = tracker.requests.find(
    (request) => request.path === "/rest/api/3/search/jql" && !request.body.includes('"comment"'),
  );
  const asked = (JSON.parse(search?.body ?? "{}") as { fields?: string[] }).fields ?? [];
  t.true(FIELDS.every((field) => asked.includes(field.id)));
  t.false(asked.includes("*all"));

  // A fetch (a delta listing) reads the kept list: the field list is not asked again.
  tracker.editIssue("TEST-2", { custom: { customfield_10016: 8 } });
  await gitOk(t, env, ["pull", "-q", "--no-rebase"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", trackerPath("TEST-2")), /\nstory_points: 8\n/);
  t.is(fieldLists().length, 1);

  // svc log reads the cache's files with the kept field list: the change names the custom field.
  const log = await svc(env, ["log", "--json"], { cwd: "d" });
  t.is(log.code, 0, log.stderr);
  const states = (
    JSON.parse(log.stdout) as { states: { changes: { path: string; fields: string[] | null }[] }[] }
  ).states;
  t.deepEqual(states[0]?.changes, [
    { ...states[0]?.changes[0], path: trackerPath("TEST-2"), fields: ["story_points"] },
  ] as (typeof states)[0]["changes"]);
});

test("a field renamed on the tracker is one commit at the next full listing: every issue carrying it shows the new slug", async (t) => {
  const fields = FIELDS.slice(0, 3);
  const tracker = await givenFakeTracker(t, { customFields: fields });
  tracker.addIssue(
    "TEST",
    { summary: "Estimated", custom: { customfield_10016: 3 } },
    Date.UTC(2026, 10, 20),
  );
  tracker.addIssue("TEST", { summary: "Also", custom: { customfield_10016: 5 } }, Date.UTC(2026, 10, 21));
  tracker.addIssue("TEST", { summary: "Plain" }, Date.UTC(2026, 10, 22));
  const env = givenTrackerEnv(t, tracker);
  await gitOk(t, env, ["clone", "-q", trackerRemote(tracker.url, "TEST"), "d"]);
  t.regex(readWorkFile(env, "d", trackerPath("TEST-1")), /\nstory_points: 3\n/);
  const plainBefore = readWorkFile(env, "d", trackerPath("TEST-3"));

  // The site renames the field; no issue's `updated` moves.
  tracker.renameCustomField("customfield_10016", "Estimate");
  const sync = await svc(env, ["sync", "--reconcile", "d"]);
  t.is(sync.code, 0, sync.stderr);
  await gitOk(t, env, ["pull", "-q", "--no-rebase"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", trackerPath("TEST-1")), /\nestimate: 3\n/);
  t.regex(readWorkFile(env, "d", trackerPath("TEST-2")), /\nestimate: 5\n/);
  t.notRegex(readWorkFile(env, "d", trackerPath("TEST-1")), /story_points/);
  t.is(readWorkFile(env, "d", trackerPath("TEST-3")), plainBefore);
  const changed = await gitOk(t, env, ["diff", "--name-only", "HEAD@{1}", "HEAD"], { cwd: "d" });
  t.deepEqual(changed.split("\n"), [trackerPath("TEST-1"), trackerPath("TEST-2")], "one change, two files");
  // And no churn: the next fetch brings nothing.
  const tip = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  await gitOk(t, env, ["fetch", "-q"], { cwd: "d" });
  t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), tip);
});

test("a site that does not serve the field list (404) is cloned with the fixed fields, not refused", async (t) => {
  const tracker = await givenFakeTracker(t, { customFields: FIELDS.slice(0, 1) });
  tracker.addIssue(
    "TEST",
    { summary: "Planned", components: ["API"], custom: { customfield_10016: 3 } },
    Date.UTC(2026, 10, 20),
  );
  const proxy = await givenFaultProxy(t, tracker.url);
  proxy.setFault((request) =>
    request.path === "/rest/api/3/field"
      ? { kind: "answer", status: 404, body: { errorMessages: ["Not found"], errors: {} } }
      : undefined,
  );
  const env = givenProxiedTrackerEnv(t, tracker, proxy.url);
  await gitOk(t, env, ["clone", "-q", trackerRemote(proxy.url, "TEST"), "d"]);
  const file = readWorkFile(env, "d", trackerPath("TEST-1"));
  t.regex(file, /\ncomponents: \[API\]\n/);
  t.notRegex(file, /story_points/);
});

test("a field removed on the tracker: a push of a file that still has its line is refused saying so, and the printed next step goes through", async (t) => {
  const tracker = await givenFakeTracker(t, { customFields: FIELDS.slice(0, 3) });
  tracker.addIssue(
    "TEST",
    { summary: "Teamed", custom: { customfield_10050: "Core" } },
    Date.UTC(2026, 10, 20),
  );
  const env = givenTrackerEnv(t, tracker);
  await gitOk(t, env, ["clone", "-q", trackerRemote(tracker.url, "TEST"), "d"]);
  t.regex(readWorkFile(env, "d", trackerPath("TEST-1")), /\nteam: Core\n/);

  tracker.removeCustomField("customfield_10050");
  const sync = await svc(env, ["sync", "--reconcile", "d"]);
  t.is(sync.code, 0, sync.stderr);
  // The user edits the file they have (with the line) and pushes without pulling.
  editWorkFile(env, "d", trackerPath("TEST-1"), (text) => setField(text, "title", "Teamed, renamed"));
  await commitAll(t, env, "d", "Rename");
  const from = tracker.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.log(
    push.stderr,
    tracker.requests.slice(from).map((r) => `${r.method} ${r.path} ${r.body}`),
  );
  t.not(push.code, 0);
  t.regex(push.stderr, /issues\/TEST-1\.md/);
  t.false(
    tracker.requests.slice(from).some((request) => request.method === "PUT"),
    "nothing was written",
  );
  // What the refusal says: remove the line, then its printed command.
  editWorkFile(env, "d", trackerPath("TEST-1"), (text) => text.replace(/^team: .*\n/m, ""));
  const again = await run(
    env,
    "sh",
    ["-c", 'git add issues/TEST-1.md && git commit -m "Fix issues/TEST-1.md" && git push'],
    { cwd: "d" },
  );
  t.is(again.code, 0, again.stderr);
  t.is(tracker.issue("TEST-1")?.summary, "Teamed, renamed");
});
