/**
 * `npm run swarm -- [--agents N] [--seconds S] [--ops N] [--issues K] [--seed N] [--rate-limit R] [--json]
 * [--keep]`: the command line of the swarm, read into `SwarmOptions`. A value of the wrong form is refused
 * naming the option, the value and an example.
 */
import { parseArgs } from "node:util";
import { UserFacingError } from "../../core/errors.js";
import type { SwarmOptions } from "./run.js";

/**
 * The simulator's default rate limit for the swarm, in requests per second. Its bucket is per
 * `X-Svc-Agent`, which the helper sets to `git-remote-svc-<pid>` (Document 1 "Headers"): one bucket per git
 * command, not per swarm agent, with a burst as large as the rate. A fetch sends one request and a push two
 * or three, so at 2 none is refused; at 1, the second request of a push usually is (429, `Retry-After: 1`).
 */
export const DEFAULT_RATE_LIMIT = 1;

export const USAGE =
  "npm run swarm -- [--agents 16] [--seconds 60] [--ops N] [--issues 2×agents] [--seed N] " +
  `[--rate-limit ${DEFAULT_RATE_LIMIT}] [--json] [--keep]`;

export interface SwarmCommand {
  readonly options: SwarmOptions;
  readonly json: boolean;
}

function usageError(message: string): UserFacingError {
  return new UserFacingError("SVC_USAGE", `${message}\nusage: ${USAGE}`);
}

function wholeNumber(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < min) {
    throw usageError(
      `--${name} ${JSON.stringify(value)} is not a whole number of at least ${min}; use e.g. --${name} ${Math.max(min, 4)}`,
    );
  }
  return number;
}

/** Reads the arguments after `npm run swarm --`; throws `SVC_USAGE` for anything it cannot read. */
export function parseSwarmArgs(argv: readonly string[], randomSeed: () => number): SwarmCommand {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        agents: { type: "string" },
        seconds: { type: "string" },
        ops: { type: "string" },
        issues: { type: "string" },
        seed: { type: "string" },
        "rate-limit": { type: "string" },
        json: { type: "boolean" },
        keep: { type: "boolean" },
      },
    }));
  } catch (error) {
    throw usageError((error as Error).message);
  }
  const text = (name: string) => values[name] as string | undefined;
  const agents = wholeNumber("agents", text("agents"), 1) ?? 16;
  const rate = text("rate-limit");
  const rateLimit = rate === undefined ? DEFAULT_RATE_LIMIT : Number(rate);
  if (rate !== undefined && (!/^\d+(\.\d+)?$/.test(rate) || !Number.isFinite(rateLimit))) {
    throw usageError(
      `--rate-limit ${JSON.stringify(rate)} is not a number of requests per second; use e.g. --rate-limit ${DEFAULT_RATE_LIMIT}, or 0 for no limit`,
    );
  }
  return {
    options: {
      agents,
      seconds: wholeNumber("seconds", text("seconds"), 1) ?? 60,
      ops: wholeNumber("ops", text("ops"), 1) ?? null,
      issues: wholeNumber("issues", text("issues"), 1) ?? 2 * agents,
      seed: wholeNumber("seed", text("seed"), 0) ?? randomSeed(),
      rateLimit,
      keep: values.keep === true,
    },
    json: values.json === true,
  };
}
