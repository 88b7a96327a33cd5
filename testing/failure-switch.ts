/**
 * A fake's failure switch: `fail(spec)` makes the next `spec.times` requests (default: all, until
 * `clear()`) fail as `spec` says; `take()` is asked once per request and counts down.
 */
export class FailureSwitch<Spec extends { readonly times?: number }> {
  private current: { spec: Spec; left: number } | undefined;

  fail(spec: Spec): void {
    this.current = { spec, left: spec.times ?? Number.POSITIVE_INFINITY };
  }

  clear(): void {
    this.current = undefined;
  }

  /** The failure this request gets, or undefined when the fake behaves. */
  take(): Spec | undefined {
    const current = this.current;
    if (current && --current.left <= 0) this.current = undefined;
    return current?.spec;
  }
}
