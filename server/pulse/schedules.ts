/**
 * The daemon's built-in schedules (DESIGN.md §7; notes §2.1 rows 7–8, §2.2 failure modes 6–7): the hourly
 * heartbeat and the 4-hourly credential keep-alive, bookkept in the `schedules` table (`last_slot` = the
 * newest slot already handled, epoch ms).
 *
 * Contracts:
 * - One pulse per heartbeat slot, whatever runs: a restart inside the hour, two daemons on one file, the
 *   daemon and `svc pulse heartbeat` from cron. The slot is re-checked, the pulse enqueued and `last_slot`
 *   advanced in one `BEGIN IMMEDIATE` transaction, and the pulse's `dedup_key` (UNIQUE) names the slot's
 *   UTC instant, so even a `schedules` row restored from an old backup cannot make a second pulse.
 * - Missed policy "once": after downtime (or a forward clock step) across several slots only the newest
 *   slot is emitted, marked `backfilled` when it is more than `lateAfterMs` late; the skipped slots are
 *   counted in a WARNING.
 * - `last_slot` never moves backward. When the clock steps back (NTP) so that the current slot is older
 *   than `last_slot`, nothing is emitted until the clock passes the next slot: no slot fires twice.
 * - A wall-clock jump of more than 3 hours between two checks of one `Schedules` object is logged as a
 *   clock correction (ISC cron's rule; it is also what a suspended host looks like). It changes nothing
 *   else: a forward jump is handled by the missed policy, a backward one by the rule above.
 *
 * Time comes only from `queue.now()`. Methods are synchronous; SQLite errors (SQLITE_BUSY after the busy
 * timeout) are thrown with nothing changed, and the next call tries again.
 */
import { formatDuration } from "../../core/duration.js";
import type { Database } from "../../core/sqlite.js";
import {
  countHourlySlotsBetween,
  formatLocalSlot,
  HOUR_MS,
  heartbeatDedupKey,
  heartbeatPulse,
  hourlySlotAtOrBefore,
  KEEPALIVE_EVERY_MS,
  slotAtOrBefore,
} from "./heartbeat.js";
import type { Logger } from "./log.js";
import type { Enqueued, Pulse, PulseQueue } from "./queue.js";

export const HEARTBEAT_SCHEDULE = "heartbeat";
export const KEEPALIVE_SCHEDULE = "keepalive";
/** The newest keep-alive slot whose run finished (the "keepalive" row holds the newest one claimed). */
export const KEEPALIVE_DONE_SCHEDULE = "keepalive:done";
/** A keep-alive claim not renewed for this long belongs to a daemon that died in the middle of the run. */
export const DEFAULT_KEEPALIVE_LEASE_MS = 10 * 60_000;
/** ISC cron treats a jump of more than 3 hours as a correction of the clock rather than time passing. */
export const CLOCK_CORRECTION_MS = 3 * HOUR_MS;

export interface SchedulesOptions {
  /** IANA zone of the heartbeat's wall clock (ConfigReader.timeZone()). */
  readonly tz: string;
  readonly logger?: Logger;
  /** A heartbeat emitted more than this after its slot is marked `backfilled` (default 90 s). */
  readonly lateAfterMs?: number;
  /** The keep-alive's period (default 4 hours). */
  readonly keepaliveEveryMs?: number;
  /** How long a keep-alive claim holds without renewal (default 10 minutes, the pulse lease). */
  readonly keepaliveLeaseMs?: number;
}

export class Schedules {
  readonly tz: string;
  private readonly logger: Logger | undefined;
  private readonly lateAfterMs: number;
  private readonly keepaliveEveryMs: number;
  private readonly keepaliveLeaseMs: number;
  private readonly db: Database;
  private readonly statements;
  /** The `now` of the previous heartbeat check, for jump detection (per object, not persisted). */
  private lastCheck: number | undefined;
  /** Set while the clock is behind `last_slot`, so the notice is logged once, not on every tick. */
  private behind = false;

  constructor(
    readonly queue: PulseQueue,
    options: SchedulesOptions,
  ) {
    this.tz = options.tz;
    this.logger = options.logger;
    this.lateAfterMs = options.lateAfterMs ?? 90_000;
    this.keepaliveEveryMs = options.keepaliveEveryMs ?? KEEPALIVE_EVERY_MS;
    this.keepaliveLeaseMs = options.keepaliveLeaseMs ?? DEFAULT_KEEPALIVE_LEASE_MS;
    this.db = queue.db;
    this.statements = {
      lastSlot: this.db.prepare("SELECT last_slot FROM schedules WHERE name = ?").pluck(),
      row: this.db.prepare("SELECT last_slot, updated_at FROM schedules WHERE name = ?"),
      renew: this.db.prepare(
        "UPDATE schedules SET updated_at = @now WHERE name = @name AND last_slot = @slot AND updated_at = @seen",
      ),
      touch: this.db.prepare(
        "UPDATE schedules SET updated_at = @now WHERE name = @name AND last_slot = @slot",
      ),
      // max(): last_slot never moves backward, even if a caller asks it to.
      advance: this.db.prepare(
        `INSERT INTO schedules (name, last_slot, updated_at) VALUES (@name, @slot, @now)
         ON CONFLICT (name) DO UPDATE SET last_slot = max(last_slot, excluded.last_slot), updated_at = excluded.updated_at`,
      ),
      byDedupKey: this.db.prepare("SELECT * FROM pulses WHERE dedup_key = ?"),
    };
  }

  /** The newest slot handled by schedule `name`, or undefined before its first run. */
  lastSlot(name: string): number | undefined {
    return this.statements.lastSlot.get(name) as number | undefined;
  }

  /**
   * Queues the heartbeat pulse of the newest hourly slot ≤ now, unless that slot (or a newer one) was
   * handled already. Returns what was queued, with `created: false` if a pulse with the slot's dedup key
   * existed; undefined when nothing was due.
   */
  heartbeat(): Enqueued | undefined {
    const now = this.queue.now();
    this.noticeClockJump(now);
    const slot = hourlySlotAtOrBefore(now, this.tz);
    // Cheap check without the write lock: the daemon asks every few seconds, and almost always in vain.
    const seen = this.lastSlot(HEARTBEAT_SCHEDULE);
    if (seen !== undefined && slot <= seen) {
      this.noticeBehind(slot, seen);
      return undefined;
    }
    const outcome = this.db
      .transaction(() => {
        // Re-read under the lock: another daemon may have handled the slot since the check above.
        const previous = this.lastSlot(HEARTBEAT_SCHEDULE);
        if (previous !== undefined && slot <= previous) return undefined;
        const backfilled = now - slot > this.lateAfterMs;
        const enqueued = this.queue.enqueue(heartbeatPulse(slot, this.tz, backfilled));
        this.statements.advance.run({ name: HEARTBEAT_SCHEDULE, slot, now });
        return { enqueued, previous };
      })
      .immediate();
    if (outcome === undefined) return undefined;
    this.behind = false;
    const { enqueued, previous } = outcome;
    const fields = {
      slot: new Date(slot).toISOString(),
      local: formatLocalSlot(slot, this.tz),
      tz: this.tz,
      pulse: enqueued.pulse.id,
    };
    const skipped = previous === undefined ? 0 : countHourlySlotsBetween(previous, slot, this.tz);
    if (skipped > 0) {
      this.logger?.warn(
        `heartbeat missed ${skipped} slot${skipped === 1 ? "" : "s"} since ${formatLocalSlot(previous as number, this.tz)} ` +
          "(daemon down or clock stepped forward); missed policy once: only the newest slot is queued",
        { ...fields, skipped, lastSlot: new Date(previous as number).toISOString() },
      );
    }
    if (!enqueued.created) {
      this.logger?.info("heartbeat slot already had a pulse (same dedup key); not queued again", fields);
    } else if (enqueued.pulse.backfilled === 1) {
      this.logger?.warn("heartbeat queued late, marked backfilled", { ...fields, lateMs: now - slot });
    } else {
      this.logger?.debug("heartbeat queued", fields);
    }
    return enqueued;
  }

  /** The pulse queued for heartbeat slot `slot`, if any (e.g. to say "already queued as pulse 12"). */
  heartbeatPulseFor(slot: number): Pulse | undefined {
    return this.statements.byDedupKey.get(heartbeatDedupKey(slot)) as Pulse | undefined;
  }

  /**
   * Claims a keep-alive run: returns the slot to run (start of a 4-hour period, UTC-aligned) or undefined.
   *
   * - A new slot has begun since the last claim (or there never was one): the "keepalive" row advances to
   *   it in the same `BEGIN IMMEDIATE` transaction, so of two daemons exactly one gets each slot.
   * - The last claimed slot never finished ("keepalive:done" is behind it) and its claim was not renewed
   *   for the lease (`keepaliveLeaseMs`): the daemon that ran it died in the middle, so the run is claimed
   *   again. Without this, a crash between claim and refresh would lose a whole period, and a token that
   *   had 5 hours left would expire before the next slot.
   * - Otherwise (claimed and running or done, or the clock is behind the last claim): undefined.
   *
   * The caller renews the claim with `renewKeepalive` while the providers run and ends it with
   * `finishKeepalive`.
   */
  claimKeepalive(): number | undefined {
    const now = this.queue.now();
    const slot = slotAtOrBefore(now, this.keepaliveEveryMs);
    const claimable = (): { slot: number; seen?: number } | undefined => {
      const claimed = this.statements.row.get(KEEPALIVE_SCHEDULE) as
        | { last_slot: number; updated_at: number }
        | undefined;
      if (claimed === undefined || slot > claimed.last_slot) return { slot };
      const done = this.lastSlot(KEEPALIVE_DONE_SCHEDULE);
      if (done !== undefined && done >= claimed.last_slot) return undefined;
      if (now - claimed.updated_at < this.keepaliveLeaseMs) return undefined;
      return { slot: claimed.last_slot, seen: claimed.updated_at };
    };
    if (claimable() === undefined) return undefined;
    const claim = this.db
      .transaction(() => {
        // Re-read under the lock: another daemon may have claimed it since the check above.
        const found = claimable();
        if (found === undefined) return undefined;
        if (found.seen === undefined)
          this.statements.advance.run({ name: KEEPALIVE_SCHEDULE, slot: found.slot, now });
        else this.statements.renew.run({ name: KEEPALIVE_SCHEDULE, slot: found.slot, seen: found.seen, now });
        return found;
      })
      .immediate();
    if (claim?.seen !== undefined) {
      this.logger?.warn(
        "the credential keep-alive of this slot never finished (its daemon stopped?); running it again",
        {
          slot: new Date(claim.slot).toISOString(),
          claimedAt: new Date(claim.seen).toISOString(),
        },
      );
    }
    return claim?.slot;
  }

  /** Keeps a running keep-alive's claim alive (call well within `keepaliveLeaseMs`). */
  renewKeepalive(slot: number): void {
    this.statements.touch.run({ name: KEEPALIVE_SCHEDULE, slot, now: this.queue.now() });
  }

  /** Records that the keep-alive of `slot` ran to the end, so it is not claimed again. */
  finishKeepalive(slot: number): void {
    this.statements.advance.run({ name: KEEPALIVE_DONE_SCHEDULE, slot, now: this.queue.now() });
  }

  private noticeClockJump(now: number): void {
    const last = this.lastCheck;
    this.lastCheck = now;
    if (last === undefined || Math.abs(now - last) <= CLOCK_CORRECTION_MS) return;
    const jump = now - last;
    this.logger?.warn(
      `wall clock jumped ${jump > 0 ? "forward" : "back"} by ${formatDuration(jump)} ` +
        "between two schedule checks; treating it as a clock correction (or a suspended host)",
      { from: new Date(last).toISOString(), to: new Date(now).toISOString(), jumpMs: jump },
    );
  }

  private noticeBehind(slot: number, lastSlot: number): void {
    if (slot === lastSlot) {
      this.behind = false;
      return;
    }
    if (this.behind) return;
    this.behind = true;
    this.logger?.warn(
      `the clock is behind the newest heartbeat slot already handled (${formatLocalSlot(lastSlot, this.tz)}); ` +
        "no heartbeat until it passes the next slot, so none fires twice",
      { slot: new Date(slot).toISOString(), lastSlot: new Date(lastSlot).toISOString(), tz: this.tz },
    );
  }
}
