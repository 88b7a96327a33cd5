/**
 * The tracker contract suite (issue 15; DESIGN.md §6; Document 3 "Sanctioned real-backend test targets"):
 * the same read and write checks, driven through `svc` and real `git`, against
 * - the fake tracker, always;
 * - the real project, only when `SVC_REAL_BACKEND_TESTS=1` and TRACKER_EMAIL, TRACKER_API_TOKEN,
 *   SVC_TRACKER_INSTANCE and SVC_ALLOWED_ORIGINS are set (`npm run test:real`, serialized: Document 3 asks
 *   for at most about 5 mutations a second). The project key follows Document 3's precedence
 *   (TRACKER_TEST_PROJECT, SVC_TRACKER_PROJECT, TEST). Otherwise each real test writes
 *   `SKIP: env vars unset` on stderr and is skipped.
 *
 * The checks observe the server only through its REST API (never through the fake's own handles), so they
 * run unchanged against both. Against the real project they create only issues whose summary starts with
 * `[svc-test]` and that carry the label `kind=test` (Document 3 test-fixture rule 3), change only those, and
 * delete what they created at teardown if a check failed half-way.
 */
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { parseRecordFile } from "../backends/record.js";
import { defaultTrackerProject, trackerConfig } from "../backends/tracker/config.js";
import { TRACKER_SCHEMA } from "../backends/tracker/schema.js";
import { HttpClient } from "../core/http.js";
import { givenFakeTracker } from "../testing/fake-tracker.js";
import { type GitEnv, git, gitOk, givenGitEnv } from "../testing/git.js";
import { commitAll, editWorkFile, readWorkFile, setField, writeWorkFile } from "../testing/push.js";
import { whenRealBackend } from "../testing/real-backend.js";
import { throughRecordingProxy } from "../testing/recording-proxy.js";
import { trackerPath, trackerRemote, trackerVars } from "../testing/tracker.js";

const REAL_VARS = [
  "TRACKER_EMAIL",
  "TRACKER_API_TOKEN",
  "SVC_TRACKER_INSTANCE",
  "SVC_ALLOWED_ORIGINS",
] as const;
const SUMMARY_PREFIX = "[svc-test]";
const TEST_LABEL = "kind=test";

interface ContractTarget {
  readonly vars: Readonly<Record<string, string>>;
  /** The site: `https://<instance>.atlassian.net`. */
  readonly baseUrl: string;
  readonly project: string;
}

interface ApiIssue {
  readonly key: string;
  readonly fields: {
    readonly summary: string;
    readonly labels: readonly string[];
    readonly status: { readonly name: string };
  };
}

/** The tracker's REST API as the checks use it, through svc's own egress-checked client. */
class TrackerApi {
  private readonly http: HttpClient;
  /** Issues this run created: the only ones it changes, and deletes at the end. */
  readonly created = new Set<string>();

  constructor(private readonly target: ContractTarget) {
    this.http = new HttpClient({
      agent: "svc-tracker-contract-test",
      allowedOrigins: target.vars.SVC_ALLOWED_ORIGINS,
    });
  }

  private async call(method: string, path: string, body?: unknown) {
    const { TRACKER_EMAIL: email, TRACKER_API_TOKEN: token } = this.target.vars;
    return await this.http.request({
      method,
      url: `${this.target.baseUrl}/rest/api/3${path}`,
      headers: {
        authorization: `Basic ${Buffer.from(`${email}:${token}`).toString("base64")}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** The issue, or undefined when it is gone. */
  async issue(key: string): Promise<ApiIssue | undefined> {
    const response = await this.call("GET", `/issue/${key}?fields=summary,labels,status`);
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw new Error(`GET issue ${key}: ${response.status}`);
    return JSON.parse(response.body.toString("utf8")) as ApiIssue;
  }

  /** Every issue key of the project, following `nextPageToken`. */
  async keys(): Promise<string[]> {
    const keys: string[] = [];
    let nextPageToken: string | undefined;
    do {
      const response = await this.call("POST", "/search/jql", {
        jql: `project = "${this.target.project}" ORDER BY key ASC`,
        fields: ["summary"],
        maxResults: 100,
        ...(nextPageToken ? { nextPageToken } : {}),
      });
      if (response.status !== 200) throw new Error(`search: ${response.status}`);
      const page = JSON.parse(response.body.toString("utf8")) as {
        issues: { key: string }[];
        nextPageToken?: string;
        isLast?: boolean;
      };
      keys.push(...page.issues.map((issue) => issue.key));
      nextPageToken = page.isLast ? undefined : page.nextPageToken;
    } while (nextPageToken);
    return keys;
  }

  /** The status names one transition of `key` reaches. */
  async reachable(key: string): Promise<string[]> {
    const response = await this.call("GET", `/issue/${key}/transitions`);
    const value = JSON.parse(response.body.toString("utf8")) as { transitions: { to: { name: string } }[] };
    return value.transitions.map((transition) => transition.to.name);
  }

  async remove(key: string): Promise<void> {
    await this.call("DELETE", `/issue/${key}`);
  }
}

async function givenClone(t: ExecutionContext, target: ContractTarget): Promise<GitEnv> {
  const env = givenGitEnv(t, { ...target.vars, SVC_SYNC_INTERVAL: "0" });
  await gitOk(t, env, ["clone", "-q", trackerRemote(target.baseUrl, target.project), "d"], {
    timeoutMs: 120_000,
  });
  await gitOk(t, env, ["config", "pull.rebase", "false"], { cwd: "d" });
  return env;
}

/** The clone holds one `<KEY>-<n>.md` per issue the API lists, with the API's summary. */
async function readChecks(t: ExecutionContext, given: ContractTarget): Promise<void> {
  const target = await throughRecordingProxy(t, "jira", given, "SVC_TRACKER_BASE_URL");
  const api = new TrackerApi(target);
  const env = await givenClone(t, target);
  const keys = await api.keys();
  const files = readdirSync(join(env.dir, "d", "issues")).sort();
  t.deepEqual(files, keys.map((key) => `${key}.md`).sort());
  const sample = keys[0];
  if (sample) {
    const issue = await api.issue(sample);
    const file = readWorkFile(env, "d", trackerPath(sample));
    t.regex(file, new RegExp(`^key: ${sample}$`, "m"));
    t.is(
      parseRecordFile(TRACKER_SCHEMA, trackerPath(sample), file).fields.title as string,
      issue?.fields.summary as string,
    );
  }
}

/** Create, edit, change status, `git rm`: each seen through the API. */
async function writeChecks(t: ExecutionContext, given: ContractTarget): Promise<void> {
  const target = await throughRecordingProxy(t, "jira", given, "SVC_TRACKER_BASE_URL");
  const api = new TrackerApi(target);
  t.teardown(async () => {
    for (const key of api.created) if (await api.issue(key).catch(() => undefined)) await api.remove(key);
  });
  const env = await givenClone(t, target);
  const before = new Set(readdirSync(join(env.dir, "d", "issues")));
  const summary = `${SUMMARY_PREFIX} contract ${randomBytes(4).toString("hex")}`;
  writeWorkFile(
    env,
    "d",
    "issues/contract.md",
    `---\ntitle: "${summary}"\nlabels: ["${TEST_LABEL}"]\n---\nMade by the **contract** suite.\n`,
  );
  await commitAll(t, env, "d", "Create");
  const created = await git(env, ["push"], { cwd: "d" });
  t.is(created.code, 0, created.stderr);
  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  const added = readdirSync(join(env.dir, "d", "issues")).filter((name) => !before.has(name));
  t.is(added.length, 1, added.join(", "));
  const key = (added[0] ?? "").replace(/\.md$/, "");
  api.created.add(key);
  const found = await api.issue(key);
  t.is(found?.fields.summary, summary);
  t.deepEqual(found?.fields.labels, [TEST_LABEL]);
  t.regex(readWorkFile(env, "d", trackerPath(key)), /^Made by the \*\*contract\*\* suite\.$/m);

  const [next] = await api.reachable(key);
  editWorkFile(env, "d", trackerPath(key), (text) => {
    const renamed = setField(text, "title", JSON.stringify(`${summary} (edited)`));
    return next === undefined ? renamed : setField(renamed, "status", JSON.stringify(next));
  });
  await commitAll(t, env, "d", "Edit");
  const edited = await git(env, ["push"], { cwd: "d" });
  t.is(edited.code, 0, edited.stderr);
  const after = await api.issue(key);
  t.is(after?.fields.summary, `${summary} (edited)`);
  if (next !== undefined) t.is(after?.fields.status.name, next);

  await gitOk(t, env, ["pull", "-q", "--ff-only"], { cwd: "d" });
  await gitOk(t, env, ["rm", "-q", trackerPath(key)], { cwd: "d" });
  await commitAll(t, env, "d", "Remove");
  const removed = await git(env, ["push"], { cwd: "d" });
  t.is(removed.code, 0, removed.stderr);
  t.is(await api.issue(key), undefined);
}

test("fake: read checks", async (t) => {
  const tracker = await givenFakeTracker(t, { pageSize: 40 });
  tracker.seed("TEST", 130);
  await readChecks(t, { vars: trackerVars(tracker), baseUrl: tracker.url, project: "TEST" });
});

test("fake: write checks", async (t) => {
  const tracker = await givenFakeTracker(t);
  tracker.seed("TEST", 5);
  await writeChecks(t, { vars: trackerVars(tracker), baseUrl: tracker.url, project: "TEST" });
});

// ---------------------------------------------------------------------------------------------------------
// Against the real project: only when asked for and configured.

whenRealBackend(
  REAL_VARS,
  ["SVC_TRACKER_BASE_URL", "TRACKER_TEST_PROJECT", "SVC_TRACKER_PROJECT"],
  ["real: read checks", "real: write checks"],
  (vars) => {
    const target: ContractTarget = {
      vars,
      baseUrl: trackerConfig(vars).baseUrl,
      project: defaultTrackerProject(vars),
    };
    test.serial("real: read checks", (t) => readChecks(t, target));
    test.serial("real: write checks", (t) => writeChecks(t, target));
  },
);
