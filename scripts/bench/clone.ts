/**
 * The clone benchmark (issues 3 and 18): for 1,000 and 10,000 issues (and 100,000 with `--large`), `svc init`
 * including checkout beside `git clone --filter=blob:none file://` of an equivalent bare repo plus checkout;
 * a no-op `git fetch` beside the helper's own `capabilities` round trip (the goal) and beside a plain
 * `git fetch` of the plain clone, with the REST calls it made, and the same fetch through a helper that
 * does nothing (floor-helper.cts: the least any helper that node runs can take); the helper's `capabilities` round trip beside
 * `node -e 0`; the helper's peak memory during the inits; and with `--large`, an init of 1,000,000 issues.
 *
 * Everything is real: the `svc sim` process with a SQLite file, the `svc` and `git-remote-svc` bins, the
 * installed git. git reads no user configuration (temporary HOME and global config).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ListeningChild, spawnListening } from "../children.js";
import type { BenchOptions } from "./args.js";
import { BIN, gitEnv, plainPartialClone, SVC_BIN } from "./git.js";
import { measureLargeInit, seedSimStore } from "./large.js";
import { checkedRun, timedRun } from "./process.js";
import { countAuditRows } from "./sim-audit.js";
import { median } from "./stats.js";
import { renderTable } from "./table.js";

const PROJECT = "bench";
const RUNS = 5;
const FETCHES = 7;

/** A simulator of `issues` issues (its store filled directly: large.ts `seedSimStore`), listening on port 0. */
async function startSim(root: string, issues: number): Promise<ListeningChild> {
  const db = join(root, `sim-${issues}.db`);
  seedSimStore(db, issues);
  return spawnListening(
    [SVC_BIN, "sim", "--bind", "127.0.0.1:0", "--db", db, "--rate-limit", "0"],
    /svc-sim listening on (\S+)/,
    120_000,
  );
}

interface SizeResult {
  readonly issues: number;
  readonly init: number;
  readonly plainClone: number;
  readonly fetch: number;
  readonly plainFetch: number;
  /** A no-op fetch of the same clone through floor-helper.cts, which does no work: any helper's least. */
  readonly floorFetch: number;
  readonly restCalls: number;
  /** The helper's peak memory over the inits (the largest `exit maxRSS=` of SVC_TRACE), in MiB. */
  readonly peakMiB: number;
}

/** The largest `exit maxRSS=<KB>` of SVC_TRACE lines in `stderr`, in MiB; 0 when there is none. */
function peakRssMiB(stderr: string): number {
  const peaks = [...stderr.matchAll(/exit maxRSS=(\d+)KB/g)].map((match) => Number(match[1]));
  return peaks.length === 0 ? 0 : Math.max(...peaks) / 1024;
}

async function measureSize(
  root: string,
  issues: number,
  progress: (line: string) => void,
): Promise<SizeResult> {
  progress(`${issues} issues: seeding the simulator`);
  const sim = await startSim(root, issues);
  try {
    const inits: number[] = [];
    const plainTimes: number[] = [];
    let peakMiB = 0;
    let workTree = "";
    let plainDir = "";
    let plainClone: ((run: number) => Promise<{ ms: number; dir: string }>) | undefined;
    // svc's inits and plain git's clones take turns (the plain repository is made from the first init), so
    // that a burst of load, or the disk still writing the files of the run before, hits both alike.
    for (let i = 0; i < RUNS; i++) {
      const dir = join(root, `init-${issues}-${i}`);
      const env = gitEnv(root, { SVC_CACHE_DIR: join(root, `cache-${issues}-${i}`), SVC_TRACE: "1" });
      progress(`${issues} issues: svc init, run ${i + 1}`);
      const run = await checkedRun(
        process.execPath,
        [SVC_BIN, "init", `sim::${PROJECT}`, dir, "--origin", sim.url],
        env,
      );
      inits.push(run.ms);
      peakMiB = Math.max(peakMiB, peakRssMiB(run.stderr));
      workTree = dir;
      plainClone ??= await plainPartialClone(root, String(issues), dir, gitEnv(root));
      progress(`${issues} issues: plain git clone, run ${i + 1}`);
      const plain = await plainClone(i);
      plainTimes.push(plain.ms);
      plainDir = plain.dir;
    }
    const env = gitEnv(root, { SVC_CACHE_DIR: join(root, `cache-${issues}-${RUNS - 1}`) });
    await checkedRun("git", ["-C", workTree, "config", "svc.syncInterval", "0"], env);
    const floorEnv = await givenFloorRemote(root, workTree, env);
    const dbPath = join(root, `sim-${issues}.db`);
    const fetches: number[] = [];
    const plainFetches: number[] = [];
    const floorFetches: number[] = [];
    let restCalls = 0;
    // Interleaved, so that a burst of load on the machine hits all alike.
    for (let i = 0; i < FETCHES; i++) {
      const before = countAuditRows(dbPath);
      fetches.push((await checkedRun("git", ["-C", workTree, "fetch", "--quiet", "origin"], env)).ms);
      restCalls += countAuditRows(dbPath) - before;
      plainFetches.push((await checkedRun("git", ["-C", plainDir, "fetch", "--quiet", "origin"], env)).ms);
      floorFetches.push(
        (await checkedRun("git", ["-C", workTree, "fetch", "--quiet", "floor"], floorEnv)).ms,
      );
    }
    return {
      issues,
      init: median(inits),
      plainClone: median(plainTimes),
      fetch: median(fetches),
      plainFetch: median(plainFetches),
      floorFetch: median(floorFetches),
      restCalls: restCalls / FETCHES,
      peakMiB,
    };
  } finally {
    await sim.stop();
  }
}

const FLOOR_HELPER = fileURLToPath(new URL("./floor-helper.cjs", import.meta.url));

/**
 * A remote `floor` in `workTree` served by floor-helper.cts (as `git-remote-svcfloor`, on PATH in the
 * environment returned), which answers with the commit `origin` is at; fetched once, so that every fetch
 * after is a no-op.
 */
async function givenFloorRemote(
  root: string,
  workTree: string,
  env: NodeJS.ProcessEnv,
): Promise<NodeJS.ProcessEnv> {
  const bin = join(root, "floor-bin");
  mkdirSync(bin, { recursive: true });
  chmodSync(FLOOR_HELPER, 0o755);
  rmSync(join(bin, "git-remote-svcfloor"), { force: true });
  symlinkSync(FLOOR_HELPER, join(bin, "git-remote-svcfloor"));
  const tip = execFileSync("git", ["-C", workTree, "rev-parse", "refs/remotes/origin/main"], { env });
  const floorEnv = {
    ...env,
    PATH: `${bin}${delimiter}${env.PATH ?? ""}`,
    SVC_FLOOR_TIP: tip.toString().trim(),
  };
  await checkedRun("git", ["-C", workTree, "remote", "add", "floor", "svcfloor::floor"], floorEnv);
  await checkedRun("git", ["-C", workTree, "fetch", "--quiet", "floor"], floorEnv);
  return floorEnv;
}

async function measureStartup(root: string): Promise<{ helper: number; node: number }> {
  const env = gitEnv(root, { SVC_CACHE_DIR: join(root, "cache-startup") });
  const helper: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < 15; i++) {
    helper.push(
      (
        await timedRun(
          process.execPath,
          [join(BIN, "git-remote-svc"), "origin", "http://127.0.0.1:9/projects/x"],
          env,
          { input: "capabilities\n\n" },
        )
      ).ms,
    );
    node.push((await timedRun(process.execPath, ["-e", "0"], env)).ms);
  }
  return { helper: median(helper), node: median(node) };
}

const ms = (value: number) => `${Math.round(value)} ms`;

/** The goals of issue 18, each a ratio to a baseline measured in the same run. */
const GOALS = { init: 1.5, fetch: 1.5, start: 1.3 } as const;
const PEAK_GOAL_MIB = 1024;

const ratio = (value: number, baseline: number) => (value / baseline).toFixed(2);
const atMost = (goal: number) => `<= ${goal.toFixed(2)}`;

/** The rows of one project size, and the goals it missed. */
function sizeRows(size: SizeResult, startup: { helper: number }): { rows: string[][]; missed: string[] } {
  const rows = [
    [
      `svc init + checkout, ${size.issues}`,
      ms(size.init),
      `${ms(size.plainClone)} plain clone`,
      ratio(size.init, size.plainClone),
      atMost(GOALS.init),
    ],
    [
      `no-op git fetch, ${size.issues}`,
      ms(size.fetch),
      `${ms(startup.helper)} helper start`,
      ratio(size.fetch, startup.helper),
      atMost(GOALS.fetch),
    ],
    [
      `no-op git fetch, floor (a helper doing nothing), ${size.issues}`,
      ms(size.floorFetch),
      `${ms(startup.helper)} helper start`,
      ratio(size.floorFetch, startup.helper),
      "-",
    ],
    [
      `no-op git fetch, ${size.issues}`,
      ms(size.fetch),
      `${ms(size.plainFetch)} plain fetch`,
      ratio(size.fetch, size.plainFetch),
      "-",
    ],
    [`REST calls per no-op fetch, ${size.issues}`, size.restCalls.toFixed(1), "-", "-", "1"],
    [`helper peak RSS, init of ${size.issues}`, `${Math.round(size.peakMiB)} MiB`, "-", "-", "-"],
  ];
  const missed: string[] = [];
  if (size.init / size.plainClone > GOALS.init)
    missed.push(`init at ${size.issues} is over ${GOALS.init}x plain git`);
  if (size.fetch / startup.helper > GOALS.fetch)
    missed.push(`no-op fetch at ${size.issues} is over ${GOALS.fetch}x the helper's start`);
  return { rows, missed };
}

export async function benchClone(
  out: NodeJS.WritableStream,
  progress: (line: string) => void,
  options: BenchOptions,
): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "svc-bench-clone-"));
  try {
    const sizes: SizeResult[] = [];
    for (const issues of options.large ? [1000, 10_000, 100_000] : [1000, 10_000])
      sizes.push(await measureSize(root, issues, progress));
    const startup = await measureStartup(root);
    const large = options.large ? await measureLargeInit(root, 1_000_000, progress) : undefined;
    out.write(
      `medians of ${RUNS} inits/clones and ${FETCHES} fetches (interleaved with plain git's); git with no user config; SVC_BLOB_LIMIT=0\n` +
        "baselines: a plain `git clone --filter=blob:none file://` + checkout of the same files; the helper's own `capabilities` round trip; `node -e 0`\n\n",
    );
    const missed: string[] = [];
    const rows: string[][] = [];
    for (const size of sizes) {
      const result = sizeRows(size, startup);
      rows.push(...result.rows);
      missed.push(...result.missed);
    }
    rows.push([
      "helper capabilities round trip",
      ms(startup.helper),
      `${ms(startup.node)} node -e 0`,
      ratio(startup.helper, startup.node),
      atMost(GOALS.start),
    ]);
    if (startup.helper / startup.node > GOALS.start)
      missed.push(`the helper's start is over ${GOALS.start}x node -e 0`);
    if (large) {
      rows.push([
        "svc init of 1,000,000 (sim, ~300-byte bodies)",
        `${(large.ms / 1000).toFixed(1)} s`,
        `${large.checkoutFiles} files`,
        "-",
        "completes",
      ]);
      rows.push([
        "helper peak RSS, init of 1,000,000",
        `${Math.round(large.peakRssMiB)} MiB`,
        "-",
        "-",
        `< ${PEAK_GOAL_MIB} MiB`,
      ]);
      if (large.peakRssMiB >= PEAK_GOAL_MIB) missed.push("peak memory at 1,000,000 is not under 1 GiB");
    } else {
      out.write("(the rows at 100,000 and 1,000,000 issues: npm run bench -- clone --large)\n\n");
    }
    out.write(renderTable(["scenario", "svc", "baseline", "ratio", "goal"], rows));
    out.write(missed.length === 0 ? "\nall goals met\n" : `\ngoal missed: ${missed.join("; ")}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
