/**
 * The tracker benchmark (issue 15): `svc init tracker::TEST` of a 10,000-issue project on the fake tracker,
 * with its REST calls, beside `git clone --filter=blob:none file://` (with checkout) of a bare repo holding
 * the same files, measured in the same run; then two no-op `git fetch`es in the svc clone with their REST
 * calls (the account's zone once, then one delta search each), beside a no-op fetch of the plain clone.
 *
 * The real `svc` and `git-remote-svc` bins and the installed git, in the isolated environment of `gitEnv`.
 * The fake tracker runs in this process, so the svc figures include its serving time (it converts 10,000
 * descriptions to JSON per listing), as the plain ones include `git upload-pack`'s.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeTracker } from "../../testing/fake-tracker.js";
import { gitEnv, plainPartialClones, SVC_BIN } from "./git.js";
import { checkedRun } from "./process.js";
import { median } from "./stats.js";
import { formatRatio, renderTable } from "./table.js";

const PROJECT = "TEST";
const ISSUES = 10_000;
const RUNS = 3;

/** A test fixture, imported only when this benchmark runs (see forge.ts). */
async function startTracker(): Promise<FakeTracker> {
  const { startFakeTracker } = await import("../../testing/fake-tracker.js");
  // The benchmark times svc; judging every exchange against the vendor's description is the tests' job.
  return startFakeTracker({ vendorChecks: false });
}

/** Runs `step`, returning its time and the REST calls the fake received meanwhile. */
async function counted(
  tracker: FakeTracker,
  step: () => Promise<number>,
): Promise<{ ms: number; calls: string }> {
  const from = tracker.requests.length;
  const ms = await step();
  const requests = tracker.requests.slice(from);
  const searches = requests.filter((request) => request.path.startsWith("/rest/api/3/search/jql")).length;
  return { ms, calls: `${requests.length} (${searches} search pages)` };
}

const ms = (value: number) => `${Math.round(value)} ms`;

export async function benchTracker(
  out: NodeJS.WritableStream,
  progress: (line: string) => void,
): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "svc-bench-tracker-"));
  try {
    const tracker = await startTracker();
    try {
      await measure(tracker, root, out, progress);
    } finally {
      await tracker.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function measure(
  tracker: FakeTracker,
  root: string,
  out: NodeJS.WritableStream,
  progress: (line: string) => void,
): Promise<void> {
  progress(`seeding the fake tracker with ${ISSUES} issues`);
  tracker.seed(PROJECT, ISSUES);
  const vars = {
    TRACKER_EMAIL: tracker.email,
    TRACKER_API_TOKEN: tracker.apiToken,
    SVC_TRACKER_INSTANCE: "bench",
    SVC_TRACKER_BASE_URL: tracker.url,
    SVC_ALLOWED_ORIGINS: tracker.origin,
    SVC_SYNC_INTERVAL: "0",
  };
  const inits: { ms: number; calls: string }[] = [];
  let workTree = "";
  let env = gitEnv(root);
  for (let i = 0; i < RUNS; i++) {
    const dir = join(root, `init-${i}`);
    const runEnv = gitEnv(root, { ...vars, SVC_CACHE_DIR: join(root, `cache-${i}`) });
    progress(`svc init, run ${i + 1}`);
    const init = async () =>
      (await checkedRun(process.execPath, [SVC_BIN, "init", `tracker::${PROJECT}`, dir], runEnv)).ms;
    inits.push(await counted(tracker, init));
    workTree = dir;
    env = runEnv;
  }
  const plain = await plainPartialClones(root, "tracker", workTree, env, RUNS, progress);
  const fetch = (dir: string) => async () =>
    (await checkedRun("git", ["-C", dir, "fetch", "--quiet", "origin"], env)).ms;
  progress("no-op git fetch 1 and 2");
  const first = await counted(tracker, fetch(workTree));
  const second = await counted(tracker, fetch(workTree));
  const plainFirst = await fetch(plain.dir)();
  const plainSecond = await fetch(plain.dir)();

  const init = median(inits.map((run) => run.ms));
  const plainClone = median(plain.times);
  out.write(
    `${ISSUES.toLocaleString("en-US")} issues on the fake tracker; medians of ${RUNS} inits/clones, ` +
      `one run of each fetch; git with no user config; SVC_BLOB_LIMIT=0\n\n`,
  );
  out.write(
    renderTable(
      ["scenario", "svc", "baseline", "ratio"],
      [
        ["svc init + checkout", ms(init), ms(plainClone), formatRatio(init, plainClone)],
        ["REST calls of init", inits[inits.length - 1]?.calls ?? "-", "-", "-"],
        ["no-op git fetch 1", ms(first.ms), ms(plainFirst), formatRatio(first.ms, plainFirst)],
        ["REST calls of fetch 1", first.calls, "-", "-"],
        ["no-op git fetch 2", ms(second.ms), ms(plainSecond), formatRatio(second.ms, plainSecond)],
        ["REST calls of fetch 2", second.calls, "-", "-"],
      ],
    ),
  );
}
