/**
 * Progress of long work on stderr (DESIGN.md §8): records listed, writes done of their total, waits for a
 * server's rate limit. Work that ends within a moment (`DELAY_MS`) shows nothing, so short pushes and
 * fetches print what they printed before.
 *
 * On a terminal one line is rewritten in place (`\r`, then erase to the end of the line) while the work
 * lasts, and left on screen with a newline when it ends. Anywhere else (a pipe, a log file, an agent
 * reading stderr) a phase prints one line once it has lasted the moment, then, while it lasts, its state
 * (`12,000 listed`) at most once every `LINES_INTERVAL_MS`, at an update; a rate-limit wait one line per
 * phase: a log must not fill up with counters, nor stay silent for minutes. No timer keeps the process
 * alive, and an update costs a clock read. `SVC_PROGRESS=tty|lines|off` chooses the mode instead of
 * stderr's being a terminal (tests, scripts); any other value is as if it were unset.
 *
 * One phase at a time: a phase started while another is under way ends that one.
 */

export type ProgressMode = "tty" | "lines" | "off";

/** How long work runs before its progress shows. */
const DELAY_MS = 1000;
/** Off a terminal, the least time between two lines of one phase. */
const LINES_INTERVAL_MS = 5000;
/** Carriage return, then erase to the end of the line. */
const REWRITE = "\r\x1b[K";

export interface Phase {
  /** The phase's state now (`3 of 12`): shown on a terminal. */
  update(status: string): void;
  /** Ends the phase; on a terminal its last state stays on screen. */
  end(status?: string): void;
  /** Writes other output (a log line) without tearing the progress line on a terminal. */
  aside(write: () => void): void;
}

interface Sink {
  write(text: string): unknown;
}

/** The time the reporter reads and the timer it sets; tests pass one they move by hand. */
export interface ProgressClock {
  /** Milliseconds since 1970. */
  now(): number;
  /** Calls `fire` once `ms` have passed, without keeping the process alive; returns the cancel. */
  after(ms: number, fire: () => void): () => void;
}

const SYSTEM_CLOCK: ProgressClock = {
  now: () => Date.now(),
  after(ms, fire) {
    const timer = setTimeout(fire, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

interface ActivePhase {
  readonly line: string;
  status: string;
  /** Its delay has passed: a terminal shows it, a log has its one line. */
  due: boolean;
  /** The terminal line holds this phase's text now. */
  drawn: boolean;
  waitPrinted: boolean;
  /** Cancels the delay's timer. */
  cancelTimer: (() => void) | undefined;
  /** Off a terminal: when this phase's last line was printed (ms since 1970). */
  lineAtMs: number;
}

export class ProgressReporter {
  private phase: ActivePhase | undefined;
  private waiting: string | undefined;
  /** A wait's line was printed outside any phase (lines mode: once per process then). */
  private waitPrinted = false;
  private drawnAlone = false;

  constructor(
    readonly mode: ProgressMode,
    private readonly out: Sink,
    private readonly delayMs = DELAY_MS,
    private readonly linesIntervalMs = LINES_INTERVAL_MS,
    private readonly clock = SYSTEM_CLOCK,
  ) {}

  start(line: string, status = ""): Phase {
    if (this.phase) this.finish(this.phase, undefined);
    const phase: ActivePhase = {
      line,
      status,
      due: false,
      drawn: false,
      waitPrinted: false,
      cancelTimer: undefined,
      lineAtMs: 0,
    };
    this.phase = phase;
    if (this.mode !== "off") phase.cancelTimer = this.clock.after(this.delayMs, () => this.becomeDue(phase));
    return {
      update: (next) => {
        phase.status = next;
        if (this.phase !== phase) return;
        if (this.mode === "lines") this.lineIfDue(phase);
        else this.draw();
      },
      end: (status) => {
        if (status !== undefined) phase.status = status;
        if (this.phase === phase) this.finish(phase, status);
      },
      aside: (write) => {
        this.erase();
        write();
        this.draw();
      },
    };
  }

  /** A wait of `ms` for `origin`'s rate limit begins; `undefined` when it is over. */
  waitFor(origin: string | undefined, ms = 0): void {
    if (this.mode === "off") return;
    if (origin === undefined) {
      this.waiting = undefined;
      if (this.mode === "tty") this.draw();
      return;
    }
    this.waiting = `waiting ${Math.max(1, Math.ceil(ms / 1000))} s for ${origin}'s rate limit`;
    const phase = this.phase;
    if (this.mode === "tty") {
      // A wait is long work by itself: the phase shows at once.
      if (phase && !phase.due) this.becomeDue(phase);
      else this.draw();
      return;
    }
    if (phase ? phase.waitPrinted : this.waitPrinted) return;
    if (phase) phase.waitPrinted = true;
    else this.waitPrinted = true;
    this.out.write(`svc: ${this.waiting}\n`);
  }

  private becomeDue(phase: ActivePhase): void {
    if (this.phase !== phase) return;
    phase.due = true;
    if (this.mode === "lines") {
      this.out.write(`svc: ${phase.line}\n`);
      phase.lineAtMs = this.clock.now();
    } else this.draw();
  }

  /** Off a terminal: the phase's state, when its last line is `linesIntervalMs` old. */
  private lineIfDue(phase: ActivePhase): void {
    if (!phase.due || phase.status === "") return;
    const now = this.clock.now();
    if (now - phase.lineAtMs < this.linesIntervalMs) return;
    phase.lineAtMs = now;
    this.out.write(`${this.text(phase, false)}\n`);
  }

  private finish(phase: ActivePhase, status: string | undefined): void {
    phase.cancelTimer?.();
    if (status !== undefined) phase.status = status;
    if (this.mode === "tty" && phase.due) {
      this.out.write(`${REWRITE}${this.text(phase, false)}\n`);
      phase.drawn = false;
    }
    this.phase = undefined;
  }

  private text(phase: ActivePhase | undefined, withWait: boolean): string {
    const wait = withWait ? this.waiting : undefined;
    if (!phase) return `svc: ${wait ?? ""}`;
    const status = phase.status === "" ? "" : `: ${phase.status}`;
    return `svc: ${phase.line}${status}${wait ? `; ${wait}` : ""}`;
  }

  /** The terminal line as things are now. */
  private draw(): void {
    if (this.mode !== "tty") return;
    const phase = this.phase;
    if (phase?.due) {
      this.out.write(`${REWRITE}${this.text(phase, true)}`);
      phase.drawn = true;
    } else if (!phase && this.waiting) {
      this.out.write(`${REWRITE}${this.text(undefined, true)}`);
      this.drawnAlone = true;
    } else if (!phase && this.drawnAlone) {
      this.out.write(REWRITE);
      this.drawnAlone = false;
    }
  }

  /** Clears the terminal line for other output. */
  private erase(): void {
    if (this.mode !== "tty") return;
    if (this.phase?.drawn || this.drawnAlone) this.out.write(REWRITE);
    if (this.phase) this.phase.drawn = false;
    this.drawnAlone = false;
  }
}

function modeFromEnvironment(): ProgressMode {
  const chosen = process.env.SVC_PROGRESS;
  if (chosen === "tty" || chosen === "lines" || chosen === "off") return chosen;
  return process.stderr.isTTY ? "tty" : "lines";
}

let reporter: ProgressReporter | undefined;

/** The process's reporter on stderr. */
export function progress(): ProgressReporter {
  reporter ??= new ProgressReporter(modeFromEnvironment(), process.stderr);
  return reporter;
}
