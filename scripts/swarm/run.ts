/**
 * The swarm (`npm run swarm`, `e2e/swarm.test.ts`): N agent processes (`agent.ts`), each with its own
 * working tree, push and pull concurrently against one `svc sim` process with its rate limit on, through a
 * counting proxy (`counting-proxy.ts`). Even-numbered agents share a cache folder in groups of up to four;
 * odd-numbered ones have their own.
 *
 * A run: seed the project (a seed file: no requests), start the simulator and the proxy, start the agents
 * and wait until each has its working tree, send them all `go`, wait until they stopped (their operations
 * done, or the deadline passed and each finished the operation it was in), run `afterAgents` (tests plant
 * violations there), then in each working tree a final `git -c svc.reconcileInterval=0 pull` (a full
 * listing: deletions made through other caches are found), list the server's issues, check every tree,
 * repository and database, stop the simulator and read its audit table. The invariants are judged from all
 * of that (`invariants.ts`); the figures come from the agents' records (`report.ts`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { renderRecordFile } from "../../backends/record.js";
import { simIssueToRecord } from "../../backends/sim/backend.js";
import { SIM_SCHEMA } from "../../backends/sim/schema.js";
import { Database } from "../../core/sqlite.js";
import { integrityProblems } from "../../core/sqlite-store.js";
import { userGit } from "../../git/user-git.js";
import { BIN, gitEnv, SVC_BIN } from "../bench/git.js";
import { timedRun } from "../bench/process.js";
import { spawnListening } from "../children.js";
import type { AgentConfig } from "./agent.js";
import { type CountingProxy, startCountingProxy } from "./counting-proxy.js";
import {
  type AgentExit,
  type AuditRow,
  checkInvariants,
  type ServerIssue,
  type StoreCheck,
  type TreeCheck,
} from "./invariants.js";
import { type OpRecord, readOpRecords } from "./record.js";
import { computeFigures, type SwarmReport, type SwarmSetup } from "./report.js";

export interface SwarmOptions {
  readonly agents: number;
  /** The deadline after `go`; with `ops`, an upper bound. */
  readonly seconds: number;
  /** Operations per agent; null: as many as fit in `seconds`. */
  readonly ops: number | null;
  /** The overlapping set: issues 1 to `issues`, which every agent edits. */
  readonly issues: number;
  readonly seed: number;
  /** The simulator's `--rate-limit` (requests per second per `X-Svc-Agent`). */
  readonly rateLimit: number;
  /** Keep the run's folder (working trees, caches, the simulator's database, the agents' logs). */
  readonly keep: boolean;
}

export interface SwarmHooks {
  /** Runs once every agent stopped, before the final pulls; `simUrl` reaches the simulator directly. */
  readonly afterAgents?: (context: {
    simUrl: string;
    project: string;
    ops: readonly OpRecord[];
  }) => Promise<void>;
  /** One line per phase, for stderr. */
  readonly progress?: (line: string) => void;
}

export const SWARM_PROJECT = "swarm";
/** `git push` attempts per operation before an agent abandons it. */
const MAX_PUSHES = 30;
const AGENT_JS = fileURLToPath(new URL("./agent.js", import.meta.url));
/** How long agents may take to make their working trees, and to finish their last operation. */
const READY_TIMEOUT_MS = 180_000;
const FINISH_GRACE_MS = 300_000;
const AGENT_ID = "svc-swarm";

interface RunningAgent {
  readonly index: number;
  readonly child: ChildProcess;
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly log: string;
  readonly records: string;
  readonly ready: Promise<boolean>;
  readonly exited: Promise<number | null>;
}

/** The cache folder of agent `index`: even ones share one per four, odd ones have their own. */
function cacheName(index: number): string {
  return index % 2 === 0 ? `shared-${Math.floor(index / 8)}` : `agent-${index}`;
}

export function cacheSharing(agents: number): Pick<SwarmSetup, "sharingAgents" | "sharedCaches"> {
  const members = new Map<string, number>();
  for (let index = 0; index < agents; index++) {
    members.set(cacheName(index), (members.get(cacheName(index)) ?? 0) + 1);
  }
  const shared = [...members.values()].filter((count) => count > 1);
  return { sharingAgents: shared.reduce((sum, count) => sum + count, 0), sharedCaches: shared.length };
}

function agentEnv(root: string, index: number): NodeJS.ProcessEnv {
  const agentRoot = join(root, `agent-${index}`);
  const name = `swarm agent ${index}`;
  const email = `agent-${index}@swarm.invalid`;
  return gitEnv(agentRoot, {
    PATH: [BIN, dirname(process.execPath), process.env.PATH ?? "/usr/bin:/bin"].join(delimiter),
    XDG_CONFIG_HOME: join(agentRoot, "home", ".config"),
    SVC_CACHE_DIR: join(root, "caches", cacheName(index)),
    SVC_PROGRESS: "off",
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
    GIT_TERMINAL_PROMPT: "0",
    LANG: "C",
    LC_ALL: "C",
    TZ: "UTC",
  });
}

function writeSeed(path: string, issues: number): void {
  const seed = {
    projects: [
      {
        slug: SWARM_PROJECT,
        name: "Swarm",
        description: "Seeded by npm run swarm",
        issues: Array.from({ length: issues }, (_, i) => ({
          title: `Overlapping issue ${i + 1}`,
          status: "open",
          labels: [],
          body: `Every agent appends lines here.\n`,
        })),
      },
    ],
  };
  writeFileSync(path, JSON.stringify(seed));
}

function startAgent(root: string, options: SwarmOptions, origin: string, index: number): RunningAgent {
  const dir = join(root, `agent-${index}`, "work");
  const records = join(root, `agent-${index}`, "ops.jsonl");
  const log = join(root, `agent-${index}`, "agent.log");
  const env = agentEnv(root, index);
  const config: AgentConfig = {
    index,
    origin,
    project: SWARM_PROJECT,
    dir,
    seed: (options.seed + index * 7919) >>> 0,
    ops: options.ops,
    overlap: options.issues,
    records,
    maxPushes: MAX_PUSHES,
  };
  const logFd = openSync(log, "a");
  // Its own process group: a hung agent is stopped with git and the helpers it started.
  const child = spawn(process.execPath, [AGENT_JS, JSON.stringify(config)], {
    cwd: root,
    env,
    stdio: ["pipe", "pipe", logFd],
    detached: true,
  });
  closeSync(logFd);
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const ready = new Promise<boolean>((resolve) => {
    let out = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("ready\n")) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  return { index, child, dir, env, log, records, ready, exited };
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Waits for `promise` at most `ms`; undefined when the time ran out. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function logTail(path: string): string {
  try {
    return readFileSync(path, "utf8").slice(-2000).trim() || "(no output)";
  } catch {
    return "(no log)";
  }
}

/** The server's issues, through the proxy (so the request is counted like every other). */
async function listIssues(
  proxy: CountingProxy,
): Promise<{ issues: ServerIssue[]; files: Map<string, string> }> {
  const response = await fetch(`${proxy.url}/projects/${SWARM_PROJECT}/issues`, {
    headers: { "x-svc-agent": AGENT_ID },
    signal: AbortSignal.timeout(60_000),
  });
  if (response.status !== 200) {
    throw new Error(
      `GET /projects/${SWARM_PROJECT}/issues answered ${response.status}: ${await response.text()}`,
    );
  }
  const issues: ServerIssue[] = [];
  const files = new Map<string, string>();
  for (const value of (await response.json()) as unknown[]) {
    const record = simIssueToRecord(value);
    if (typeof record === "string") throw new Error(`the simulator listed a malformed issue: ${record}`);
    files.set(record.path, renderRecordFile(SIM_SCHEMA, record.content));
    issues.push({
      id: Number(record.key),
      title: String(record.content.fields.title),
      body: record.content.body,
      version: record.version ?? 0,
    });
  }
  return { issues, files };
}

/** Every file of the working tree `dir` outside `.git`, by its path relative to `dir`. */
function treeFiles(dir: string, under = dir): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(under, { withFileTypes: true })) {
    if (under === dir && entry.name === ".git") continue;
    const path = join(under, entry.name);
    if (entry.isDirectory()) {
      for (const [name, text] of treeFiles(dir, path)) files.set(name, text);
    } else {
      files.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  }
  return files;
}

async function gitProblem(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<string | undefined> {
  const result = await timedRun("git", args, env, { cwd });
  return result.code === 0
    ? undefined
    : `git ${args.join(" ")} exited ${result.code}: ${result.stderr.trim().slice(0, 1000)}`;
}

/** A working tree after the final pull: clean, the server's files byte for byte, `git fsck` clean. */
async function checkTree(
  agent: RunningAgent,
  pullProblem: string | undefined,
  expected: Map<string, string>,
): Promise<TreeCheck> {
  const problems: string[] = [];
  if (pullProblem) problems.push(pullProblem);
  const status = await userGit(["status", "--porcelain"], { cwd: agent.dir, env: agent.env });
  if (status.code !== 0 || status.stdout !== "") {
    problems.push(
      `git status --porcelain is not empty: ${(status.stdout || status.stderr).trim().slice(0, 500)}`,
    );
  }
  const files = treeFiles(agent.dir);
  for (const [path, text] of expected) {
    const actual = files.get(path);
    if (actual === undefined) problems.push(`${path} is on the server but not in the working tree`);
    else if (actual !== text) problems.push(`${path} differs from the server's issue`);
  }
  for (const path of files.keys()) {
    if (!expected.has(path)) problems.push(`${path} is in the working tree but not on the server`);
  }
  const fsck = await gitProblem(["fsck", "--no-progress"], agent.env, agent.dir);
  if (fsck) problems.push(fsck);
  return { agent: agent.index, problems };
}

function integrity(path: string): string | undefined {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      const problems = integrityProblems(db);
      return problems.length === 0 ? undefined : `PRAGMA integrity_check: ${problems.join("; ")}`;
    } finally {
      db.close();
    }
  } catch (error) {
    return `cannot open: ${(error as Error).message}`;
  }
}

/**
 * `git fsck` of a cache's `repo.git`. A cache writes a record file's blob only when a fetch asks for it (the
 * clone's own pack and a partial clone leave them in the database), so a "missing blob" that the database
 * holds unwritten is the cache's design, not damage; any other finding is a problem.
 */
async function cacheFsckProblem(folder: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const args = [`--git-dir=${join(folder, "repo.git")}`, "fsck", "--no-progress"];
  const result = await userGit(args, { env });
  if (result.code === 0) return undefined;
  // What fsck says of a missing blob: "missing blob <id>", and for each tree naming it "broken link from
  // tree <id>" then "to blob <id>" (on stdout and stderr); "dangling" lines are no error.
  const lines = `${result.stdout}\n${result.stderr}`
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("dangling "));
  const missing = lines.flatMap((line) => /^missing blob ([0-9a-f]{40})$/.exec(line)?.[1] ?? []);
  const linked = lines.flatMap((line) => /^to\s+blob ([0-9a-f]{40})$/.exec(line)?.[1] ?? []);
  const explained = lines.every(
    (line) =>
      /^missing blob [0-9a-f]{40}$/.test(line) ||
      /^broken link from\s+tree [0-9a-f]{40}$/.test(line) ||
      /^to\s+blob [0-9a-f]{40}$/.test(line),
  );
  if (explained && linked.every((oid) => missing.includes(oid))) {
    const db = new Database(join(folder, "cache.db"), { readonly: true, fileMustExist: true });
    try {
      const unwritten = db.prepare("SELECT 1 FROM oid_map WHERE oid = ? AND written = 0").pluck();
      const unknown = missing.filter((oid) => unwritten.get(oid) === undefined);
      if (unknown.length === 0) return undefined;
      return `git ${args.join(" ")}: ${unknown.length} missing blobs the database does not hold, e.g. ${unknown[0]}`;
    } finally {
      db.close();
    }
  }
  return `git ${args.join(" ")} exited ${result.code}: ${`${result.stdout}${result.stderr}`.trim().slice(0, 1000)}`;
}

/** `git fsck` of each cache's `repo.git` and `PRAGMA integrity_check` of its `cache.db`. */
async function checkCaches(root: string, env: NodeJS.ProcessEnv): Promise<StoreCheck[]> {
  const checks: StoreCheck[] = [];
  const caches = join(root, "caches");
  for (const name of existsSync(caches) ? readdirSync(caches) : []) {
    for (const project of readdirSync(join(caches, name), { withFileTypes: true })) {
      if (!project.isDirectory()) continue;
      const folder = join(caches, name, project.name);
      const fsck = await cacheFsckProblem(folder, env);
      checks.push({ what: `cache ${name}/${project.name} repo.git`, ...(fsck ? { problem: fsck } : {}) });
      const db = integrity(join(folder, "cache.db"));
      checks.push({ what: `cache ${name}/${project.name} cache.db`, ...(db ? { problem: db } : {}) });
    }
  }
  return checks;
}

function readAudit(simDb: string): AuditRow[] {
  const db = new Database(simDb, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare("SELECT method, path, status, request_body AS requestBody FROM audit_events ORDER BY id")
      .all() as AuditRow[];
  } finally {
    db.close();
  }
}

type Simulator = Awaited<ReturnType<typeof spawnListening>>;

/** What a run started, for its `finally` to stop: the agents, the proxy and the simulator. */
interface Started {
  readonly agents: RunningAgent[];
  proxy?: CountingProxy;
  sim?: Simulator;
}

export async function runSwarm(options: SwarmOptions, hooks: SwarmHooks = {}): Promise<SwarmReport> {
  const progress = hooks.progress ?? (() => {});
  const root = mkdtempSync(join(tmpdir(), "svc-swarm-"));
  const started: Started = { agents: [] };
  try {
    const simDb = join(root, "sim.db");
    const sim = await startSimulator(root, simDb, options);
    started.sim = sim;
    const proxy = await startCountingProxy(sim.url);
    started.proxy = proxy;
    progress(`simulator at ${sim.url} (proxy ${proxy.url}); starting ${options.agents} agents`);
    const { exits, seconds } = await runAgents(root, options, proxy.url, started.agents, progress);
    const agents = started.agents;
    const ops = agents.flatMap((agent) => readOpRecords(agent.records));
    await hooks.afterAgents?.({ simUrl: sim.url, project: SWARM_PROJECT, ops });

    progress("agents stopped; final git pull in each working tree");
    const withTree = agents.filter((agent) => existsSync(join(agent.dir, ".git")));
    const pulls = await finalPulls(withTree);
    const server = await listIssues(proxy);
    progress("checking working trees, caches and databases");
    const trees: TreeCheck[] = [];
    for (const agent of withTree) trees.push(await checkTree(agent, pulls.get(agent.index), server.files));
    const stores = await checkCaches(root, agentEnv(root, 0));
    const proxied = [...proxy.answered()];
    const unanswered = [...proxy.unanswered()];
    await proxy.close();
    started.proxy = undefined;
    const simExit = await sim.stop();
    started.sim = undefined;
    const audit = readAudit(simDb);
    stores.push(simulatorCheck(simDb, simExit));

    const invariants = checkInvariants({
      project: SWARM_PROJECT,
      ops,
      issues: server.issues,
      audit,
      proxied,
      unanswered,
      trees,
      stores,
      agents: exits,
    });
    return {
      setup: {
        agents: options.agents,
        ...cacheSharing(options.agents),
        overlap: options.issues,
        opsPerAgent: options.ops,
        seed: options.seed,
        rateLimit: options.rateLimit,
      },
      figures: computeFigures(ops, audit, seconds),
      invariants,
      ...(options.keep ? { kept: root } : {}),
    };
  } finally {
    for (const agent of started.agents) killGroup(agent.child);
    await started.proxy?.close();
    await started.sim?.stop(1000);
    if (!options.keep) rmSync(root, { recursive: true, force: true });
  }
}

/** Seeds the project (a seed file: no requests) and starts `svc sim` on `simDb` with the run's rate limit. */
async function startSimulator(root: string, simDb: string, options: SwarmOptions): Promise<Simulator> {
  const seedFile = join(root, "seed.json");
  writeSeed(seedFile, options.issues);
  return spawnListening(
    [
      SVC_BIN,
      "sim",
      "--bind",
      "127.0.0.1:0",
      "--db",
      simDb,
      "--rate-limit",
      String(options.rateLimit),
      "--seed-file",
      seedFile,
    ],
    /svc-sim listening on (\S+)/,
  );
}

/**
 * Starts the agents (into `agents`, for the caller to stop), waits until each has its working tree, sends
 * them all `go` and waits until they stopped, or kills them after the deadline and its grace; returns how
 * each exited and how long they ran.
 */
async function runAgents(
  root: string,
  options: SwarmOptions,
  proxyUrl: string,
  agents: RunningAgent[],
  progress: (line: string) => void,
): Promise<{ exits: AgentExit[]; seconds: number }> {
  for (let index = 0; index < options.agents; index++) {
    mkdirSync(join(root, `agent-${index}`), { recursive: true });
    agents.push(startAgent(root, options, proxyUrl, index));
  }
  const ready = await within(Promise.all(agents.map((agent) => agent.ready)), READY_TIMEOUT_MS);
  const started = performance.now();
  const deadline = Date.now() + options.seconds * 1000;
  progress(`${ready?.filter(Boolean).length ?? 0} agents have their working trees; go`);
  for (const agent of agents) agent.child.stdin?.end(`go ${deadline}\n`);
  const finished = await within(
    Promise.all(agents.map((agent) => agent.exited)),
    options.seconds * 1000 + FINISH_GRACE_MS,
  );
  const seconds = (performance.now() - started) / 1000;
  if (!finished) for (const agent of agents) killGroup(agent.child);
  const exits: AgentExit[] = [];
  for (const agent of agents) {
    const code = await agent.exited;
    exits.push({ agent: agent.index, code, log: code === 0 ? "" : logTail(agent.log) });
  }
  return { exits, seconds };
}

/** A final full-listing `git pull` in each working tree: agent → what went wrong, if anything. */
async function finalPulls(agents: readonly RunningAgent[]): Promise<Map<number, string | undefined>> {
  const pulls = new Map<number, string | undefined>();
  for (const agent of agents) {
    pulls.set(
      agent.index,
      await gitProblem(
        ["-c", "svc.reconcileInterval=0", "pull", "--no-rebase", "--no-edit"],
        agent.env,
        agent.dir,
      ),
    );
  }
  return pulls;
}

/** The simulator's database after it stopped: its integrity, and whether it exited cleanly on SIGTERM. */
function simulatorCheck(simDb: string, simExit: number | null): StoreCheck {
  const simIntegrity = integrity(simDb);
  return {
    what: "simulator sim.db",
    ...(simIntegrity
      ? { problem: simIntegrity }
      : simExit === 0
        ? {}
        : { problem: `svc sim exited ${simExit} on SIGTERM` }),
  };
}
