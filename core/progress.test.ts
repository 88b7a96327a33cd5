/**
 * The progress reporter: silent for work shorter than its delay; on a terminal one line rewritten in place
 * and left on screen at the end, other output kept above it; elsewhere at most one line per phase and one
 * per rate-limit wait.
 */
import test from "ava";
import { type ProgressClock, type ProgressMode, ProgressReporter } from "./progress.js";

/** A clock moved by hand: `advance` fires the timers that fall due on the way, in their order. */
class ManualClock implements ProgressClock {
  private at = 1_000_000;
  private timers: { at: number; fire: () => void }[] = [];

  now(): number {
    return this.at;
  }

  after(ms: number, fire: () => void): () => void {
    const timer = { at: this.at + ms, fire };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((other) => other !== timer);
    };
  }

  advance(ms: number): void {
    const until = this.at + ms;
    for (;;) {
      const next = this.timers.filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.at = next.at;
      next.fire();
    }
    this.at = until;
  }
}

function reporter(
  mode: ProgressMode,
  delayMs = 20,
  linesIntervalMs?: number,
): { progress: ProgressReporter; text: () => string; clock: ManualClock } {
  let text = "";
  const write = { write: (chunk: string) => (text += chunk) };
  const clock = new ManualClock();
  const progress = new ProgressReporter(mode, write, delayMs, linesIntervalMs, clock);
  return { progress, text: () => text, clock };
}

const ORIGIN = "http://127.0.0.1:7878";

/** A phase of three steps that lasts past the delay, with a rate-limit wait and a log line in it. */
function longPhase(progress: ProgressReporter, clock: ManualClock): void {
  const phase = progress.start("writing 3 changes to sim project demo", "0 of 3");
  phase.update("1 of 3");
  progress.waitFor(ORIGIN, 1200);
  clock.advance(40);
  progress.waitFor(undefined);
  phase.aside(() => {});
  phase.update("2 of 3");
  progress.waitFor(ORIGIN, 900);
  progress.waitFor(undefined);
  phase.update("3 of 3");
  phase.end("3 of 3 done");
}

test("off a terminal: one line for the phase and one for its waits, none for a short phase", (t) => {
  const { progress, text, clock } = reporter("lines");
  const short = progress.start("listing the records of sim project demo");
  short.end("2 listed");
  t.is(text(), "");
  longPhase(progress, clock);
  t.is(text(), `svc: waiting 2 s for ${ORIGIN}'s rate limit\nsvc: writing 3 changes to sim project demo\n`);
});

test("off a terminal: a long phase prints its state at an update once its last line is the interval old", (t) => {
  const { progress, text, clock } = reporter("lines", 20, 60);
  const phase = progress.start("listing the records of sim project big");
  phase.update("2,000 listed");
  clock.advance(19);
  t.is(text(), "", "nothing before the delay");
  clock.advance(21);
  const line = "svc: listing the records of sim project big";
  t.is(text(), `${line}\n`);
  phase.update("4,000 listed");
  t.is(text(), `${line}\n`, "not before the interval");
  clock.advance(80);
  phase.update("6,000 listed");
  phase.update("8,000 listed");
  t.is(text(), `${line}\n${line}: 6,000 listed\n`, "one line per interval");
  clock.advance(80);
  phase.end("10,000 listed");
  t.is(text(), `${line}\n${line}: 6,000 listed\n`, "the end prints nothing: the state is printed at updates");
});

test("on a terminal: the line is rewritten in place and stays at the end; a log line goes above it", (t) => {
  const { progress, text, clock } = reporter("tty");
  const phase = progress.start("writing 2 changes to sim project demo", "0 of 2");
  t.is(text(), "", "nothing before the delay");
  clock.advance(40);
  phase.update("1 of 2");
  let logged = "";
  phase.aside(() => {
    logged = text();
  });
  progress.waitFor(ORIGIN, 1000);
  progress.waitFor(undefined);
  phase.end("2 of 2 done");
  const R = "\r\x1b[K";
  const line = "svc: writing 2 changes to sim project demo";
  t.is(
    text(),
    `${R}${line}: 0 of 2${R}${line}: 1 of 2${R}${R}${line}: 1 of 2` +
      `${R}${line}: 1 of 2; waiting 1 s for ${ORIGIN}'s rate limit${R}${line}: 1 of 2${R}${line}: 2 of 2 done\n`,
  );
  t.true(logged.endsWith(R), "the line is erased before other output");
});

test("on a terminal: a short phase shows nothing; a wait shows at once and is erased after", (t) => {
  const { progress, text } = reporter("tty", 10_000);
  progress.start("listing the records of sim project demo").end("2 listed");
  t.is(text(), "");
  progress.waitFor(ORIGIN, 2500);
  progress.waitFor(undefined);
  t.is(text(), `\r\x1b[Ksvc: waiting 3 s for ${ORIGIN}'s rate limit\r\x1b[K`);
});

test("SVC_PROGRESS=off: nothing at all", (t) => {
  const { progress, text, clock } = reporter("off");
  longPhase(progress, clock);
  t.is(text(), "");
});
