/**
 * Server faults against the fake forge and the fake tracker (issue 32 §3), as e2e/server-faults.test.ts puts
 * them in front of the simulator and e2e/wiki-faults.test.ts in front of the fake wiki: each fault of
 * testing/faults.ts, through a fault-injecting proxy, at each step of clone (the issue listing), fetch (the
 * delta listing) and push (the read before an update, the update, the create, the delete: the forge's
 * close). For each case:
 *
 * 1. git exits as the README's table says (clone 128, fetch 128 naming the cache, push 1), its stderr
 *    names the backend, what it asked and what went wrong, and the next command, which, run as printed
 *    once the fault is gone, succeeds (a clone that ended without a command is what issue 32 reported);
 * 2. no cache after a failed clone; else a database that passes `PRAGMA integrity_check`;
 * 3. exactly once: after the printed command, the fake's request log holds one accepted write per change,
 *    and the new issue exists once.
 *
 * The proxy is the backend's base URL (`SVC_FORGE_BASE_URL`, `SVC_TRACKER_BASE_URL`), so it is the origin
 * on `SVC_ALLOWED_ORIGINS` and in every message; the fakes behind it are never addressed directly.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { excerpt } from "../core/errors.js";
import { type FakeForge, givenFakeForge } from "../testing/fake-forge.js";
import { type FakeTracker, givenFakeTracker } from "../testing/fake-tracker.js";
import { GARBAGE_BODY, givenFaultProxy, type ProxiedRequest } from "../testing/fault-proxy.js";
import {
  cacheIntegrity,
  concurrency,
  FAULTS,
  type FaultCase,
  faultEnv,
  fetchFailedPattern,
  literal,
  printedCommand,
  runPrinted,
  transportPattern,
  WHEN_AGAIN_LINE,
  whenPattern,
} from "../testing/faults.js";
import { forgeRemote, givenForgeEnv } from "../testing/forge.js";
import { cacheFolders, type GitEnv, git, gitOk } from "../testing/git.js";
import { commitAll, editWorkFile, writeWorkFile } from "../testing/push.js";
import { givenTrackerEnv, trackerRemote } from "../testing/tracker.js";

type Step = "clone" | "fetch" | "read" | "update" | "create" | "delete";

interface StepSpec {
  readonly label: string;
  readonly method: string;
  /** The request's path, without its query. */
  readonly path: string;
  /** What the backend says it was doing, as a pattern. */
  readonly what: string;
  /** Which request of the step (for a listing: the delta one or not). */
  readonly meets?: (query: string) => boolean;
}

/** What the test needs of a fake vendor: its setup, its steps and its record of accepted writes. */
interface Vendor {
  readonly name: string;
  /** The backend's description of the project, as messages begin. */
  readonly description: (origin: string) => string;
  readonly steps: Readonly<Record<Step, StepSpec>>;
  /** The files of the push: an edit, a new file, a removal. */
  readonly edited: string;
  readonly created: string;
  readonly removed: string;
  /** Starts the fake with three issues; returns its URL, the env and remote for `origin`, and its probes. */
  readonly start: (t: ExecutionContext) => Promise<{
    url: string;
    env: (origin: string) => GitEnv;
    remote: (origin: string) => string;
    /** Requests the fake answered, as method, path without query and status. */
    requests: () => readonly { method: string; path: string; status: number }[];
    /** Issues the fake holds titled `title`. */
    titled: (title: string) => number;
    /** Someone else's edit on the server, for the delta listing to find. */
    editElsewhere: () => void;
  }>;
}

const REPO = "acme/widgets";
const FORGE_ISSUES = `/repos/${REPO}/issues`;
const FORGE: Vendor = {
  name: "forge",
  description: (origin) => `forge repository ${REPO} at ${origin}`,
  steps: {
    clone: {
      label: "clone (the issue listing)",
      method: "GET",
      path: FORGE_ISSUES,
      what: literal(`listing the issues of ${REPO}`),
      meets: (query) => !query.includes("since="),
    },
    fetch: {
      label: "fetch (the delta listing)",
      method: "GET",
      path: FORGE_ISSUES,
      what: `${literal(`listing the issues of ${REPO} changed since `)}\\S+`,
      meets: (query) => query.includes("since="),
    },
    read: {
      label: "push (the read before PATCH)",
      method: "GET",
      path: `${FORGE_ISSUES}/1`,
      what: "reading issue 1",
    },
    update: { label: "push (PATCH)", method: "PATCH", path: `${FORGE_ISSUES}/1`, what: "updating issue 1" },
    create: { label: "push (POST, a create)", method: "POST", path: FORGE_ISSUES, what: "creating an issue" },
    delete: {
      label: "push (PATCH closing, git rm)",
      method: "PATCH",
      path: `${FORGE_ISSUES}/3`,
      what: "closing issue 3",
    },
  },
  edited: "issues/0001.md",
  created: "issues/new.md",
  removed: "issues/0003.md",
  start: async (t) => {
    const forge: FakeForge = await givenFakeForge(t);
    for (const title of ["First", "Second", "Third"])
      forge.addIssue(REPO, { title, body: `${title} body\n` });
    return {
      url: forge.url,
      env: (origin) =>
        givenForgeEnv(t, forge, {
          SVC_FORGE_BASE_URL: origin,
          SVC_ALLOWED_ORIGINS: origin,
          SVC_PROGRESS: "off",
        }),
      remote: (origin) => forgeRemote(origin, REPO),
      requests: () =>
        forge.requests.map((r) => ({ method: r.method, path: r.path.split("?")[0] ?? "", status: r.status })),
      titled: (title) => forge.issues(REPO).filter((issue) => issue.title === title).length,
      editElsewhere: () => void forge.editIssue(REPO, 2, { title: "Second, edited on the forge" }),
    };
  },
};

const PROJECT = "TEST";
const JIRA = "/rest/api/3";
const TRACKER: Vendor = {
  name: "tracker",
  description: (origin) => `tracker project ${PROJECT} at ${origin}`,
  steps: {
    clone: {
      label: "clone (the issue listing)",
      method: "POST",
      path: `${JIRA}/search/jql`,
      what: literal(`listing the issues of project ${PROJECT}`),
    },
    fetch: {
      label: "fetch (the delta listing)",
      method: "POST",
      path: `${JIRA}/search/jql`,
      what: `${literal(`listing the issues of project ${PROJECT} updated since `)}.+?`,
    },
    read: {
      label: "push (the read before PUT)",
      method: "GET",
      path: `${JIRA}/issue/${PROJECT}-1`,
      what: literal(`reading issue ${PROJECT}-1`),
    },
    update: {
      label: "push (PUT)",
      method: "PUT",
      path: `${JIRA}/issue/${PROJECT}-1`,
      what: literal(`updating issue ${PROJECT}-1`),
    },
    create: {
      label: "push (POST, a create)",
      method: "POST",
      path: `${JIRA}/issue`,
      what: "creating an issue",
    },
    delete: {
      label: "push (DELETE)",
      method: "DELETE",
      path: `${JIRA}/issue/${PROJECT}-3`,
      what: literal(`deleting issue ${PROJECT}-3`),
    },
  },
  edited: `issues/${PROJECT}-1.md`,
  created: "issues/new.md",
  removed: `issues/${PROJECT}-3.md`,
  start: async (t) => {
    const tracker: FakeTracker = await givenFakeTracker(t);
    for (const summary of ["First", "Second", "Third"]) tracker.addIssue(PROJECT, { summary });
    return {
      url: tracker.url,
      env: (origin) =>
        givenTrackerEnv(t, tracker, {
          SVC_TRACKER_BASE_URL: origin,
          SVC_ALLOWED_ORIGINS: origin,
          SVC_PROGRESS: "off",
        }),
      remote: (origin) => trackerRemote(origin, PROJECT),
      requests: () =>
        tracker.requests.map((r) => ({
          method: r.method,
          path: r.path.split("?")[0] ?? "",
          status: r.status,
        })),
      titled: (title) => tracker.issues(PROJECT).filter((issue) => issue.summary === title).length,
      editElsewhere: () =>
        void tracker.editIssue(`${PROJECT}-2`, { summary: "Second, edited in the tracker" }),
    };
  },
};

const slot = concurrency(3);

/** Whether the proxy's request is the one `step`'s fault meets; a delta listing is told by its query or body. */
function meets(vendor: Vendor, step: Step, request: ProxiedRequest, fetching: boolean): boolean {
  const spec = vendor.steps[step];
  const [pathname = "", query = ""] = request.path.split("?");
  if (request.method !== spec.method || pathname !== spec.path) return false;
  if (vendor === TRACKER && (step === "clone" || step === "fetch")) return step === "fetch" ? fetching : true;
  return spec.meets?.(query) ?? true;
}

/** What the message says went wrong at `step`, as a pattern. */
function faultPattern(vendor: Vendor, fault: FaultCase, step: Step, origin: string): string {
  const { method, path, what } = vendor.steps[step];
  const transport = transportPattern(fault, method, `${origin}${path}`);
  if (transport !== undefined) return transport;
  const server = `${literal(vendor.description(origin))}: ${what}`;
  if (fault.fault.kind === "answer")
    return `${server} \\(${method} ${literal(path)}\\) answered ${fault.fault.status}: ${literal(excerpt(JSON.stringify(fault.fault.body), 300))}`;
  // The tracker's edit and delete want their 204 before anything is parsed: a 200 is no edit.
  if (vendor === TRACKER && (step === "update" || step === "delete"))
    return `${server} \\(${method} ${literal(path)}\\) answered 200: ${literal(excerpt(GARBAGE_BODY, 300))}`;
  return (
    `${server} answered 200 with a body that is not JSON: \\S.*? ` +
    "\\(a proxy or sign-in page between svc and the server may have answered in its place\\)"
  );
}

/** The writes the fake accepted (2xx) from request `from` on, as `METHOD path` → count. */
function acceptedWrites(
  requests: readonly { method: string; path: string; status: number }[],
  from: number,
): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const request of requests.slice(from)) {
    if (request.method === "GET" || request.status < 200 || request.status >= 300) continue;
    if (request.path.includes("/search/")) continue;
    const key = `${request.method} ${request.path}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

for (const vendor of [FORGE, TRACKER]) {
  for (const step of Object.keys(vendor.steps) as Step[]) {
    const writes = step === "update" || step === "create" || step === "delete";
    for (const fault of FAULTS) {
      if (fault.writesOnly && !writes) continue;
      // A 204 has no body to cut short: that is the reset after forwarding.
      if (vendor === TRACKER && (step === "delete" || step === "update") && fault.fault.kind === "truncated")
        continue;
      test(`${vendor.name}: ${fault.name} at ${vendor.steps[step].label}`, async (t) => {
        t.teardown(await slot());
        const fake = await vendor.start(t);
        const proxy = await givenFaultProxy(t, fake.url);
        let on = false;
        let fetching = false;
        proxy.setFault((request) => (on && meets(vendor, step, request, fetching) ? fault.fault : undefined));
        const origin = proxy.url;
        const env = fake.env(origin);
        const remote = fake.remote(origin);
        const pattern = faultPattern(vendor, fault, step, origin);

        if (step === "clone") {
          on = true;
          const clone = await git(env, ["clone", "-q", remote, "d"], { env: faultEnv(fault) });
          t.is(clone.code, 128, clone.stderr);
          t.regex(clone.stderr, new RegExp(`^svc: (${pattern})\n`), clone.stderr);
          t.regex(
            clone.stderr,
            new RegExp(`${whenPattern(fault)}, run: ${literal(`git clone -q ${remote} d`)}\n$`),
            "the clone names the command to run again",
          );
          t.deepEqual(cacheFolders(env), [], "no cache is made before a listing succeeded");
          t.false(existsSync(join(env.dir, "d")));
          on = false;
          const from = fake.requests().length;
          await runPrinted(t, env, printedCommand(t, clone.stderr, /^no cached copy .*run: /m));
          t.deepEqual(acceptedWrites(fake.requests(), from), {});
          t.is(cacheIntegrity(env), "ok");
        } else if (step === "fetch") {
          await gitOk(t, env, ["clone", "-q", remote, "d"]);
          fake.editElsewhere();
          const tip = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
          on = true;
          fetching = true;
          const fetch = await git(env, ["fetch"], { cwd: "d", env: faultEnv(fault) });
          t.is(fetch.code, 128, fetch.stderr);
          t.regex(fetch.stderr, fetchFailedPattern(vendor.description(origin), `(?:${pattern})`, fault));
          t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), tip, "the cached state");
          t.is(cacheIntegrity(env), "ok");
          on = false;
          await runPrinted(t, env, printedCommand(t, fetch.stderr, WHEN_AGAIN_LINE), "d");
          t.not(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), tip, "the edit came");
        } else {
          await gitOk(t, env, ["clone", "-q", remote, "d"]);
          const title = `New from the clone (${vendor.name})`;
          editWorkFile(env, "d", vendor.edited, (text) => `${text}Edited in the clone.\n`);
          writeWorkFile(env, "d", vendor.created, `---\ntitle: ${title}\n---\nNew.\n`);
          await gitOk(t, env, ["rm", "-q", vendor.removed], { cwd: "d" });
          await commitAll(t, env, "d", "One of each: create, update, delete");
          const from = fake.requests().length;
          on = true;
          const push = await git(env, ["push"], { cwd: "d", env: faultEnv(fault) });
          t.is(push.code, 1, push.stderr);
          t.regex(push.stderr, new RegExp(`^svc: the .+ failed: (${pattern})\n`, "m"));
          t.regex(push.stderr, new RegExp(`; ${whenPattern(fault)}, run: git push\n`), "push again");
          t.is(cacheIntegrity(env), "ok");
          on = false;
          const fetch = await git(env, ["fetch"], { cwd: "d" });
          t.is(fetch.code, 0, fetch.stderr);
          await runPrinted(t, env, printedCommand(t, push.stderr, /run: git push$/m), "d");
          const { update, create, delete: remove } = vendor.steps;
          t.deepEqual(acceptedWrites(fake.requests(), from), {
            [`${create.method} ${create.path}`]: 1,
            [`${update.method} ${update.path}`]: 1,
            [`${remove.method} ${remove.path}`]: 1,
          });
          t.is(fake.titled(title), 1, "the new issue exists once");
        }
        t.true(
          proxy.requests.some((request) => meets(vendor, step, request, true)),
          "the fault met its request",
        );
      });
    }
  }
}
