/**
 * The simulator benchmark (DESIGN.md §9): requests per second for GET one issue and PATCH one issue against
 * the real `svc sim` process, beside the same load against a bare `node:http` server answering a constant
 * JSON body, measured in the same run. The goal is GET at ≥ 0.5 × the bare server's rate while an audit row
 * is written for every request; the audit rows are counted after the simulator has stopped.
 *
 * The simulator runs with a real SQLite file in WAL mode (`--db`), `--rate-limit 0`, seeded with
 * `SEED_ISSUES` issues. The bare server answers with the exact bytes the simulator returned for issue 1, so
 * both servers send bodies of the same size.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { arch, cpus, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ListeningChild, spawnListening } from "../children.js";
import { type LoadResult, type RequestShape, runLoad } from "./load.js";
import { countAuditRows } from "./sim-audit.js";
import { formatRate, formatRatio, renderTable } from "./table.js";

const CLIENTS = 8;
const WARMUP_MS = 500;
const DURATION_MS = 2000;
/** svc and the baseline take turns this many times; the median round of each is reported (less drift). */
const ROUNDS = 3;
const SEED_ISSUES = 100;
const PROJECT = "bench";
/** GET must reach this fraction of the bare server's rate. */
const GET_GOAL = 0.5;
const AGENT = "svc-bench";

/** This file runs as `dist/scripts/bench/sim.js`. */
const SVC_BIN = fileURLToPath(new URL("../../../bin/svc", import.meta.url));
const BARE_SERVER = fileURLToPath(new URL("./bare-server.js", import.meta.url));

function benchSeed(issues: number): unknown {
  const statuses = ["open", "in_progress", "in_review", "done"];
  return {
    projects: [
      {
        slug: PROJECT,
        name: "Benchmark",
        description: "Seeded by npm run bench -- sim",
        issues: Array.from({ length: issues }, (_, i) => ({
          title: `Benchmark issue ${i + 1}: the export drops rows after a retry`,
          status: statuses[i % statuses.length],
          labels: ["bench", i % 2 === 0 ? "bug" : "feature"],
          assignee: i % 3 === 0 ? "dana" : null,
          body:
            `Steps to reproduce issue ${i + 1}:\n\n1. Start an export of a large project.\n` +
            "2. Interrupt the network for a few seconds.\n3. Let the client retry.\n\n" +
            "Expected: every row exactly once. Actual: the rows of the interrupted page are missing.\n",
        })),
      },
    ],
  };
}

interface Scenario {
  readonly name: string;
  readonly shape: (n: number) => RequestShape;
  /** The minimum svc/baseline ratio, when this scenario has a goal. */
  readonly goal?: number;
}

const issuePath = (n: number) => `/projects/${PROJECT}/issues/${(n % SEED_ISSUES) + 1}`;

const SCENARIOS: readonly Scenario[] = [
  {
    name: "GET one issue",
    shape: (n) => ({ method: "GET", path: issuePath(n), headers: { "x-svc-agent": AGENT } }),
    goal: GET_GOAL,
  },
  {
    name: "PATCH one issue",
    // No If-Match: the wildcard. Each pass over the issues flips their status, so every PATCH changes a row.
    shape: (n) => ({
      method: "PATCH",
      path: issuePath(n),
      headers: { "x-svc-agent": AGENT, "content-type": "application/json" },
      body: Buffer.from(JSON.stringify({ status: Math.floor(n / SEED_ISSUES) % 2 === 0 ? "done" : "open" })),
    }),
  },
];

interface Measured {
  readonly scenario: Scenario;
  readonly svc: LoadResult;
  readonly baseline: LoadResult;
}

/** The round with the median rate. */
function medianRound(rounds: readonly LoadResult[]): LoadResult {
  const sorted = [...rounds].sort((a, b) => a.perSecond - b.perSecond);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (!middle) throw new Error("no rounds were measured");
  return middle;
}

function machine(): string {
  const cores = cpus();
  const model = cores[0]?.model.trim().replace(/\s+/g, " ") ?? "unknown CPU";
  return `${cores.length} cores (${model}), node ${process.version}, ${platform()} ${arch()}`;
}

function report(out: NodeJS.WritableStream, measured: readonly Measured[]): void {
  const rows = measured.map(({ scenario, svc, baseline }) => {
    const ratio = formatRatio(svc.perSecond, baseline.perSecond);
    const goal = scenario.goal;
    let verdict = "";
    if (goal !== undefined) {
      const met = baseline.perSecond > 0 && svc.perSecond / baseline.perSecond >= goal;
      verdict = met ? "goal met" : "GOAL MISSED";
    }
    return [
      scenario.name,
      formatRate(svc.perSecond),
      formatRate(baseline.perSecond),
      ratio,
      goal === undefined ? "-" : `>= ${goal.toFixed(2)}`,
      verdict,
    ];
  });
  out.write(renderTable(["scenario", "svc req/s", "baseline req/s", "ratio", "goal", ""], rows));
  for (const { scenario, svc, baseline } of measured) {
    if (svc.errors + baseline.errors === 0) continue;
    out.write(
      `${scenario.name}: ${svc.errors} failed requests against svc, ${baseline.errors} against the baseline; ` +
        `first: ${[...svc.failureSamples, ...baseline.failureSamples].slice(0, 2).join("; ")}\n`,
    );
  }
}

export async function benchSim(out: NodeJS.WritableStream, progress: (line: string) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-sim-"));
  const children: ListeningChild[] = [];
  try {
    const seedPath = join(dir, "seed.json");
    const dbPath = join(dir, "sim.db");
    const bodyPath = join(dir, "issue.json");
    writeFileSync(seedPath, JSON.stringify(benchSeed(SEED_ISSUES)));

    progress(`starting svc sim (${SEED_ISSUES} issues, SQLite WAL file) and the bare node:http server`);
    const sim = await spawnListening(
      [SVC_BIN, "sim", "--bind", "127.0.0.1:0", "--db", dbPath, "--rate-limit", "0", "--seed-file", seedPath],
      /svc-sim listening on (\S+)/,
    );
    children.push(sim);
    const probe = await fetch(`${sim.url}${issuePath(0)}`, { headers: { "x-svc-agent": AGENT } });
    const issueBody = Buffer.from(await probe.arrayBuffer());
    if (probe.status !== 200) {
      throw new Error(`svc sim answered GET ${issuePath(0)} with ${probe.status}: ${issueBody.toString()}`);
    }
    let simAnswered = 1;
    writeFileSync(bodyPath, issueBody);
    const bare = await spawnListening([BARE_SERVER, bodyPath], /bare listening on (\S+)/);
    children.push(bare);

    const measured: Measured[] = [];
    for (const scenario of SCENARIOS) {
      const load = { clients: CLIENTS, warmupMs: WARMUP_MS, durationMs: DURATION_MS, shape: scenario.shape };
      const svcRounds: LoadResult[] = [];
      const baselineRounds: LoadResult[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        progress(`${scenario.name}: svc sim, round ${round} of ${ROUNDS}`);
        const svc = await runLoad({ ...load, baseUrl: sim.url });
        simAnswered += svc.answered;
        svcRounds.push(svc);
        progress(`${scenario.name}: bare node:http, round ${round} of ${ROUNDS}`);
        baselineRounds.push(await runLoad({ ...load, baseUrl: bare.url }));
      }
      measured.push({ scenario, svc: medianRound(svcRounds), baseline: medianRound(baselineRounds) });
    }

    const simExit = await sim.stop();
    await bare.stop();
    const auditRows = countAuditRows(dbPath);

    out.write(
      `${CLIENTS} concurrent keep-alive clients; svc and baseline alternate ${ROUNDS} rounds of ` +
        `${DURATION_MS / 1000} s (after a ${WARMUP_MS / 1000} s warm-up each), median round shown; ` +
        `${issueBody.length}-byte issue JSON from both servers\n`,
    );
    out.write(`machine: ${machine()}\n\n`);
    report(out, measured);
    const lost = measured.reduce((sum, { svc }) => sum + svc.transportFailures, 0);
    out.write(
      `\naudit rows: ${auditRows} written for ${simAnswered} requests the simulator answered` +
        (lost > 0 ? ` (and ${lost} without an answer)` : "") +
        `: ${auditRows === simAnswered ? "OK" : "MISMATCH"}\n`,
    );
    if (simExit !== 0) out.write(`svc sim exited with ${simExit} on SIGTERM:\n${sim.stderr()}`);
    const missed = measured.filter(
      ({ scenario, svc, baseline }) =>
        scenario.goal !== undefined && !(svc.perSecond >= scenario.goal * baseline.perSecond),
    );
    for (const { scenario, svc, baseline } of missed) {
      out.write(
        `goal missed: ${scenario.name} runs at ${formatRatio(svc.perSecond, baseline.perSecond)} x the bare ` +
          `server's rate; the goal is >= ${scenario.goal?.toFixed(2)}\n`,
      );
    }
  } finally {
    await Promise.all(children.map((child) => child.stop(1000)));
    rmSync(dir, { recursive: true, force: true });
  }
}
