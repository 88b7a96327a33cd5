/**
 * The pulse daemon (Document 2; DESIGN.md §7): the HTTP API, the scheduler loop that claims due pulses and
 * runs them, the lease upkeep and stuck-pulse recovery, and the built-in heartbeat and keep-alive schedules.
 *
 * One scheduler tick (every `tickMs`, and at once after a trigger):
 *   1. upkeep (every `upkeepMs`): mark this daemon alive, renew the leases of running pulses, reset pulses
 *      whose lease ran out (Document 2's stuck rule) or whose daemon is gone; and, hourly and at start,
 *      purge the pulses that finished more than `PULSE_RETENTION_DAYS` (30) ago, their dedup keys with them;
 *   2. schedules: the hourly heartbeat pulse, the 4-hourly credential keep-alive;
 *   3. the runner check: if the runner or the desk is unusable nothing is claimed (pulses keep their
 *      attempts) and health says why; the check repeats every tick, so fixing it resumes work by itself;
 *   4. claims up to `PULSE_MAX_CONCURRENT` due pulses and runs each.
 * A locked database (SQLITE_BUSY after the daemon's 250 ms busy timeout, `DAEMON_BUSY_TIMEOUT_MS`, not the
 * 5 s default of `openPulseDb`) skips the tick, marks health degraded and tries again after a jittered
 * pause of one to two `tickMs`; it never throws out of the loop.
 *
 * `close()` is the graceful stop (SIGTERM): no new claims, runs in flight get `shutdownGraceMs` to end, then
 * their process groups are stopped and their pulses go back to `pending` with the attempt given back.
 *
 * What the daemon reads from its environment is daemon-config.ts (re-exported here for its callers).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { UserFacingError } from "../../core/errors.js";
import type { Database } from "../../core/sqlite.js";
import { createPulseHandler, type Health } from "./api.js";
import { type ApiAddress, apiBaseUrl } from "./config.js";
import { DAY_MS, type DaemonConfig } from "./daemon-config.js";
import { isBusy, openPulseDb } from "./db.js";
import { checkRunner, type RunnerCheck, type RunResult, runPulse, stopOrphanRun } from "./executor.js";
import { formatKeepaliveSummary, runKeepalive } from "./keepalive.js";
import { Logger } from "./log.js";
import { type Claim, type Pulse, PulseQueue, type RunOutcome } from "./queue.js";
import { Schedules } from "./schedules.js";

/**
 * The API cannot listen: the port is taken (a second daemon?) or the host is not an address of this
 * machine. `svc pulse daemon` exits 1 on it, not 78: the port may be free on the next start.
 */
export class ApiListenError extends UserFacingError {
  constructor(address: ApiAddress, error: NodeJS.ErrnoException) {
    super(
      "SVC_LISTEN",
      `cannot listen on ${address.host}:${address.port}: ${error.code ?? error.message}` +
        (error.code === "EADDRINUSE"
          ? "; another process holds the port (a second daemon?): stop it or change PULSE_API_PORT"
          : error.code === "EADDRNOTAVAIL"
            ? "; PULSE_API_HOST is not an address of this machine"
            : ""),
      { cause: error, data: { code: error.code } },
    );
  }
}

/** The daemon's SQLite busy wait: short, because it blocks the event loop (API, timers) while it lasts. */
const DAEMON_BUSY_TIMEOUT_MS = 250;
/** While a provider says the runner's credentials need a login, the keep-alive is re-run this often. */
const LOGIN_RECHECK_MS = 5 * 60_000;
/** The purge runs in the upkeep at most this often: it is one indexed scan of the finished pulses. */
const PURGE_EVERY_MS = 60 * 60_000;

export { type DaemonConfig, DEFAULT_RETENTION_DAYS, readDaemonConfig } from "./daemon-config.js";

export interface DaemonOptions {
  readonly now?: () => number;
  readonly logger?: Logger;
  readonly tickMs?: number;
  /** How often leases are renewed and stuck pulses looked for (default 30 s, or a third of the lease). */
  readonly upkeepMs?: number;
  /** While the runner's credentials need a login, how often the keep-alive looks again (default 5 min). */
  readonly loginRecheckMs?: number;
  /** How often finished pulses past `PULSE_RETENTION_DAYS` are purged (default 1 h; also once at start). */
  readonly purgeMs?: number;
  /** How often the heartbeat and keep-alive schedules are looked at (default 5 s). */
  readonly schedulesMs?: number;
  readonly stderr?: NodeJS.WritableStream;
  /** Called after each scheduler tick, whatever it did: what a tick did not do is settled once it fired. */
  readonly onTick?: () => void;
}

interface Running {
  readonly claim: Claim;
  readonly abort: AbortController;
  done: Promise<void>;
  pid?: number;
  stopping?: "cancelled" | "lost" | "shutdown";
}

export class PulseDaemon {
  readonly queue: PulseQueue;
  readonly owner: string;
  readonly logger: Logger;
  private readonly schedules: Schedules;
  private readonly running = new Map<number, Running>();
  private server: Server | undefined;
  private address: AddressInfo | undefined;
  private tickTimer: NodeJS.Timeout | undefined;
  private ticking = false;
  private tickAgain = false;
  private stopping = false;
  private lastUpkeep = 0;
  private lastSchedules = 0;
  private lastPurge = Number.NEGATIVE_INFINITY;
  private runner: RunnerCheck = { ok: false, component: "runner", reason: "not checked yet" };
  private databaseProblem: string | undefined;
  private lastTickAt = 0;
  private keepaliveRunning = false;
  /** The keep-alive slot this daemon claimed and is running (renewed by upkeep), if any. */
  private keepaliveSlot: number | undefined;
  /** Providers whose refresh said a person must log in again: the runner would fail, so nothing is claimed. */
  private needsLogin: string[] = [];
  private lastLoginRecheck = 0;
  private readonly unanswered = new Set<ServerResponse>();

  private constructor(
    readonly config: DaemonConfig,
    private readonly db: Database,
    private readonly options: DaemonOptions,
  ) {
    this.logger =
      options.logger ??
      new Logger({
        component: "pulse-daemon",
        level: config.logLevel,
        ...(config.logFile === undefined ? {} : { file: config.logFile }),
        ...(options.stderr === undefined ? {} : { stderr: options.stderr }),
        secrets: [...config.tokens, config.env.MESSENGER_BOT_TOKEN, config.env.OAUTH_CLIENT_SECRET],
        ...(options.now === undefined ? {} : { now: options.now }),
      });
    this.queue = new PulseQueue(db, {
      ...(options.now === undefined ? {} : { now: options.now }),
      leaseMs: config.leaseMs,
      retryBaseMs: config.retryBaseMs,
      retryCapMs: config.retryCapMs,
    });
    this.schedules = new Schedules(this.queue, {
      tz: config.timeZone,
      logger: this.logger,
      keepaliveLeaseMs: config.leaseMs,
    });
    this.owner = this.queue.registerDaemon();
  }

  /** Opens the database (refusing an old schema), recovers orphaned pulses, binds the API and starts the loop. */
  static async start(config: DaemonConfig, options: DaemonOptions = {}): Promise<PulseDaemon> {
    const db = openPulseDb(config.dbPath, { migrate: false, busyTimeoutMs: DAEMON_BUSY_TIMEOUT_MS });
    let daemon: PulseDaemon;
    try {
      daemon = new PulseDaemon(config, db, options);
    } catch (error) {
      db.close();
      throw error;
    }
    try {
      daemon.recoverAtBoot();
      await daemon.listen();
    } catch (error) {
      daemon.queue.removeDaemon(daemon.owner);
      db.close();
      throw error;
    }
    daemon.logger.info("pulse daemon started", {
      url: daemon.url,
      owner: daemon.owner,
      max_concurrent: config.maxConcurrent,
      time_zone: config.timeZone,
    });
    daemon.scheduleTick(0);
    return daemon;
  }

  get url(): string {
    if (!this.address) throw new Error("the API is not bound");
    return apiBaseUrl({ host: this.config.api.host, port: this.address.port });
  }

  private recoverAtBoot(): void {
    for (const pulse of this.queue.recoverOrphans(this.owner)) this.stopOrphan(pulse);
    for (const pulse of this.queue.recoverExpired()) this.stopOrphan(pulse);
  }

  private stopOrphan(pulse: Pulse): void {
    const killed =
      pulse.runner_pid !== null &&
      pulse.lease_token !== null &&
      stopOrphanRun(pulse.runner_pid, pulse.lease_token);
    this.logger.warn("pulse recovered: its run was lost", {
      pulse: pulse.id,
      attempt: pulse.attempt,
      previous_owner: pulse.owner,
      orphan_runner_stopped: killed,
    });
  }

  private async listen(): Promise<void> {
    const handler = createPulseHandler({
      queue: this.queue,
      tokens: this.config.tokens,
      defaults: { source: "api", maxAttempts: this.config.maxAttempts },
      health: () => this.health(),
      logger: this.logger,
      onTrigger: () => this.scheduleTick(0),
      onCancel: (pulse) => this.stopRun(pulse.id, "cancelled"),
    });
    const server = createServer({ keepAliveTimeout: 5000, requestTimeout: 30_000 }, (req, res) => {
      if (this.stopping) res.setHeader("connection", "close");
      this.unanswered.add(res);
      res.once("close", () => this.unanswered.delete(res));
      handler(req, res);
    });
    this.address = await new Promise<AddressInfo>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) =>
        reject(new ApiListenError(this.config.api, error)),
      );
      server.listen(this.config.api.port, this.config.api.host, () =>
        resolve(server.address() as AddressInfo),
      );
    });
    this.server = server;
  }

  /** `/api/health`: database, runner and desk, the scheduler loop, and the queue's state. */
  health(): Health {
    const reasons: string[] = [];
    let queue: ReturnType<PulseQueue["stats"]> | undefined;
    try {
      this.queue.touchDaemon(this.owner);
      queue = this.queue.stats();
    } catch (error) {
      reasons.push(
        isBusy(error)
          ? "database: locked by another connection"
          : `database: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    if (this.databaseProblem) reasons.push(`database: ${this.databaseProblem}`);
    if (!this.runner.ok) reasons.push(`${this.runner.component}: ${this.runner.reason}`);
    if (this.needsLogin.length > 0) {
      reasons.push(
        `credentials: ${this.needsLogin.join(", ")} cannot refresh the runner's token; log in to the agent again (pulses wait)`,
      );
    }
    const now = this.queue.now();
    const loopAge = now - this.lastTickAt;
    if (!this.stopping && loopAge > Math.max(30_000, (this.options.tickMs ?? 250) * 20)) {
      reasons.push(`scheduler: no tick for ${Math.round(loopAge / 1000)} s`);
    }
    if (this.stopping) reasons.push("daemon: stopping");
    return {
      status: reasons.length === 0 ? "ok" : "degraded",
      reasons,
      runner: this.runner.ok ? "ok" : this.runner.component === "runner" ? "missing" : "ok",
      desk: !this.runner.ok && this.runner.component === "desk" ? "missing" : "ok",
      database: reasons.some((r) => r.startsWith("database")) ? "degraded" : "ok",
      running: this.running.size,
      max_concurrent: this.config.maxConcurrent,
      queue:
        queue === undefined
          ? null
          : {
              pending: queue.pending,
              due: queue.due,
              processing: queue.processing,
              failed_last_24h: queue.failed24h,
              oldest_due_age_s:
                queue.oldestDueAgeMs === null ? null : Math.round(queue.oldestDueAgeMs / 1000),
              last_completed_at:
                queue.lastCompletedAt === null ? null : new Date(queue.lastCompletedAt).toISOString(),
            },
      time_zone: this.config.timeZone,
    };
  }

  /** Runs the loop body soon (0: at once). Ticks never overlap. */
  private scheduleTick(delay = this.options.tickMs ?? 250): void {
    if (this.stopping) return;
    if (this.ticking) {
      if (delay === 0) this.tickAgain = true;
      return;
    }
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = setTimeout(() => {
      this.tickTimer = undefined;
      this.tick();
    }, delay);
  }

  private tick(): void {
    this.ticking = true;
    this.tickAgain = false;
    try {
      this.tickBody();
      if (this.databaseProblem) {
        this.logger.recovered("database", "pulse database usable again");
        this.databaseProblem = undefined;
      }
    } catch (error) {
      if (isBusy(error)) {
        this.databaseProblem = "locked by another connection; retrying";
        this.logger.alert("database", "pulse database is locked; the scheduler retries", {});
      } else {
        this.databaseProblem = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        this.logger.alert("database", "scheduler tick failed", {
          error: (error as Error).stack ?? String(error),
        });
      }
    } finally {
      this.ticking = false;
      this.lastTickAt = this.queue.now();
      if (!this.stopping) {
        // A busy database gets a jittered retry so two daemons do not collide in step.
        const base = this.options.tickMs ?? 250;
        this.scheduleTick(
          this.tickAgain ? 0 : this.databaseProblem ? base + Math.floor(Math.random() * base) : base,
        );
      }
      this.options.onTick?.();
    }
  }

  private tickBody(): void {
    const now = this.queue.now();
    // Every 30 s, or often enough to renew a short PULSE_LEASE three times before it runs out.
    if (now - this.lastUpkeep >= (this.options.upkeepMs ?? Math.min(30_000, this.config.leaseMs / 3))) {
      this.lastUpkeep = now;
      this.upkeep();
    }
    if (now - this.lastSchedules >= (this.options.schedulesMs ?? 5_000) || now < this.lastSchedules) {
      this.lastSchedules = now;
      this.runSchedules();
    }
    const check = checkRunner(this.config.runnerCommand, this.config.deskPath, this.config.env);
    if (!check.ok) {
      this.logger.alert(
        `runner:${check.component}`,
        `pulses wait: ${check.reason}; they run by themselves once it is fixed`,
      );
    } else if (!this.runner.ok && this.runner.reason !== "not checked yet") {
      this.logger.recovered(`runner:${this.runner.component}`, "runner usable again; pulses run", {
        runner: check.path,
      });
    }
    this.runner = check;
    if (!check.ok || this.needsLogin.length > 0) return;
    while (!this.stopping && this.running.size < this.config.maxConcurrent) {
      const claim = this.queue.claim(this.owner);
      if (!claim) break;
      this.start(claim, check);
    }
  }

  private upkeep(): void {
    this.queue.touchDaemon(this.owner);
    for (const run of this.running.values()) {
      if (!run.stopping && !this.queue.renew(run.claim)) this.stopRun(run.claim.pulse.id, "lost");
    }
    for (const pulse of this.queue.recoverExpired()) this.stopOrphan(pulse);
    for (const pulse of this.queue.recoverOrphans(this.owner)) this.stopOrphan(pulse);
    if (this.keepaliveSlot !== undefined) this.schedules.renewKeepalive(this.keepaliveSlot);
    const now = this.queue.now();
    if (now - this.lastPurge >= (this.options.purgeMs ?? PURGE_EVERY_MS)) {
      this.lastPurge = now;
      const purged = this.queue.purgeFinished(this.config.retentionMs);
      if (purged > 0)
        this.logger.info("finished pulses purged", {
          pulses: purged,
          retention_days: this.config.retentionMs / DAY_MS,
        });
    }
  }

  private runSchedules(): void {
    if (this.config.heartbeat) {
      const queued = this.schedules.heartbeat();
      if (queued?.created)
        this.logger.info("heartbeat queued", { pulse: queued.pulse.id, slot: queued.pulse.scheduled_at });
    }
    if (this.config.keepalive.providersDir !== undefined && !this.keepaliveRunning) {
      const slot = this.schedules.claimKeepalive();
      if (slot !== undefined) this.keepalive(slot);
      else if (
        this.needsLogin.length > 0 &&
        this.queue.now() - this.lastLoginRecheck >= (this.options.loginRecheckMs ?? LOGIN_RECHECK_MS)
      ) {
        // Paused for a login: look again often, so work resumes soon after the person logged in.
        this.keepalive(undefined);
      }
    }
  }

  /** Runs the providers; `slot` is the claimed keep-alive slot, undefined for a login re-check. */
  private keepalive(slot: number | undefined): void {
    this.keepaliveRunning = true;
    this.keepaliveSlot = slot;
    const dir = this.config.keepalive.providersDir as string;
    this.lastLoginRecheck = this.queue.now();
    runKeepalive({
      dir,
      env: this.config.env,
      logger: this.logger,
      timeoutMs: this.config.keepalive.timeoutMs,
    })
      .then((report) => {
        const needsLogin = report.providers.filter((p) => p.needsLogin).map((p) => p.name);
        if (needsLogin.length > 0) {
          this.logger.alert(
            "credentials",
            `runner credentials need a login (${needsLogin.join(", ")}); pulses wait`,
          );
        } else if (this.needsLogin.length > 0) {
          this.logger.recovered("credentials", "runner credentials valid again; pulses run");
        }
        this.needsLogin = needsLogin;
        if (slot !== undefined) this.schedules.finishKeepalive(slot);
        this.logger.info("credential keep-alive done", {
          ...(slot === undefined ? { recheck: "login" } : { slot: new Date(slot).toISOString() }),
          summary: formatKeepaliveSummary(report),
        });
      })
      .catch((error: unknown) => this.logger.error("credential keep-alive failed", { error: String(error) }))
      .finally(() => {
        this.keepaliveRunning = false;
        this.keepaliveSlot = undefined;
      });
  }

  private start(claim: Claim, runner: Extract<RunnerCheck, { ok: true }>): void {
    const abort = new AbortController();
    const pulse = claim.pulse;
    this.logger.info("pulse started", { pulse: pulse.id, attempt: pulse.attempt, source: pulse.source });
    const run: Running = { claim, abort, done: Promise.resolve() };
    this.running.set(pulse.id, run);
    run.done = runPulse({
      path: runner.path,
      args: runner.args,
      desk: this.config.deskPath,
      prompt: pulse.prompt,
      env: this.config.env,
      extraEnv: {
        SVC_PULSE_ID: String(pulse.id),
        SVC_PULSE_ATTEMPT: String(pulse.attempt),
        SVC_PULSE_SOURCE: pulse.source,
        SVC_PULSE_LEASE: claim.token,
      },
      timeoutMs: this.config.runTimeoutMs,
      killGraceMs: this.config.killGraceMs,
      signal: abort.signal,
      onSpawn: (pid) => {
        run.pid = pid;
        this.withDatabase(() => this.queue.recordRunnerPid(claim, pid));
      },
    }).then((result) => {
      this.running.delete(pulse.id);
      this.withDatabase(() => this.recordRunEnd(run, result));
      this.scheduleTick(0);
    });
  }

  /** Records how a run ended: released when it never started or the daemon stopped, else finished. */
  private recordRunEnd(run: Running, result: RunResult): void {
    const { claim } = run;
    const pulse = claim.pulse;
    if (result.spawnError !== undefined) {
      // The runner vanished between the check and the spawn: not the pulse's fault.
      this.queue.release(claim, `runner could not start (${result.spawnError})`, true);
      this.logger.warn("runner could not start; pulse waits", { pulse: pulse.id, error: result.spawnError });
      return;
    }
    if (run.stopping === "shutdown") {
      this.queue.release(claim, "daemon stopped during the run", true);
      this.logger.info("pulse released at shutdown", { pulse: pulse.id });
      return;
    }
    if (run.stopping !== undefined) {
      this.logger.info("pulse run stopped", { pulse: pulse.id, why: run.stopping });
      return;
    }
    const outcome = runOutcome(result, this.config.runTimeoutMs);
    const recorded = this.queue.finish(claim, outcome);
    this.logRunEnd(pulse, result, outcome, recorded);
  }

  private logRunEnd(pulse: Pulse, result: RunResult, outcome: RunOutcome, recorded: boolean): void {
    const after = this.queue.get(pulse.id);
    const fields = {
      pulse: pulse.id,
      attempt: pulse.attempt,
      exit_code: result.exitCode,
      signal: result.signal,
      duration_ms: result.durationMs,
      status: after?.status,
    };
    if (!recorded) this.logger.warn("run ended after its lease was lost; result not recorded", fields);
    else if (outcome.kind === "completed") this.logger.info("pulse completed", fields);
    else if (after?.status === "failed")
      this.logger.alert(`pulse:${pulse.id}`, "pulse failed for good", { ...fields, error: outcome.error });
    else
      this.logger.warn("pulse run failed; will retry", {
        ...fields,
        error: outcome.error,
        next_run_at: after?.run_at,
      });
  }

  /** Stops a running pulse's process group (cancel, lost lease, shutdown). */
  private stopRun(id: number, why: NonNullable<Running["stopping"]>): void {
    const run = this.running.get(id);
    if (!run || run.stopping) return;
    run.stopping = why;
    run.abort.abort();
  }

  /** Database work after a run: a locked database is retried for a while rather than losing the result. */
  private withDatabase(work: () => void, attempt = 0): void {
    try {
      work();
    } catch (error) {
      if (isBusy(error) && attempt < 20 && !this.closed) {
        setTimeout(() => this.withDatabase(work, attempt + 1), 250 + Math.floor(Math.random() * 250));
        return;
      }
      this.logger.error("could not record a run's result", {
        error: (error as Error).stack ?? String(error),
      });
    }
  }

  private closed = false;
  private closing: Promise<void> | undefined;

  /** The graceful stop: see the module comment. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.tickTimer) clearTimeout(this.tickTimer);
    const serverClosed = new Promise<void>((resolve) => {
      if (!this.server) return resolve();
      for (const res of this.unanswered) if (!res.headersSent) res.setHeader("connection", "close");
      const force = setTimeout(() => this.server?.closeAllConnections(), 5000);
      this.server.close(() => {
        clearTimeout(force);
        resolve();
      });
      this.server.closeIdleConnections();
    });
    if (this.running.size > 0) {
      this.logger.info("stopping: waiting for running pulses", {
        running: this.running.size,
        grace_ms: this.config.shutdownGraceMs,
      });
      const all = Promise.all([...this.running.values()].map((run) => run.done));
      const graceOver = await Promise.race([
        all.then(() => false),
        new Promise<boolean>((resolve) =>
          setTimeout(() => resolve(true), this.config.shutdownGraceMs).unref(),
        ),
      ]);
      if (graceOver) {
        for (const id of [...this.running.keys()]) this.stopRun(id, "shutdown");
        await all;
      }
    }
    await serverClosed;
    this.closed = true;
    try {
      this.queue.removeDaemon(this.owner);
    } catch (error) {
      this.logger.warn("could not unregister the daemon", { error: String(error) });
    }
    this.db.close();
    this.logger.info("pulse daemon stopped");
  }
}

/** A finished run as the queue records it: completed only for exit 0 within the time limit. */
function runOutcome(result: RunResult, runTimeoutMs: number): RunOutcome {
  if (result.exitCode === 0 && !result.timedOut) {
    return { kind: "completed", exitCode: 0, outputTail: result.outputTail };
  }
  return {
    kind: "failed",
    exitCode: result.exitCode,
    signal: result.signal,
    outputTail: result.outputTail,
    error: result.timedOut
      ? `timed out after ${runTimeoutMs} ms`
      : result.signal
        ? `killed by ${result.signal}`
        : `exited with ${result.exitCode}`,
  };
}
