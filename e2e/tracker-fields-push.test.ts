/**
 * The tracker's fields of issue 35, written: real git against the fake tracker. Each edit is checked against
 * the issue's edit screen (`editmeta`) before any write and sends one PUT with only the changed fields in
 * Jira's shapes; a value not allowed, a field off the edit screen and a sprint edit are refused before any
 * write, naming the allowed values (or how sprints change) and the command that restores the file; a field
 * changed on the server meanwhile is `fetch first`; a new file with these fields is checked against its issue
 * type's create screen (`createmeta`, asked once) and is one POST carrying them; a value not allowed there is
 * refused before any write of the push, naming the allowed values, with the command to push the fixed file.
 */
import test, { type ExecutionContext } from "ava";
import { type FakeTracker, type FakeTrackerCustomField, givenFakeTracker } from "../testing/fake-tracker.js";
import { type GitEnv, git, gitOk, run } from "../testing/git.js";
import { commitAll, editWorkFile, FETCH_FIRST, setField, writeWorkFile } from "../testing/push.js";
import { givenTrackerEnv, trackerPath, trackerRemote, trackerWrites } from "../testing/tracker.js";

const FIELDS: readonly FakeTrackerCustomField[] = [
  { id: "customfield_10016", name: "Story Points", kind: "number" },
  { id: "customfield_10020", name: "Sprint", kind: "sprint" },
  { id: "customfield_10050", name: "Team", kind: "option", options: ["Core", "Platform", "Web"] },
  { id: "customfield_10100", name: "Approver", kind: "string", onEditScreen: false },
];

const CREATE_META = "/rest/api/3/issue/createmeta/TEST/issuetypes/";
const FIRST_PAGE = "?startAt=0&maxResults=200";

/** TEST-1 with 3 story points, team Web and sprint "Sprint 7"; cloned into `d`. */
async function givenClone(t: ExecutionContext): Promise<{ tracker: FakeTracker; env: GitEnv }> {
  const tracker = await givenFakeTracker(t, { customFields: FIELDS });
  tracker.addIssue("TEST", {
    summary: "Planned",
    custom: { customfield_10016: 3, customfield_10050: "Web", customfield_10020: ["Sprint 7"] },
  });
  const env = givenTrackerEnv(t, tracker);
  await gitOk(t, env, ["clone", "-q", trackerRemote(tracker.url, "TEST"), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { tracker, env };
}

/** `line` added as the frontmatter's last line. */
function addLine(text: string, line: string): string {
  return text.replace(/\n---\n/, `\n${line}\n---\n`);
}

/** Edits TEST-1, commits, pushes; returns the push and the requests the fake got from it. */
async function push(t: ExecutionContext, tracker: FakeTracker, env: GitEnv, edit: (text: string) => string) {
  editWorkFile(env, "d", trackerPath("TEST-1"), edit);
  await commitAll(t, env, "d", "Edit TEST-1");
  const from = tracker.requests.length;
  const result = await git(env, ["push"], { cwd: "d" });
  const requests = tracker.requests.slice(from);
  return { result, requests, writes: trackerWrites(tracker, from) };
}

const fieldsOf = (request: { body: string } | undefined) =>
  (JSON.parse(request?.body || "{}") as { fields?: Record<string, unknown> }).fields;

test("story_points 3 → 5 sends one PUT holding only customfield_10016: 5, after the edit screen was read", async (t) => {
  const { tracker, env } = await givenClone(t);
  const { result, requests, writes } = await push(t, tracker, env, (text) =>
    setField(text, "story_points", "5"),
  );
  t.is(result.code, 0, result.stderr);
  t.deepEqual(
    writes.map((request) => `${request.method} ${request.path}`),
    ["PUT /rest/api/3/issue/TEST-1"],
  );
  t.deepEqual(JSON.parse(writes[0]?.body ?? "{}"), { fields: { customfield_10016: 5 } });
  const paths = requests.map((request) => request.path);
  t.true(paths.indexOf("/rest/api/3/issue/TEST-1/editmeta") < paths.indexOf("/rest/api/3/issue/TEST-1"));
  t.is(tracker.issue("TEST-1")?.custom.customfield_10016, 5);
});

test("team, components and due are sent in Jira's shapes, only what changed", async (t) => {
  const { tracker, env } = await givenClone(t);
  const team = await push(t, tracker, env, (text) => setField(text, "team", "Core"));
  t.is(team.result.code, 0, team.result.stderr);
  t.deepEqual(
    team.writes.map((request) => fieldsOf(request)),
    [{ customfield_10050: { value: "Core" } }],
  );
  const both = await push(t, tracker, env, (text) =>
    addLine(addLine(text, "components: [API, Web]"), "due: 2026-12-24"),
  );
  t.is(both.result.code, 0, both.result.stderr);
  t.deepEqual(
    both.writes.map((request) => fieldsOf(request)),
    [{ components: [{ name: "API" }, { name: "Web" }], duedate: "2026-12-24" }],
  );
  t.like(tracker.issue("TEST-1"), { components: ["API", "Web"], duedate: "2026-12-24" });
  // Removing the line clears it.
  const cleared = await push(t, tracker, env, (text) => text.replace(/\ndue: .*\n/, "\n"));
  t.is(cleared.result.code, 0, cleared.result.stderr);
  t.deepEqual(
    cleared.writes.map((request) => fieldsOf(request)),
    [{ duedate: null }],
  );
});

test("a value not allowed, or a field off the edit screen, is refused before any write, naming the allowed values and the restore command", async (t) => {
  const { tracker, env } = await givenClone(t);
  const base = await gitOk(t, env, ["rev-parse", "--short", "HEAD"], { cwd: "d" });
  const refused = await push(t, tracker, env, (text) =>
    addLine(setField(setField(text, "team", "Nobody"), "story_points", "8"), 'approver: "me"'),
  );
  t.is(refused.result.code, 1, refused.result.stderr);
  t.deepEqual(refused.writes, [], "nothing was sent");
  const out = refused.result.stderr;
  t.regex(out, /push rejected, nothing was written/);
  t.regex(
    out,
    /field `team` \(customfield_10050\): "Nobody" is not allowed on TEST-1; the allowed values are "Core", "Platform", "Web"; it was `team: Web`/,
  );
  t.regex(out, /issues\/TEST-1\.md: field `approver` \(customfield_10100\) is not on TEST-1's edit screen/);
  t.regex(out, new RegExp(`git checkout ${base}[0-9a-f]* -- issues/TEST-1\\.md`));
  t.is(tracker.issue("TEST-1")?.custom.customfield_10016, 3);
});

test("a sprint edit is refused, saying sprints are changed on the board", async (t) => {
  const { tracker, env } = await givenClone(t);
  const refused = await push(t, tracker, env, (text) => setField(text, "sprint", '["Sprint 8"]'));
  t.is(refused.result.code, 1, refused.result.stderr);
  t.deepEqual(refused.writes, []);
  t.regex(
    refused.result.stderr,
    /field `sprint` \(customfield_10020\) is read-only in svc: sprints are changed on the board/,
  );
  t.regex(
    refused.result.stderr,
    /POST \/rest\/agile\/1\.0\/sprint\/\{sprintId\}\/issue; it was `sprint: \["Sprint 7"\]`/,
  );
  t.regex(refused.result.stderr, /git checkout [0-9a-f]+ -- issues\/TEST-1\.md/);
});

test("story points changed on the server meanwhile: fetch first, nothing written", async (t) => {
  const { tracker, env } = await givenClone(t);
  tracker.editIssue("TEST-1", { custom: { customfield_10016: 13 } });
  const stale = await push(t, tracker, env, (text) => setField(text, "story_points", "5"));
  t.is(stale.result.code, 1, stale.result.stderr);
  t.regex(stale.result.stderr, FETCH_FIRST);
  t.deepEqual(stale.writes, []);
  t.is(tracker.issue("TEST-1")?.custom.customfield_10016, 13);
});

test("with svc.autoMerge, a team edit merges with story points changed on the server meanwhile", async (t) => {
  const { tracker, env } = await givenClone(t);
  await gitOk(t, env, ["config", "svc.autoMerge", "true"], { cwd: "d" });
  tracker.editIssue("TEST-1", { custom: { customfield_10016: 13 } });
  const merged = await push(t, tracker, env, (text) => setField(text, "team", "Core"));
  t.is(merged.result.code, 0, merged.result.stderr);
  t.deepEqual(
    merged.writes.map((request) => fieldsOf(request)),
    [{ customfield_10050: { value: "Core" } }],
  );
  t.like(tracker.issue("TEST-1")?.custom, { customfield_10016: 13, customfield_10050: "Core" });
});

test("a new file with story points, a team and components is one POST carrying them", async (t) => {
  const { tracker, env } = await givenClone(t);
  writeWorkFile(
    env,
    "d",
    "issues/new.md",
    "---\ntitle: New work\ncomponents: [CLI]\nstory_points: 2\nteam: Platform\n---\nBody\n",
  );
  await commitAll(t, env, "d", "New issue");
  const from = tracker.requests.length;
  const result = await git(env, ["push"], { cwd: "d" });
  t.is(result.code, 0, result.stderr);
  // The create screen of the type the create sends (no type line: the project's default, Task 10001), once.
  t.deepEqual(
    tracker.requests
      .slice(from)
      .filter((request) => request.path.startsWith(CREATE_META))
      .map((request) => request.path),
    [`${CREATE_META}10001${FIRST_PAGE}`],
  );
  const posts = trackerWrites(tracker, from).filter((request) => request.path === "/rest/api/3/issue");
  t.is(posts.length, 1);
  t.like(fieldsOf(posts[0]), {
    summary: "New work",
    components: [{ name: "CLI" }],
    customfield_10016: 2,
    customfield_10050: { value: "Platform" },
  });
  t.like(tracker.issue("TEST-2"), {
    components: ["CLI"],
    custom: { customfield_10016: 2, customfield_10050: "Platform" },
  });
});

test("new files with a team not allowed, or a component the project lacks, are refused before any write of the push, naming the allowed values", async (t) => {
  const { tracker, env } = await givenClone(t);
  editWorkFile(env, "d", trackerPath("TEST-1"), (text) => setField(text, "story_points", "5"));
  writeWorkFile(env, "d", "issues/new.md", "---\ntitle: New work\nteam: Bogus\n---\nBody\n");
  writeWorkFile(env, "d", "issues/other.md", "---\ntitle: Other work\ntype: Bug\ncomponents: [Nope]\n---\n");
  await commitAll(t, env, "d", "Two new issues and an edit");
  const from = tracker.requests.length;
  const result = await git(env, ["push"], { cwd: "d" });
  t.is(result.code, 1, result.stderr);
  const requests = tracker.requests.slice(from);
  t.deepEqual(
    requests.filter(
      (request) =>
        (request.method === "POST" || request.method === "PUT") &&
        !request.path.startsWith("/rest/api/3/search/"),
    ),
    [],
    "no POST or PUT (but searches): nothing was written, the valid edit of TEST-1 neither",
  );
  t.deepEqual(trackerWrites(tracker, from), []);
  t.is(tracker.issue("TEST-1")?.custom.customfield_10016, 3);
  t.is(tracker.issue("TEST-2"), undefined);
  // One create screen per issue type: Task (the default) for new.md, Bug for other.md.
  t.deepEqual(
    requests.filter((request) => request.path.startsWith(CREATE_META)).map((request) => request.path),
    [`${CREATE_META}10001${FIRST_PAGE}`, `${CREATE_META}10002${FIRST_PAGE}`],
  );
  const out = result.stderr;
  t.regex(out, /push rejected, nothing was written/);
  t.regex(
    out,
    /issues\/new\.md: field `team` \(customfield_10050\): "Bogus" is not allowed on the create screen of issue type "Task" in project TEST; the allowed values are "Core", "Platform", "Web"; change the `team` line of the new file or remove it/,
  );
  t.regex(
    out,
    /issues\/other\.md: field `components`: "Nope" is not allowed on the create screen of issue type "Bug" in project TEST; the allowed values are "API", "Web", "CLI"/,
  );
  // The printed command pushes the files once fixed, the edit of TEST-1 with them.
  const at = out.lastIndexOf("run:");
  t.not(at, -1, out);
  const command = out
    .slice(at + "run:".length)
    .replace(/^\n/, "")
    .split("\n")[0]
    ?.trim();
  t.regex(command ?? "", /^git add issues\/new\.md issues\/other\.md && git commit -m .* && git push$/);
  editWorkFile(env, "d", "issues/new.md", (text) => setField(text, "team", "Core"));
  editWorkFile(env, "d", "issues/other.md", (text) => setField(text, "components", "[API]"));
  const ran = await run(env, "sh", ["-c", command ?? "false"], { cwd: "d", env: { GIT_EDITOR: "false" } });
  t.is(ran.code, 0, `${command}\n${ran.stdout}${ran.stderr}`);
  t.is(tracker.issue("TEST-1")?.custom.customfield_10016, 5);
  const created = ["TEST-2", "TEST-3"].map((key) => tracker.issue(key));
  t.is(created.find((issue) => issue?.summary === "New work")?.custom.customfield_10050, "Core");
  t.deepEqual(created.find((issue) => issue?.summary === "Other work")?.components, ["API"]);
});

test("a field off the create screen, in a new file, is refused naming the create screen", async (t) => {
  const tracker = await givenFakeTracker(t, {
    customFields: [{ id: "customfield_10100", name: "Approver", kind: "string", onCreateScreen: false }],
  });
  tracker.addIssue("TEST", { summary: "One" });
  const env = givenTrackerEnv(t, tracker);
  await gitOk(t, env, ["clone", "-q", trackerRemote(tracker.url, "TEST"), "d"]);
  writeWorkFile(env, "d", "issues/new.md", '---\ntitle: New work\napprover: "me"\n---\n');
  await commitAll(t, env, "d", "New issue");
  const from = tracker.requests.length;
  const result = await git(env, ["push"], { cwd: "d" });
  t.is(result.code, 1, result.stderr);
  t.deepEqual(trackerWrites(tracker, from), []);
  t.regex(
    result.stderr,
    /issues\/new\.md: field `approver` \(customfield_10100\) is not on the create screen of issue type "Task" in project TEST, so the tracker does not let it be set on a new issue/,
  );
});
