/**
 * The fake forge's rate limits, a fault tests steer: the primary hourly quota (its `x-ratelimit-*` headers on
 * every answer, 403 once spent, refilled when its reset passes) and the secondary-limit switch (403 or 429 with
 * `retry-after` for the next few requests).
 */
import type { Answer } from "./http.js";
import { HOUR_MS, RATE_DOCS } from "./vendor-data.js";

/**
 * The primary limit (an hourly quota that refills when its reset time passes) and the secondary-limit switch
 * ("Rate limits for the REST API": over either, 403 or 429; a 304 and a 401 do not count).
 */
export class RateLimits {
  used = 0;
  /** Counted requests since the fake started (refills do not reset it). */
  quotaUsed = 0;
  private resetMs: number;
  private secondary = {
    count: 0,
    status: 403 as 403 | 429,
    retryAfterSeconds: undefined as number | undefined,
  };

  constructor(
    readonly quota: number,
    private readonly clock: () => number,
  ) {
    this.resetMs = clock() + HOUR_MS;
  }

  set(remaining: number, resetInSeconds: number): void {
    this.used = Math.max(0, this.quota - remaining);
    this.resetMs = this.clock() + resetInSeconds * 1000;
  }

  setSecondary(count: number, status: 403 | 429, retryAfterSeconds: number | undefined): void {
    this.secondary = { count, status, retryAfterSeconds };
  }

  count(): void {
    this.used++;
    this.quotaUsed++;
  }

  headers(): Record<string, string> {
    return {
      "x-ratelimit-limit": String(this.quota),
      "x-ratelimit-remaining": String(Math.max(0, this.quota - this.used)),
      "x-ratelimit-used": String(this.used),
      "x-ratelimit-reset": String(Math.ceil(this.resetMs / 1000)),
      "x-ratelimit-resource": "core",
    };
  }

  /** The secondary limit's refusal while the switch has answers left. */
  secondaryRefusal(requestId: string): Answer | undefined {
    if (this.secondary.count === 0) return undefined;
    this.secondary.count--;
    const retry = this.secondary.retryAfterSeconds;
    return {
      status: this.secondary.status,
      headers: retry === undefined ? {} : { "retry-after": String(retry) },
      body: {
        message:
          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you " +
          `reach out to GitHub Support for help, please include the request ID ${requestId}.`,
        documentation_url: `${RATE_DOCS}#about-secondary-rate-limits`,
      },
    };
  }

  /** The primary limit's refusal when the quota is spent and the reset has not passed (else it refills). */
  primaryRefusal(userId: number): Answer | undefined {
    if (this.clock() >= this.resetMs) {
      this.used = 0;
      this.resetMs = this.clock() + HOUR_MS;
    }
    if (this.used < this.quota) return undefined;
    return {
      status: 403,
      body: { message: `API rate limit exceeded for user ID ${userId}.`, documentation_url: RATE_DOCS },
    };
  }
}
