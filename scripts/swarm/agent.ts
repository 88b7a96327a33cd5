/**
 * One swarm agent (`node dist/scripts/swarm/agent.js <config JSON>`), started by the orchestrator
 * (`scripts/swarm/run.ts`) with an environment of its own: HOME, global git config, identity, and a cache
 * folder that it shares with some agents or has alone.
 *
 * It makes its working tree with `svc init`, prints `ready` and waits for `go <deadline>` on stdin, so that
 * every agent starts from the same state. Then, until it has done `ops` operations or the deadline passed,
 * it edits, creates or deletes one issue per commit and pushes with plain `git push`, doing what svc's
 * refusal says: on fetch first `git pull --no-rebase --no-edit && git push`; when the pull stops at
 * conflicts, the scripted resolution (`resolve.ts`; a modify/delete conflict accepts the deletion) and
 * `git add <files> && git commit --no-edit && git push`. Each operation is one line of `records`
 * (`record.ts`). The first operation of every agent edits issue 1, so the first push of all but one agent
 * is refused: a swarm always has conflicts to resolve.
 */
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { SIM_STATUSES } from "../../backends/sim/schema.js";
import { userGit } from "../../git/user-git.js";
import { SVC_BIN } from "../bench/git.js";
import { type Timed, timedRun } from "../bench/process.js";
import { type Random, seededRandom } from "./random.js";
import type { Action, OpRecord, PushAttempt } from "./record.js";
import { resolveRecordConflicts } from "./resolve.js";

export interface AgentConfig {
  readonly index: number;
  /** What `svc init --origin` gets: the simulator's URL (through the orchestrator's counting proxy). */
  readonly origin: string;
  readonly project: string;
  /** The working tree to make, an absolute path. */
  readonly dir: string;
  readonly seed: number;
  /** Operations to do; null: until the deadline. */
  readonly ops: number | null;
  /** Issues 1 to `overlap` are the overlapping set every agent edits. */
  readonly overlap: number;
  /** The JSON-lines file of `OpRecord`s. */
  readonly records: string;
  /** `git push` attempts per operation before it is abandoned. */
  readonly maxPushes: number;
}

/** What svc prints when a push is refused because records changed on the server (README "Pushing"). */
export const PULL_ADVICE = "git pull --no-rebase --no-edit && git push";
const PULL = ["pull", "--no-rebase", "--no-edit"] as const;
const PULL_CHANCE = 0.3;
const FIELD_CHANCE = 0.3;
/** Of the edits, this share goes to the overlapping set; the rest to issues agents created. */
const OVERLAP_CHANCE = 0.75;

interface Plan {
  readonly action: Action;
  readonly issue?: number;
  readonly path: string;
  readonly field?: string;
  readonly token?: string;
}

/** The failure of one command, for an operation's `error`. */
class CommandFailed extends Error {}

class Agent {
  private readonly random: Random;

  constructor(private readonly config: AgentConfig) {
    this.random = seededRandom(config.seed);
  }

  async operation(op: number): Promise<OpRecord> {
    const line = `agent-${this.config.index} op-${op}`;
    const state = { pushes: [] as PushAttempt[], resolvedContent: 0, resolvedDeletes: 0, pulls: 0 };
    let plan: Plan | undefined;
    const record = (outcome: OpRecord["outcome"], extra: Partial<OpRecord> = {}): OpRecord => ({
      agent: this.config.index,
      op,
      action: plan?.action ?? null,
      ...(plan?.issue === undefined ? {} : { issue: plan.issue }),
      line,
      ...(plan?.field === undefined ? {} : { field: plan.field }),
      ...(plan?.token === undefined ? {} : { token: plan.token }),
      outcome,
      carried: false,
      ...state,
      ...extra,
    });
    try {
      // A tree holding a file it created still has it under its new name until it pulls.
      if (this.ids().pending || (op > 1 && this.random.next() < PULL_CHANCE)) {
        state.pulls++;
        await this.checked("git", PULL);
      }
      plan = this.choose(op);
      await this.apply(plan, line);
      for (let attempt = 1; attempt <= this.config.maxPushes; attempt++) {
        const at = Date.now();
        const push = await this.timed("git", ["push"]);
        if (push.code === 0) {
          state.pushes.push({ at, ms: push.ms, result: "accepted" });
          const created = /svc: created record (\d+) from /.exec(push.stderr);
          return record("accepted", {
            carried: plan.action !== "edit" || existsSync(join(this.config.dir, plan.path)),
            ...(created ? { createdId: Number(created[1]) } : {}),
          });
        }
        if (!push.stderr.includes(PULL_ADVICE)) {
          state.pushes.push({ at, ms: push.ms, result: "failed" });
          throw new CommandFailed(`git push exited ${push.code}:\n${push.stderr}`);
        }
        state.pushes.push({ at, ms: push.ms, result: "fetch-first" });
        state.pulls++;
        const resolved = await this.pullAndResolve();
        state.resolvedContent += resolved.content;
        state.resolvedDeletes += resolved.deletes;
      }
      await this.abandon();
      return record("abandoned");
    } catch (error) {
      if (!(error instanceof CommandFailed)) throw error;
      await this.abandon();
      return record("failed", { error: error.message.slice(0, 4000) });
    }
  }

  /** The issue ids in the working tree, and whether a file this agent created is there by its new name. */
  private ids(): { ids: number[]; pending: boolean } {
    const names = readdirSync(join(this.config.dir, "issues"));
    const ids = names.flatMap((name) => {
      const match = /^(\d+)\.md$/.exec(name);
      return match ? [Number(match[1])] : [];
    });
    return { ids, pending: names.some((name) => name.startsWith("new-")) };
  }

  private choose(op: number): Plan {
    const { ids } = this.ids();
    const overlapping = ids.filter((id) => id <= this.config.overlap);
    const created = ids.filter((id) => id > this.config.overlap);
    const edit = (issue: number): Plan => {
      const field =
        this.random.next() < FIELD_CHANCE ? this.random.pick(["status", "labels"] as const) : undefined;
      return { action: "edit", issue, path: issuePath(issue), ...(field ? { field } : {}) };
    };
    if (op === 1 && overlapping.includes(1)) return edit(1);
    const roll = this.random.next();
    if (roll < 0.6) {
      const pool =
        created.length === 0 || (overlapping.length > 0 && this.random.next() < OVERLAP_CHANCE)
          ? overlapping
          : created;
      if (pool.length > 0) return edit(this.random.pick(pool));
    } else if (roll >= 0.8 && created.length > 0) {
      const issue = this.random.pick(created);
      return { action: "delete", issue, path: issuePath(issue) };
    }
    const token = `swarm-a${this.config.index}-n${op}`;
    return { action: "create", path: `issues/new-${token}.md`, token };
  }

  /** Changes the working tree as `plan` says and commits. */
  private async apply(plan: Plan, line: string): Promise<void> {
    const file = join(this.config.dir, plan.path);
    if (plan.action === "delete") {
      await this.checked("git", ["rm", "-q", plan.path]);
    } else if (plan.action === "create") {
      writeFileSync(file, `---\ntitle: ${plan.token}\n---\n${line}\n`);
      await this.checked("git", ["add", plan.path]);
    } else {
      let text = readFileSync(file, "utf8");
      if (plan.field === "status") text = this.changeStatus(text);
      if (plan.field === "labels") text = this.toggleLabel(text);
      writeFileSync(file, `${text}${text.endsWith("\n") ? "" : "\n"}${line}\n`);
      await this.checked("git", ["add", plan.path]);
    }
    await this.checked("git", ["commit", "-q", "-m", `${plan.action} ${plan.path}: ${line}`]);
  }

  private changeStatus(text: string): string {
    const current = /^status: (\S+)$/m.exec(text)?.[1];
    const status = this.random.pick(SIM_STATUSES.filter((value) => value !== current));
    return text.replace(/^status: \S+$/m, `status: ${status}`);
  }

  private toggleLabel(text: string): string {
    const label = `a${this.config.index}`;
    return text.replace(/^labels: \[(.*)\]$/m, (_, list: string) => {
      const labels = list === "" ? [] : list.split(", ");
      const next = labels.includes(label) ? labels.filter((each) => each !== label) : [...labels, label];
      return `labels: [${next.join(", ")}]`;
    });
  }

  /**
   * `git pull --no-rebase --no-edit`; when it stops at conflicts, resolves each file (a side that deleted it
   * wins) and `git add <files> && git commit --no-edit`, as svc's message says.
   */
  private async pullAndResolve(): Promise<{ content: number; deletes: number }> {
    const pull = await this.timed("git", PULL);
    if (pull.code === 0) return { content: 0, deletes: 0 };
    const unmerged = await this.unmergedPaths();
    if (unmerged.size === 0) throw new CommandFailed(`git pull exited ${pull.code}:\n${pull.stderr}`);
    const added: string[] = [];
    const removed: string[] = [];
    for (const [path, stages] of unmerged) {
      if (stages.has(2) && stages.has(3)) {
        const file = join(this.config.dir, path);
        writeFileSync(file, resolveRecordConflicts(readFileSync(file, "utf8")));
        added.push(path);
      } else {
        removed.push(path);
      }
    }
    if (removed.length > 0) await this.checked("git", ["rm", "-q", "--", ...removed]);
    if (added.length > 0) await this.checked("git", ["add", "--", ...added]);
    await this.checked("git", ["commit", "-q", "--no-edit"]);
    return { content: added.length, deletes: removed.length };
  }

  /** `git ls-files -u`: each unmerged path with its stages (1 base, 2 ours, 3 theirs). */
  private async unmergedPaths(): Promise<Map<string, Set<number>>> {
    const listed = await userGit(["ls-files", "-u", "-z"], { cwd: this.config.dir });
    const paths = new Map<string, Set<number>>();
    for (const entry of listed.stdout.split("\0")) {
      const match = /^\d+ [0-9a-f]+ (\d)\t(.+)$/s.exec(entry);
      if (!match) continue;
      const path = match[2] as string;
      paths.set(path, (paths.get(path) ?? new Set()).add(Number(match[1])));
    }
    return paths;
  }

  /** Back to the server's state: out of a merge, local commits dropped. */
  private async abandon(): Promise<void> {
    await userGit(["merge", "--abort"], { cwd: this.config.dir });
    await this.checked("git", ["reset", "-q", "--hard", "@{upstream}"]);
  }

  private timed(command: string, args: readonly string[]): Promise<Timed> {
    return timedRun(command, args, process.env, { cwd: this.config.dir });
  }

  private async checked(command: string, args: readonly string[]): Promise<Timed> {
    const result = await this.timed(command, args);
    if (result.code !== 0) {
      throw new CommandFailed(`${command} ${args.join(" ")} exited ${result.code}:\n${result.stderr}`);
    }
    return result;
  }
}

function issuePath(id: number): string {
  return `issues/${String(id).padStart(4, "0")}.md`;
}

/** The deadline from the orchestrator's `go <epoch ms>` line. */
function goSignal(): Promise<number> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: process.stdin });
    lines.on("line", (text) => {
      const match = /^go (\d+)$/.exec(text);
      if (!match) return;
      resolve(Number(match[1]));
      lines.close();
    });
    lines.on("close", () => reject(new Error("stdin closed before the go line")));
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const config = JSON.parse(argv[0] ?? "") as AgentConfig;
  const init = await timedRun(
    process.execPath,
    [SVC_BIN, "init", `sim::${config.project}`, config.dir, "--origin", config.origin],
    process.env,
  );
  if (init.code !== 0) {
    process.stderr.write(`agent ${config.index}: svc init exited ${init.code}:\n${init.stderr}`);
    return 1;
  }
  process.stdout.write("ready\n");
  const deadline = await goSignal();
  const agent = new Agent(config);
  for (let op = 1; config.ops === null || op <= config.ops; op++) {
    if (Date.now() >= deadline) break;
    appendFileSync(config.records, `${JSON.stringify(await agent.operation(op))}\n`);
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
