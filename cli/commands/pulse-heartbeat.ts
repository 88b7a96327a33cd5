import { Command, Option } from "clipanion";
import { ConfigError, ConfigReader, loadEnvironment } from "../../server/pulse/config.js";
import { formatLocalSlot, hourlySlotAtOrBefore } from "../../server/pulse/heartbeat.js";
import { Logger } from "../../server/pulse/log.js";
import { parseScheduledAt } from "../../server/pulse/pulse-input.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

/** sysexits EX_TEMPFAIL: the database stayed locked past the busy timeout; cron may simply try again. */
export const EXIT_TEMPFAIL = 75;

export class PulseHeartbeatCommand extends SvcCommand {
  static override paths = [["pulse", "heartbeat"]];

  static override usage = Command.Usage({
    category: "The pulse daemon",
    description: "Queue the hourly heartbeat pulse once (for cron users)",
    details: `
      Queues the heartbeat pulse of the newest local hh:00 slot in PULSE_TZ (or TZ), with the prompt for
      its time of day, unless that slot already has one: the daemon's built-in schedule and this command
      share the bookkeeping in PULSE_DB_PATH, so running both, or running this twice, queues one pulse per
      slot. A slot missed while nothing ran is caught up once, marked backfilled.

      Prints \`heartbeat <slot> <zone>: pulse <id> queued\`, \`…: already queued as pulse <id>\` or
      \`…: nothing due\`. Exits 78 on a configuration error (missing PULSE_DB_PATH, old schema) and 75 when
      the database stayed locked for 5 s.
    `,
    examples: [
      ["Every hour from crontab", "0 * * * * svc pulse heartbeat --environment /etc/svc/pulse.env"],
      [
        "As if the clock read 06:30 in Berlin (tests, replays)",
        "svc pulse heartbeat --now 2026-10-25T06:30:00+01:00",
      ],
    ],
  });

  now = withValueName(
    "time",
    Option.String("--now", {
      description:
        "Act as if the clock read this RFC 3339 time (with a zone); the schedule never moves backward",
    }),
  );

  envFile = withValueName(
    "file",
    Option.String("--environment,--env-file", {
      description: "Environment file (KEY=value) read under the process environment; default $PULSE_ENV_FILE",
    }),
  );

  async run(): Promise<number> {
    const { isBusy } = await import("../../server/pulse/db.js");
    try {
      return await this.queueHeartbeat();
    } catch (error) {
      if (isBusy(error)) {
        this.context.stderr.write(
          "svc: PULSE_DB_PATH stayed locked by another process for 5 s; nothing was queued, run svc pulse heartbeat again\n",
        );
        return EXIT_TEMPFAIL;
      }
      throw error;
    }
  }

  private async queueHeartbeat(): Promise<number> {
    const [{ openPulseDb }, { PulseQueue }, { Schedules }] = await Promise.all([
      import("../../server/pulse/db.js"),
      import("../../server/pulse/queue.js"),
      import("../../server/pulse/schedules.js"),
    ]);
    const reader = new ConfigReader(loadEnvironment(this.envFile));
    const path = reader.required(
      "PULSE_DB_PATH",
      "set it to the pulse database file, e.g. /var/lib/svc/pulse.db",
    );
    const tz = reader.timeZone();
    const level = reader.logLevel();
    reader.check();
    let clock: (() => number) | undefined;
    if (this.now !== undefined) {
      let at: number;
      try {
        at = parseScheduledAt(this.now, Date.now());
      } catch (error) {
        throw new ConfigError([`--now: ${(error as Error).message.replace(/^scheduled_at /, "")}`]);
      }
      clock = () => at;
    }
    const db = openPulseDb(path, { migrate: false });
    try {
      // Warnings (missed slots, clock corrections) go to stderr, where cron mails them.
      const logger = new Logger({ level, stderr: this.context.stderr, component: "heartbeat" });
      const schedules = new Schedules(new PulseQueue(db, clock === undefined ? {} : { now: clock }), {
        tz,
        logger,
      });
      const queued = schedules.heartbeat();
      if (queued !== undefined) {
        // scheduled_at, not run_at: a retried pulse's run_at has moved on.
        const slot = Date.parse(queued.pulse.scheduled_at);
        const label = `heartbeat ${formatLocalSlot(slot, tz)} ${tz}`;
        this.context.stdout.write(
          queued.created
            ? `${label}: pulse ${queued.pulse.id} queued${queued.pulse.backfilled ? " (late, backfilled)" : ""}\n`
            : `${label}: already queued as pulse ${queued.pulse.id}\n`,
        );
        return EXIT.ok;
      }
      const slot = hourlySlotAtOrBefore(schedules.queue.now(), tz);
      const label = `heartbeat ${formatLocalSlot(slot, tz)} ${tz}`;
      const existing = schedules.heartbeatPulseFor(slot);
      this.context.stdout.write(
        existing === undefined
          ? `${label}: nothing due\n`
          : `${label}: already queued as pulse ${existing.id}\n`,
      );
      return EXIT.ok;
    } finally {
      db.close();
    }
  }
}
