/**
 * The forge's milestone, type and parent (issue 35, "Forge" and "What it must show"): real git against the
 * fake forge. A clone shows the lines (from the listing's issue objects: no request per issue); each write
 * sends exactly the request issue 35 lists (asserted on the fake's request log); a milestone title or a type
 * the repository lacks, and a change of a parent in another repository, are refused before any write,
 * naming the file and what exists; a new file takes them; a milestone changed on the forge meanwhile is
 * `fetch first`; a token without push access, whose milestone the forge would drop, is refused before any write.
 */
import test, { type ExecutionContext } from "ava";
import { type FakeForge, type FakeForgeRepoSpec, givenFakeForge } from "../testing/fake-forge.js";
import { forgeRemote, forgeWrites, givenForgeEnv } from "../testing/forge.js";
import { type GitEnv, git, gitOk } from "../testing/git.js";
import {
  commitAll,
  editWorkFile,
  FETCH_FIRST,
  issuePath,
  readWorkFile,
  setField,
  writeWorkFile,
} from "../testing/push.js";

const REPO = "acme/widgets";
const API = "/repos/acme/widgets";
const SPEC: FakeForgeRepoSpec = { owner: "acme", name: "widgets", milestones: ["v1.0", "v2.0"] };

/**
 * A fake forge with four issues (1: milestone v1.0 and type Bug, where the owner has types; 2: a sub-issue of 1; 3: none of them; 4: a
 * sub-issue of acme/gadgets#1) and a clone of it in `d`.
 */
async function givenPlannedClone(
  t: ExecutionContext,
  spec: Partial<FakeForgeRepoSpec> = {},
): Promise<{ forge: FakeForge; env: GitEnv }> {
  const forge = await givenFakeForge(t, {
    repos: [
      { ...SPEC, ...spec },
      { owner: "acme", name: "gadgets" },
    ],
  });
  forge.addIssue("acme/gadgets", { title: "Elsewhere" });
  forge.addIssue(REPO, {
    title: "Epic",
    milestone: "v1.0",
    ...(spec.issueTypes === null ? {} : { type: "Bug" }),
  });
  forge.addIssue(REPO, { title: "Part", parent: 1 });
  forge.addIssue(REPO, { title: "Plain" });
  forge.addIssue(REPO, { title: "Abroad", parent: { repo: "acme/gadgets", number: 1 } });
  const env = givenForgeEnv(t, forge);
  await gitOk(t, env, ["clone", "-q", forgeRemote(forge.url, REPO), "d"]);
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return { forge, env };
}

/** The frontmatter lines between `assignees` and `created_at`. */
function planningLines(text: string): string[] {
  const lines = text.split("\n");
  return lines.slice(
    lines.findIndex((line) => line.startsWith("assignees:")) + 1,
    lines.findIndex((line) => line.startsWith("created_at:")),
  );
}

/** Edits, commits and pushes; returns the writes the push sent as `METHOD path body`. */
async function pushEdit(
  t: ExecutionContext,
  forge: FakeForge,
  env: GitEnv,
  number: number,
  edit: (text: string) => string,
): Promise<string[]> {
  editWorkFile(env, "d", issuePath(number), edit);
  await commitAll(t, env, "d", `Edit ${number}`);
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.is(await gitOk(t, env, ["status", "--porcelain"], { cwd: "d" }), "");
  return forgeWrites(forge, from).map((request) => `${request.method} ${request.path} ${request.body}`);
}

const withLine = (name: string, value: string) => (text: string) =>
  new RegExp(`^${name}: `, "m").test(text)
    ? setField(text, name, value)
    : text.replace(/^created_at: /m, `${name}: ${value}\ncreated_at: `);
const withoutLine = (name: string) => (text: string) => text.replace(new RegExp(`^${name}: .*\\n`, "m"), "");

test("a clone shows milestone, type and parent after assignees, each line absent when the issue has none", async (t) => {
  const { forge, env } = await givenPlannedClone(t);
  t.deepEqual(planningLines(readWorkFile(env, "d", issuePath(1))), ["milestone: v1.0", "type: Bug"]);
  t.deepEqual(planningLines(readWorkFile(env, "d", issuePath(2))), ["parent: 1"]);
  t.deepEqual(planningLines(readWorkFile(env, "d", issuePath(3))), []);
  // A parent in another repository is shown as owner/repo#N (read-only).
  t.deepEqual(planningLines(readWorkFile(env, "d", issuePath(4))), ['parent: "acme/gadgets#1"']);
  // From the listing alone: no request per issue, no milestone or type list.
  const asked = forge.requests.map((request) => request.path.split("?")[0]);
  t.false(
    asked.some((path) => /\/issues\/\d+|milestones|issue-types|parent/.test(path ?? "")),
    asked.join("\n"),
  );
});

test("each write sends exactly the request issue 35 lists", async (t) => {
  const { forge, env } = await givenPlannedClone(t);
  const child = forge.issue(REPO, 3)?.id;
  const milestones = () => forge.requests.filter((request) => request.path.includes("/milestones")).length;

  t.deepEqual(await pushEdit(t, forge, env, 3, withLine("milestone", "v2.0")), [
    `PATCH ${API}/issues/3 {"milestone":2}`,
  ]);
  t.is(milestones(), 1, "the milestones are asked once per push");
  t.regex(readWorkFile(env, "d", issuePath(3)), /^milestone: v2\.0$/m);
  t.deepEqual(await pushEdit(t, forge, env, 3, withoutLine("milestone")), [
    `PATCH ${API}/issues/3 {"milestone":null}`,
  ]);
  t.is(milestones(), 1, "a removed milestone needs no list");
  t.is(forge.issue(REPO, 3)?.milestone, null);

  t.deepEqual(await pushEdit(t, forge, env, 3, withLine("type", "Task")), [
    `PATCH ${API}/issues/3 {"type":"Task"}`,
  ]);
  t.is(forge.issue(REPO, 3)?.type, "Task");
  t.deepEqual(await pushEdit(t, forge, env, 3, withoutLine("type")), [`PATCH ${API}/issues/3 {"type":null}`]);

  t.deepEqual(await pushEdit(t, forge, env, 3, withLine("parent", "1")), [
    `POST ${API}/issues/1/sub_issues {"sub_issue_id":${child}}`,
  ]);
  t.deepEqual(forge.issue(REPO, 3)?.parent, { repo: REPO, number: 1 });
  t.regex(readWorkFile(env, "d", issuePath(3)), /^parent: 1$/m);
  t.deepEqual(await pushEdit(t, forge, env, 3, withLine("parent", "2")), [
    `DELETE ${API}/issues/1/sub_issue {"sub_issue_id":${child}}`,
    `POST ${API}/issues/2/sub_issues {"sub_issue_id":${child}}`,
  ]);
  t.deepEqual(forge.issue(REPO, 3)?.parent, { repo: REPO, number: 2 });
  t.deepEqual(await pushEdit(t, forge, env, 3, withoutLine("parent")), [
    `DELETE ${API}/issues/2/sub_issue {"sub_issue_id":${child}}`,
  ]);
  t.is(forge.issue(REPO, 3)?.parent, null);
});

/** Commits the edits and pushes; the push must be refused with no write sent. Returns its stderr. */
async function refusedPush(t: ExecutionContext, forge: FakeForge, env: GitEnv): Promise<string> {
  await commitAll(t, env, "d", "Refused");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.not(push.code, 0);
  t.deepEqual(forgeWrites(forge, from), [], "nothing was sent");
  return push.stderr;
}

test("an unknown milestone or type, and a change of a parent in another repository, are refused before any write", async (t) => {
  const { forge, env } = await givenPlannedClone(t);
  editWorkFile(env, "d", issuePath(1), (text) => setField(text, "title", "Epic, renamed"));
  editWorkFile(env, "d", issuePath(3), withLine("milestone", "v3.0"));
  editWorkFile(env, "d", issuePath(2), withLine("type", "Epic"));
  let stderr = await refusedPush(t, forge, env);
  t.regex(
    stderr,
    /issues\/0003\.md: milestone "v3\.0" is not a milestone of acme\/widgets; the milestones: "v1\.0", "v2\.0"/,
  );
  t.regex(
    stderr,
    /issues\/0002\.md: type "Epic" is not an issue type of acme\/widgets; the types: "Task", "Bug", "Feature"/,
  );
  t.is(forge.issue(REPO, 1)?.title, "Epic", "the valid edit was not written either");

  editWorkFile(env, "d", issuePath(3), withoutLine("milestone"));
  editWorkFile(env, "d", issuePath(2), withoutLine("type"));
  editWorkFile(env, "d", issuePath(4), withLine("parent", "3"));
  editWorkFile(env, "d", issuePath(3), withLine("parent", "99"));
  stderr = await refusedPush(t, forge, env);
  t.regex(
    stderr,
    /issues\/0004\.md: issue 4 is a sub-issue of acme\/gadgets#1, in another repository, which svc cannot change; put the line back as it was: parent: "acme\/gadgets#1"/,
  );
  t.regex(stderr, /issues\/0003\.md: parent: 99: acme\/widgets has no issue 99/);
});

test("a parent in another repository is read-only: other edits of the issue go through, removing or naming one is refused", async (t) => {
  const { forge, env } = await givenPlannedClone(t);
  const sent = await pushEdit(t, forge, env, 4, (text) => setField(text, "title", "Abroad, renamed"));
  t.deepEqual(sent, [`PATCH /repos/${REPO}/issues/4 {"title":"Abroad, renamed"}`]);
  t.regex(readWorkFile(env, "d", issuePath(4)), /\nparent: "acme\/gadgets#1"\n/);

  editWorkFile(env, "d", issuePath(4), withoutLine("parent"));
  editWorkFile(env, "d", issuePath(3), withLine("parent", '"acme/gadgets#1"'));
  const stderr = await refusedPush(t, forge, env);
  t.regex(
    stderr,
    /issues\/0004\.md: issue 4 is a sub-issue of acme\/gadgets#1, in another repository, which svc cannot change; put the line back as it was: parent: "acme\/gadgets#1"/,
  );
  t.regex(
    stderr,
    /issues\/0003\.md: parent: acme\/gadgets#1: svc links an issue to a parent of acme\/widgets only; name one of its issues by number/,
  );
});

test("an owner without issue types: a type is refused, saying so", async (t) => {
  const { forge, env } = await givenPlannedClone(t, { issueTypes: null });
  editWorkFile(env, "d", issuePath(3), withLine("type", "Bug"));
  const stderr = await refusedPush(t, forge, env);
  t.regex(stderr, /issues\/0003\.md: acme\/widgets has no issue types/);
});

test("a new file with a milestone, a type and a parent: one POST with both, then the sub-issue link", async (t) => {
  const { forge, env } = await givenPlannedClone(t);
  writeWorkFile(
    env,
    "d",
    "issues/new.md",
    "---\ntitle: Fresh\nmilestone: v2.0\ntype: Feature\nparent: 1\n---\nNew.\n",
  );
  await commitAll(t, env, "d", "New");
  const from = forge.requests.length;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const writes = forgeWrites(forge, from);
  t.deepEqual(
    writes.map((request) => `${request.method} ${request.path}`),
    [`POST ${API}/issues`, `POST ${API}/issues/1/sub_issues`],
  );
  t.like(JSON.parse(writes[0]?.body ?? "{}"), { title: "Fresh", milestone: 2, type: "Feature" });
  t.like(forge.issue(REPO, 5), { milestone: "v2.0", type: "Feature", parent: { repo: REPO, number: 1 } });
  t.is(writes[1]?.body, JSON.stringify({ sub_issue_id: forge.issue(REPO, 5)?.id }));
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.deepEqual(planningLines(readWorkFile(env, "d", issuePath(5))), [
    "milestone: v2.0",
    "type: Feature",
    "parent: 1",
  ]);
});

test("a milestone changed on the forge since the fetch: fetch first, and nothing is written", async (t) => {
  const { forge, env } = await givenPlannedClone(t);
  forge.editIssue(REPO, 1, { milestone: "v2.0" });
  editWorkFile(env, "d", issuePath(1), withLine("type", "Task"));
  const stderr = await refusedPush(t, forge, env);
  t.regex(stderr, FETCH_FIRST);
  t.like(forge.issue(REPO, 1), { milestone: "v2.0", type: "Bug" });
});

test("a token without push access: a milestone change, which the forge would drop, is refused before any write", async (t) => {
  const { forge, env } = await givenPlannedClone(t, { pushAccess: false });
  editWorkFile(env, "d", issuePath(3), withLine("milestone", "v1.0"));
  const stderr = await refusedPush(t, forge, env);
  t.regex(
    stderr,
    /issues\/0003\.md: FORGE_TOKEN has no push access to acme\/widgets, and the forge drops milestone and type changes/,
  );
  t.is(forge.issue(REPO, 3)?.milestone, null);
});
