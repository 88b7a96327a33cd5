/**
 * The push benchmark (issues 4 and 18): pushing one changed record in a 10,000-issue clone, beside `git push`
 * of the same kind of commit to a plain local bare repo of the same size, and the REST calls each push made
 * (counted in the simulator's audit table). Goals: at most 3 REST calls, time within 2.5x the plain push.
 * Then the other half of an agent's loop, with no goal of its own: `git pull` of one record changed on the
 * server, beside a plain `git pull` of one changed file into a `--filter=blob:none` clone of the bare repo
 * (both check the new version out through a lazy fetch).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "../../core/sqlite.js";
import { spawnListening } from "../children.js";
import { gitEnv, SVC_BIN } from "./git.js";
import { checkedRun } from "./process.js";
import { median } from "./stats.js";
import { renderTable } from "./table.js";

const ISSUES = 10_000;
const RUNS = 5;

/** Runs `command` to its end; the milliseconds it took (rejects when it fails). */
async function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return (await checkedRun(command, args, env)).ms;
}

function auditRows(dbPath: string): { method: string; path: string }[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT method, path FROM audit_events ORDER BY id").all() as {
      method: string;
      path: string;
    }[];
  } finally {
    db.close();
  }
}

/** Flips the status line of a record file (open ↔ done), the smallest real edit. */
function editRecord(path: string): void {
  const text = readFileSync(path, "utf8");
  writeFileSync(
    path,
    text.includes("status: open")
      ? text.replace("status: open", "status: done")
      : text.replace(/status: \w+/, "status: open"),
  );
}

/** The simulator's seed file: one project of ISSUES open issues. */
function writeSeed(path: string): void {
  writeFileSync(
    path,
    JSON.stringify({
      projects: [
        {
          slug: "bench",
          name: "Benchmark",
          description: "Seeded by npm run bench -- push",
          issues: Array.from({ length: ISSUES }, (_, i) => ({
            title: `Issue ${i + 1}: the export drops rows after a retry`,
            status: "open",
            labels: ["bench"],
            body: `Steps to reproduce issue ${i + 1}:\n\n1. Export.\n2. Interrupt the network.\n\nExpected: every row once.\n`,
          })),
        },
      ],
    }),
  );
}

/** Each round's time of svc and of plain git, in ms, and the REST calls svc's made. */
interface RoundTimes {
  readonly svcTimes: number[];
  readonly plainTimes: number[];
  readonly restCalls: number[];
}

/** RUNS rounds of one record edited, committed and pushed, in the svc clone and in the plain one. */
async function measurePushes(
  work: string,
  plain: string,
  dbPath: string,
  env: NodeJS.ProcessEnv,
  progress: (line: string) => void,
): Promise<RoundTimes> {
  const times: RoundTimes = { svcTimes: [], plainTimes: [], restCalls: [] };
  for (let i = 0; i < RUNS; i++) {
    const file = `issues/${String(i + 1).padStart(4, "0")}.md`;
    progress(`run ${i + 1} of ${RUNS}: ${file}`);
    editRecord(join(work, file));
    await run("git", ["-C", work, "commit", "--quiet", "-am", `edit ${file}`], env);
    const before = auditRows(dbPath).length;
    times.svcTimes.push(await run("git", ["-C", work, "push", "--quiet"], env));
    times.restCalls.push(auditRows(dbPath).length - before);
    editRecord(join(plain, file));
    await run("git", ["-C", plain, "commit", "--quiet", "-am", `edit ${file}`], env);
    times.plainTimes.push(await run("git", ["-C", plain, "push", "--quiet"], env));
  }
  return times;
}

/**
 * RUNS rounds of one record changed on the server (a PATCH of the simulator) and `git pull` in the svc
 * clone, and of one file changed in `plain`, pushed to the bare repo and pulled into `plainPull`.
 */
async function measurePulls(
  work: string,
  plain: string,
  plainPull: string,
  sim: { url: string; dbPath: string },
  env: NodeJS.ProcessEnv,
  progress: (line: string) => void,
): Promise<RoundTimes> {
  const times: RoundTimes = { svcTimes: [], plainTimes: [], restCalls: [] };
  for (let i = 0; i < RUNS; i++) {
    const id = 100 + i;
    progress(`pull ${i + 1} of ${RUNS}: issue ${id} changed on the server`);
    const changed = await fetch(`${sim.url}/projects/bench/issues/${id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json", "x-svc-agent": "bench" },
      body: JSON.stringify({ body: `Changed on the server, round ${i + 1}.\n` }),
    });
    if (!changed.ok) throw new Error(`PATCH of issue ${id} answered ${changed.status}`);
    const before = auditRows(sim.dbPath).length;
    times.svcTimes.push(await run("git", ["-C", work, "pull", "--quiet"], env));
    times.restCalls.push(auditRows(sim.dbPath).length - before);
    const file = `issues/${String(id).padStart(4, "0")}.md`;
    editRecord(join(plain, file));
    await run("git", ["-C", plain, "commit", "--quiet", "-am", `edit ${file}`], env);
    await run("git", ["-C", plain, "push", "--quiet"], env);
    times.plainTimes.push(await run("git", ["-C", plainPull, "pull", "--quiet"], env));
  }
  return times;
}

/**
 * The medians of `times` as the two rows of a table: svc beside plain git (with `goals.ratio`), and svc's REST
 * calls (with `goals.calls`). Returns the medians too, for the goals' check.
 */
function medianTable(
  what: string,
  times: RoundTimes,
  goals: { readonly ratio: string; readonly calls: string },
): { table: string; ratio: number; calls: number } {
  const svc = median(times.svcTimes);
  const baseline = median(times.plainTimes);
  const calls = median(times.restCalls);
  const table = renderTable(
    ["scenario", "svc", "baseline", "ratio", "goal"],
    [
      [
        `git ${what}, one record`,
        `${Math.round(svc)} ms`,
        `${Math.round(baseline)} ms`,
        (svc / baseline).toFixed(2),
        goals.ratio,
      ],
      [`REST calls per ${what}`, String(calls), "-", "-", goals.calls],
    ],
  );
  return { table, ratio: svc / baseline, calls };
}

function reportPulls(out: NodeJS.WritableStream, times: RoundTimes): void {
  out.write(
    `\nmedian of ${RUNS} pulls of one record changed on the server (no goal: the other half of an agent's loop)\n\n`,
  );
  out.write(medianTable("pull", times, { ratio: "-", calls: "-" }).table);
}

/** Issue 18's goal: a push within this many times a plain push of the same commit. */
const RATIO_GOAL = 2.5;

/** The medians against the goals (at most RATIO_GOAL times a plain push, at most 3 REST calls). */
function reportPushes(out: NodeJS.WritableStream, times: RoundTimes): void {
  out.write(`${ISSUES} issues; median of ${RUNS} pushes of one changed record (no pull between them)\n\n`);
  const { table, ratio, calls } = medianTable("push", times, {
    ratio: `<= ${RATIO_GOAL.toFixed(2)}`,
    calls: "<= 3",
  });
  out.write(table);
  const missed: string[] = [];
  if (ratio > RATIO_GOAL) missed.push(`push is over ${RATIO_GOAL}x the plain push`);
  if (calls > 3) missed.push("more than 3 REST calls");
  out.write(missed.length === 0 ? "\nall goals met\n" : `\ngoal missed: ${missed.join("; ")}\n`);
}

export async function benchPush(out: NodeJS.WritableStream, progress: (line: string) => void): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "svc-bench-push-"));
  try {
    const env = gitEnv(root, { SVC_CACHE_DIR: join(root, "cache") });
    const seed = join(root, "seed.json");
    writeSeed(seed);
    const dbPath = join(root, "sim.db");
    progress(`seeding a simulator with ${ISSUES} issues`);
    const sim = await spawnListening(
      [SVC_BIN, "sim", "--bind", "127.0.0.1:0", "--db", dbPath, "--rate-limit", "0", "--seed-file", seed],
      /svc-sim listening on (\S+)/,
      120_000,
    );
    try {
      const work = join(root, "svc");
      progress("svc init");
      await run(process.execPath, [SVC_BIN, "init", "sim::bench", work, "--origin", sim.url], env);
      const bare = join(root, "plain.git");
      await run("git", ["clone", "--quiet", "--bare", "--no-local", work, bare], env);
      const plain = join(root, "plain");
      await run("git", ["clone", "--quiet", bare, plain], env);
      reportPushes(out, await measurePushes(work, plain, dbPath, env, progress));
      await run("git", ["--git-dir", bare, "config", "uploadpack.allowFilter", "true"], env);
      const plainPull = join(root, "plain-pull");
      await run("git", ["clone", "--quiet", "--filter=blob:none", `file://${bare}`, plainPull], env);
      await run("git", ["-C", plainPull, "config", "pull.rebase", "false"], env);
      reportPulls(out, await measurePulls(work, plain, plainPull, { url: sim.url, dbPath }, env, progress));
    } finally {
      await sim.stop();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
