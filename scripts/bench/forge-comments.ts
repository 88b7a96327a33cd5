/**
 * The forge benchmark's comments part (issue 34): `svc init forge::acme/gadgets` of a 10,000-issue repository
 * holding 30,000 comments (3 on each issue: `seedComments` spreads them round-robin, so every issue has a
 * thread of three, by the token's user and the team in turn), with comments (the default) beside the same
 * init with `--no-comments`, each with its time, REST calls and quota; the same files cloned by plain git
 * (`--filter=blob:none`, with checkout) for scale; then no-op `git fetch`es in each clone with their REST
 * calls (goal: every answer a 304, no quota), beside no-op fetches of the plain clones. Runs alternate
 * between the two kinds so drift on a shared machine falls on both alike.
 *
 * A clone costs the pages of the repository-wide listings (the issues, and with comments the issue comments;
 * 100 a page) plus one delta of each, never one request per issue: that bound is the init's goal.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { FakeForge } from "../../testing/fake-forge.js";
import { type Calls, COMMENTS_REPO, calls, counted, fetchMiss, forgeVars, ms } from "./forge-fake.js";
import { gitEnv, type PlainClones, plainPartialClones, SVC_BIN } from "./git.js";
import { checkedRun } from "./process.js";
import { median } from "./stats.js";
import { formatRatio, renderTable } from "./table.js";

const ISSUES = 10_000;
const COMMENTS = 30_000;
const RUNS = 3;
/** Rounds of no-op fetches over the `RUNS` clones of each kind: a fetch takes ~0.1 s, so more of them are cheap. */
const FETCH_ROUNDS = 3;
/** svc's `per_page` on both listings. */
const PAGE = 100;

type Step = Calls & { ms: number };

/** One kind of clone (with comments or without): its runs' inits and fetches, and the plain-git baseline's. */
interface Side {
  readonly label: string;
  readonly args: readonly string[];
  /** The most REST calls its init may cost: the pages of its listings plus one delta of each. */
  readonly bound: number;
  readonly inits: Step[];
  readonly dirs: string[];
  readonly fetches: Step[];
  env: NodeJS.ProcessEnv;
  plain: PlainClones;
  readonly plainFetches: number[];
}

const listingCost = (items: number) => Math.ceil(items / PAGE) + 1;

function side(label: string, args: readonly string[], bound: number, root: string): Side {
  const plain = { times: [], dir: "" };
  return { label, args, bound, inits: [], dirs: [], fetches: [], env: gitEnv(root), plain, plainFetches: [] };
}

/** How many files `dir`'s index holds (records and comments). */
function trackedFiles(dir: string, env: NodeJS.ProcessEnv): number {
  const listed = execFileSync("git", ["-C", dir, "ls-files", "-z"], { env, maxBuffer: 256 * 1024 * 1024 });
  return listed.toString("utf8").split("\0").length - 1;
}

/** `RUNS` inits of each side, alternating, each into its own folder and cache. */
async function runInits(
  forge: FakeForge,
  root: string,
  sides: readonly Side[],
  progress: (line: string) => void,
): Promise<void> {
  for (let i = 0; i < RUNS; i++) {
    for (const one of sides) {
      const dir = join(root, `${one.label}-${i}`);
      const env = gitEnv(root, { ...forgeVars(forge), SVC_CACHE_DIR: join(root, `cache-${one.label}-${i}`) });
      progress(`svc init of ${COMMENTS_REPO} (${one.label}), run ${i + 1}`);
      const argv = [SVC_BIN, "init", `forge::${COMMENTS_REPO}`, dir, ...one.args];
      one.inits.push(await counted(forge, async () => (await checkedRun(process.execPath, argv, env)).ms));
      one.dirs.push(dir);
      one.env = env;
    }
  }
}

/**
 * `FETCH_ROUNDS` rounds of a no-op `git fetch` in each clone of each side, alternating, each followed by a
 * no-op fetch of that side's plain clone.
 */
async function runFetches(
  forge: FakeForge,
  sides: readonly Side[],
  progress: (line: string) => void,
): Promise<void> {
  const fetch = async (dir: string, env: NodeJS.ProcessEnv) =>
    (await checkedRun("git", ["-C", dir, "fetch", "--quiet", "origin"], env)).ms;
  for (let round = 0; round < FETCH_ROUNDS; round++) {
    progress(`no-op git fetches, round ${round + 1}`);
    for (let i = 0; i < RUNS; i++) {
      for (const one of sides) {
        one.fetches.push(await counted(forge, () => fetch(one.dirs[i] as string, one.env)));
        one.plainFetches.push(await fetch(one.plain.dir, one.env));
      }
    }
  }
}

export async function measureComments(
  forge: FakeForge,
  root: string,
  out: NodeJS.WritableStream,
  progress: (line: string) => void,
): Promise<void> {
  progress(`seeding the fake forge with ${ISSUES} issues and ${COMMENTS} comments`);
  forge.seedComments(COMMENTS_REPO, COMMENTS, forge.seed(COMMENTS_REPO, ISSUES));
  const on = side("comments", [], listingCost(ISSUES) + listingCost(COMMENTS), root);
  const off = side("no-comments", ["--no-comments"], listingCost(ISSUES), root);
  await runInits(forge, root, [on, off], progress);
  for (const one of [on, off]) {
    const last = one.dirs[RUNS - 1] as string;
    one.plain = await plainPartialClones(root, one.label, last, one.env, RUNS, progress);
  }
  await runFetches(forge, [on, off], progress);
  report(out, on, off);
}

const last = <T>(items: readonly T[]) => items[items.length - 1] as T;
const count = (n: number) => n.toLocaleString("en-US");

/** The table's rows: each figure of the two sides beside each other, with their ratio. */
function rows(on: Side, off: Side): string[][] {
  const row = (name: string, value: (one: Side) => number, format: (value: number) => string) => {
    const [withComments, without] = [value(on), value(off)];
    return [name, format(withComments), format(without), formatRatio(withComments, without), "-"];
  };
  const medianMs = (steps: readonly Step[]) => median(steps.map((step) => step.ms));
  const [initOn, initOff] = [last(on.inits), last(off.inits)];
  return [
    row("files in the work tree", (one) => trackedFiles(last(one.dirs), one.env), count),
    row("svc init + checkout", (one) => medianMs(one.inits), ms),
    row("plain git clone, same files", (one) => median(one.plain.times), ms),
    [
      "REST calls of init",
      calls(initOn),
      calls(initOff),
      formatRatio(initOn.calls, initOff.calls),
      `at most ${on.bound} / ${off.bound}`,
    ],
    row("no-op git fetch", (one) => medianMs(one.fetches), ms),
    row("no-op plain git fetch", (one) => median(one.plainFetches), ms),
    ["REST calls of the fetch", calls(last(on.fetches)), calls(last(off.fetches)), "-", "quota 0, all 304"],
  ];
}

/** Each init over its bound and each no-op fetch that spent quota or got an answer other than 304. */
function missedGoals(sides: readonly Side[]): string[] {
  return sides.flatMap((one) => [
    ...one.inits.flatMap((run, i) =>
      run.calls > one.bound
        ? [`init ${one.label} ${i + 1} made ${run.calls} REST calls (> ${one.bound})`]
        : [],
    ),
    ...one.fetches.flatMap((run, i) => fetchMiss(`fetch ${i + 1} in a ${one.label} clone`, run) ?? []),
  ]);
}

/** Prints the two sides beside each other, then the goals missed, if any. */
function report(out: NodeJS.WritableStream, on: Side, off: Side): void {
  out.write(
    `\n${count(ISSUES)} issues with ${count(COMMENTS)} comments (3 on each issue) on the fake forge, cloned ` +
      `with comments and with --no-comments; medians of ${RUNS} inits/clones and of ` +
      `${RUNS * FETCH_ROUNDS} no-op fetches (${FETCH_ROUNDS} in each clone); REST calls of the last of each\n\n`,
  );
  out.write(renderTable(["scenario", "with comments", "--no-comments", "ratio", "goal"], rows(on, off)));
  const missed = missedGoals([on, off]);
  out.write(missed.length === 0 ? "\nall goals met\n" : `\ngoal missed: ${missed.join("; ")}\n`);
}
