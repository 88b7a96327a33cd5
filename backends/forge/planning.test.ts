/**
 * The forge backend's milestones, types and parents (issue 35) against the fake forge, without git:
 * `checkWrites` asks the lists once and only when a write needs them, and names what exists; an update whose
 * milestone the forge drops (a token that lost push access after the check) is an error, not `ok`.
 */
import test, { type ExecutionContext } from "ava";
import { SvcError } from "../../core/errors.js";
import { HttpClient } from "../../core/http.js";
import { type FakeForge, type FakeForgeRepoSpec, givenFakeForge } from "../../testing/fake-forge.js";
import { ForgeBackend } from "./backend.js";

const REPO = "acme/widgets";

async function givenBackend(
  t: ExecutionContext,
  spec: Partial<FakeForgeRepoSpec> = {},
): Promise<{ forge: FakeForge; backend: ForgeBackend }> {
  const forge = await givenFakeForge(t, {
    repos: [{ owner: "acme", name: "widgets", milestones: ["v1.0", "v2.0"], ...spec }],
  });
  const backend = new ForgeBackend(
    { token: forge.token, baseUrl: forge.url, allowedOrigins: forge.origin },
    REPO,
    new HttpClient({ allowedOrigins: forge.origin, agent: "svc-test" }),
  );
  return { forge, backend };
}

const asked = (forge: FakeForge, part: string) =>
  forge.requests.filter((request) => request.path.split("?")[0]?.endsWith(part)).length;

test("checkWrites asks nothing for writes that change no milestone or type, and each list once for many that do", async (t) => {
  const { forge, backend } = await givenBackend(t);
  t.deepEqual(
    await backend.checkWrites([
      { kind: "update", key: "1", path: "issues/0001.md", changes: { fields: { title: "x" } } },
    ]),
    [],
  );
  t.is(forge.requests.length, 0);
  // A removal needs no list, only the push access the forge would drop it without.
  t.deepEqual(
    await backend.checkWrites([
      { kind: "update", key: "1", path: "issues/0001.md", changes: { fields: { milestone: null } } },
    ]),
    [],
  );
  t.deepEqual(
    forge.requests.map((request) => request.path),
    ["/repos/acme/widgets"],
  );
  const problems = await backend.checkWrites([
    {
      kind: "update",
      key: "1",
      path: "issues/0001.md",
      changes: { fields: { milestone: "v2.0", type: "Bug" } },
    },
    {
      kind: "update",
      key: "2",
      path: "issues/0002.md",
      changes: { fields: { milestone: "v9", type: "bug" } },
    },
    { kind: "create", path: "issues/new.md", changes: { fields: { title: "New", type: "Epic" } } },
  ]);
  t.deepEqual(problems, [
    {
      path: "issues/0002.md",
      message: 'milestone "v9" is not a milestone of acme/widgets; the milestones: "v1.0", "v2.0"',
    },
    {
      path: "issues/0002.md",
      message: 'type "bug" is not an issue type of acme/widgets; the types: "Task", "Bug", "Feature"',
    },
    {
      path: "issues/new.md",
      message: 'type "Epic" is not an issue type of acme/widgets; the types: "Task", "Bug", "Feature"',
    },
  ]);
  t.is(asked(forge, "/milestones"), 1);
  t.is(asked(forge, "/issue-types"), 1);
  const self = { fields: { id: 4, title: "Self" }, body: "" };
  t.deepEqual(
    await backend.checkWrites([
      {
        kind: "update",
        key: "4",
        path: "issues/0004.md",
        changes: { fields: { parent: 4 } },
        original: self,
      },
    ]),
    [{ path: "issues/0004.md", message: "an issue cannot be its own parent (parent: 4)" }],
  );
});

test("an update whose milestone the forge drops is an error naming push access, not ok", async (t) => {
  const { forge, backend } = await givenBackend(t, { pushAccess: false });
  forge.addIssue(REPO, { title: "One" });
  const [record] = (await backend.listAll()).records;
  const base = { version: null, updatedAt: record?.updatedAt ?? "" };
  await t.throwsAsync(backend.update("1", { fields: { milestone: "v1.0", title: "Uno" } }, base), {
    message: /did not set its milestone .*without push access to acme\/widgets/,
  });
  t.like(forge.issue(REPO, 1), { title: "Uno", milestone: null });
});

test("a parent that is no issue of the repository is refused before any write", async (t) => {
  const { forge, backend } = await givenBackend(t);
  forge.addIssue(REPO, { title: "One" });
  forge.addIssue(REPO, { title: "A pull request", pullRequest: true });
  const original = { fields: { id: 1, title: "One" }, body: "" };
  for (const parent of [2, 99])
    t.deepEqual(
      await backend.checkWrites([
        { kind: "update", key: "1", path: "issues/0001.md", changes: { fields: { parent } }, original },
      ]),
      [
        {
          path: "issues/0001.md",
          message: `parent: ${parent}: acme/widgets has no issue ${parent} (a pull request cannot be a parent)`,
        },
      ],
    );
});

test("a create whose parent link fails after the POST says the issue was made, with no status a refusal would carry", async (t) => {
  const { forge, backend } = await givenBackend(t);
  // Bypassing checkWrites (which refuses an unknown parent): the link fails after the issue exists.
  const error = await t.throwsAsync(backend.create({ fields: { title: "Orphan", parent: 99 }, body: "" }), {
    message: /^issue 1 was created, but then adding issue 1 to the sub-issues of issue 99: .*404/,
  });
  // Neither permanent nor unsent: the push keeps the create's journal row, and the next push finds issue 1.
  t.true(error instanceof SvcError);
  t.is((error as SvcError).data.status, undefined);
  t.is(forge.issue(REPO, 1)?.title, "Orphan");
});
