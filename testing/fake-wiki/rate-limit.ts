/**
 * The fake wiki's rate limit: the test's switch first (`force`: the next requests answer 429 with
 * `Retry-After`), then a fixed-window quota whose `x-ratelimit-*` headers go on every answer.
 */
import { atlassianResetStamp } from "../fake-server.js";
import { type Answer, vendorError } from "./http.js";

export class RateLimit {
  private forced429 = 0;
  private forcedRetryAfter = 1;
  private windowStart = 0;
  private windowCount = 0;

  constructor(
    private readonly quota: number,
    private readonly windowMs: number,
    private readonly clock: () => number,
  ) {}

  /** The next `count` requests answer 429 with `Retry-After: <retryAfterSeconds>`. */
  force(count: number, retryAfterSeconds: number): void {
    this.forced429 = count;
    this.forcedRetryAfter = retryAfterSeconds;
  }

  /** Counts one request: the 429 that refuses it, or the headers its answer carries. */
  check(): { refusal?: Answer; headers: Record<string, string> } {
    const now = this.clock();
    if (this.forced429 > 0) {
      this.forced429--;
      return {
        refusal: {
          ...vendorError(429, "TOO_MANY_REQUESTS", "Rate limit exceeded"),
          headers: {
            "retry-after": String(this.forcedRetryAfter),
            "x-ratelimit-limit": String(this.quota),
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": atlassianResetStamp(now + this.forcedRetryAfter * 1000),
          },
        },
        headers: {},
      };
    }
    return this.counted(now);
  }

  private counted(now: number): { refusal?: Answer; headers: Record<string, string> } {
    if (now >= this.windowStart + this.windowMs) {
      this.windowStart = now;
      this.windowCount = 0;
    }
    this.windowCount++;
    const remaining = Math.max(0, this.quota - this.windowCount);
    const headers: Record<string, string> = {
      "x-ratelimit-limit": String(this.quota),
      "x-ratelimit-remaining": String(remaining),
    };
    if (remaining === 0) headers["x-ratelimit-reset"] = atlassianResetStamp(this.windowStart + this.windowMs);
    if (this.windowCount <= this.quota) return { headers };
    const retryAfter = Math.max(1, Math.ceil((this.windowStart + this.windowMs - now) / 1000));
    return {
      refusal: {
        ...vendorError(429, "TOO_MANY_REQUESTS", "Rate limit exceeded"),
        headers: { ...headers, "retry-after": String(retryAfter) },
      },
      headers,
    };
  }
}
