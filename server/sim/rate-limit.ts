/**
 * The per-agent token bucket of Document 1 "Limits" 1: rate and burst are both `--rate-limit`; requests
 * without `X-Svc-Agent` share one anonymous bucket. The agent header can be spoofed (a known gap, Document 1
 * "Headers"), so the number of buckets is bounded: full buckets are forgotten when there are too many.
 * Below one request per second the burst is still one request, or no request would ever pass.
 */

export type RateDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MAX_BUCKETS = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly burst: number;

  /** `perSecond` of 0 turns the limit off. */
  constructor(
    private readonly perSecond: number,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.burst = Math.max(1, perSecond);
  }

  take(agent: string): RateDecision {
    if (this.perSecond <= 0) return { allowed: true };
    const now = this.clock();
    let bucket = this.buckets.get(agent);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUCKETS) this.forgetFullBuckets(now);
      bucket = { tokens: this.burst, updatedAt: now };
      this.buckets.set(agent, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond);
    bucket.updatedAt = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    const seconds = Math.ceil((1 - bucket.tokens) / this.perSecond);
    return { allowed: false, retryAfterSeconds: Math.max(1, seconds) };
  }

  private forgetFullBuckets(now: number): void {
    for (const [agent, bucket] of this.buckets) {
      const tokens = bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond;
      if (tokens >= this.burst) this.buckets.delete(agent);
    }
    if (this.buckets.size >= MAX_BUCKETS) this.buckets.clear();
  }
}
