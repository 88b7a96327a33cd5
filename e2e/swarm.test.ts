/**
 * The swarm (issue 17, `scripts/swarm/run.ts`), short: agent processes with their own working trees (two
 * sharing a cache, two with their own) push and pull at once against one `svc sim` process with its rate
 * limit on, and every invariant holds afterwards. The work is a number of operations per agent, not a time,
 * so it does not depend on the machine's speed. The checker is shown to fail on a planted violation.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import test from "ava";
import { holds, renderReport } from "../scripts/swarm/report.js";
import { runSwarm, SWARM_PROJECT } from "../scripts/swarm/run.js";
import { repoRoot } from "../testing/paths.js";

test.serial(
  "4 agents, 6 operations each on 2 overlapping issues, rate limit on: every invariant holds, conflicts were resolved",
  async (t) => {
    t.timeout(300_000);
    const report = await runSwarm(
      { agents: 4, seconds: 600, ops: 6, issues: 2, seed: 17, rateLimit: 1, keep: false },
      { progress: (line) => t.log(line) },
    );
    t.log(renderReport(report));
    t.deepEqual(
      report.invariants.map((invariant) => [invariant.name, invariant.violations]),
      report.invariants.map((invariant) => [invariant.name, []]),
    );
    t.true(holds(report));
    t.is(report.setup.sharingAgents, 2);
    t.is(report.figures.ops.total, 24);
    // Every agent's first operation edits issue 1 of the state all of them cloned: all but the first push
    // are refused, and each pull conflicts (both sides appended to the same body).
    t.true(report.figures.pushes.fetchFirst >= 3, renderReport(report));
    t.true(report.figures.conflictsResolved.content >= 1, renderReport(report));
    t.is(report.figures.pushes.failed, 0);
  },
);

test.serial(
  "a write behind the agents' backs that drops an accepted line fails invariants 1 and 3, naming both",
  async (t) => {
    t.timeout(300_000);
    let victim = "";
    const report = await runSwarm(
      { agents: 2, seconds: 600, ops: 2, issues: 1, seed: 5, rateLimit: 0, keep: false },
      {
        progress: (line) => t.log(line),
        afterAgents: async ({ simUrl, project, ops }) => {
          const accepted = ops.find(
            (op) => op.action === "edit" && op.issue === 1 && op.outcome === "accepted",
          );
          if (!accepted) throw new Error("no accepted edit of issue 1 to undo");
          victim = `agent ${accepted.agent} op ${accepted.op} (edit): "${accepted.line}"`;
          const url = `${simUrl}/projects/${project}/issues/1`;
          const issue = (await (await fetch(url)).json()) as { body: string };
          const body = issue.body
            .split("\n")
            .filter((line) => line !== accepted.line)
            .join("\n");
          const patched = await fetch(url, {
            method: "PATCH",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ body }),
          });
          if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}`);
        },
      },
    );
    t.log(renderReport(report));
    t.false(holds(report));
    const [lost, duplicates, audit, trees, stores, agents] = report.invariants.map((each) => each.violations);
    t.deepEqual(lost, [`${victim} was accepted, but the body of issue 1 lacks it`]);
    t.deepEqual(audit, [
      `2 audit rows match no request through the proxy: GET /projects/${SWARM_PROJECT}/issues/1 200; ` +
        `PATCH /projects/${SWARM_PROJECT}/issues/1 200`,
    ]);
    // The final pull brought the planted version: the trees, stores and agents are fine.
    t.deepEqual([duplicates, trees, stores, agents], [[], [], [], []]);
    t.regex(
      renderReport(report),
      /✗ 1\. no lost update\n {6}agent \d op \d \(edit\): "agent-\d op-\d" was accepted/,
    );
  },
);

test.serial("npm run swarm with an argument it cannot read exits 2 and prints the usage line", async (t) => {
  const child = spawn(process.execPath, [join(repoRoot, "dist", "scripts", "swarm.js"), "--agents", "none"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  t.is(code, 2, stderr);
  t.regex(
    stderr,
    /^swarm: --agents "none" is not a whole number of at least 1; use e\.g\. --agents 4\nusage: npm run swarm -- /,
  );
});
