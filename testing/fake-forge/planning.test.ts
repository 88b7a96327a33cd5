/**
 * The fake forge's milestones, issue types and sub-issues (issue 35), through plain `fetch`: the lists (paged
 * milestones; a 404 for an owner without issue types), the issue object's `milestone`, `type` and
 * `parent_issue_url`, a PATCH's or create's milestone number and type name (422 for unknown ones; dropped
 * without push access), and the sub-issue calls. Every exchange is judged against GitHub's description when
 * the fake closes.
 */
import test from "ava";
import { givenFakeForge } from "../fake-forge.js";
import { callForge, linkRelations } from "./requests.js";

const REPO = "/repos/acme/widgets";
const call = callForge;

interface IssueJson {
  readonly id: number;
  readonly number: number;
  readonly updated_at: string;
  readonly milestone: { readonly number: number; readonly title: string } | null;
  readonly type: { readonly name: string } | null;
  readonly parent_issue_url: string | null;
}

const SPEC = { owner: "acme", name: "widgets", milestones: ["v1.0", "v2.0", "Someday"] };

test("milestones are listed with state=all and paged by Link; issue types listed, or 404 for an owner without them", async (t) => {
  const forge = await givenFakeForge(t, {
    repos: [SPEC, { owner: "solo", name: "tools", issueTypes: null }],
  });
  const first = await call(forge, "GET", `${REPO}/milestones?state=all&per_page=2`);
  t.is(first.status, 200);
  t.deepEqual(
    first.json<{ number: number; title: string }[]>().map((m) => [m.number, m.title]),
    [
      [1, "v1.0"],
      [2, "v2.0"],
    ],
  );
  const next = linkRelations(first.headers.link).next as string;
  const second = await call(forge, "GET", next);
  t.deepEqual(
    second.json<{ title: string }[]>().map((m) => m.title),
    ["Someday"],
  );
  t.is(second.headers.link, undefined);
  const types = await call(forge, "GET", `${REPO}/issue-types`);
  t.deepEqual(
    types.json<{ name: string }[]>().map((type) => type.name),
    ["Task", "Bug", "Feature"],
  );
  const none = await call(forge, "GET", "/repos/solo/tools/issue-types", {
    deliberate: "an owner without issue types",
  });
  t.is(none.status, 404);
});

test("PATCH and POST take a milestone number and a type name; unknown ones answer 422; the issue shows them", async (t) => {
  const forge = await givenFakeForge(t, { repos: [SPEC] });
  forge.addIssue("acme/widgets", { title: "One" });
  const patched = await call(forge, "PATCH", `${REPO}/issues/1`, { json: { milestone: 2, type: "bug" } });
  t.is(patched.status, 200);
  const issue = patched.json<IssueJson>();
  t.like(issue.milestone, { number: 2, title: "v2.0" });
  t.is(issue.type?.name, "Bug");
  t.like(forge.issue("acme/widgets", 1), { milestone: "v2.0", type: "Bug" });
  const cleared = await call(forge, "PATCH", `${REPO}/issues/1`, { json: { milestone: null, type: null } });
  t.like(cleared.json<IssueJson>(), { milestone: null, type: null });
  for (const json of [{ milestone: 9 }, { type: "Epic" }]) {
    const refused = await call(forge, "PATCH", `${REPO}/issues/1`, { json, deliberate: "an unknown value" });
    t.is(refused.status, 422, JSON.stringify(json));
  }
  const created = await call(forge, "POST", `${REPO}/issues`, {
    json: { title: "Two", milestone: 1, type: "Task" },
  });
  t.is(created.status, 201);
  t.like(created.json<IssueJson>(), { milestone: { number: 1, title: "v1.0" }, type: { name: "Task" } });
});

test("without push access, milestone and type changes are dropped without a word", async (t) => {
  const forge = await givenFakeForge(t, { repos: [{ ...SPEC, pushAccess: false }] });
  forge.addIssue("acme/widgets", { title: "One" });
  const patched = await call(forge, "PATCH", `${REPO}/issues/1`, {
    json: { milestone: 1, type: "Bug", title: "Uno" },
  });
  t.is(patched.status, 200);
  t.like(patched.json<IssueJson>(), { milestone: null, type: null });
  t.is(forge.issue("acme/widgets", 1)?.title, "Uno");
});

test("sub-issues: POST links by database id, a second parent is refused, DELETE unlinks; both issues' updated_at move", async (t) => {
  const forge = await givenFakeForge(t, { repos: [SPEC, { owner: "acme", name: "gadgets" }] });
  for (const title of ["Parent", "Other", "Child"]) forge.addIssue("acme/widgets", { title });
  const child = forge.issue("acme/widgets", 3);
  const before = forge.issue("acme/widgets", 1)?.updatedAt;
  const linked = await call(forge, "POST", `${REPO}/issues/1/sub_issues`, {
    json: { sub_issue_id: child?.id },
  });
  t.is(linked.status, 201);
  t.is(linked.json<IssueJson>().number, 1, "the answer is the parent");
  t.not(forge.issue("acme/widgets", 1)?.updatedAt, before);
  t.deepEqual(forge.issue("acme/widgets", 3)?.parent, { repo: "acme/widgets", number: 1 });
  const got = await call(forge, "GET", `${REPO}/issues/3`);
  t.is(got.json<IssueJson>().parent_issue_url, `${forge.url}/repos/acme/widgets/issues/1`);
  t.is((await call(forge, "GET", `${REPO}/issues/3/parent`)).json<IssueJson>().number, 1);
  t.deepEqual(
    (await call(forge, "GET", `${REPO}/issues/1/sub_issues`)).json<IssueJson[]>().map((i) => i.number),
    [3],
  );
  const second = await call(forge, "POST", `${REPO}/issues/2/sub_issues`, {
    json: { sub_issue_id: child?.id },
    deliberate: "a second parent",
  });
  t.is(second.status, 422);
  const wrong = await call(forge, "DELETE", `${REPO}/issues/2/sub_issue`, {
    json: { sub_issue_id: child?.id },
    deliberate: "a link the issue does not have",
  });
  t.is(wrong.status, 404);
  const unlinked = await call(forge, "DELETE", `${REPO}/issues/1/sub_issue`, {
    json: { sub_issue_id: child?.id },
  });
  t.is(unlinked.status, 200);
  t.is(forge.issue("acme/widgets", 3)?.parent, null);
  t.is((await call(forge, "GET", `${REPO}/issues/3/parent`, { deliberate: "no parent" })).status, 404);
  // A parent in another repository of the same owner, set in the browser.
  forge.addIssue("acme/gadgets", { title: "Elsewhere" });
  forge.setParent("acme/widgets", 3, { repo: "acme/gadgets", number: 1 });
  t.is(
    (await call(forge, "GET", `${REPO}/issues/3`)).json<IssueJson>().parent_issue_url,
    `${forge.url}/repos/acme/gadgets/issues/1`,
  );
});
