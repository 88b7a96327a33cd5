/**
 * Server faults against the fake wiki (issue 17, "Server faults"): the faults of testing/faults.ts (but the
 * 502, see WIKI_FAULTS) at each step of clone (the first result page of the page listing; a later one),
 * fetch (the delta listing) and push (the GET before a PUT, the PUT, the POST, the DELETE), through a
 * fault-injecting proxy in front of the fake. For each case, as e2e/server-faults.test.ts does for the
 * simulator: git's exit code and the message naming the server and the next command, which then works as
 * printed; no cache after a failed clone, else a database that passes `PRAGMA integrity_check` and a next
 * fetch with exactly the wiki's pages; and, from the fake's request log, one accepted write per change.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { renderRecordFile } from "../backends/record.js";
import { wikiPageToRecord } from "../backends/wiki/backend.js";
import { WIKI_SCHEMA } from "../backends/wiki/schema.js";
import { excerpt } from "../core/errors.js";
import { hashObject } from "../git/objects.js";
import { type FakeWiki, givenFakeWiki } from "../testing/fake-wiki.js";
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
  treeOf,
  WHEN_AGAIN_LINE,
  whenPattern,
} from "../testing/faults.js";
import { cacheFolders, type GitEnv, git, gitOk } from "../testing/git.js";
import { commitAll, editWorkFile, writeWorkFile } from "../testing/push.js";
import { givenWikiEnv, wikiRemote } from "../testing/wiki.js";

type Step = "clone" | "clone-later" | "fetch" | "read" | "PUT" | "POST" | "DELETE";

const PAGES = "/wiki/api/v2/pages";

/** Each step: the request the fault meets and how the wiki backend names it. */
const STEPS: Readonly<
  Record<Step, { label: string; method: string; path: string; what: string; write?: string; done?: number }>
> = {
  clone: {
    label: "clone (the first result page)",
    method: "GET",
    path: "<listing>",
    what: "listing the pages of space SVC",
  },
  "clone-later": {
    label: "clone (a later result page)",
    method: "GET",
    path: "<listing>",
    what: "listing the pages of space SVC",
  },
  fetch: {
    label: "fetch (the delta listing)",
    method: "GET",
    path: "<listing>",
    what: "listing the pages of space SVC",
  },
  read: {
    label: "push (the GET before the PUT)",
    method: "GET",
    path: `${PAGES}/1`,
    what: "reading page 1",
    write: "update of record 1 (pages/1.md)",
    done: 1,
  },
  PUT: {
    label: "push (PUT)",
    method: "PUT",
    path: `${PAGES}/1`,
    what: "updating page 1",
    write: "update of record 1 (pages/1.md)",
    done: 1,
  },
  POST: {
    label: "push (POST, a create)",
    method: "POST",
    path: PAGES,
    what: "creating a page",
    write: "create from pages/new.md",
    done: 0,
  },
  DELETE: {
    label: "push (DELETE)",
    method: "DELETE",
    path: `${PAGES}/3`,
    what: "deleting page 3",
    write: "delete of record 3 (pages/3.md)",
    done: 2,
  },
};

const slot = concurrency(3);

/** Whether the proxy's request is the one the step's fault meets. */
function meets(step: Step, wiki: FakeWiki, request: ProxiedRequest): boolean {
  const { method, path } = STEPS[step];
  const [pathname = "", query = ""] = request.path.split("?");
  if (request.method !== method) return false;
  if (path !== "<listing>") return pathname === path;
  if (pathname !== `/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages`) return false;
  const later = query.includes("cursor=");
  const delta = query.includes("sort=-modified-date");
  return step === "fetch" ? delta && !later : !delta && later === (step === "clone-later");
}

/** What the message says the server did at `step`, as a pattern. */
function faultPattern(fault: FaultCase, step: Step, wiki: FakeWiki, origin: string): string {
  const { method, path, what } = STEPS[step];
  const url = `${origin}${path === "<listing>" ? `/wiki/api/v2/spaces/${wiki.space("SVC").id}/pages` : path}`;
  const transport = transportPattern(fault, method, url);
  if (transport !== undefined) return transport;
  const server = literal(`wiki space SVC at ${origin}: ${what}`);
  // An answer it did not expect names the request too (backends/rest.ts).
  const request = literal(`(${method} ${new URL(url).pathname})`);
  if (fault.fault.kind === "answer")
    return `${server} ${request} answered ${fault.fault.status}: ${literal(excerpt(JSON.stringify(fault.fault.body), 300))}`;
  // A delete wants its 204 before anything is parsed.
  if (step === "DELETE") return `${server} ${request} answered 200: ${literal(excerpt(GARBAGE_BODY, 300))}`;
  return (
    `${server} answered 200 with a body that is not JSON: ${literal(excerpt(GARBAGE_BODY))} ` +
    "\\(a proxy or sign-in page between svc and the server may have answered in its place\\)"
  );
}

/** path → blob id of the files the wiki's current pages in SVC make. */
function wikiTree(wiki: FakeWiki): Map<string, string> {
  const files = new Map<string, string>();
  for (const page of wiki.pages("SVC")) {
    const record = wikiPageToRecord({ ...page, body: { storage: { value: page.body } } });
    if (typeof record === "string") throw new Error(record);
    const content = Buffer.from(renderRecordFile(WIKI_SCHEMA, record.content));
    files.set(record.path, hashObject("blob", content));
  }
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

async function assertWikiState(t: ExecutionContext, env: GitEnv, wiki: FakeWiki): Promise<void> {
  t.deepEqual(await treeOf(t, env, "d", "origin/main"), wikiTree(wiki));
  t.is(cacheIntegrity(env), "ok");
}

/** The writes the fake accepted (2xx) from request `from` on, as `METHOD path` → count. */
function acceptedWrites(wiki: FakeWiki, from: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const request of wiki.requests.slice(from)) {
    if (request.method === "GET" || request.status < 200 || request.status >= 300) continue;
    const key = `${request.method} ${request.path.split("?")[0]}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

interface Case {
  readonly wiki: FakeWiki;
  readonly env: GitEnv;
  readonly origin: string;
  readonly remote: string;
  readonly fault: FaultCase;
  readonly setFault: (on: boolean) => void;
}

async function cloneCase(t: ExecutionContext, c: Case, step: "clone" | "clone-later"): Promise<void> {
  const { env, fault, origin, remote, wiki } = c;
  const from = wiki.requests.length;
  c.setFault(true);
  const clone = await git(env, ["clone", "-q", "--filter=blob:none", remote, "d"], { env: faultEnv(fault) });
  t.is(clone.code, 128, clone.stderr);
  t.regex(
    clone.stderr,
    new RegExp(
      `^svc: ${faultPattern(fault, step, wiki, origin)}\n` +
        `no cached copy of ${literal(`wiki space SVC at ${origin}`)} is there to serve instead; ` +
        `${whenPattern(fault)}, run: ${literal(`git clone -q --filter=blob:none ${remote} d`)}\n$`,
    ),
  );
  t.deepEqual(cacheFolders(env), [], "no cache is made before a listing succeeded");
  t.false(existsSync(join(env.dir, "d")), "git removes the failed clone");

  c.setFault(false);
  await runPrinted(t, env, printedCommand(t, clone.stderr, /^no cached copy .*run: /m));
  await assertWikiState(t, env, wiki);
  t.deepEqual(acceptedWrites(wiki, from), {});
}

async function fetchCase(t: ExecutionContext, c: Case): Promise<void> {
  const { env, fault, origin, remote, wiki } = c;
  await gitOk(t, env, ["clone", "-q", remote, "d"]);
  wiki.editPage("2");
  const tip = await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" });
  const from = wiki.requests.length;
  c.setFault(true);
  const fetch = await git(env, ["fetch"], { cwd: "d", env: faultEnv(fault) });
  t.is(fetch.code, 128, fetch.stderr);
  t.regex(
    fetch.stderr,
    fetchFailedPattern(`wiki space SVC at ${origin}`, faultPattern(fault, "fetch", wiki, origin), fault),
  );
  t.is(await gitOk(t, env, ["rev-parse", "origin/main"], { cwd: "d" }), tip, "the cached state, unchanged");
  t.is(cacheIntegrity(env), "ok");

  c.setFault(false);
  await runPrinted(t, env, printedCommand(t, fetch.stderr, WHEN_AGAIN_LINE), "d");
  await assertWikiState(t, env, wiki);
  t.deepEqual(acceptedWrites(wiki, from), {});
}

async function pushCase(
  t: ExecutionContext,
  c: Case,
  step: "read" | "PUT" | "POST" | "DELETE",
): Promise<void> {
  const { env, fault, origin, remote, wiki } = c;
  const title = "New in SVC";
  await gitOk(t, env, ["clone", "-q", remote, "d"]);
  editWorkFile(env, "d", "pages/1.md", (text) => `${text}<p>Edited in the clone.</p>`);
  writeWorkFile(env, "d", "pages/new.md", `---\ntitle: ${title}\n---\n<p>New.</p>`);
  await gitOk(t, env, ["rm", "-q", "pages/3.md"], { cwd: "d" });
  await commitAll(t, env, "d", "One of each: create, update, delete");
  const body = `${wiki.page("1")?.body}<p>Edited in the clone.</p>`;
  const from = wiki.requests.length;

  c.setFault(true);
  const push = await git(env, ["push"], { cwd: "d", env: faultEnv(fault) });
  t.is(push.code, 1, push.stderr);
  const { write = "", done = 0 } = STEPS[step];
  const when = `${whenPattern(fault)}, run: git push`;
  const unsent = done === 0 && fault.when === "after";
  t.regex(
    push.stderr,
    new RegExp(
      `^${done > 0 ? literal("svc: created record 4 from pages/new.md (it becomes pages/4.md)\n") : ""}` +
        `svc: the ${literal(write)} failed: ${faultPattern(fault, step, wiki, origin)}\n` +
        (unsent
          ? `  nothing was written; ${when}\n`
          : `  ${done} of 3 writes were done and are kept; push again to finish the rest \\(nothing is written twice\\); ${when}\n`) +
        `To ${literal(remote)}\n ! \\[remote rejected\\] main -> main \\(${
          unsent
            ? "nothing was written; push again \\(see above\\)"
            : `partial: ${done} of 3 writes done; push again to finish`
        }\\)\nerror: failed to push some refs to '${literal(remote)}'\n$`,
    ),
  );
  t.is(cacheIntegrity(env), "ok");
  if (step !== "read") {
    const faulted = `${STEPS[step].method} ${STEPS[step].path}`;
    t.is(acceptedWrites(wiki, from)[faulted] ?? 0, fault.committed ? 1 : 0, "the server acted on it");
  }

  c.setFault(false);
  const fetch = await git(env, ["fetch"], { cwd: "d" });
  t.is(fetch.code, 0, fetch.stderr);
  await assertWikiState(t, env, wiki);

  await runPrinted(t, env, printedCommand(t, push.stderr, /run: git push$/m), "d");
  t.deepEqual(acceptedWrites(wiki, from), {
    [`POST ${PAGES}`]: 1,
    [`PUT ${PAGES}/1`]: 1,
    [`DELETE ${PAGES}/3`]: 1,
  });
  t.is(wiki.pages("SVC").filter((page) => page.title === title).length, 1);
  t.is(wiki.page("1")?.body, body);
  t.is(wiki.page("3")?.status, "trashed");
  t.is(wiki.baseHits, 0);
}

/**
 * The faults of the matrix but the 502: the wiki backend names every status it did not expect in one
 * function, so a 502 is the 500's case (e2e/server-faults.test.ts runs both against the simulator).
 */
const WIKI_FAULTS = FAULTS.filter((fault) => fault.name !== "502");

for (const step of Object.keys(STEPS) as Step[]) {
  const sendsWrite = ["PUT", "POST", "DELETE"].includes(step);
  for (const fault of WIKI_FAULTS) {
    if (fault.writesOnly && !sendsWrite) continue;
    // The wiki's 204 has no body to cut short: that is the reset after forwarding.
    if (step === "DELETE" && fault.fault.kind === "truncated") continue;
    test(`${fault.name} at ${STEPS[step].label}`, async (t) => {
      t.teardown(await slot());
      const wiki = await givenFakeWiki(t);
      // A later result page needs more pages than one holds (250).
      wiki.seedPages("SVC", step === "clone-later" ? 260 : 3);
      const proxy = await givenFaultProxy(t, wiki.url);
      let on = false;
      proxy.setFault((request) => (on && meets(step, wiki, request) ? fault.fault : undefined));
      const c: Case = {
        wiki,
        env: givenWikiEnv(t, wiki, {
          SVC_WIKI_BASE_URL: proxy.url,
          SVC_ALLOWED_ORIGINS: proxy.url,
          SVC_PROGRESS: "off",
        }),
        origin: proxy.url,
        remote: wikiRemote(proxy.url, "SVC"),
        fault,
        setFault: (value) => {
          on = value;
        },
      };
      if (step === "clone" || step === "clone-later") await cloneCase(t, c, step);
      else if (step === "fetch") await fetchCase(t, c);
      else await pushCase(t, c, step);
      t.true(
        proxy.requests.some((request) => meets(step, wiki, request)),
        "the fault met its request",
      );
    });
  }
}
