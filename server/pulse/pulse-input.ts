/**
 * What a new pulse may look like (Document 2 "Endpoints" POST /api/pulse/trigger; DESIGN.md §7): pure
 * parsing and validation shared by the HTTP API, `svc pulse trigger` and the built-in schedules.
 *
 * `scheduled_at` accepts the literal `now`, an RFC 3339 time with `Z` or an offset (a time without one is
 * refused: whose clock would it be?), a relative `+15m` or `3 hours ago`, `@<seconds>`: the one time
 * grammar of core/time-arg.ts. Priorities are the five names of
 * DESIGN.md §7, ranked for the claim order.
 */

import { readTime } from "../../core/time-arg.js";

export const PRIORITIES = ["critical", "high", "normal", "low", "deferred"] as const;
export type Priority = (typeof PRIORITIES)[number];

export function priorityRank(priority: Priority): number {
  return PRIORITIES.indexOf(priority);
}

/** Linux refuses a single argv string above 128 KiB (MAX_ARG_STRLEN); the prompt is one argument. */
export const MAX_PROMPT_BYTES = 128 * 1024 - 1;
export const MAX_SOURCE_CHARS = 100;
export const MAX_DEDUP_KEY_CHARS = 200;
/** A pulse scheduled further ahead than this is almost certainly a mistake (a year, or ms for s). */
const MAX_AHEAD_MS = 366 * 86_400_000;

export interface NewPulse {
  readonly prompt: string;
  readonly source: string;
  readonly priority: Priority;
  /** The time as RFC 3339 UTC, e.g. `2026-11-22T10:00:00.000Z`. */
  readonly scheduledAt: string;
  readonly runAt: number;
  readonly dedupKey?: string;
  readonly maxAttempts?: number;
  readonly backfilled?: boolean;
}

/** One field of the request was wrong; `field` names it and the message says what is accepted. */
export class InvalidPulse extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "InvalidPulse";
  }
}

/**
 * `scheduled_at` as epoch ms: `now`, RFC 3339 with a zone, `+15m`, or another form of core/time-arg.ts, but
 * never a time without a zone (whose clock would it be? `svc pulse trigger` sends a local one as UTC).
 */
export function parseScheduledAt(text: string, now: number): number {
  const reading = readTime(text, now, { zone: "required" });
  if (reading.kind === "no-zone") {
    throw new InvalidPulse(
      "scheduled_at",
      `scheduled_at ${JSON.stringify(text)} has no time zone; add Z or an offset, e.g. "${reading.suggestion}"`,
    );
  }
  if (reading.kind === "not-real") {
    throw new InvalidPulse(
      "scheduled_at",
      `scheduled_at ${JSON.stringify(text)} is not a real date and time`,
    );
  }
  if (reading.kind === "unreadable") {
    throw new InvalidPulse(
      "scheduled_at",
      `scheduled_at ${JSON.stringify(text.slice(0, 60))} is not "now", an RFC 3339 time (2026-11-22T09:00:00Z, ` +
        `2026-11-22T10:00:00+01:00) or a relative time (+30s, +15m, +2h, +1d, 3 hours ago)`,
    );
  }
  if (reading.ms - now > MAX_AHEAD_MS) throw tooFar(text);
  return reading.ms;
}

function tooFar(text: string): InvalidPulse {
  return new InvalidPulse(
    "scheduled_at",
    `scheduled_at ${JSON.stringify(text)} is more than a year ahead; pulses are for the near future`,
  );
}

const FIELDS = new Set(["prompt", "scheduled_at", "priority", "source", "dedup_key", "max_attempts"]);

export interface PulseDefaults {
  readonly source: string;
  readonly maxAttempts: number;
}

/**
 * Validates a trigger body (already JSON-parsed). Unknown fields are refused so a typo such as
 * `schedule_at` is not silently ignored. `idempotencyKey` (the `Idempotency-Key` header) is used when the
 * body has no `dedup_key`; both present and different is an error.
 */
export function parseTriggerBody(
  body: unknown,
  now: number,
  defaults: PulseDefaults,
  idempotencyKey?: string,
): NewPulse {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidPulse(
      "body",
      'the body must be a JSON object like {"prompt": "…", "scheduled_at": "now", "priority": "normal", "source": "cli"}',
    );
  }
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (!FIELDS.has(name)) {
      throw new InvalidPulse(
        name,
        `unknown field ${JSON.stringify(name)}; accepted: ${[...FIELDS].join(", ")}`,
      );
    }
  }
  const prompt = fields.prompt;
  if (typeof prompt !== "string" || prompt.trim() === "") {
    throw new InvalidPulse("prompt", "prompt must be a non-empty string");
  }
  if (Buffer.byteLength(prompt) > MAX_PROMPT_BYTES) {
    throw new InvalidPulse(
      "prompt",
      `prompt is ${Buffer.byteLength(prompt)} bytes; the runner gets it as one argument, at most ${MAX_PROMPT_BYTES} bytes`,
    );
  }
  if (prompt.includes("\u0000")) throw new InvalidPulse("prompt", "prompt must not contain NUL characters");
  const scheduledText = optionalString(fields, "scheduled_at", 100) ?? "now";
  const runAt = parseScheduledAt(scheduledText, now);
  const priority = optionalString(fields, "priority", 20) ?? "normal";
  if (!(PRIORITIES as readonly string[]).includes(priority)) {
    throw new InvalidPulse(
      "priority",
      `priority ${JSON.stringify(priority)} is not one of ${PRIORITIES.join(", ")}`,
    );
  }
  const source = optionalString(fields, "source", MAX_SOURCE_CHARS) ?? defaults.source;
  if (!/^[\w.:@/-]+$/.test(source)) {
    throw new InvalidPulse("source", "source must be a short label of letters, digits and . _ : @ / -");
  }
  const bodyKey = optionalString(fields, "dedup_key", MAX_DEDUP_KEY_CHARS);
  if (idempotencyKey !== undefined && idempotencyKey.length > MAX_DEDUP_KEY_CHARS) {
    throw new InvalidPulse(
      "Idempotency-Key",
      `Idempotency-Key is longer than ${MAX_DEDUP_KEY_CHARS} characters`,
    );
  }
  if (bodyKey !== undefined && idempotencyKey !== undefined && bodyKey !== idempotencyKey) {
    throw new InvalidPulse("dedup_key", "dedup_key and the Idempotency-Key header differ; send one of them");
  }
  const dedupKey = bodyKey ?? idempotencyKey;
  if (dedupKey !== undefined && dedupKey.trim() === "") {
    throw new InvalidPulse("dedup_key", "dedup_key must not be empty; leave it out for no deduplication");
  }
  let maxAttempts = defaults.maxAttempts;
  if (fields.max_attempts !== undefined) {
    const value = fields.max_attempts;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 20) {
      throw new InvalidPulse("max_attempts", "max_attempts must be a whole number from 1 to 20");
    }
    maxAttempts = value;
  }
  return {
    prompt,
    source,
    priority: priority as Priority,
    scheduledAt: new Date(runAt).toISOString(),
    runAt,
    ...(dedupKey === undefined ? {} : { dedupKey }),
    maxAttempts,
  };
}

function optionalString(fields: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = fields[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new InvalidPulse(name, `${name} must be a string`);
  if (value.length > max) throw new InvalidPulse(name, `${name} is longer than ${max} characters`);
  return value;
}
