/**
 * The forge contract suite (issue 14; DESIGN.md §6; Document 3 "Sanctioned real-backend test targets"):
 * the same read and write checks, driven through `svc` and real `git`, against
 * - the fake forge, always;
 * - the real repository, only when `SVC_REAL_BACKEND_TESTS=1` and FORGE_TOKEN, SVC_ALLOWED_ORIGINS and
 *   SVC_FORGE_TEST_REPO (`<owner>/<repo>`) are all set (`npm run test:real`; SVC_FORGE_BASE_URL for a
 *   GitHub Enterprise server). Otherwise each real test writes `SKIP: env vars unset` on stderr and is
 *   skipped.
 *
 * The checks observe the server only through its REST API (never through the fake's own handles), so they
 * run unchanged against both. Against the real repository they create only issues titled `[svc-test] …`
 * with the label `kind:test` (Document 3 test-fixture rule 3), change only those, and close what they
 * created at teardown if a check failed half-way (the REST API cannot delete issues).
 */
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { FORGE_DEFAULT_BASE_URL } from "../backends/forge/config.js";
import { linkTarget } from "../backends/forge/link.js";
import { HttpClient } from "../core/http.js";
import { givenFakeForge } from "../testing/fake-forge.js";
import { forgeRemote, forgeVars } from "../testing/forge.js";
import { type GitEnv, git, gitOk, givenGitEnv } from "../testing/git.js";
import { commitAll, editWorkFile, readWorkFile, setField, writeWorkFile } from "../testing/push.js";
import { whenRealBackend } from "../testing/real-backend.js";
import { throughRecordingProxy } from "../testing/recording-proxy.js";

const REAL_VARS = ["FORGE_TOKEN", "SVC_ALLOWED_ORIGINS", "SVC_FORGE_TEST_REPO"] as const;
const TITLE_PREFIX = "[svc-test]";
const TEST_LABEL = "kind:test";

interface ContractTarget {
  readonly vars: Readonly<Record<string, string>>;
  /** The API root. */
  readonly baseUrl: string;
  /** `<owner>/<repo>`. */
  readonly repo: string;
}

interface ApiIssue {
  readonly number: number;
  readonly title: string;
  readonly body: string | null;
  readonly state: string;
  readonly state_reason: string | null;
  readonly labels: readonly { readonly name: string }[];
  readonly pull_request?: unknown;
}

/** The forge's REST API as the checks use it, through svc's own egress-checked client. */
class ForgeApi {
  private readonly http: HttpClient;
  /** Issues this run created: the only ones it changes, and closes at the end. */
  readonly created = new Set<number>();

  constructor(private readonly target: ContractTarget) {
    this.http = new HttpClient({
      agent: "svc-forge-contract-test",
      allowedOrigins: target.vars.SVC_ALLOWED_ORIGINS,
    });
  }

  private async call(method: string, url: string, body?: unknown) {
    return await this.http.request({
      method,
      url: url.startsWith("http") ? url : `${this.target.baseUrl}/repos/${this.target.repo}${url}`,
      headers: {
        authorization: `Bearer ${this.target.vars.FORGE_TOKEN}`,
        accept: "application/vnd.github+json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async issue(number: number): Promise<ApiIssue> {
    const response = await this.call("GET", `/issues/${number}`);
    if (response.status !== 200) throw new Error(`GET issue ${number}: ${response.status}`);
    return JSON.parse(response.body.toString("utf8")) as ApiIssue;
  }

  /** Every issue (pull requests left out), following `Link`. */
  async issues(): Promise<ApiIssue[]> {
    const all: ApiIssue[] = [];
    let url: string | undefined = "/issues?state=all&per_page=100";
    while (url) {
      const response = await this.call("GET", url);
      if (response.status !== 200) throw new Error(`listing: ${response.status}`);
      all.push(...(JSON.parse(response.body.toString("utf8")) as ApiIssue[]));
      url = linkTarget(response.headers.link, "next");
    }
    return all.filter((issue) => issue.pull_request === undefined);
  }

  async close(number: number): Promise<void> {
    await this.call("PATCH", `/issues/${number}`, { state: "closed", state_reason: "not_planned" });
  }
}

function fileOf(number: number): string {
  return `issues/${String(number).padStart(4, "0")}.md`;
}

async function givenClone(t: ExecutionContext, target: ContractTarget): Promise<GitEnv> {
  const env = givenGitEnv(t, { ...target.vars, SVC_SYNC_INTERVAL: "0" });
  await gitOk(t, env, ["clone", "-q", forgeRemote(target.baseUrl, target.repo), "d"], { timeoutMs: 120_000 });
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return env;
}

/** The clone holds one file per issue of the API, pull requests left out, with the API's title and body. */
async function readChecks(t: ExecutionContext, given: ContractTarget): Promise<void> {
  const target = await throughRecordingProxy(t, "github", given, "SVC_FORGE_BASE_URL");
  const api = new ForgeApi(target);
  const env = await givenClone(t, target);
  const issues = await api.issues();
  const files = readdirSync(join(env.dir, "d", "issues")).sort();
  t.deepEqual(files, issues.map((issue) => fileOf(issue.number).slice("issues/".length)).sort());
  const sample = issues[0];
  if (sample) {
    const file = readWorkFile(env, "d", fileOf(sample.number));
    t.true(file.endsWith(`\n---\n${sample.body ?? ""}`), "the body byte for byte");
    t.regex(file, new RegExp(`^id: ${sample.number}$`, "m"));
  }
}

/** Create, edit, change status, `git rm`: each seen through the API. */
async function writeChecks(t: ExecutionContext, given: ContractTarget): Promise<void> {
  const target = await throughRecordingProxy(t, "github", given, "SVC_FORGE_BASE_URL");
  const api = new ForgeApi(target);
  t.teardown(async () => {
    for (const number of api.created) {
      const issue = await api.issue(number).catch(() => undefined);
      if (issue?.state === "open") await api.close(number);
    }
  });
  const env = await givenClone(t, target);
  const title = `${TITLE_PREFIX} contract ${randomBytes(4).toString("hex")}`;
  writeWorkFile(
    env,
    "d",
    "issues/contract.md",
    `---\ntitle: "${title}"\nlabels: ["${TEST_LABEL}"]\n---\nMade by the contract suite.\n`,
  );
  await commitAll(t, env, "d", "Create");
  const created = await git(env, ["push"], { cwd: "d" });
  t.is(created.code, 0, created.stderr);
  const found = (await api.issues()).find((issue) => issue.title === title);
  if (!found) return t.fail("the created issue is not on the server");
  api.created.add(found.number);
  t.is(found.body, "Made by the contract suite.\n");
  t.deepEqual(
    found.labels.map((label) => label.name),
    [TEST_LABEL],
  );

  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  const path = fileOf(found.number);
  editWorkFile(env, "d", path, (text) =>
    setField(setField(text, "title", `"${title} (edited)"`), "status", "in_progress"),
  );
  await commitAll(t, env, "d", "Edit");
  const edited = await git(env, ["push"], { cwd: "d" });
  t.is(edited.code, 0, edited.stderr);
  const after = await api.issue(found.number);
  t.is(after.title, `${title} (edited)`);
  t.is(after.state, "open");
  t.deepEqual(after.labels.map((label) => label.name).sort(), [TEST_LABEL, "status/in-progress"].sort());

  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  await gitOk(t, env, ["rm", "-q", path], { cwd: "d" });
  await commitAll(t, env, "d", "Remove");
  const removed = await git(env, ["push"], { cwd: "d" });
  t.is(removed.code, 0, removed.stderr);
  t.regex(removed.stderr, /closed as not planned; it stays as status wont_fix/);
  const closed = await api.issue(found.number);
  t.is(closed.state, "closed");
  t.is(closed.state_reason, "not_planned");
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  t.regex(readWorkFile(env, "d", path), /^status: wont_fix$/m);
}

test("fake: read checks", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 130, { pullRequests: 12 });
  await readChecks(t, { vars: forgeVars(forge), baseUrl: forge.url, repo: "acme/widgets" });
});

test("fake: write checks", async (t) => {
  const forge = await givenFakeForge(t);
  forge.seed("acme/widgets", 5);
  await writeChecks(t, { vars: forgeVars(forge), baseUrl: forge.url, repo: "acme/widgets" });
});

// ---------------------------------------------------------------------------------------------------------
// Against the real repository: only when asked for and configured.

whenRealBackend(REAL_VARS, ["SVC_FORGE_BASE_URL"], ["real: read checks", "real: write checks"], (vars) => {
  const target: ContractTarget = {
    vars,
    baseUrl: (vars.SVC_FORGE_BASE_URL || FORGE_DEFAULT_BASE_URL).replace(/\/+$/, ""),
    repo: vars.SVC_FORGE_TEST_REPO ?? "",
  };
  test.serial("real: read checks", (t) => readChecks(t, target));
  test.serial("real: write checks", (t) => writeChecks(t, target));
});
