/**
 * The wiki contract suite (DESIGN.md §6; Document 3 "Sanctioned real-backend test targets"): the same read
 * and write checks, driven through `svc` and real `git`, against
 * - the fake wiki, always;
 * - the real test space, only when `SVC_REAL_BACKEND_TESTS=1` and VENDOR_API_KEY, VENDOR_EMAIL,
 *   SVC_WIKI_TENANT, SVC_ALLOWED_ORIGINS and SVC_WIKI_TEST_SPACE are all set (`npm run test:real`), so CI
 *   never reaches a real service. Otherwise each real test writes `SKIP: env vars unset` on stderr and is
 *   skipped.
 *
 * The checks observe the server only through its REST API (never through the fake's own handles), so they
 * run unchanged against both. Against the real space they create only pages titled `[svc-test] …`, change
 * and delete only pages they created, refuse to touch a page labelled `svc-durable-fixture`, and delete what
 * they created at teardown if a check failed half-way.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { HttpClient } from "../core/http.js";
import { givenFakeWiki } from "../testing/fake-wiki.js";
import { type GitEnv, git, gitOk, givenGitEnv, SPARSE_SET, svc } from "../testing/git.js";
import { commitAll, FETCH_FIRST, readWorkFile, writeWorkFile } from "../testing/push.js";
import { skipReal, whenRealBackend } from "../testing/real-backend.js";
import { throughRecordingProxy } from "../testing/recording-proxy.js";
import { pageFileBody, wikiRemote, wikiVars, wikiWrites } from "../testing/wiki.js";

const REAL_VARS = [
  "VENDOR_API_KEY",
  "VENDOR_EMAIL",
  "SVC_WIKI_TENANT",
  "SVC_ALLOWED_ORIGINS",
  "SVC_WIKI_TEST_SPACE",
] as const;
const TITLE_PREFIX = "[svc-test]";
const DURABLE_LABEL = "svc-durable-fixture";
/** The label every page a test creates carries, so leftovers can be found (Document 3 test-fixture rule 3). */
const TEST_LABEL = "svc-test";

/** Where the checks run: the variables for `svc` and `git`, and the space to use. */
interface ContractTarget {
  readonly vars: Readonly<Record<string, string>>;
  /** The tenant base URL the REST API is reached at. */
  readonly baseUrl: string;
  /** The space key or alias. */
  readonly space: string;
}

interface ApiPage {
  readonly id: string;
  readonly status: string;
  readonly title: string;
  readonly spaceId: string;
  readonly version: { readonly number: number };
  readonly body: { readonly storage?: { readonly value: string } };
}

/** The wiki's REST API as the checks use it, through svc's own egress-checked client. */
class WikiApi {
  private readonly http: HttpClient;
  private readonly authorization: string;
  /** Pages this run created: the only ones it may change or delete. */
  readonly created = new Set<string>();

  constructor(private readonly target: ContractTarget) {
    this.http = new HttpClient({
      agent: "svc-wiki-contract-test",
      allowedOrigins: target.vars.SVC_ALLOWED_ORIGINS,
    });
    const { VENDOR_EMAIL: email = "", VENDOR_API_KEY: token = "" } = target.vars;
    this.authorization = `Basic ${Buffer.from(`${email}:${token}`).toString("base64")}`;
  }

  private async call(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; value: unknown }> {
    const response = await this.http.request({
      method,
      url: `${this.target.baseUrl}${path}`,
      headers: {
        authorization: this.authorization,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = response.body.toString("utf8");
    return { status: response.status, value: text === "" ? null : (JSON.parse(text) as unknown) };
  }

  async spaceId(): Promise<string> {
    const { status, value } = await this.call(
      "GET",
      `/wiki/api/v2/spaces?keys=${encodeURIComponent(this.target.space)}`,
    );
    const id = (value as { results?: { id?: string }[] } | null)?.results?.[0]?.id;
    if (status !== 200 || !id) throw new Error(`space ${this.target.space}: ${status}`);
    return id;
  }

  async spaceKey(): Promise<string> {
    const { status, value } = await this.call(
      "GET",
      `/wiki/api/v2/spaces?keys=${encodeURIComponent(this.target.space)}`,
    );
    const key = (value as { results?: { key?: string }[] } | null)?.results?.[0]?.key;
    if (status !== 200 || !key) throw new Error(`space ${this.target.space}: ${status}`);
    return key;
  }

  /** The page, or undefined when the API answers 404 or it is in the trash. */
  async page(id: string): Promise<ApiPage | undefined> {
    const { status, value } = await this.call("GET", `/wiki/api/v2/pages/${id}?body-format=storage`);
    if (status === 404) return undefined;
    if (status !== 200) throw new Error(`GET page ${id}: ${status}`);
    const page = value as ApiPage;
    return page.status === "trashed" ? undefined : page;
  }

  /** The page's label names (v2). */
  async labels(id: string): Promise<string[]> {
    const { status, value } = await this.call("GET", `/wiki/api/v2/pages/${id}/labels`);
    if (status !== 200) throw new Error(`GET labels of page ${id}: ${status}`);
    return ((value as { results?: { name?: string }[] } | null)?.results ?? []).map(
      (label) => label.name ?? "",
    );
  }

  /** Labels a page this run created with TEST_LABEL (v1: the v2 API cannot add labels). */
  async labelAsTest(id: string): Promise<void> {
    if (!this.created.has(id)) throw new Error(`page ${id} was not created by this run; not labelling it`);
    const { status } = await this.call("POST", `/wiki/rest/api/content/${id}/label`, [
      { prefix: "global", name: TEST_LABEL },
    ]);
    if (status !== 200) throw new Error(`POST label of page ${id}: ${status}`);
  }

  /** Creates a `[svc-test]` page through the API (optionally under `parentId`), labelled TEST_LABEL. */
  async createTestPage(spaceId: string, title: string, body: string, parentId?: string): Promise<ApiPage> {
    const { status, value } = await this.call("POST", "/wiki/api/v2/pages", {
      spaceId,
      status: "current",
      title: `${TITLE_PREFIX} ${title}`,
      ...(parentId === undefined ? {} : { parentId }),
      body: { representation: "storage", value: body },
    });
    if (status !== 200)
      throw new Error(`POST page ${title}: ${status} ${JSON.stringify(value).slice(0, 200)}`);
    const page = value as ApiPage;
    this.created.add(page.id);
    await this.labelAsTest(page.id);
    return page;
  }

  /** Throws if the page is labelled as a durable fixture: no test may change those. */
  async assertNotDurable(id: string): Promise<void> {
    if ((await this.labels(id)).includes(DURABLE_LABEL)) {
      throw new Error(`page ${id} is labelled ${DURABLE_LABEL}; not touching it`);
    }
  }

  /** Throws unless this run created page `id`, its title has the test prefix and it is not a durable fixture. */
  async assertOurs(id: string): Promise<ApiPage> {
    if (!this.created.has(id)) throw new Error(`page ${id} was not created by this run; not touching it`);
    const page = await this.page(id);
    if (!page?.title.startsWith(TITLE_PREFIX)) throw new Error(`page ${id} is not a ${TITLE_PREFIX} page`);
    await this.assertNotDurable(id);
    return page;
  }

  /** The sacrificial page, restored from the trash first if a previous run left it there (Document 3 rule 2). */
  async sacrificial(id: string): Promise<ApiPage> {
    await this.assertNotDurable(id);
    const { status, value } = await this.call(
      "GET",
      `/wiki/api/v2/pages/${id}?body-format=storage&status=current&status=trashed`,
    );
    if (status !== 200) throw new Error(`GET sacrificial page ${id}: ${status}`);
    const page = value as ApiPage;
    if (page.status !== "trashed") return page;
    const restored = await this.call("PUT", `/wiki/api/v2/pages/${id}`, {
      id,
      status: "current",
      title: page.title,
      body: { representation: "storage", value: page.body.storage?.value ?? "" },
      version: {
        number: page.version.number + 1,
        message: "svc contract test: restore the sacrificial page",
      },
    });
    if (restored.status !== 200) throw new Error(`restoring sacrificial page ${id}: ${restored.status}`);
    return restored.value as ApiPage;
  }

  /** Someone else edits one of our pages in the browser: PUT with version + 1. */
  async editBody(id: string, body: string): Promise<void> {
    const page = await this.assertOurs(id);
    const { status } = await this.call("PUT", `/wiki/api/v2/pages/${id}`, {
      id,
      status: "current",
      title: page.title,
      body: { representation: "storage", value: body },
      version: { number: page.version.number + 1, message: "svc contract test: a concurrent edit" },
    });
    if (status !== 200) throw new Error(`PUT page ${id}: ${status}`);
  }

  /** Teardown: moves every page this run created, and still has, to the trash. */
  async deleteCreated(): Promise<void> {
    for (const id of this.created) {
      if (await this.page(id)) {
        await this.assertOurs(id);
        await this.call("DELETE", `/wiki/api/v2/pages/${id}`);
      }
    }
  }
}

function givenTargetEnv(t: ExecutionContext, target: ContractTarget): GitEnv {
  return givenGitEnv(t, { ...target.vars, SVC_SYNC_INTERVAL: "0" });
}

/** A page body of one line (so a concurrent edit of it conflicts), unique to this run. */
function oneLine(text: string): string {
  return `<p>${text}</p>`;
}

/** Replaces everything after the frontmatter of a page file. */
function withBody(text: string, body: string): string {
  const close = text.indexOf("\n---\n", 3);
  if (close < 0) throw new Error(`no frontmatter in ${text.slice(0, 80)}`);
  return text.slice(0, close + "\n---\n".length) + body;
}

/** The read checks: spaces, list, a sparse clone with lazily fetched bodies identical to the API's. */
async function readChecks(t: ExecutionContext, given: ContractTarget): Promise<void> {
  const target = await throughRecordingProxy(t, "confluence", given, "SVC_WIKI_BASE_URL");
  const api = new WikiApi(target);
  const env = givenTargetEnv(t, target);
  const key = await api.spaceKey();

  const spaces = await svc(env, ["spaces", "--backend", "wiki", "--format", "json"]);
  t.is(spaces.code, 0, spaces.stderr);
  const listed = JSON.parse(spaces.stdout) as { key: string; name: string; url: string }[];
  const space = listed.find((entry) => entry.key === key);
  t.truthy(space, `svc spaces lists ${key}`);
  t.true(space?.url.startsWith(`${target.baseUrl}/wiki/`), space?.url);

  const list = await svc(env, ["list", "--backend", "wiki", "--project", target.space, "--format", "json"]);
  t.is(list.code, 0, list.stderr);
  const pages = JSON.parse(list.stdout) as Record<string, unknown>[];
  t.true(pages.length > 0 && pages.length <= 500, `${pages.length} pages`);
  for (const page of pages) {
    t.deepEqual(Object.keys(page), [
      "id",
      "title",
      "version",
      "spaceId",
      "parentId",
      "createdAt",
      "updatedAt",
      "labels",
    ]);
    t.deepEqual(page.labels, []);
  }

  await gitOk(
    t,
    env,
    ["clone", "-q", "--filter=blob:none", "--sparse", wikiRemote(target.baseUrl, target.space), "d"],
    {
      timeoutMs: 120_000,
    },
  );
  const files = (await gitOk(t, env, ["ls-tree", "-r", "--name-only", "HEAD"], { cwd: "d" })).split("\n");
  t.true(
    files.length > 0 && files.every((file) => /^pages\/[1-9][0-9]*\.md$/.test(file)),
    files.slice(0, 5).join(),
  );
  // Listed pages are in the tree (the list is the first 500 of them).
  const inTree = new Set(files);
  t.true(pages.every((page) => inTree.has(`pages/${String(page.id)}.md`)));

  // Check out three pages lazily; each body is byte for byte the API's body.storage.value.
  const sample = pages.slice(0, 3).map((page) => String(page.id));
  await gitOk(t, env, [...SPARSE_SET, ...sample.map((id) => `pages/${id}.md`)], {
    cwd: "d",
  });
  for (const id of sample) {
    const page = await api.page(id);
    const bytes = readFileSync(join(env.dir, "d", "pages", `${id}.md`));
    t.true(
      pageFileBody(bytes).equals(Buffer.from(page?.body.storage?.value ?? "\u0000", "utf8")),
      `pages/${id}.md`,
    );
  }
}

/**
 * The write checks on one page this run creates: create (POST) → pull renames it to `pages/<id>.md`; edit
 * (PUT, version + 1); a concurrent edit → `fetch first` → pull conflicts → the resolution is pushed; delete.
 */
async function writeChecks(t: ExecutionContext, given: ContractTarget): Promise<string | undefined> {
  const target = await throughRecordingProxy(t, "confluence", given, "SVC_WIKI_BASE_URL");
  const api = new WikiApi(target);
  t.teardown(() => api.deleteCreated());
  const env = givenTargetEnv(t, target);
  const run = randomBytes(4).toString("hex");
  const title = `${TITLE_PREFIX} contract ${run}`;

  await gitOk(
    t,
    env,
    ["clone", "-q", "--filter=blob:none", "--sparse", wikiRemote(target.baseUrl, target.space), "d"],
    {
      timeoutMs: 120_000,
    },
  );
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  await gitOk(t, env, [...SPARSE_SET, "pages/new-*"], { cwd: "d" });

  // Create (the sparse checkout has no pages/ folder yet).
  mkdirSync(join(env.dir, "d", "pages"), { recursive: true });
  writeWorkFile(env, "d", `pages/new-${run}.md`, `---\ntitle: "${title}"\n---\n${oneLine(`created ${run}`)}`);
  await commitAll(t, env, "d", `Create ${title}`);
  const create = await git(env, ["push"], { cwd: "d" });
  t.is(create.code, 0, create.stderr);
  const id = /svc: created record (\d+) from pages\/new-/.exec(create.stderr)?.[1];
  if (!id) {
    t.fail(`no created id in:\n${create.stderr}`);
    return undefined;
  }
  api.created.add(id);
  await api.labelAsTest(id);
  t.true((await api.labels(id)).includes(TEST_LABEL));
  const created = await api.assertOurs(id);
  t.is(created.title, title);
  t.is(created.body.storage?.value, oneLine(`created ${run}`));

  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  await gitOk(t, env, ["sparse-checkout", "add", `pages/${id}.md`], { cwd: "d" });
  const path = `pages/${id}.md`;
  t.regex(readWorkFile(env, "d", path), new RegExp(`^id: ${id}$`, "m"));
  t.true(
    pageFileBody(readFileSync(join(env.dir, "d", path))).equals(
      Buffer.from(created.body.storage?.value ?? "", "utf8"),
    ),
  );

  // Edit: PUT with version + 1.
  const edited = oneLine(`edited ${run}`);
  writeWorkFile(env, "d", path, withBody(readWorkFile(env, "d", path), edited));
  await commitAll(t, env, "d", `Edit ${title}`);
  const edit = await git(env, ["push"], { cwd: "d" });
  t.is(edit.code, 0, edit.stderr);
  const afterEdit = await api.assertOurs(id);
  t.is(afterEdit.version.number, created.version.number + 1);
  t.is(afterEdit.body.storage?.value, edited);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });

  // A concurrent edit of the same line: fetch first, then a conflict on pull, then the resolution.
  await api.editBody(id, oneLine(`server ${run}`));
  writeWorkFile(env, "d", path, withBody(readWorkFile(env, "d", path), oneLine(`local ${run}`)));
  await commitAll(t, env, "d", `Local edit of ${title}`);
  const rejected = await git(env, ["push"], { cwd: "d" });
  t.is(rejected.code, 1, rejected.stderr);
  t.regex(rejected.stderr, FETCH_FIRST);
  t.is((await api.page(id))?.body.storage?.value, oneLine(`server ${run}`), "nothing was written");
  const pull = await git(env, ["pull", "--no-rebase"], { cwd: "d" });
  t.not(pull.code, 0);
  t.true(pull.stdout.includes(`CONFLICT (content): Merge conflict in ${path}`), pull.stdout);
  const conflicted = readWorkFile(env, "d", path);
  t.true(
    conflicted.includes(
      `<<<<<<< HEAD\n${oneLine(`local ${run}`)}\n=======\n${oneLine(`server ${run}`)}\n>>>>>>> `,
    ),
    conflicted,
  );
  const resolved = oneLine(`resolved ${run}`);
  writeWorkFile(env, "d", path, withBody(conflicted, resolved));
  await gitOk(t, env, ["add", path], { cwd: "d" });
  await gitOk(t, env, ["commit", "-q", "--no-edit"], { cwd: "d" });
  const beforeResolve = (await api.page(id))?.version.number ?? 0;
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const afterResolve = await api.assertOurs(id);
  t.is(afterResolve.body.storage?.value, resolved);
  t.is(afterResolve.version.number, beforeResolve + 1);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });

  // Delete: to the trash.
  await api.assertOurs(id);
  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await gitOk(t, env, ["commit", "-q", "-m", `Delete ${title}`], { cwd: "d" });
  const remove = await git(env, ["push"], { cwd: "d" });
  t.is(remove.code, 0, remove.stderr);
  t.is(await api.page(id), undefined, "the page is in the trash");
  return id;
}

/** The durable parent/child pair (Document 3 test-fixture rule 1): ids from the environment of the real run. */
interface DurableFixture {
  readonly parentId: string | undefined;
  readonly childId: string | undefined;
}

/**
 * The hierarchy check: the child's `parentId` in its page file is the parent's id. It reads the durable pair,
 * never writes to it; if either page is missing it seeds a `[svc-test]` pair, labelled, and deletes it at
 * teardown. Returns whether it had to seed, and the API client that knows what it created.
 */
async function hierarchyChecks(
  t: ExecutionContext,
  given: ContractTarget,
  fixture: DurableFixture,
): Promise<{ seeded: boolean; api: WikiApi }> {
  const target = await throughRecordingProxy(t, "confluence", given, "SVC_WIKI_BASE_URL");
  const api = new WikiApi(target);
  t.teardown(() => api.deleteCreated());
  const env = givenTargetEnv(t, target);
  let parent = fixture.parentId === undefined ? undefined : await api.page(fixture.parentId);
  let child = fixture.childId === undefined ? undefined : await api.page(fixture.childId);
  const durable = parent !== undefined && child !== undefined;
  if (durable) {
    for (const page of [parent, child])
      t.true((await api.labels(page?.id ?? "")).includes(DURABLE_LABEL), page?.id);
  } else {
    const run = randomBytes(4).toString("hex");
    const spaceId = await api.spaceId();
    parent = await api.createTestPage(spaceId, `hierarchy parent ${run}`, oneLine(`parent ${run}`));
    child = await api.createTestPage(spaceId, `hierarchy child ${run}`, oneLine(`child ${run}`), parent.id);
  }
  const parentId = parent?.id ?? "";
  const childId = child?.id ?? "";
  await gitOk(
    t,
    env,
    ["clone", "-q", "--filter=blob:none", "--sparse", wikiRemote(target.baseUrl, target.space), "d"],
    { timeoutMs: 120_000 },
  );
  await gitOk(t, env, [...SPARSE_SET, `pages/${parentId}.md`, `pages/${childId}.md`], {
    cwd: "d",
  });
  const childFile = readWorkFile(env, "d", `pages/${childId}.md`);
  t.regex(childFile, new RegExp(`^parentId: ${parentId}$`, "m"));
  t.regex(readWorkFile(env, "d", `pages/${parentId}.md`), new RegExp(`^id: ${parentId}$`, "m"));
  return { seeded: !durable, api };
}

/**
 * The end-to-end litmus on the sacrificial page (Document 3 rule 2): restored from the trash if needed, its
 * body edited through git and pushed as one PUT, the result read back through the API. Durable pages are
 * refused before anything is written.
 */
async function litmusCheck(t: ExecutionContext, given: ContractTarget, pageId: string): Promise<void> {
  const target = await throughRecordingProxy(t, "confluence", given, "SVC_WIKI_BASE_URL");
  const api = new WikiApi(target);
  const env = givenTargetEnv(t, target);
  const before = await api.sacrificial(pageId);
  const run = randomBytes(4).toString("hex");
  await gitOk(
    t,
    env,
    ["clone", "-q", "--filter=blob:none", "--sparse", wikiRemote(target.baseUrl, target.space), "d"],
    { timeoutMs: 120_000 },
  );
  const path = `pages/${pageId}.md`;
  await gitOk(t, env, [...SPARSE_SET, path], { cwd: "d" });
  const body = oneLine(`svc litmus ${run}`);
  writeWorkFile(env, "d", path, withBody(readWorkFile(env, "d", path), body));
  await commitAll(t, env, "d", `Litmus ${run}`);
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 0, push.stderr);
  const after = await api.page(pageId);
  t.is(after?.body.storage?.value, body);
  t.is(after?.version.number, before.version.number + 1);
}

// ---------------------------------------------------------------------------------------------------------
// Against the fake wiki: always.

test("fake: read checks", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 40);
  await readChecks(t, { vars: wikiVars(wiki), baseUrl: wiki.url, space: "SVC" });
  t.is(wiki.baseHits, 0);
  t.deepEqual(wikiWrites(wiki), []);
});

test("fake: write checks", async (t) => {
  const wiki = await givenFakeWiki(t);
  const seeded = wiki.seedPages("SVC", 10).map((id) => wiki.page(id));
  const id = await writeChecks(t, { vars: wikiVars(wiki), baseUrl: wiki.url, space: "SVC" });
  t.is(wiki.baseHits, 0);
  // Only the page the checks created was written to; the others are as seeded.
  t.deepEqual(
    wikiWrites(wiki).map((write) => `${write.method} ${write.path}`),
    [
      "POST /wiki/api/v2/pages",
      `POST /wiki/rest/api/content/${id}/label`,
      `PUT /wiki/api/v2/pages/${id}`,
      `PUT /wiki/api/v2/pages/${id}`,
      `PUT /wiki/api/v2/pages/${id}`,
      `DELETE /wiki/api/v2/pages/${id}`,
    ],
  );
  t.deepEqual(
    seeded.map((page) => wiki.page(page?.id ?? "")),
    seeded,
  );
});

test("fake: hierarchy check reads the durable pair and writes nothing to it", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 3);
  const parent = wiki.createPage("SVC", { title: "Durable parent", body: "<p>parent</p>" });
  const child = wiki.createPage("SVC", { title: "Durable child", body: "<p>child</p>", parentId: parent.id });
  wiki.labelPage(parent.id, DURABLE_LABEL);
  wiki.labelPage(child.id, DURABLE_LABEL);
  const { seeded } = await hierarchyChecks(
    t,
    { vars: wikiVars(wiki), baseUrl: wiki.url, space: "SVC" },
    { parentId: parent.id, childId: child.id },
  );
  t.false(seeded);
  t.deepEqual(wikiWrites(wiki), []);
});

test("fake: hierarchy check seeds a labelled test pair when the durable one is missing, and removes it", async (t) => {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 3);
  const target = { vars: wikiVars(wiki), baseUrl: wiki.url, space: "SVC" };
  const { seeded, api } = await hierarchyChecks(t, target, { parentId: "999999", childId: undefined });
  t.true(seeded);
  const created = wiki.pages("SVC").filter((page) => page.title.startsWith(TITLE_PREFIX));
  t.is(created.length, 2);
  t.true(created.every((page) => wiki.labels(page.id).includes(TEST_LABEL)));
  // What the teardown does, run now so it can be checked: the seeded pair goes to the trash.
  await api.deleteCreated();
  t.true(created.every((page) => wiki.page(page.id)?.status === "trashed"));
});

test("fake: the litmus edits the sacrificial page, restoring it from the trash first", async (t) => {
  const wiki = await givenFakeWiki(t);
  const [sacrificial] = wiki.seedPages("SVC", 3);
  const id = sacrificial ?? "";
  wiki.trashPage(id);
  const target = { vars: wikiVars(wiki), baseUrl: wiki.url, space: "SVC" };
  await litmusCheck(t, target, id);
  t.is(wiki.page(id)?.status, "current");
  t.deepEqual(
    wikiWrites(wiki).map((write) => `${write.method} ${write.path}`),
    [`PUT /wiki/api/v2/pages/${id}`, `PUT /wiki/api/v2/pages/${id}`],
  );
});

test("fake: the litmus refuses a page labelled as a durable fixture before writing", async (t) => {
  const wiki = await givenFakeWiki(t);
  const [durable] = wiki.seedPages("SVC", 2);
  wiki.labelPage(durable ?? "", DURABLE_LABEL);
  await t.throwsAsync(
    litmusCheck(t, { vars: wikiVars(wiki), baseUrl: wiki.url, space: "SVC" }, durable ?? ""),
    {
      message: /labelled svc-durable-fixture; not touching it/,
    },
  );
  t.deepEqual(wikiWrites(wiki), []);
});

// ---------------------------------------------------------------------------------------------------------
// Against the real test space: only when asked for and configured.

const REAL_TESTS = [
  "real: read checks",
  "real: write checks",
  "real: hierarchy check (durable pair, or a seeded test pair)",
  "real: litmus on the sacrificial page",
] as const;

whenRealBackend(
  REAL_VARS,
  [
    "SVC_WIKI_BASE_URL",
    "SVC_WIKI_DURABLE_PARENT_ID",
    "SVC_WIKI_DURABLE_CHILD_ID",
    "SVC_WIKI_SACRIFICIAL_PAGE_ID",
  ],
  REAL_TESTS,
  (vars) => {
    const target: ContractTarget = {
      vars,
      baseUrl: (vars.SVC_WIKI_BASE_URL || `https://${vars.SVC_WIKI_TENANT}.atlassian.net`).replace(
        /\/+$/,
        "",
      ),
      space: vars.SVC_WIKI_TEST_SPACE ?? "",
    };
    test.serial(REAL_TESTS[0], (t) => readChecks(t, target));
    test.serial(REAL_TESTS[1], (t) => writeChecks(t, target));
    test.serial(REAL_TESTS[2], async (t) => {
      await hierarchyChecks(t, target, {
        parentId: vars.SVC_WIKI_DURABLE_PARENT_ID || undefined,
        childId: vars.SVC_WIKI_DURABLE_CHILD_ID || undefined,
      });
    });
    const sacrificial = vars.SVC_WIKI_SACRIFICIAL_PAGE_ID;
    if (sacrificial) test.serial(REAL_TESTS[3], (t) => litmusCheck(t, target, sacrificial));
    else skipReal(REAL_TESTS[3], ["SVC_WIKI_SACRIFICIAL_PAGE_ID"]);
  },
);
