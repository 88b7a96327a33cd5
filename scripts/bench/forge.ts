/**
 * The forge benchmark (issue 14 item 8): `svc init forge::acme/widgets` of a 5,000-issue repository on the fake
 * forge, with its REST calls and quota spent, beside `git clone --filter=blob:none file://` (with checkout)
 * of a bare repo holding the same files, measured in the same run; then two no-op `git fetch`es in the svc
 * clone, each with its REST calls, how many answered 304 and the quota it spent (goal: none, every answer a
 * 304), beside a no-op fetch of the plain clone. Then, on the same fake, the comments part of issue 34
 * (forge-comments.ts): 10,000 issues with 30,000 comments cloned with and without comments, side by side.
 *
 * The real `svc` and `git-remote-svc` bins and the installed git, in the isolated environment of `gitEnv`.
 * The fake forge runs in this process (its `requests` log is what the REST calls are counted from), so the
 * svc figures include the fake's own serving time, as the plain ones include `git upload-pack`'s.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeForge } from "../../testing/fake-forge.js";
import { measureComments } from "./forge-comments.js";
import {
  type Calls,
  calls,
  counted,
  fetchMiss,
  forgeVars,
  ms,
  ISSUES_REPO as REPO,
  startForge,
} from "./forge-fake.js";
import { gitEnv, plainPartialClones, SVC_BIN } from "./git.js";
import { checkedRun } from "./process.js";
import { median } from "./stats.js";
import { formatRatio, renderTable } from "./table.js";

const ISSUES = 5000;
const RUNS = 3;

export async function benchForge(
  out: NodeJS.WritableStream,
  progress: (line: string) => void,
): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "svc-bench-forge-"));
  try {
    const forge = await startForge();
    try {
      await measure(forge, root, out, progress);
      await measureComments(forge, root, out, progress);
    } finally {
      await forge.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function measure(
  forge: FakeForge,
  root: string,
  out: NodeJS.WritableStream,
  progress: (line: string) => void,
): Promise<void> {
  progress(`seeding the fake forge with ${ISSUES} issues`);
  forge.seed(REPO, ISSUES);
  const inits: (Calls & { ms: number })[] = [];
  let workTree = "";
  let env = gitEnv(root);
  for (let i = 0; i < RUNS; i++) {
    const dir = join(root, `init-${i}`);
    const runEnv = gitEnv(root, { ...forgeVars(forge), SVC_CACHE_DIR: join(root, `cache-${i}`) });
    progress(`svc init, run ${i + 1}`);
    const init = async () =>
      (await checkedRun(process.execPath, [SVC_BIN, "init", `forge::${REPO}`, dir], runEnv)).ms;
    inits.push(await counted(forge, init));
    workTree = dir;
    env = runEnv;
  }
  const plain = await plainPartialClones(root, "forge", workTree, env, RUNS, progress);
  const fetch = (dir: string) => async () =>
    (await checkedRun("git", ["-C", dir, "fetch", "--quiet", "origin"], env)).ms;
  progress("no-op git fetch 1 and 2");
  const first = await counted(forge, fetch(workTree));
  const second = await counted(forge, fetch(workTree));
  const plainFirst = await fetch(plain.dir)();
  const plainSecond = await fetch(plain.dir)();

  const init = median(inits.map((run) => run.ms));
  const plainClone = median(plain.times);
  const last = inits[inits.length - 1] as Calls;
  out.write(
    `${ISSUES.toLocaleString("en-US")} issues on the fake forge; medians of ${RUNS} inits/clones, ` +
      `one run of each fetch; git with no user config; SVC_BLOB_LIMIT=0\n\n`,
  );
  out.write(
    renderTable(
      ["scenario", "svc", "baseline", "ratio", "goal"],
      [
        ["svc init + checkout", ms(init), ms(plainClone), formatRatio(init, plainClone), "-"],
        ["REST calls of init", calls(last), "-", "-", "-"],
        ["no-op git fetch 1", ms(first.ms), ms(plainFirst), formatRatio(first.ms, plainFirst), "-"],
        ["REST calls of fetch 1", calls(first), "-", "-", "quota 0, all 304"],
        ["no-op git fetch 2", ms(second.ms), ms(plainSecond), formatRatio(second.ms, plainSecond), "-"],
        ["REST calls of fetch 2", calls(second), "-", "-", "quota 0, all 304"],
      ],
    ),
  );
  const missed = [fetchMiss("fetch 1", first), fetchMiss("fetch 2", second)].filter(
    (miss) => miss !== undefined,
  );
  out.write(missed.length === 0 ? "\nall goals met\n" : `\ngoal missed: ${missed.join("; ")}\n`);
}
