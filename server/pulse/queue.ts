/**
 * The persistent pulse queue (Document 2 "Resources", "States and transitions"; DESIGN.md §7; the
 * failure modes of notes/pulse-daemon-notes.md §2.2).
 *
 * - Claiming is one `UPDATE … WHERE id = (SELECT … LIMIT 1) AND status = 'pending' RETURNING *` inside
 *   `BEGIN IMMEDIATE`, so two daemons on one file never claim the same pulse.
 * - Every claim gets a fresh `lease_token`. Finishing, renewing and releasing match on `id` AND the token
 *   (fencing): a run whose lease was taken away (expired, recovered after a crash, cancelled) cannot
 *   change the pulse any more.
 * - The lease lasts `leaseMs` (Document 2's 10 minutes by default) and is renewed while the runner lives;
 *   `recoverExpired` puts a pulse whose lease ran out back to `pending` (Document 2's stuck-pulse reset,
 *   measured from the last renewal rather than `executed_at`, so a long healthy run is not reset).
 *   `recoverOrphans` does it at once for pulses held by a daemon whose process is gone.
 * - A failed run retries on the same row with exponential backoff and jitter, up to `max_attempts`; every
 *   claim leaves a row in `pulse_attempts`. A run that could not start because the runner is unavailable
 *   is released with its attempt given back.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { backoffMs } from "../../core/backoff.js";
import { isRunning } from "../../core/process.js";
import type { Database } from "../../core/sqlite.js";
import { type NewPulse, type Priority, priorityRank } from "./pulse-input.js";

export type PulseStatus = "pending" | "processing" | "completed" | "failed" | "cancelled";

export interface Pulse {
  readonly id: number;
  readonly prompt: string;
  readonly source: string;
  readonly priority: Priority;
  readonly status: PulseStatus;
  readonly scheduled_at: string;
  readonly run_at: number;
  readonly dedup_key: string | null;
  readonly attempt: number;
  readonly max_attempts: number;
  readonly created_at: number;
  readonly updated_at: number;
  readonly executed_at: string | null;
  readonly claimed_at: number | null;
  readonly lease_until: number | null;
  readonly lease_token: string | null;
  readonly owner: string | null;
  readonly runner_pid: number | null;
  readonly finished_at: number | null;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly output_tail: string | null;
  readonly last_error: string | null;
  readonly backfilled: number;
}

export interface Attempt {
  readonly attempt: number;
  readonly owner: string;
  readonly started_at: number;
  readonly finished_at: number | null;
  readonly outcome: string | null;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly duration_ms: number | null;
  readonly output_tail: string | null;
  readonly error: string | null;
}

export interface Claim {
  readonly pulse: Pulse;
  readonly token: string;
}

/** How a run ended, as the executor saw it. */
export type RunOutcome =
  | { readonly kind: "completed"; readonly exitCode: number; readonly outputTail: string }
  | {
      readonly kind: "failed";
      readonly exitCode: number | null;
      readonly signal: string | null;
      readonly outputTail: string;
      readonly error: string;
      /** No retry: the pulse itself cannot run (e.g. the prompt is refused by the OS). */
      readonly permanent?: boolean;
    };

export interface QueueOptions {
  readonly now?: () => number;
  readonly random?: () => number;
  /** Lease length; Document 2's stuck-pulse rule is 10 minutes. */
  readonly leaseMs?: number;
  readonly retryBaseMs?: number;
  readonly retryCapMs?: number;
  /** Daemons not seen for this long are treated as gone (their pulses are recovered). */
  readonly ownerStaleMs?: number;
}

export const DEFAULT_LEASE_MS = 10 * 60_000;

export interface QueueStats {
  readonly pending: number;
  readonly due: number;
  readonly processing: number;
  readonly failed24h: number;
  readonly oldestDueAgeMs: number | null;
  readonly lastCompletedAt: number | null;
}

export interface Enqueued {
  readonly pulse: Pulse;
  /** False when `dedup_key` matched an existing pulse, which is returned unchanged. */
  readonly created: boolean;
}

function newToken(): string {
  return randomBytes(16).toString("hex");
}

/** Adding, reading and cancelling pulses. */
function recordStatements(db: Database) {
  return {
    insert: db.prepare(
      `INSERT INTO pulses (prompt, source, priority, priority_rank, status, scheduled_at, run_at, dedup_key,
         max_attempts, created_at, updated_at, backfilled)
       VALUES (@prompt, @source, @priority, @rank, 'pending', @scheduledAt, @runAt, @dedupKey, @maxAttempts,
         @now, @now, @backfilled)
       ON CONFLICT (dedup_key) DO NOTHING
       RETURNING *`,
    ),
    byDedupKey: db.prepare("SELECT * FROM pulses WHERE dedup_key = ?"),
    byId: db.prepare("SELECT * FROM pulses WHERE id = ?"),
    cancel: db.prepare(
      `UPDATE pulses SET status = 'cancelled', finished_at = @now, updated_at = @now,
         last_error = 'cancelled by request', lease_token = NULL, lease_until = NULL
       WHERE id = @id AND status IN ('pending', 'processing')
       RETURNING *`,
    ),
    attempts: db.prepare(
      `SELECT attempt, owner, started_at, finished_at, outcome, exit_code, signal, duration_ms, output_tail, error
       FROM pulse_attempts WHERE pulse_id = ? ORDER BY id`,
    ),
    counts: db.prepare(
      `SELECT
         (SELECT count(*) FROM pulses WHERE status = 'pending') AS pending,
         (SELECT count(*) FROM pulses WHERE status = 'pending' AND run_at <= @now) AS due,
         (SELECT count(*) FROM pulses WHERE status = 'processing') AS processing,
         (SELECT count(*) FROM pulses WHERE status = 'failed' AND finished_at >= @now - 86400000) AS failed24h,
         (SELECT min(run_at) FROM pulses WHERE status = 'pending' AND run_at <= @now) AS oldestDue,
         (SELECT max(finished_at) FROM pulses WHERE status = 'completed') AS lastCompleted`,
    ),
  };
}

/** A run: its claim, its lease and its attempt row. */
function runStatements(db: Database) {
  return {
    claim: db.prepare(
      `UPDATE pulses SET status = 'processing', attempt = attempt + 1, claimed_at = @now, executed_at = @nowText,
         lease_until = @leaseUntil, lease_token = @token, owner = @owner, runner_pid = NULL, updated_at = @now
       WHERE id = (SELECT id FROM pulses WHERE status = 'pending' AND run_at <= @now
                   ORDER BY priority_rank, run_at, id LIMIT 1)
         AND status = 'pending'
       RETURNING *`,
    ),
    attemptStart: db.prepare(
      `INSERT INTO pulse_attempts (pulse_id, attempt, lease_token, owner, started_at)
       VALUES (?, ?, ?, ?, ?)`,
    ),
    attemptEnd: db.prepare(
      `UPDATE pulse_attempts SET finished_at = @now, outcome = @outcome, exit_code = @exitCode, signal = @signal,
         duration_ms = @now - started_at, output_tail = @outputTail, error = @error
       WHERE lease_token = @token AND finished_at IS NULL`,
    ),
    renew: db.prepare(
      `UPDATE pulses SET lease_until = @leaseUntil, updated_at = @now
       WHERE id = @id AND lease_token = @token AND status = 'processing'`,
    ),
    setPid: db.prepare(
      "UPDATE pulses SET runner_pid = @pid WHERE id = @id AND lease_token = @token AND status = 'processing'",
    ),
  };
}

/** How a run ends: fenced on the lease token, so a run that lost its lease changes nothing. */
function endStatements(db: Database) {
  return {
    complete: db.prepare(
      `UPDATE pulses SET status = 'completed', finished_at = @now, updated_at = @now, exit_code = @exitCode,
         signal = NULL, output_tail = @outputTail, last_error = NULL, lease_token = NULL, lease_until = NULL
       WHERE id = @id AND lease_token = @token AND status = 'processing'`,
    ),
    fail: db.prepare(
      `UPDATE pulses SET status = 'failed', finished_at = @now, updated_at = @now, exit_code = @exitCode,
         signal = @signal, output_tail = @outputTail, last_error = @error, lease_token = NULL, lease_until = NULL
       WHERE id = @id AND lease_token = @token AND status = 'processing'`,
    ),
    retry: db.prepare(
      `UPDATE pulses SET status = 'pending', run_at = @runAt, updated_at = @now, exit_code = @exitCode,
         signal = @signal, output_tail = @outputTail, last_error = @error, lease_token = NULL, lease_until = NULL,
         owner = NULL, runner_pid = NULL
       WHERE id = @id AND lease_token = @token AND status = 'processing'`,
    ),
    release: db.prepare(
      `UPDATE pulses SET status = 'pending', attempt = attempt - @refund, updated_at = @now, last_error = @error,
         lease_token = NULL, lease_until = NULL, owner = NULL, runner_pid = NULL
       WHERE id = @id AND lease_token = @token AND status = 'processing'`,
    ),
  };
}

/** Recovering expired and orphaned leases, and the daemons that hold them. */
function recoveryStatements(db: Database) {
  return {
    expired: db.prepare("SELECT * FROM pulses WHERE status = 'processing' AND lease_until < ? ORDER BY id"),
    heldBy: db.prepare("SELECT * FROM pulses WHERE status = 'processing' AND owner = ?"),
    processingOwners: db.prepare(
      "SELECT DISTINCT owner FROM pulses WHERE status = 'processing' AND owner IS NOT NULL",
    ),
    recover: db.prepare(
      `UPDATE pulses SET status = CASE WHEN attempt >= max_attempts THEN 'failed' ELSE 'pending' END,
         finished_at = CASE WHEN attempt >= max_attempts THEN @now ELSE NULL END,
         run_at = @now, updated_at = @now, last_error = @error, lease_token = NULL, lease_until = NULL,
         owner = NULL, runner_pid = NULL
       WHERE id = @id AND lease_token = @token AND status = 'processing'`,
    ),
    daemon: db.prepare("SELECT * FROM daemons WHERE owner = ?"),
    // Attempts first: they reference their pulse. One batch at a time keeps each write lock short.
    purgeAttempts: db.prepare(
      `DELETE FROM pulse_attempts WHERE pulse_id IN (
         SELECT id FROM pulses WHERE status IN ('completed', 'failed', 'cancelled') AND finished_at < @cutoff
         ORDER BY id LIMIT @batch)`,
    ),
    purgePulses: db.prepare(
      `DELETE FROM pulses WHERE id IN (
         SELECT id FROM pulses WHERE status IN ('completed', 'failed', 'cancelled') AND finished_at < @cutoff
         ORDER BY id LIMIT @batch)`,
    ),
    registerDaemon: db.prepare(
      "INSERT OR REPLACE INTO daemons (owner, host, pid, started_at, seen_at) VALUES (?, ?, ?, ?, ?)",
    ),
    touchDaemon: db.prepare("UPDATE daemons SET seen_at = ? WHERE owner = ?"),
    removeDaemon: db.prepare("DELETE FROM daemons WHERE owner = ?"),
  };
}

export class PulseQueue {
  readonly now: () => number;
  private readonly random: () => number;
  readonly leaseMs: number;
  private readonly retryBaseMs: number;
  private readonly retryCapMs: number;
  private readonly ownerStaleMs: number;
  private readonly statements;

  constructor(
    readonly db: Database,
    options: QueueOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.retryBaseMs = options.retryBaseMs ?? 30_000;
    this.retryCapMs = options.retryCapMs ?? 30 * 60_000;
    this.ownerStaleMs = options.ownerStaleMs ?? 90_000;
    this.statements = {
      ...recordStatements(db),
      ...runStatements(db),
      ...endStatements(db),
      ...recoveryStatements(db),
    };
  }

  /** Adds a pulse, or returns the existing one with the same `dedupKey` (`created: false`). */
  enqueue(input: NewPulse): Enqueued {
    return this.db
      .transaction((): Enqueued => {
        const now = this.now();
        const row = this.statements.insert.get({
          prompt: input.prompt,
          source: input.source,
          priority: input.priority,
          rank: priorityRank(input.priority),
          scheduledAt: input.scheduledAt,
          runAt: input.runAt,
          dedupKey: input.dedupKey ?? null,
          maxAttempts: input.maxAttempts ?? 3,
          now,
          backfilled: input.backfilled ? 1 : 0,
        }) as Pulse | undefined;
        if (row) return { pulse: row, created: true };
        return { pulse: this.statements.byDedupKey.get(input.dedupKey) as Pulse, created: false };
      })
      .immediate();
  }

  get(id: number): Pulse | undefined {
    return this.statements.byId.get(id) as Pulse | undefined;
  }

  attempts(id: number): Attempt[] {
    return this.statements.attempts.all(id) as Attempt[];
  }

  /** Claims the most urgent due pulse for `owner`, or returns undefined when none is due. */
  claim(owner: string): Claim | undefined {
    return this.db
      .transaction((): Claim | undefined => {
        const now = this.now();
        const token = newToken();
        const pulse = this.statements.claim.get({
          now,
          nowText: new Date(now).toISOString(),
          leaseUntil: now + this.leaseMs,
          token,
          owner,
        }) as Pulse | undefined;
        if (!pulse) return undefined;
        this.statements.attemptStart.run(pulse.id, pulse.attempt, token, owner, now);
        return { pulse, token };
      })
      .immediate();
  }

  /** Extends the lease; false when the claim is no longer ours (recovered, cancelled): stop the run. */
  renew(claim: Claim): boolean {
    const now = this.now();
    return (
      this.statements.renew.run({
        id: claim.pulse.id,
        token: claim.token,
        now,
        leaseUntil: now + this.leaseMs,
      }).changes === 1
    );
  }

  /** Records the runner's pid (its process group) so a later boot can stop an orphaned run. */
  recordRunnerPid(claim: Claim, pid: number): boolean {
    return this.statements.setPid.run({ id: claim.pulse.id, token: claim.token, pid }).changes === 1;
  }

  /**
   * Records how the run ended. Returns false, and changes nothing, when the claim's token is no longer the
   * pulse's (the fencing rule): a late finisher never overwrites a recovered or re-claimed pulse.
   */
  finish(claim: Claim, outcome: RunOutcome): boolean {
    return this.db
      .transaction((): boolean => {
        const now = this.now();
        const base = { id: claim.pulse.id, token: claim.token, now, outputTail: outcome.outputTail };
        let changed: number;
        let label: string;
        if (outcome.kind === "completed") {
          changed = this.statements.complete.run({ ...base, exitCode: outcome.exitCode }).changes;
          label = "completed";
        } else {
          const current = this.statements.byId.get(claim.pulse.id) as Pulse | undefined;
          const retry = !outcome.permanent && current !== undefined && current.attempt < current.max_attempts;
          const fields = {
            ...base,
            exitCode: outcome.exitCode,
            signal: outcome.signal,
            error: outcome.error,
          };
          if (retry) {
            changed = this.statements.retry.run({
              ...fields,
              runAt: now + this.backoff(current.attempt),
            }).changes;
            label = "retry";
          } else {
            changed = this.statements.fail.run(fields).changes;
            label = "failed";
          }
        }
        if (changed !== 1) return false;
        this.statements.attemptEnd.run({
          token: claim.token,
          now,
          outcome: label,
          exitCode: outcome.exitCode,
          signal: outcome.kind === "failed" ? outcome.signal : null,
          outputTail: outcome.outputTail,
          error: outcome.kind === "failed" ? outcome.error : null,
        });
        return true;
      })
      .immediate();
  }

  /**
   * Gives the pulse back to `pending` without a result: the runner could not be started, or the daemon is
   * stopping. With `refund`, the attempt does not count.
   */
  release(claim: Claim, reason: string, refund: boolean): boolean {
    return this.db
      .transaction((): boolean => {
        const now = this.now();
        const changed = this.statements.release.run({
          id: claim.pulse.id,
          token: claim.token,
          now,
          error: reason,
          refund: refund ? 1 : 0,
        }).changes;
        if (changed !== 1) return false;
        this.statements.attemptEnd.run({
          token: claim.token,
          now,
          outcome: "released",
          exitCode: null,
          signal: null,
          outputTail: null,
          error: reason,
        });
        return true;
      })
      .immediate();
  }

  /** Cancels a pending or running pulse; undefined when it is finished already (or unknown). */
  cancel(id: number): Pulse | undefined {
    return this.db
      .transaction((): Pulse | undefined => {
        const now = this.now();
        const before = this.statements.byId.get(id) as Pulse | undefined;
        const pulse = this.statements.cancel.get({ id, now }) as Pulse | undefined;
        if (pulse && before?.lease_token) {
          this.statements.attemptEnd.run({
            token: before.lease_token,
            now,
            outcome: "cancelled",
            exitCode: null,
            signal: null,
            outputTail: null,
            error: "cancelled by request",
          });
        }
        return pulse;
      })
      .immediate();
  }

  /** Document 2's stuck-pulse reset: pulses whose lease ran out go back to `pending` (or `failed` at the last attempt). */
  recoverExpired(): Pulse[] {
    return this.db
      .transaction((): Pulse[] => {
        const now = this.now();
        const stuck = this.statements.expired.all(now) as Pulse[];
        for (const pulse of stuck) {
          this.recoverOne(pulse, `lease expired at ${new Date(pulse.lease_until ?? now).toISOString()}`);
        }
        return stuck;
      })
      .immediate();
  }

  /**
   * Recovers at once the pulses held by daemons that are gone: not registered, registered on this host
   * with a pid that no longer runs, or not seen for `ownerStaleMs`. Returns them (with the token and pid
   * they had, so the caller can stop an orphaned runner).
   */
  recoverOrphans(self: string): Pulse[] {
    return this.db
      .transaction((): Pulse[] => {
        const now = this.now();
        const recovered: Pulse[] = [];
        for (const { owner } of this.statements.processingOwners.all() as { owner: string }[]) {
          if (owner === self) continue;
          const daemon = this.statements.daemon.get(owner) as
            | { host: string; pid: number; seen_at: number }
            | undefined;
          const gone =
            daemon === undefined ||
            (daemon.host === hostname() && !isRunning(daemon.pid)) ||
            now - daemon.seen_at > this.ownerStaleMs;
          if (!gone) continue;
          for (const pulse of this.statements.heldBy.all(owner) as Pulse[]) {
            this.recoverOne(pulse, `its daemon (${owner}) stopped while it ran`);
            recovered.push(pulse);
          }
          this.statements.removeDaemon.run(owner);
        }
        return recovered;
      })
      .immediate();
  }

  private recoverOne(pulse: Pulse, reason: string): void {
    const now = this.now();
    this.statements.recover.run({ id: pulse.id, token: pulse.lease_token, now, error: reason });
    if (pulse.lease_token) {
      this.statements.attemptEnd.run({
        token: pulse.lease_token,
        now,
        outcome: "lost",
        exitCode: null,
        signal: null,
        outputTail: null,
        error: reason,
      });
    }
  }

  /**
   * Deletes the pulses that finished (completed, failed or cancelled) more than `retentionMs` ago, with their
   * attempts, in batches of `batch`, one transaction each; returns how many pulses went. A pulse's
   * `dedup_key` goes with it: a key is honoured while its pulse is queued or running and for `retentionMs`
   * after it finished, never less.
   */
  purgeFinished(retentionMs: number, batch = 500): number {
    const cutoff = this.now() - retentionMs;
    const purgeBatch = this.db.transaction((): number => {
      this.statements.purgeAttempts.run({ cutoff, batch });
      return this.statements.purgePulses.run({ cutoff, batch }).changes;
    });
    let purged = 0;
    for (;;) {
      const changes = purgeBatch.immediate();
      purged += changes;
      if (changes < batch) return purged;
    }
  }

  /** A new identity for a daemon process, registered so other daemons can tell it is alive. */
  registerDaemon(): string {
    const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const now = this.now();
    this.statements.registerDaemon.run(owner, hostname(), process.pid, now, now);
    return owner;
  }

  touchDaemon(owner: string): void {
    this.statements.touchDaemon.run(this.now(), owner);
  }

  removeDaemon(owner: string): void {
    this.statements.removeDaemon.run(owner);
  }

  stats(): QueueStats {
    const now = this.now();
    const row = this.statements.counts.get({ now }) as {
      pending: number;
      due: number;
      processing: number;
      failed24h: number;
      oldestDue: number | null;
      lastCompleted: number | null;
    };
    return {
      pending: row.pending,
      due: row.due,
      processing: row.processing,
      failed24h: row.failed24h,
      oldestDueAgeMs: row.oldestDue === null ? null : now - row.oldestDue,
      lastCompletedAt: row.lastCompleted,
    };
  }

  /** The wait before attempt `attempt + 1`: base·2^(attempt−1), capped, times a jitter of 0.5–1.0. */
  backoff(attempt: number): number {
    const policy = {
      baseMs: this.retryBaseMs,
      capMs: this.retryCapMs,
      jitter: { kind: "half-and-up" },
    } as const;
    return backoffMs(attempt - 1, policy, this.random);
  }
}
