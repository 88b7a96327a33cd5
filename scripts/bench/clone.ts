/**
 * The clone benchmark (issue 3): for 1,000 and 10,000 issues, `svc init` including checkout beside
 * `git clone --filter=blob:none file://` of an equivalent bare repo plus checkout; a no-op `git fetch`
 * beside the same on the plain clone, with the REST calls it made; the helper's `capabilities` round trip
 * beside `node -e 0`; and the helper's peak memory during an init of 100,000 issues.
 *
 * Everything is real: the `svc sim` process with a SQLite file, the `svc` and `git-remote-svc` bins, the
 * installed git. git reads no user configuration (temporary HOME and global config).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ListeningChild, spawnListening } from "../children.js";
import type { BenchOptions } from "./args.js";
import { BIN, gitEnv, plainPartialClones, SVC_BIN } from "./git.js";
import { checkedRun, timedRun } from "./process.js";
import { countAuditRows } from "./sim-audit.js";
import { median } from "./stats.js";
import { renderTable } from "./table.js";

const PROJECT = "bench";
const RUNS = 3;

function seedFile(path: string, issues: number): void {
  const statuses = ["open", "in_progress", "in_review", "done"];
  const body = (i: number) =>
    `Steps to reproduce issue ${i}:\n\n1. Start an export of a large project.\n2. Interrupt the network.\n` +
    "3. Let the client retry.\n\nExpected: every row exactly once.\nActual: the rows of the interrupted page are missing.\n" +
    "Logs:\n\n```\nexport: page 17 of 40 failed: ECONNRESET\nexport: retrying page 18\n```\n";
  const seed = {
    projects: [
      {
        slug: PROJECT,
        name: "Benchmark",
        description: "Seeded by npm run bench -- clone",
        issues: Array.from({ length: issues }, (_, i) => ({
          title: `Issue ${i + 1}: the export drops rows after a retry`,
          status: statuses[i % statuses.length],
          labels: ["bench", i % 2 === 0 ? "bug" : "feature"],
          body: body(i + 1),
        })),
      },
    ],
  };
  writeFileSync(path, JSON.stringify(seed));
}

async function startSim(root: string, issues: number): Promise<ListeningChild> {
  const seed = join(root, `seed-${issues}.json`);
  seedFile(seed, issues);
  return spawnListening(
    [
      SVC_BIN,
      "sim",
      "--bind",
      "127.0.0.1:0",
      "--db",
      join(root, `sim-${issues}.db`),
      "--rate-limit",
      "0",
      "--seed-file",
      seed,
    ],
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
  readonly restCalls: number;
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
    let workTree = "";
    for (let i = 0; i < RUNS; i++) {
      const dir = join(root, `init-${issues}-${i}`);
      const env = gitEnv(root, { SVC_CACHE_DIR: join(root, `cache-${issues}-${i}`) });
      progress(`${issues} issues: svc init, run ${i + 1}`);
      inits.push(
        (
          await checkedRun(
            process.execPath,
            [SVC_BIN, "init", `sim::${PROJECT}`, dir, "--origin", sim.url],
            env,
          )
        ).ms,
      );
      workTree = dir;
    }
    const env = gitEnv(root, { SVC_CACHE_DIR: join(root, `cache-${issues}-${RUNS - 1}`) });
    const plain = await plainPartialClones(root, String(issues), workTree, env, RUNS, (line) =>
      progress(`${issues} issues: ${line}`),
    );
    const plainDir = plain.dir;
    await checkedRun("git", ["-C", workTree, "config", "svc.syncInterval", "0"], env);
    const dbPath = join(root, `sim-${issues}.db`);
    const fetches: number[] = [];
    const before = countAuditRows(dbPath);
    for (let i = 0; i < 5; i++)
      fetches.push((await checkedRun("git", ["-C", workTree, "fetch", "--quiet", "origin"], env)).ms);
    const restCalls = (countAuditRows(dbPath) - before) / 5;
    const plainFetches: number[] = [];
    for (let i = 0; i < 5; i++)
      plainFetches.push((await checkedRun("git", ["-C", plainDir, "fetch", "--quiet", "origin"], env)).ms);
    return {
      issues,
      init: median(inits),
      plainClone: median(plain.times),
      fetch: median(fetches),
      plainFetch: median(plainFetches),
      restCalls,
    };
  } finally {
    await sim.stop();
  }
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

async function measurePeakMemory(
  root: string,
  issues: number,
  progress: (line: string) => void,
): Promise<number> {
  progress(`${issues} issues: seeding the simulator (this takes a while)`);
  const sim = await startSim(root, issues);
  try {
    const env = gitEnv(root, { SVC_CACHE_DIR: join(root, "cache-peak"), SVC_TRACE: "1" });
    progress(`${issues} issues: svc init`);
    const result = await checkedRun(
      process.execPath,
      [SVC_BIN, "init", `sim::${PROJECT}`, join(root, "peak"), "--origin", sim.url],
      env,
    );
    const peaks = [...result.stderr.matchAll(/exit maxRSS=(\d+)KB/g)].map((match) => Number(match[1]));
    return Math.max(...peaks) / 1024;
  } finally {
    await sim.stop();
  }
}

const ms = (value: number) => `${Math.round(value)} ms`;

export async function benchClone(
  out: NodeJS.WritableStream,
  progress: (line: string) => void,
  _options: BenchOptions,
): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "svc-bench-clone-"));
  try {
    const sizes: SizeResult[] = [];
    for (const issues of [1000, 10_000]) sizes.push(await measureSize(root, issues, progress));
    const startup = await measureStartup(root);
    const peak = await measurePeakMemory(root, 100_000, progress);
    out.write(`medians of ${RUNS} inits/clones and 5 fetches; git with no user config; SVC_BLOB_LIMIT=0\n\n`);
    const rows = sizes.flatMap((size) => [
      [
        `svc init + checkout, ${size.issues}`,
        ms(size.init),
        ms(size.plainClone),
        (size.init / size.plainClone).toFixed(2),
        "<= 2.00",
      ],
      [
        `no-op git fetch, ${size.issues}`,
        ms(size.fetch),
        ms(size.plainFetch),
        (size.fetch / size.plainFetch).toFixed(2),
        size.issues === 10_000 ? "< 150 ms" : "-",
      ],
      [`REST calls per no-op fetch, ${size.issues}`, size.restCalls.toFixed(1), "-", "-", "1"],
    ]);
    rows.push([
      "helper capabilities round trip",
      ms(startup.helper),
      ms(startup.node),
      (startup.helper / startup.node).toFixed(2),
      "<= 1.50",
    ]);
    rows.push(["helper peak RSS, init of 100,000", `${Math.round(peak)} MiB`, "-", "-", "< 1024 MiB"]);
    out.write(renderTable(["scenario", "svc", "baseline", "ratio", "goal"], rows));
    const big = sizes.find((size) => size.issues === 10_000);
    const missed: string[] = [];
    if (big && big.init / big.plainClone > 2) missed.push("init at 10,000 is over 2x plain git");
    if (big && big.fetch >= 150) missed.push("no-op fetch at 10,000 is not under 150 ms");
    if (startup.helper / startup.node > 1.5) missed.push("helper start is over 1.5x node -e 0");
    if (peak >= 1024) missed.push("peak memory at 100,000 is not under 1 GiB");
    out.write(missed.length === 0 ? "\nall goals met\n" : `\ngoal missed: ${missed.join("; ")}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
