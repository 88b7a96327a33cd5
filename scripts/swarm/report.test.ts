import test from "ava";
import type { AuditRow } from "./invariants.js";
import type { OpRecord } from "./record.js";
import { computeFigures, percentile, renderReport } from "./report.js";

test("percentile: nearest rank", (t) => {
  const values = Array.from({ length: 100 }, (_, i) => 100 - i);
  t.is(percentile(values, 50), 50);
  t.is(percentile(values, 99), 99);
  t.is(percentile(values, 100), 100);
  t.is(percentile([7], 99), 7);
  t.is(percentile([3, 1, 2], 50), 2);
  t.true(Number.isNaN(percentile([], 50)));
});

test("renderReport: the setup, the figures, and each invariant with its violations", (t) => {
  const ops: OpRecord[] = [
    {
      agent: 0,
      op: 1,
      action: "edit",
      issue: 1,
      line: "agent-0 op-1",
      outcome: "accepted",
      carried: true,
      pushes: [
        { at: 0, ms: 900, result: "fetch-first" },
        { at: 1000, ms: 1500, result: "accepted" },
      ],
      resolvedContent: 1,
      resolvedDeletes: 0,
      pulls: 1,
    },
  ];
  const audit: AuditRow[] = [
    { method: "GET", path: "/projects/swarm/issues", status: 429, requestBody: null },
    { method: "PATCH", path: "/projects/swarm/issues/1", status: 200, requestBody: "{}" },
  ];
  const text = renderReport({
    setup: {
      agents: 1,
      sharingAgents: 0,
      sharedCaches: 0,
      overlap: 1,
      opsPerAgent: 1,
      seed: 9,
      rateLimit: 1,
    },
    figures: computeFigures(ops, audit, 2),
    invariants: [
      { name: "no lost update", violations: [] },
      {
        name: "audit rows equal requests",
        violations: ["1 audit rows match no request through the proxy: X"],
      },
    ],
  });
  t.is(
    text,
    [
      "swarm: 1 agent (each with its own cache), 1 overlapping issue, 1 operation per agent, seed 9, rate limit 1/s per X-Svc-Agent (one per git command)",
      "time          2.0 s",
      "operations    1 (1 edits, 0 creates, 0 deletes): 1 accepted, 0 abandoned, 0 failed",
      "pushes        2: 1 accepted, 1 fetch first, 0 failed",
      "throughput    0.50 accepted pushes/s, 0.50 writes/s (0 POST, 1 PATCH, 0 DELETE)",
      "push latency  p50 900 ms, p99 1.50 s (each git push)",
      "conflicts     1 files resolved (1 content, 0 modify/delete); 1 fetch-first retries; 1 pulls",
      "rate limit    1 of 2 requests answered 429",
      "invariants",
      "  ✓ 1. no lost update",
      "  ✗ 2. audit rows equal requests",
      "      1 audit rows match no request through the proxy: X",
      "",
    ].join("\n"),
  );
});
