/**
 * The messenger listener's pacing: its pauses after failures (capped exponential backoff, jittered so that
 * pollers spread out), while a token is refused, before a backlog alert, and its request timeouts; and the
 * sleep that a stop cuts short.
 */
import { backoffMs } from "../../core/backoff.js";

/** `min(cap, base·2^failures)`, less up to half of it at random (`random` in [0, 1)), so pollers spread out. */
export function backoffDelay(
  failures: number,
  policy: { readonly baseMs: number; readonly capMs: number },
  random: () => number,
): number {
  return backoffMs(failures, { ...policy, jitter: { kind: "down-to-half" } }, random);
}

export interface ListenerTiming {
  /** The first pause after a failure; doubled per consecutive failure up to `backoffCapMs`. */
  readonly backoffBaseMs: number;
  readonly backoffCapMs: number;
  /** The pause between attempts while a token is refused (bot token 401, daemon 401/403). */
  readonly degradedRetryMs: number;
  /** A message waiting this long for the daemon raises an alert: the bot API drops updates after 24 h. */
  readonly backlogAlertMs: number;
  /** Added to the long-poll timeout to make the request's own timeout: the watchdog for a stalled poll. */
  readonly pollSlackMs: number;
  /** The timeout of one trigger request. */
  readonly triggerTimeoutMs: number;
}

export const DEFAULT_LISTENER_TIMING: ListenerTiming = {
  backoffBaseMs: 1000,
  backoffCapMs: 30_000,
  degradedRetryMs: 60_000,
  backlogAlertMs: 3_600_000,
  pollSlackMs: 15_000,
  triggerTimeoutMs: 30_000,
};

/** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const sleepUnlessAborted: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
