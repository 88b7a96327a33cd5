/**
 * The first sync of a large project (issue 18): `svc init` of a simulator project of 100,000 or 1,000,000
 * issues, timed, with the helper's peak memory (the largest `exit maxRSS=` line `SVC_TRACE=1` prints).
 *
 * Seeding through `--seed-file` would need the whole project as one JSON document (hundreds of MB at
 * 1,000,000 issues), so the simulator's SQLite file is filled here directly, in its own schema (a
 * `SimStore` opened once makes the tables), with the timestamps and ids the seed loader would give: one
 * second apart from `SEED_EPOCH`, ids in order. Bodies are ~300 bytes, like a short bug report.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Database } from "../../core/sqlite.js";
import { SEED_EPOCH } from "../../server/sim/seed.js";
import { SimStore } from "../../server/sim/store.js";
import { spawnListening } from "../children.js";
import { gitEnv, SVC_BIN } from "./git.js";
import { checkedRun } from "./process.js";

const PROJECT = "bench";
const STATUSES = ["open", "in_progress", "in_review", "done"];

function issueBody(id: number): string {
  return (
    `Steps to reproduce issue ${id}:\n\n1. Start an export of a large project.\n2. Interrupt the network.\n` +
    "3. Let the client retry.\n\nExpected: every row exactly once.\nActual: the rows of the interrupted page are " +
    "missing.\nLogs:\n\n```\nexport: page 17 of 40 failed: ECONNRESET\n```\n"
  );
}

/** Writes project `bench` with `issues` issues into a new simulator store at `path`. */
export function seedSimStore(path: string, issues: number): void {
  rmSync(path, { force: true });
  new SimStore(path).close();
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF");
    const insert = db.prepare(
      `INSERT INTO issues (project, id, title, status, labels, body, assignee, created_at, updated_at, version)
       VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, 1)`,
    );
    db.transaction(() => {
      db.prepare(
        "INSERT INTO projects (slug, name, description, created_at, last_issue_id) VALUES (?, ?, ?, ?, ?)",
      ).run(
        PROJECT,
        "Benchmark",
        "Seeded by scripts/bench/large.ts",
        new Date(SEED_EPOCH).toISOString(),
        issues,
      );
      for (let id = 1; id <= issues; id++) {
        const at = new Date(SEED_EPOCH + id * 1000).toISOString();
        insert.run(
          PROJECT,
          id,
          `Issue ${id}: the export drops rows after a retry`,
          STATUSES[id % STATUSES.length],
          JSON.stringify(["bench", id % 2 === 0 ? "bug" : "feature"]),
          issueBody(id),
          at,
          at,
        );
      }
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

export interface LargeInit {
  readonly ms: number;
  /** The largest `exit maxRSS=` of the helper's trace lines, in MiB. */
  readonly peakRssMiB: number;
  /** Files in the work tree's `issues/` after the checkout. */
  readonly checkoutFiles: number;
}

/**
 * Seeds a simulator with `issues` issues under `root`, times `svc init` of it (checkout included) with
 * `SVC_TRACE=1`, and removes what it made under `root` before it returns (at 1,000,000 issues the work
 * tree alone is ~4 GB).
 */
export async function measureLargeInit(
  root: string,
  issues: number,
  progress: (line: string) => void,
): Promise<LargeInit> {
  const dir = join(root, `large-${issues}`);
  mkdirSync(dir, { recursive: true });
  try {
    progress(`${issues} issues: filling the simulator's store`);
    const db = join(dir, "sim.db");
    seedSimStore(db, issues);
    const sim = await spawnListening(
      [SVC_BIN, "sim", "--bind", "127.0.0.1:0", "--db", db, "--rate-limit", "0"],
      /svc-sim listening on (\S+)/,
      120_000,
    );
    try {
      const env = gitEnv(dir, { SVC_CACHE_DIR: join(dir, "cache"), SVC_TRACE: "1" });
      progress(`${issues} issues: svc init`);
      const workTree = join(dir, "work");
      const result = await checkedRun(
        process.execPath,
        [SVC_BIN, "init", `sim::${PROJECT}`, workTree, "--origin", sim.url],
        env,
      );
      const peaks = [...result.stderr.matchAll(/exit maxRSS=(\d+)KB/g)].map((match) => Number(match[1]));
      return {
        ms: result.ms,
        peakRssMiB: Math.max(...peaks) / 1024,
        checkoutFiles: readdirSync(join(workTree, "issues")).length,
      };
    } finally {
      await sim.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
