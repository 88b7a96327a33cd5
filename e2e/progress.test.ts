/**
 * Long work shows progress on stderr (issue 12 item 9): a push of 12 creates throttled by the simulator's
 * rate limit prints, off a terminal, one line for its writes and one for its waits; on a terminal
 * (`SVC_PROGRESS=tty`) one line rewritten with `\r` as the writes go, which the push's own lines never tear.
 * A first listing that lasts many seconds prints, off a terminal, how far it got every 5 seconds.
 */
import test, { type ExecutionContext } from "ava";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { git, givenGitEnv, manyIssues, svc } from "../testing/git.js";
import { commitAll, givenClone, givenSeedFile, writeWorkFile } from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

const CREATES = 12;

/** A rate-limited simulator (4 requests a second per agent), a clone, and a commit of 12 new issues. */
async function givenThrottledPush(t: ExecutionContext, progress: string) {
  const sim = await givenSim(t, { rateLimit: 4 });
  await givenProject(sim.url, "demo", manyIssues(1));
  const env = givenGitEnv(t, { SVC_PROGRESS: progress });
  await givenClone(t, env, sim.url, "demo", "d");
  for (let i = 1; i <= CREATES; i++)
    writeWorkFile(env, "d", `issues/new-${i}.md`, `---\ntitle: New ${i}\n---\n`);
  await commitAll(t, env, "d", "Twelve new issues");
  const push = await git(env, ["push"], { cwd: "d", timeoutMs: 60_000 });
  t.is(push.code, 0, push.stderr);
  t.is(sim.store.getProject("demo")?.issue_count, 1 + CREATES);
  return { sim, push };
}

test("off a terminal, a rate-limited push prints one line for its writes and one for its waits", async (t) => {
  const { sim, push } = await givenThrottledPush(t, "lines");
  const progress = push.stderr.split("\n").filter((line) => /^svc: (writing|waiting|listing)/.test(line));
  t.deepEqual(
    progress.sort(),
    [
      `svc: waiting 1 s for ${sim.url}'s rate limit`,
      `svc: writing ${CREATES} changes to sim project demo at ${sim.url}`,
    ],
    push.stderr,
  );
  t.false(push.stderr.includes("\r"), push.stderr);
});

test("SVC_PROGRESS=tty: the writes line is rewritten in place up to its total, and log lines stay whole", async (t) => {
  const { sim, push } = await givenThrottledPush(t, "tty");
  const line = `\r\x1b[Ksvc: writing ${CREATES} changes to sim project demo at ${sim.url}: `;
  const states = push.stderr
    .split(line)
    .slice(1)
    .map((rest) => /^[^\r\n]*/.exec(rest)?.[0] ?? "");
  t.true(states.length >= 3, push.stderr);
  t.is(states.at(-1), `${CREATES} of ${CREATES} done`);
  t.true(
    states.some((state) => state.endsWith(`; waiting 1 s for ${sim.url}'s rate limit`)),
    JSON.stringify(states),
  );
  t.true(push.stderr.includes(`${line}${CREATES} of ${CREATES} done\n`));
  // Every line the push logs starts a line of its own: at a newline or where the progress line was erased.
  const created = [...push.stderr.matchAll(/svc: created record/g)];
  t.is(created.length, CREATES);
  for (const match of created) {
    const before = push.stderr.slice(0, match.index);
    t.true(
      before === "" || before.endsWith("\n") || before.endsWith("\r\x1b[K"),
      JSON.stringify(before.slice(-80)),
    );
  }
});

test("off a terminal, a first listing that lasts seconds prints the records listed so far every 5 seconds", async (t) => {
  t.timeout(90_000);
  const count = 10_000;
  const sim = await givenSim(t, { seedFile: givenSeedFile(t, "big", manyIssues(count)) });
  const proxy = await givenFaultProxy(t, sim.url);
  // The listing's answer arrives in 12 parts, 1 s apart: ~11 s of listing.
  proxy.setFault((request) =>
    request.method === "GET" && request.path === "/projects/big/issues"
      ? { kind: "slow", slices: 12, gapMs: 1000 }
      : undefined,
  );
  // SVC_PROGRESS unset: stderr is a pipe, not a terminal.
  const env = givenGitEnv(t);
  const started = performance.now();
  const init = await svc(env, ["init", "sim::big", "big", "--origin", proxy.url], { timeoutMs: 80_000 });
  const seconds = (performance.now() - started) / 1000;
  t.is(init.code, 0, init.stderr);
  const line = `svc: listing the records of sim project big at ${proxy.url}`;
  const lines = init.stderr.split("\n").filter((text) => text.startsWith("svc: listing"));
  t.is(lines[0], line, init.stderr);
  const counts = lines.slice(1).map((text) => {
    const match = new RegExp(`^${line.replace(/[.]/g, "\\.")}: ([\\d,]+) listed$`).exec(text);
    t.truthy(match, text);
    return Number(match?.[1]?.replace(/,/g, ""));
  });
  t.true(counts.length >= 1, init.stderr);
  t.true(lines.length <= 1 + Math.ceil(seconds / 5), `at most one line every 5 s: ${init.stderr}`);
  t.deepEqual(
    counts,
    [...counts].sort((a, b) => a - b),
    "counts grow",
  );
  for (const listed of counts) t.true(listed > 0 && listed <= count && listed % 2000 === 0, String(listed));
});
