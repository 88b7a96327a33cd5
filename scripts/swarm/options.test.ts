import test from "ava";
import { DEFAULT_RATE_LIMIT, parseSwarmArgs } from "./options.js";

const seed = () => 42;

test("no arguments: 16 agents, 60 seconds, twice as many overlapping issues, a random seed", (t) => {
  t.deepEqual(parseSwarmArgs([], seed), {
    options: {
      agents: 16,
      seconds: 60,
      ops: null,
      issues: 32,
      seed: 42,
      rateLimit: DEFAULT_RATE_LIMIT,
      keep: false,
    },
    json: false,
  });
});

test("every option is read", (t) => {
  const command = parseSwarmArgs(
    [
      "--agents",
      "4",
      "--seconds",
      "5",
      "--ops",
      "3",
      "--issues",
      "2",
      "--seed",
      "7",
      "--rate-limit",
      "0.5",
      "--json",
      "--keep",
    ],
    seed,
  );
  t.deepEqual(command, {
    options: { agents: 4, seconds: 5, ops: 3, issues: 2, seed: 7, rateLimit: 0.5, keep: true },
    json: true,
  });
  t.is(parseSwarmArgs(["--agents", "3"], seed).options.issues, 6);
});

test("a value of the wrong form is refused naming the option, with an example and the usage line", (t) => {
  const cases: readonly [string[], RegExp][] = [
    [["--agents", "0"], /--agents "0" is not a whole number of at least 1; use e\.g\. --agents 4/],
    [["--seconds", "1m"], /--seconds "1m" is not a whole number/],
    [["--rate-limit", "fast"], /--rate-limit "fast" is not a number of requests per second/],
    [["--agent", "3"], /Unknown option '--agent'/],
    [["16"], /Unexpected argument '16'/],
  ];
  for (const [argv, message] of cases) {
    const error = t.throws(() => parseSwarmArgs(argv, seed), undefined, argv.join(" "));
    t.is((error as { code?: string }).code, "SVC_USAGE");
    t.regex(error?.message ?? "", message);
    t.regex(error?.message ?? "", /\nusage: npm run swarm -- \[--agents 16\]/);
  }
});
