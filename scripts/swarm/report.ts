/**
 * The swarm's figures (from the agents' records and the simulator's audit table) and how they are printed:
 * text for people, one JSON object (`--json`) for scripts that compare runs over time.
 */
import type { AuditRow, InvariantResult } from "./invariants.js";
import type { OpRecord } from "./record.js";

export interface SwarmSetup {
  readonly agents: number;
  /** Agents sharing a cache folder with others, and how many such folders. */
  readonly sharingAgents: number;
  readonly sharedCaches: number;
  readonly overlap: number;
  readonly opsPerAgent: number | null;
  readonly seed: number;
  readonly rateLimit: number;
}

export interface Figures {
  /** Wall time from `go` until the last agent stopped. */
  readonly seconds: number;
  readonly ops: {
    readonly total: number;
    readonly edits: number;
    readonly creates: number;
    readonly deletes: number;
    readonly accepted: number;
    readonly abandoned: number;
    readonly failed: number;
  };
  readonly pushes: {
    readonly total: number;
    readonly accepted: number;
    readonly fetchFirst: number;
    readonly failed: number;
  };
  readonly acceptedPerSecond: number;
  /** Accepted POST, PATCH and DELETE requests (the simulator's audit), per second. */
  readonly writesPerSecond: number;
  readonly writes: { readonly post: number; readonly patch: number; readonly delete: number };
  /** Of every `git push` the agents ran, in ms. */
  readonly pushLatency: { readonly p50: number; readonly p99: number };
  readonly conflictsResolved: { readonly content: number; readonly deletes: number };
  readonly pulls: number;
  readonly requests: number;
  readonly rateLimited: number;
}

export interface SwarmReport {
  readonly setup: SwarmSetup;
  readonly figures: Figures;
  readonly invariants: readonly InvariantResult[];
  /** Where the run's files are, when they were kept (`--keep`). */
  readonly kept?: string;
}

/** The nearest-rank percentile `p` (0–100) of `values`; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

export function computeFigures(
  ops: readonly OpRecord[],
  audit: readonly AuditRow[],
  seconds: number,
): Figures {
  const count = (predicate: (op: OpRecord) => boolean) => ops.filter(predicate).length;
  const attempts = ops.flatMap((op) => op.pushes);
  const accepted = attempts.filter((attempt) => attempt.result === "accepted").length;
  const writes = {
    post: audit.filter((row) => row.method === "POST" && row.status === 201).length,
    patch: audit.filter((row) => row.method === "PATCH" && row.status === 200).length,
    delete: audit.filter((row) => row.method === "DELETE" && row.status === 204).length,
  };
  const perSecond = (n: number) => (seconds > 0 ? n / seconds : 0);
  return {
    seconds,
    ops: {
      total: ops.length,
      edits: count((op) => op.action === "edit"),
      creates: count((op) => op.action === "create"),
      deletes: count((op) => op.action === "delete"),
      accepted: count((op) => op.outcome === "accepted"),
      abandoned: count((op) => op.outcome === "abandoned"),
      failed: count((op) => op.outcome === "failed"),
    },
    pushes: {
      total: attempts.length,
      accepted,
      fetchFirst: attempts.filter((attempt) => attempt.result === "fetch-first").length,
      failed: attempts.filter((attempt) => attempt.result === "failed").length,
    },
    acceptedPerSecond: perSecond(accepted),
    writesPerSecond: perSecond(writes.post + writes.patch + writes.delete),
    writes,
    pushLatency: {
      p50: percentile(
        attempts.map((attempt) => attempt.ms),
        50,
      ),
      p99: percentile(
        attempts.map((attempt) => attempt.ms),
        99,
      ),
    },
    conflictsResolved: {
      content: ops.reduce((sum, op) => sum + op.resolvedContent, 0),
      deletes: ops.reduce((sum, op) => sum + op.resolvedDeletes, 0),
    },
    pulls: ops.reduce((sum, op) => sum + op.pulls, 0),
    requests: audit.length,
    rateLimited: audit.filter((row) => row.status === 429).length,
  };
}

export function holds(report: SwarmReport): boolean {
  return report.invariants.every((invariant) => invariant.violations.length === 0);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function ms(value: number): string {
  if (Number.isNaN(value)) return "-";
  return value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(2)} s`;
}

/** At most this many violations of one invariant are printed (the JSON has them all). */
const SHOWN_VIOLATIONS = 20;

export function renderReport(report: SwarmReport): string {
  const { setup, figures: f } = report;
  const own = setup.agents - setup.sharingAgents;
  const caches =
    setup.sharingAgents === 0
      ? "each with its own cache"
      : `${setup.sharingAgents} sharing ${count(setup.sharedCaches, "cache")}, ${own} with their own`;
  const lines = [
    `swarm: ${count(setup.agents, "agent")} (${caches}), ${count(setup.overlap, "overlapping issue")}, ` +
      `${setup.opsPerAgent === null ? "" : `${count(setup.opsPerAgent, "operation")} per agent, `}` +
      `seed ${setup.seed}, ${setup.rateLimit === 0 ? "no rate limit" : `rate limit ${setup.rateLimit}/s per X-Svc-Agent (one per git command)`}`,
    `time          ${f.seconds.toFixed(1)} s`,
    `operations    ${f.ops.total} (${f.ops.edits} edits, ${f.ops.creates} creates, ${f.ops.deletes} deletes): ` +
      `${f.ops.accepted} accepted, ${f.ops.abandoned} abandoned, ${f.ops.failed} failed`,
    `pushes        ${f.pushes.total}: ${f.pushes.accepted} accepted, ${f.pushes.fetchFirst} fetch first, ${f.pushes.failed} failed`,
    `throughput    ${f.acceptedPerSecond.toFixed(2)} accepted pushes/s, ${f.writesPerSecond.toFixed(2)} writes/s ` +
      `(${f.writes.post} POST, ${f.writes.patch} PATCH, ${f.writes.delete} DELETE)`,
    `push latency  p50 ${ms(f.pushLatency.p50)}, p99 ${ms(f.pushLatency.p99)} (each git push)`,
    `conflicts     ${f.conflictsResolved.content + f.conflictsResolved.deletes} files resolved ` +
      `(${f.conflictsResolved.content} content, ${f.conflictsResolved.deletes} modify/delete); ` +
      `${f.pushes.fetchFirst} fetch-first retries; ${f.pulls} pulls`,
    `rate limit    ${f.rateLimited} of ${f.requests} requests answered 429`,
    "invariants",
  ];
  report.invariants.forEach((invariant, index) => {
    const ok = invariant.violations.length === 0;
    lines.push(`  ${ok ? "✓" : "✗"} ${index + 1}. ${invariant.name}`);
    for (const violation of invariant.violations.slice(0, SHOWN_VIOLATIONS)) lines.push(`      ${violation}`);
    if (invariant.violations.length > SHOWN_VIOLATIONS) {
      lines.push(`      and ${invariant.violations.length - SHOWN_VIOLATIONS} more (--json lists them all)`);
    }
  });
  if (report.kept) lines.push(`files kept in ${report.kept}`);
  return `${lines.join("\n")}\n`;
}
