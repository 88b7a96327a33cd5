/**
 * The forge's rate limits (Document 3 "Forge backend"; the vendor's "Rate limits for the REST API"):
 *
 * - **Primary**: every answer says `x-ratelimit-remaining` and `x-ratelimit-reset` (epoch seconds). At 0,
 *   the next request waits for the reset when it is at most 60 s ahead; further ahead, svc stops with a
 *   message naming the time instead of hanging. A `403`/`429` with remaining 0 is the same limit, hit.
 * - **Secondary** (too many requests at once): a `403`/`429` with `Retry-After`, or with the vendor's
 *   "secondary rate limit" message and no header; waited out (at least a minute without a header), at most
 *   `MAX_SECONDARY_WAITS` times in a row, never in a tight loop.
 *
 * backends/rest.ts waits them out at the HTTP client's per-origin gate, which holds every request of the
 * process to the forge while a wait lasts.
 */
import { AHEAD_MINUTES, formatDuration } from "../../core/duration.js";
import { UserFacingError } from "../../core/errors.js";
import type { HttpResponse } from "../../core/http.js";
import type { LimitAnswer, RateLimits } from "../rest.js";

/** The longest wait for a quota reset (Document 3). */
export const MAX_RESET_WAIT_MS = 60_000;
/** Without `Retry-After`, a secondary limit is waited out this long (the vendor: "at least one minute"). */
export const SECONDARY_DEFAULT_WAIT_MS = 60_000;
export const MAX_SECONDARY_WAITS = 3;

/** The forge's limits as backends/rest.ts waits them out, for the forge at `origin`. */
export function forgeLimits(origin: string): RateLimits {
  return {
    exhaustedUntil,
    limitOf,
    maxResetWaitMs: MAX_RESET_WAIT_MS,
    maxWaits: MAX_SECONDARY_WAITS,
    exhausted: (resetMs) => new QuotaExhaustedError(origin, resetMs),
    notReset: (tries) => new QuotaNotResetError(origin, tries),
    tooBusy: (waits) => new SecondaryLimitError(origin, waits),
  };
}

/** The reset instant (ms) an answer announces, when it says the quota is at zero. */
export function exhaustedUntil(response: HttpResponse): number | undefined {
  if (response.headers["x-ratelimit-remaining"]?.trim() !== "0") return undefined;
  const reset = Number(response.headers["x-ratelimit-reset"]);
  // No reset time: the vendor's rule of thumb is a minute.
  return Number.isFinite(reset) && reset > 0 ? reset * 1000 : Date.now() + SECONDARY_DEFAULT_WAIT_MS;
}

/** What a `403`/`429` answer says about limits (`none`: a refusal of another kind, e.g. permissions). */
export function limitOf(response: HttpResponse): LimitAnswer {
  if (response.status !== 403 && response.status !== 429) return { kind: "none" };
  const resetMs = exhaustedUntil(response);
  if (resetMs !== undefined) return { kind: "primary", resetMs };
  const retryAfter = response.headers["retry-after"];
  if (retryAfter !== undefined && /^\s*\d+\s*$/.test(retryAfter))
    return { kind: "secondary", waitMs: Number(retryAfter) * 1000 };
  const text = response.body.toString("utf8").toLowerCase();
  if (text.includes("secondary rate limit") || response.status === 429)
    return { kind: "secondary", waitMs: SECONDARY_DEFAULT_WAIT_MS };
  return { kind: "none" };
}

/** `18:40:05 UTC (in 52 min)`. */
export function describeReset(resetMs: number, now = Date.now()): string {
  const at = new Date(resetMs).toISOString().replace(/\.\d+Z$/, "Z");
  return `${at} (in ${formatDuration(Math.max(60_000, resetMs - now), AHEAD_MINUTES)})`;
}

export class QuotaExhaustedError extends UserFacingError {
  constructor(origin: string, resetMs: number, now = Date.now()) {
    super(
      "SVC_BACKEND",
      `the forge at ${origin} allows no more requests with this FORGE_TOKEN until ${describeReset(resetMs, now)} ` +
        `(x-ratelimit-reset); svc waits at most ${MAX_RESET_WAIT_MS / 1000} s for a reset, so it stopped here ` +
        "and wrote nothing more. Run the same command again after that time",
      { data: { status: 429, resetAt: new Date(resetMs).toISOString() } },
    );
  }
}

/**
 * The forge kept saying its quota is used up (`x-ratelimit-remaining: 0`) after each reset it named had
 * passed: without a cap its `call` asked again at once, forever (issue 31: every request bounded).
 */
export class QuotaNotResetError extends UserFacingError {
  constructor(origin: string, tries: number) {
    super(
      "SVC_BACKEND",
      `the forge at ${origin} kept answering that this FORGE_TOKEN has no requests left (x-ratelimit-remaining: 0) ` +
        `after the reset time it named had passed, ${tries} times; svc stopped here and wrote nothing more. ` +
        "Wait a few minutes, then run the same command again",
      { data: { status: 403, tries } },
    );
  }
}

export class SecondaryLimitError extends UserFacingError {
  constructor(origin: string, waits: number) {
    super(
      "SVC_BACKEND",
      `the forge at ${origin} kept answering with its secondary rate limit after ${waits} waits ` +
        "(too many requests at once, e.g. from other tools with the same token); wait a few minutes, then run the same command again",
      { data: { status: 429 } },
    );
  }
}
