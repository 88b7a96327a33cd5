/**
 * Every benchmark `npm run bench` knows, in the order a bare `npm run bench` runs them. A benchmark prints
 * its own table to `out` (stdout) and its progress to `progress` (stderr); it never fails on a missed goal,
 * only when it cannot measure.
 */
import type { BenchOptions } from "./args.js";
import { benchClone } from "./clone.js";
import { benchForge } from "./forge.js";
import { benchPush } from "./push.js";
import { benchSim } from "./sim.js";
import { benchTracker } from "./tracker.js";

export interface Benchmark {
  readonly name: string;
  readonly description: string;
  run(out: NodeJS.WritableStream, progress: (line: string) => void, options: BenchOptions): Promise<void>;
}

export const BENCHMARKS: readonly Benchmark[] = [
  {
    name: "sim",
    description: "simulator requests per second against a bare node:http server",
    run: benchSim,
  },
  {
    name: "clone",
    description: "svc init, no-op fetch and helper start-up against plain git on an equivalent repo",
    run: benchClone,
  },
  {
    name: "push",
    description: "git push of one changed record in a 10,000-issue clone against a plain bare repo",
    run: benchPush,
  },
  {
    name: "forge",
    description:
      "svc init of a 5,000-issue repository on the fake forge and two no-op fetches, then of 10,000 issues " +
      "with 30,000 comments with and without comments, and no-op fetches, REST calls counted",
    run: benchForge,
  },
  {
    name: "tracker",
    description:
      "svc init of a 10,000-issue project on the fake tracker and two no-op fetches, REST calls counted",
    run: benchTracker,
  },
];
