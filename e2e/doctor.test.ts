/**
 * `svc doctor` (issue 16): healthy on a fresh clone, and on clones broken in each of the ways it checks,
 * the failing check names a fix; the fix, run through `sh -c` exactly as printed, makes the next `svc doctor`
 * healthy. A fix never holds a placeholder (issue 31): where svc cannot know a value (a credential) or the
 * choice is the user's, the check's advice says so in words, and doing what it says (the commands it names
 * run as printed) makes the doctor healthy. Real git, a real simulator, the fake wiki, forge and tracker.
 * The doctor changes nothing and, `--offline`, asks the server nothing; no credential value is ever printed.
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { delimiter, join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { shellWord } from "../core/errors.js";
import { SVC_VERSION } from "../core/version.js";
import { givenFakeForge } from "../testing/fake-forge.js";
import { givenFakeTracker } from "../testing/fake-tracker.js";
import { type FakeWiki, givenFakeWiki } from "../testing/fake-wiki.js";
import { givenForgeEnv } from "../testing/forge.js";
import {
  cacheFolder,
  cacheGit,
  type GitEnv,
  git,
  gitOk,
  givenGitEnv,
  manyIssues,
  openCacheDb,
  patchIssue,
  type RunResult,
  run,
  SPARSE_SET,
  svc,
} from "../testing/git.js";
import { givenTmpfs, withoutPermissionOverride } from "../testing/mounts.js";
import { repoRoot } from "../testing/paths.js";
import { lastSimAuditId } from "../testing/push.js";
import { givenProject, givenSim, givenTempDir } from "../testing/sim.js";
import { givenTrackerEnv } from "../testing/tracker.js";
import { givenWikiEnv, wikiVars } from "../testing/wiki.js";

interface Check {
  readonly id: string;
  readonly status: "ok" | "fail" | "skipped" | "info";
  readonly message: string;
  readonly fix: string | null;
  readonly advice?: string;
  readonly [detail: string]: unknown;
}

interface Report {
  readonly healthy: boolean;
  readonly checks: readonly Check[];
}

type Overrides = Readonly<Record<string, string | undefined>>;

const SLUG = "doc";

function parseReport(t: ExecutionContext, result: RunResult): Report {
  try {
    return JSON.parse(result.stdout) as Report;
  } catch {
    t.log(`svc doctor printed:\n${result.stdout}\n${result.stderr}`);
    throw new Error(`svc doctor --json did not print JSON (exit ${result.code})`);
  }
}

/** `svc doctor --json [args] d` in the environment's work folder. */
async function doctor(
  t: ExecutionContext,
  env: GitEnv,
  options: { args?: readonly string[]; env?: Overrides } = {},
): Promise<{ result: RunResult; report: Report }> {
  const result = await svc(env, ["doctor", "--json", ...(options.args ?? []), "d"], { env: options.env });
  t.is(result.stderr, "", "svc doctor writes nothing to stderr");
  return { result, report: parseReport(t, result) };
}

function check(report: Report, id: string): Check {
  const found = report.checks.find((item) => item.id === id);
  if (!found) throw new Error(`no check ${id} in ${JSON.stringify(report)}`);
  return found;
}

function failing(report: Report): string[] {
  return report.checks.filter((item) => item.status === "fail").map((item) => item.id);
}

/** A simulator with project `doc` and its clone `d` made by `svc init`. */
async function givenClone(t: ExecutionContext, extra: Readonly<Record<string, string>> = {}) {
  const sim = await givenSim(t);
  await givenProject(sim.url, SLUG, manyIssues(3));
  const env = givenGitEnv(t, { SVC_SIM_ORIGIN: sim.url, ...extra });
  const init = await svc(env, ["init", `sim::${SLUG}`, "d"]);
  t.is(init.code, 0, init.stderr);
  return { sim, env };
}

/** A placeholder in a fix or an advice: `<project>`, `<api-token>`. */
const PLACEHOLDER = /<[a-z][a-z-]*>/;

/**
 * Asserts `report` fails exactly `ids` (all of them, nothing else), then runs the fix of `ids[0]` as printed
 * followed by `svc doctor --json d`, in one `sh -c` with `overrides`; that doctor must be healthy. Returns
 * everything printed, for the credential assertions.
 */
async function fixAndRecheck(
  t: ExecutionContext,
  env: GitEnv,
  report: Report,
  ids: readonly string[],
  options: { overrides?: Overrides } = {},
): Promise<string> {
  t.false(report.healthy);
  t.deepEqual(failing(report), [...ids]);
  const failed = check(report, ids[0] as string);
  t.is(typeof failed.fix, "string", `${failed.id} names a fix`);
  const fix = failed.fix as string;
  t.notRegex(fix, PLACEHOLDER);
  const after = await run(env, "sh", ["-c", `${fix} && svc doctor --json d`], { env: options.overrides });
  const again = parseReport(t, after);
  t.deepEqual(failing(again), [], `after ${failed.fix}: ${after.stdout}\n${after.stderr}`);
  t.true(again.healthy);
  t.is(after.code, 0);
  return after.stdout + after.stderr;
}

/**
 * Asserts `report` fails exactly `ids`, the first with no fix and `advice` as its advice, then does what the
 * advice says: `exports` (the values only the user knows) set in a shell, then the command after its last
 * "then run", as printed, which must report healthy. Returns everything printed.
 */
async function followAdvice(
  t: ExecutionContext,
  env: GitEnv,
  report: Report,
  ids: readonly string[],
  advice: string,
  options: { overrides?: Overrides; exports: Readonly<Record<string, string>> },
): Promise<string> {
  t.false(report.healthy);
  t.deepEqual(failing(report), [...ids]);
  const failed = check(report, ids[0] as string);
  t.is(failed.fix, null);
  t.is(failed.advice, advice);
  t.notRegex(advice, PLACEHOLDER);
  const [, then = ""] = /then run (svc doctor.*)$/.exec(advice) ?? [];
  const set = Object.entries(options.exports).map(([name, value]) => `${name}=${shellWord(value)}`);
  const after = await run(env, "sh", ["-c", `export ${set.join(" ")} && ${then}`], {
    env: options.overrides,
  });
  t.is(after.code, 0, after.stdout + after.stderr);
  t.true(after.stdout.endsWith("svc doctor: healthy\n"), after.stdout);
  return after.stdout + after.stderr;
}

/**
 * Every file under `folder` with its size and modification time, except SQLite's `-shm` and `-wal` files: a
 * reader of a WAL database creates them when they are missing (empty) and writes its read marks to `-shm`.
 */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || /-(shm|wal)$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    const stat = statSync(path);
    files[path] = `${stat.size} ${stat.mtimeMs}`;
  }
  return files;
}

test("a fresh clone is healthy: every check ok or info, exit 0; the one request is a read; --offline sends none", async (t) => {
  const { sim, env } = await givenClone(t);
  const before = lastSimAuditId(sim);
  const [cacheBefore, treeBefore] = [snapshot(cacheFolder(env)), snapshot(join(env.dir, "d"))];
  const { result, report } = await doctor(t, env);
  t.deepEqual(snapshot(cacheFolder(env)), cacheBefore, "the cache is as it was");
  t.deepEqual(snapshot(join(env.dir, "d")), treeBefore, "the working tree and its .git are as they were");
  t.is(result.code, 0);
  t.true(report.healthy);
  t.deepEqual(
    report.checks.map((item) => `${item.id} ${item.status}`),
    [
      "node-version ok",
      "git-version ok",
      "helper ok",
      "remote ok",
      "allowlist ok",
      "credentials ok",
      "server ok",
      "cache ok",
      "temp-refs ok",
      "history ok",
      "ref-locks ok",
      "sparse-checkout ok",
      "pull-config ok",
      "records info",
      "cache-size info",
      "last-sync info",
    ],
  );
  t.like(check(report, "remote"), { kind: "sim", project: SLUG, url: `svc::${sim.url}/projects/${SLUG}` });
  t.like(check(report, "records"), { records: 3 });
  t.like(check(report, "helper"), { version: SVC_VERSION });
  t.like(check(report, "node-version"), { version: process.versions.node });
  t.regex(check(report, "node-version").message, /svc needs 22\.16 or later$/);
  t.regex(check(report, "last-sync").message, /full listing, 3 listed/);
  t.true((check(report, "cache-size").bytes as number) > 0);
  const asked = sim.store.auditRows().filter((row) => row.id > before);
  t.deepEqual(
    asked.map((row) => `${row.method} ${row.path}`),
    [`GET /projects/${SLUG}`],
  );

  const offlineFrom = lastSimAuditId(sim);
  const offline = await doctor(t, env, { args: ["--offline"] });
  t.is(offline.result.code, 0);
  t.like(check(offline.report, "server"), { status: "skipped" });
  t.is(lastSimAuditId(sim), offlineFrom, "--offline: the simulator got no request");

  const text = await svc(env, ["doctor", "d"]);
  t.is(text.code, 0);
  t.regex(text.stdout, /^ok {6}git-version: git version /m);
  t.regex(text.stdout, /^info {4}records: 3 records in the cache$/m);
  t.true(text.stdout.endsWith("svc doctor: healthy\n"));
});

test("the human report: FAIL lines, each followed by its fix, and the count of problems last; exit 1", async (t) => {
  const { env } = await givenClone(t);
  await gitOk(t, env, ["-C", "d", "config", "pull.ff", "only"]);
  const result = await svc(env, ["doctor", "d"], { env: { SVC_ALLOWED_ORIGINS: "https://example.test" } });
  t.is(result.code, 1);
  t.regex(result.stdout, /^FAIL {4}allowlist: .*\n {2}fix: export SVC_ALLOWED_ORIGINS=/m);
  t.regex(result.stdout, /^FAIL {4}pull-config: .*\n {2}fix: git -C d config pull\.ff true$/m);
  t.regex(result.stdout, /^skipped server: no request sent until allowlist is fixed$/m);
  t.true(result.stdout.endsWith("svc doctor: 2 problems\n"));
});

test("the cache deleted: cache fails, svc sync d rebuilds it", async (t) => {
  const { env } = await givenClone(t);
  rmSync(cacheFolder(env), { recursive: true, force: true });
  const { result, report } = await doctor(t, env);
  t.is(result.code, 1);
  t.is(check(report, "cache").fix, "svc sync d");
  t.like(check(report, "history"), { status: "skipped" });
  await fixAndRecheck(t, env, report, ["cache"]);
});

test("cache.db overwritten with garbage: cache fails, the fix moves it aside and syncs", async (t) => {
  const { env } = await givenClone(t);
  const folder = cacheFolder(env);
  for (const name of ["cache.db-wal", "cache.db-shm"]) rmSync(join(folder, name), { force: true });
  writeFileSync(join(folder, "cache.db"), Buffer.alloc(8192, "garbage\n"));
  const { report } = await doctor(t, env);
  const cache = check(report, "cache");
  t.regex(cache.message, /not a usable SQLite database \(file is not a database\)/);
  t.regex(cache.fix ?? "", new RegExp(`^mv ${folder} ${folder}\\.broken-\\d{8}T\\d{6}Z && svc sync d$`));
  t.regex(cache.message, /create journal of an interrupted push/, "it says what is lost");
  await fixAndRecheck(t, env, report, ["cache"]);
});

test("an audit trigger dropped: cache fails (svc sync alone would not see it), the move-aside fix rebuilds", async (t) => {
  const { env } = await givenClone(t);
  const db = openCacheDb(env, { writable: true });
  db.exec("DROP TRIGGER audit_events_cache_no_delete");
  db.close();
  const { report } = await doctor(t, env);
  t.regex(check(report, "cache").message, /lacks the trigger audit_events_cache_no_delete/);
  t.regex(check(report, "cache").fix ?? "", /^mv .* && svc sync d$/);
  // What the fix is for: svc sync by itself keeps the cache, and the doctor still finds it broken.
  t.is((await svc(env, ["sync", "d"])).code, 0);
  t.deepEqual(failing((await doctor(t, env)).report), ["cache"]);
  await fixAndRecheck(t, env, report, ["cache"]);
});

test("the cache's tip commit object removed: cache fails, svc sync d rebuilds it", async (t) => {
  const { env } = await givenClone(t);
  const repo = join(cacheFolder(env), "repo.git");
  const tip = readFileSync(join(repo, "refs", "heads", "main"), "utf8").trim();
  rmSync(join(repo, "objects", tip.slice(0, 2), tip.slice(2)));
  const { report } = await doctor(t, env);
  t.regex(check(report, "cache").message, new RegExp(`its tip commit ${tip.slice(0, 12)} is missing`));
  t.is(check(report, "cache").fix, "svc sync d");
  await fixAndRecheck(t, env, report, ["cache"]);
});

test("a cache folder its group may write to: cache fails, chmod 700 fixes it", async (t) => {
  const { env } = await givenClone(t);
  chmodSync(cacheFolder(env), 0o770);
  const { report } = await doctor(t, env);
  t.regex(check(report, "cache").message, /can be written by its group \(mode 0770\)/);
  t.is(check(report, "cache").fix, `chmod 700 ${cacheFolder(env)}`);
  await fixAndRecheck(t, env, report, ["cache"]);
});

/** The project cache folder under `root` (the one folder that is no lock file). */
function cacheFolderIn(root: string): string {
  const folders = readdirSync(root).filter((name) => !name.endsWith(".lock") && name !== "filler");
  if (folders.length !== 1)
    throw new Error(`expected one cache folder in ${root}, found ${folders.join(", ")}`);
  return join(root, folders[0] as string);
}

test("SVC_CACHE_DIR naming a file: cache fails (no crash of its fix), the fix as printed unsets it and syncs", async (t) => {
  const { env } = await givenClone(t);
  const file = join(env.home, "notes.txt");
  writeFileSync(file, "mine\n");
  const overrides = { SVC_CACHE_DIR: file };
  const { report } = await doctor(t, env, { env: overrides });
  t.like(check(report, "cache"), {
    message: `SVC_CACHE_DIR=${file} cannot be used: ${file} is a file, not a folder`,
    fix: "unset SVC_CACHE_DIR && svc sync d",
  });
  for (const id of ["temp-refs", "history", "records", "cache-size", "last-sync"])
    t.like(check(report, id), { status: "skipped", message: "the cache's fix comes first" });
  await fixAndRecheck(t, env, report, ["cache"], { overrides });
  t.is(readFileSync(file, "utf8"), "mine\n");
});

test("a relative SVC_CACHE_DIR: cache fails saying why svc refuses it; the fix as printed unsets it and syncs", async (t) => {
  const { env } = await givenClone(t);
  const overrides = { SVC_CACHE_DIR: ".svc-cache" };
  const { report } = await doctor(t, env, { env: overrides });
  t.like(check(report, "cache"), {
    message:
      "SVC_CACHE_DIR=.svc-cache is a relative path, which names another folder for each folder svc runs in, one " +
      "of them inside your working tree, where git add -A would stage the cache's files; svc refuses it",
    fix: "unset SVC_CACHE_DIR && svc sync d",
  });
  await fixAndRecheck(t, env, report, ["cache"], { overrides });
  t.false(existsSync(join(env.dir, "d", ".svc-cache")));
});

test("a read-only file system: cache fails as read-only, not broken: the database is intact and is kept (no move aside); writable again, healthy", async (t) => {
  const fs = givenTmpfs(t);
  if (!fs) {
    t.pass();
    return;
  }
  const { env } = await givenClone(t, { SVC_CACHE_DIR: fs.dir });
  const folder = cacheFolderIn(fs.dir);
  const tip = readFileSync(join(folder, "repo.git", "refs", "heads", "main"), "utf8").trim();
  fs.readOnly();
  const { result, report } = await doctor(t, env);
  t.is(result.code, 1);
  t.deepEqual(failing(report), ["cache"]);
  t.like(check(report, "cache"), {
    message:
      `the file system of ${folder} is read-only: svc can read the cache, but git fetch, git push and svc sync cannot write it; ` +
      `the cache is intact (integrity_check ok, tip ${tip.slice(0, 12)}): keep it, as moving it aside would lose its create journal`,
    fix: null,
    advice:
      `make that file system writable again (findmnt -T ${folder} shows how it is mounted); if it must stay read-only, keep ` +
      "svc's caches elsewhere (a new cache there starts from a full listing, without this one's create journal): " +
      "unset SVC_CACHE_DIR && svc sync d",
    fault: "read-only",
  });
  t.like(check(report, "records"), { status: "info", message: "3 records in the cache" });
  t.notRegex(result.stdout, /\bmv /);
  fs.writable();
  const again = await doctor(t, env);
  t.deepEqual(failing(again.report), []);
});

test("a full file system: cache fails as full, not broken: the database is intact and is kept (no move aside); with space again, healthy", async (t) => {
  const fs = givenTmpfs(t);
  if (!fs) {
    t.pass();
    return;
  }
  const { env } = await givenClone(t, { SVC_CACHE_DIR: fs.dir });
  const folder = cacheFolderIn(fs.dir);
  const tip = readFileSync(join(folder, "repo.git", "refs", "heads", "main"), "utf8").trim();
  fs.fill();
  const { result, report } = await doctor(t, env);
  t.is(result.code, 1);
  t.deepEqual(failing(report), ["cache"]);
  t.like(check(report, "cache"), {
    message:
      `the file system of ${folder} is full (0 bytes left): git fetch, git push and svc sync cannot write the cache; ` +
      `the cache is intact (integrity_check ok, tip ${tip.slice(0, 12)}): keep it, as moving it aside would lose its create journal`,
    fix: null,
    advice: `free space on it (df -h ${folder} shows how much is left); the cache needs no change`,
    fault: "full",
  });
  t.notRegex(result.stdout, /\bmv /);
  fs.free();
  t.deepEqual(failing((await doctor(t, env)).report), []);
});

test("an intact cache.db its owner may not write (or read): cache fails with the chmod that fixes it, never a move aside; the fix as printed makes it healthy", async (t) => {
  const prefix = withoutPermissionOverride(t);
  if (!prefix) {
    t.pass();
    return;
  }
  const { env } = await givenClone(t);
  const folder = cacheFolder(env);
  const db = join(folder, "cache.db");
  const tip = readFileSync(join(folder, "repo.git", "refs", "heads", "main"), "utf8").trim();
  const doctorAs = async () => {
    const result = await run(env, prefix[0] as string, [...prefix.slice(1), "svc", "doctor", "--json", "d"]);
    t.is(result.stderr, "");
    return { result, report: parseReport(t, result) };
  };
  chmodSync(db, 0o400);
  const readable = await doctorAs();
  t.deepEqual(failing(readable.report), ["cache"]);
  t.like(check(readable.report, "cache"), {
    message:
      `svc may not write ${db} (permission denied): git fetch, git push and svc sync fail on the cache; ` +
      `the cache is intact (integrity_check ok, tip ${tip.slice(0, 12)}): keep it, as moving it aside would lose its create journal`,
    fix: `chmod -R u+rwX ${folder}`,
    fault: "denied",
  });
  // Unreadable too: before, the doctor called it "not a usable SQLite database" and moved it aside.
  chmodSync(db, 0o000);
  const { result, report } = await doctorAs();
  t.deepEqual(failing(report), ["cache"]);
  t.like(check(report, "cache"), {
    message:
      `svc may not write ${db} (permission denied): git fetch, git push and svc sync fail on the cache; ` +
      "its database cannot be read until then (it is not a usable SQLite database (unable to open database file))",
    fix: `chmod -R u+rwX ${folder}`,
  });
  t.notRegex(result.stdout, /\bmv /);
  const after = await run(env, prefix[0] as string, [
    ...prefix.slice(1),
    "sh",
    "-c",
    `${check(report, "cache").fix} && svc doctor --json d`,
  ]);
  t.is(after.code, 0, after.stdout + after.stderr);
  t.deepEqual(failing(parseReport(t, after)), []);
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid as number;
}

test("a temporary ref of a dead push is a finding, one of a running process is not; the fix deletes only the dead one", async (t) => {
  const { env } = await givenClone(t);
  const tip = (await cacheGit(env, ["rev-parse", "main"])).stdout.trim();
  const dead = await deadPid();
  const alive = process.pid;
  for (const ref of [`refs/svc/base/${dead}`, `refs/svc/incoming/${alive}`])
    t.is((await cacheGit(env, ["update-ref", ref, tip])).code, 0);
  const { report } = await doctor(t, env);
  const refs = check(report, "temp-refs");
  t.deepEqual(refs.refs, [`refs/svc/base/${dead}`]);
  t.is(refs.fix, `git --git-dir=${join(cacheFolder(env), "repo.git")} update-ref -d refs/svc/base/${dead}`);
  await fixAndRecheck(t, env, report, ["temp-refs"]);
  const left = (await cacheGit(env, ["for-each-ref", "--format=%(refname)", "refs/svc/"])).stdout.trim();
  t.is(left, `refs/svc/incoming/${alive}`);
});

test("a lock file a killed git left under refs/ is a finding; the fix, run as printed, removes it", async (t) => {
  const { env } = await givenClone(t);
  const head = await gitOk(t, env, ["-C", "d", "rev-parse", "HEAD"]);
  // As git leaves it when killed between writing the new value and renaming it over the ref, a minute ago.
  const lock = join(env.dir, "d", ".git", "refs", "heads", "main.lock");
  writeFileSync(lock, `${head}\n`);
  const minuteAgo = Date.now() / 1000 - 60;
  utimesSync(lock, minuteAgo, minuteAgo);
  const { report } = await doctor(t, env);
  const locks = check(report, "ref-locks");
  t.like(locks, { locks: ["d/.git/refs/heads/main.lock"], refs: ["refs/heads/main"] });
  t.is(
    locks.message,
    'a git that was killed left d/.git/refs/heads/main.lock, and no git is updating refs/heads/main: git refuses to update that ref while the file is there ("cannot lock ref")',
  );
  t.is(locks.fix, "rm -f d/.git/refs/heads/main.lock");
  await fixAndRecheck(t, env, report, ["ref-locks"]);
  t.false(existsSync(lock));
});

test("pull.ff=only: pull-config fails, the fix sets the clone's own pull.ff", async (t) => {
  const { env } = await givenClone(t);
  await gitOk(t, env, ["-C", "d", "config", "pull.ff", "only"]);
  const { report } = await doctor(t, env);
  t.is(check(report, "pull-config").fix, "git -C d config pull.ff true");
  await fixAndRecheck(t, env, report, ["pull-config"]);
});

test("pull.rebase=true in the global config: the fix sets false in the clone, the global value stays", async (t) => {
  const { env } = await givenClone(t);
  await gitOk(t, env, ["config", "--global", "pull.rebase", "true"]);
  await gitOk(t, env, ["-C", "d", "config", "--unset", "pull.rebase"]);
  const { report } = await doctor(t, env);
  t.like(check(report, "pull-config"), { scope: "global", value: "true" });
  t.is(check(report, "pull-config").fix, "git -C d config pull.rebase false");
  await fixAndRecheck(t, env, report, ["pull-config"]);
  t.is(await gitOk(t, env, ["config", "--global", "--get", "pull.rebase"]), "true");
});

test("a sparse-checkout pattern that matches no file: the fix keeps the others; with none left, disable", async (t) => {
  const { env } = await givenClone(t);
  await gitOk(t, env, ["-C", "d", ...SPARSE_SET, "issues/0001.md", "nomatch/*"]);
  const first = (await doctor(t, env)).report;
  t.deepEqual(check(first, "sparse-checkout").unmatched, ["nomatch/*"]);
  t.is(check(first, "sparse-checkout").fix, `git -C d ${SPARSE_SET.join(" ")} issues/0001.md`);
  await fixAndRecheck(t, env, first, ["sparse-checkout"]);
  t.is(await gitOk(t, env, ["-C", "d", "sparse-checkout", "list"]), "issues/0001.md");

  await gitOk(t, env, ["-C", "d", ...SPARSE_SET, "issues/9*"]);
  const second = (await doctor(t, env)).report;
  t.is(check(second, "sparse-checkout").fix, "git -C d sparse-checkout disable");
  await fixAndRecheck(t, env, second, ["sparse-checkout"]);
});

test("SVC_ALLOWED_ORIGINS without the simulator: allowlist fails, the server is not asked; the export fixes it", async (t) => {
  const { sim, env } = await givenClone(t);
  const overrides = { SVC_ALLOWED_ORIGINS: "https://example.test" };
  const before = lastSimAuditId(sim);
  const { report } = await doctor(t, env, { env: overrides });
  t.is(check(report, "allowlist").fix, `export SVC_ALLOWED_ORIGINS=https://example.test,${sim.url}`);
  t.like(check(report, "server"), { status: "skipped" });
  t.is(lastSimAuditId(sim), before, "nothing was sent to an origin the allowlist refuses");
  await fixAndRecheck(t, env, report, ["allowlist"], { overrides });
});

test("git-remote-svc not on PATH: helper fails, the fix puts svc's bin folder on PATH", async (t) => {
  const { env } = await givenClone(t);
  const bin = join(repoRoot, "bin");
  const path = env.env.PATH?.split(delimiter)
    .filter((dir) => dir !== bin)
    .join(delimiter);
  const { report } = await doctor(t, env, { env: { PATH: path } });
  t.regex(check(report, "helper").message, /git-remote-svc is not on PATH/);
  t.is(check(report, "helper").fix, `export PATH="${bin}:$PATH"`);
  await fixAndRecheck(t, env, report, ["helper"], { overrides: { PATH: path } });
});

test("another version of git-remote-svc first on PATH: helper names both versions and the path found", async (t) => {
  const { env } = await givenClone(t);
  const other = givenTempDir(t, "svc-other-helper-");
  const helper = join(other, "git-remote-svc");
  writeFileSync(helper, "#!/bin/sh\necho 'git-remote-svc 0.0.1'\n");
  chmodSync(helper, 0o755);
  const overrides = { PATH: `${other}${delimiter}${env.env.PATH}` };
  const { report } = await doctor(t, env, { env: overrides });
  const found = check(report, "helper");
  t.regex(
    found.message,
    new RegExp(`${helper} .* says "git-remote-svc 0\\.0\\.1", not git-remote-svc ${SVC_VERSION}`),
  );
  t.is(found.path, helper);
  await fixAndRecheck(t, env, report, ["helper"], { overrides });
});

test("not a clone: remote fails with the svc init form, the rest is skipped; svc init as printed makes one", async (t) => {
  const { env } = await givenClone(t);
  rmSync(join(env.dir, "d"), { recursive: true, force: true });
  const { result, report } = await doctor(t, env);
  t.is(result.code, 1);
  t.is(check(report, "remote").fix, `svc init sim::${SLUG} d`);
  t.deepEqual(
    report.checks.filter((item) => item.status === "skipped").length,
    report.checks.length - 4,
    "everything after remote is skipped",
  );
  await fixAndRecheck(t, env, report, ["remote"]);
});

test("no svc remote and no placeholder: each fix names the real folder, project and URL, and runs as printed", async (t) => {
  const { sim, env } = await givenClone(t);
  const port = new URL(sim.url).port;
  const setUrl = (url: string) => gitOk(t, env, ["-C", "d", "remote", "set-url", "origin", url]);
  const fixed = `git -C d remote set-url origin svc::${sim.url}/projects/${SLUG}`;

  // A simulator URL on a host that is not loopback: the same URL at 127.0.0.1.
  await setUrl(`svc::http://192.0.2.7:${port}/projects/${SLUG}`);
  let { report } = await doctor(t, env);
  t.regex(
    check(report, "remote").message,
    /on 192\.0\.2\.7, which is not a loopback address: the simulator listens only on loopback/,
  );
  t.is(check(report, "remote").fix, fixed);
  await fixAndRecheck(t, env, report, ["remote"]);

  // A URL without a project: the one project the simulator serves (GET /projects).
  await setUrl(`svc::${sim.url}/projects/`);
  ({ report } = await doctor(t, env));
  t.is(check(report, "remote").fix, fixed);
  await fixAndRecheck(t, env, report, ["remote"]);

  // A URL without its scheme: http:// in front.
  await setUrl(`svc::127.0.0.1:${port}/projects/${SLUG}`);
  ({ report } = await doctor(t, env));
  t.is(check(report, "remote").fix, fixed);
  await fixAndRecheck(t, env, report, ["remote"]);
});

test("a folder that is no clone: svc init with the simulator's one project into it, or, the current folder, into .", async (t) => {
  const { env } = await givenClone(t);
  mkdirSync(join(env.dir, "empty"));
  const here = await svc(env, ["doctor", "--json"], { cwd: "empty" });
  const report = parseReport(t, here);
  t.is(
    check(report, "remote").message,
    "the current folder is not in a git working tree (fatal: not a git repository (or any of the parent directories): .git); make a clone with svc init",
  );
  t.is(check(report, "remote").fix, `svc init sim::${SLUG} .`);
  const after = await run(env, "sh", ["-c", `${check(report, "remote").fix} && svc doctor`], {
    cwd: "empty",
  });
  t.is(after.code, 0, after.stdout + after.stderr);
  t.true(after.stdout.endsWith("svc doctor: healthy\n"));
});

test("a folder that is no clone with two projects, or holding files: advice naming the commands, which run as printed", async (t) => {
  const { sim, env } = await givenClone(t);
  await givenProject(sim.url, "other", manyIssues(1));
  // d holds files: a git repository whose origin is not svc's.
  await gitOk(t, env, ["-C", "d", "remote", "set-url", "origin", "https://example.test/x.git"]);
  let { report } = await doctor(t, env);
  t.is(
    check(report, "remote").advice,
    `d holds files, and svc init clones only into a new or empty folder, so the clone goes beside it; the simulator at ${sim.url} serves 2 projects, and svc cannot know which one you want: run svc init sim::${SLUG} ${SLUG} && svc doctor ${SLUG}; or svc init sim::other other && svc doctor other`,
  );
  t.is(check(report, "remote").fix, null);
  const [, second = ""] = /; or (.*)$/.exec(check(report, "remote").advice ?? "") ?? [];
  const beside = await run(env, "sh", ["-c", second]);
  t.is(beside.code, 0, beside.stdout + beside.stderr);
  t.true(beside.stdout.endsWith("svc doctor: healthy\n"));

  rmSync(join(env.dir, "d"), { recursive: true, force: true });
  ({ report } = await doctor(t, env));
  t.is(
    check(report, "remote").advice,
    `the simulator at ${sim.url} serves 2 projects, and svc cannot know which one you want: run svc init sim::${SLUG} d; or svc init sim::other d`,
  );
  const [, first = ""] = /: run (.*?);/.exec(check(report, "remote").advice ?? "") ?? [];
  const made = await run(env, "sh", ["-c", `${first} && svc doctor d`]);
  t.is(made.code, 0, made.stdout + made.stderr);
  t.true(made.stdout.endsWith("svc doctor: healthy\n"));
});

test("a folder that is no clone and no simulator that answers, or --offline: advice in words, and svc init --help", async (t) => {
  const { env } = await givenClone(t);
  rmSync(join(env.dir, "d"), { recursive: true, force: true });
  const offline = (await doctor(t, env, { args: ["--offline"] })).report;
  t.is(
    check(offline, "remote").advice,
    `svc cannot tell which project to clone: the simulator svc init uses, at ${env.env.SVC_SIM_ORIGIN}, did not say which it serves (--offline sends no request, so svc did not ask it (GET ${env.env.SVC_SIM_ORIGIN}/projects)); svc init --help shows how to name a simulator project, a wiki space, a tracker project or a forge repository`,
  );
  const closed = (await doctor(t, env, { env: { SVC_SIM_ORIGIN: "http://127.0.0.1:1" } })).report;
  t.is(check(closed, "remote").fix, null);
  t.regex(
    check(closed, "remote").advice ?? "",
    /^svc cannot tell which project to clone: the simulator svc init uses, at http:\/\/127\.0\.0\.1:1, did not say which it serves \(.*GET http:\/\/127\.0\.0\.1:1\/projects.*\); svc init --help shows how/,
  );
  for (const report of [offline, closed]) t.notRegex(check(report, "remote").advice ?? "", PLACEHOLDER);
  const help = await svc(env, ["init", "--help"]);
  t.is(help.code, 0);
});

test("history not shared: a cache built by another clone without this one's origin/main; the fixes continue both", async (t) => {
  const { sim, env } = await givenClone(t);
  // The cache is lost, the server changes, and another clone builds a new cache (a different first commit).
  rmSync(cacheFolder(env), { recursive: true, force: true });
  await patchIssue(sim.url, SLUG, 1, { title: "Changed while the cache was gone" });
  t.is((await svc(env, ["init", `sim::${SLUG}`, "e"])).code, 0);
  const { report } = await doctor(t, env);
  t.regex(check(report, "history").message, /is not in the cache .* unrelated histories/);
  t.regex(check(report, "history").fix ?? "", /^mv .* && svc sync d$/);
  await fixAndRecheck(t, env, report, ["history"]);
  t.is((await git(env, ["-C", "d", "pull", "--ff-only"])).code, 0, "git pull fast-forwards in d");

  // The rebuilt cache continues d's history, not e's: e's doctor says so, and svc sync e continues it.
  const other = await svc(env, ["doctor", "--json", "e"]);
  const otherReport = parseReport(t, other);
  t.deepEqual(failing(otherReport), ["history"]);
  t.is(check(otherReport, "history").fix, "svc sync e");
  const fixed = await run(env, "sh", ["-c", `${check(otherReport, "history").fix} && svc doctor --json e`]);
  t.true(parseReport(t, fixed).healthy, fixed.stdout + fixed.stderr);
  t.is((await git(env, ["-C", "e", "pull", "--ff-only"])).code, 0, "git pull fast-forwards in e");
});

/** A wiki space with pages and its clone `d`. */
async function givenWikiClone(t: ExecutionContext): Promise<{ wiki: FakeWiki; env: GitEnv }> {
  const wiki = await givenFakeWiki(t);
  wiki.seedPages("SVC", 3);
  const env = givenWikiEnv(t, wiki);
  const init = await svc(env, ["init", "wiki::SVC", "d"]);
  t.is(init.code, 0, init.stderr);
  return { wiki, env };
}

test("a wiki clone: healthy; its credentials named, never shown", async (t) => {
  const { wiki, env } = await givenWikiClone(t);
  const { result, report } = await doctor(t, env);
  t.true(report.healthy, result.stdout);
  t.like(check(report, "remote"), { kind: "wiki", project: "SVC" });
  t.deepEqual(check(report, "credentials").variables, ["VENDOR_EMAIL", "VENDOR_API_KEY"]);
  t.false(result.stdout.includes(wiki.credentials.token));
  const text = await svc(env, ["doctor", "d"]);
  t.false(text.stdout.includes(wiki.credentials.token));
});

test("a wiki clone without VENDOR_API_KEY: credentials names it, the server is not asked; exporting it fixes it", async (t) => {
  const { wiki, env } = await givenWikiClone(t);
  const overrides = { VENDOR_API_KEY: undefined };
  const before = wiki.requests.length;
  const { report } = await doctor(t, env, { env: overrides });
  t.deepEqual(check(report, "credentials").missing, ["VENDOR_API_KEY"]);
  t.like(check(report, "server"), { status: "skipped" });
  t.is(wiki.requests.length, before);
  const printed = await followAdvice(
    t,
    env,
    report,
    ["credentials"],
    "svc cannot know VENDOR_API_KEY: set VENDOR_API_KEY to a user API token of that wiki account, in the environment svc and git run in; then run svc doctor d",
    { overrides, exports: { VENDOR_API_KEY: wiki.credentials.token } },
  );
  t.false(printed.includes(wiki.credentials.token));
});

test("a wiki clone with a rejected token: server fails with 401 naming the variables; the right ones fix it", async (t) => {
  const { wiki, env } = await givenWikiClone(t);
  const wrong = "wrong-token-5f3c9a71";
  const overrides = { VENDOR_API_KEY: wrong };
  const { result, report } = await doctor(t, env, { env: overrides });
  const server = check(report, "server");
  t.like(server, { status: "fail", httpStatus: 401 });
  t.regex(server.message, /answered 401 .*VENDOR_EMAIL and VENDOR_API_KEY/);
  t.false(result.stdout.includes(wrong));
  t.false(result.stdout.includes(wiki.credentials.token));
  const printed = await followAdvice(
    t,
    env,
    report,
    ["server"],
    "svc cannot know VENDOR_EMAIL or VENDOR_API_KEY: set VENDOR_EMAIL to the email of the wiki account the API token was issued to, and VENDOR_API_KEY to a user API token of that wiki account, in the environment svc and git run in; then run svc doctor d",
    {
      overrides,
      exports: {
        VENDOR_EMAIL: wikiVars(wiki).VENDOR_EMAIL as string,
        VENDOR_API_KEY: wiki.credentials.token,
      },
    },
  );
  t.false(printed.includes(wiki.credentials.token));
  t.false(printed.includes(wrong));
});

/** A vendor clone the doctor finds healthy, then finds its credential rejected (401), with the fix. */
interface RejectedCredential {
  /** The fake vendor with a project of three issues, and a git environment configured for it. */
  readonly given: (t: ExecutionContext) => Promise<{
    env: GitEnv;
    requests: () => readonly { method: string; path: string }[];
    /** The right credential values, as the advice has them exported. */
    exports: Readonly<Record<string, string>>;
    /** The secret that must never be printed. */
    secret: string;
  }>;
  /** The `svc init` argument, and the remote check's kind and project. */
  readonly init: string;
  readonly kind: string;
  readonly project: string;
  /** The path of the healthy check's GET. */
  readonly probe: string;
  /** The variable set to a wrong value, and that value. */
  readonly wrong: readonly [string, string];
  readonly advice: string;
}

const healthyThenRejected = test.macro(async (t, c: RejectedCredential) => {
  const { env, requests, exports, secret } = await c.given(t);
  t.is((await svc(env, ["init", c.init, "d"])).code, 0);
  const from = requests().length;
  const healthy = await doctor(t, env);
  t.true(healthy.report.healthy, healthy.result.stdout);
  t.like(check(healthy.report, "remote"), { kind: c.kind, project: c.project });
  t.true(
    requests()
      .slice(from)
      .some((request) => request.method === "GET" && request.path === c.probe),
  );

  const [name, wrong] = c.wrong;
  const overrides = { [name]: wrong };
  const { report } = await doctor(t, env, { env: overrides });
  t.like(check(report, "server"), { httpStatus: 401 });
  const printed = await followAdvice(t, env, report, ["server"], c.advice, { overrides, exports });
  t.false(JSON.stringify(report).includes(wrong));
  t.false(printed.includes(secret));
});

test(
  "a forge clone: healthy (GET of the repository); a rejected FORGE_TOKEN fails server with its fix",
  healthyThenRejected,
  {
    given: async (t) => {
      const forge = await givenFakeForge(t);
      forge.seed("acme/widgets", 3);
      return {
        env: givenForgeEnv(t, forge),
        requests: () => forge.requests,
        exports: { FORGE_TOKEN: forge.token },
        secret: forge.token,
      };
    },
    init: "forge::acme/widgets",
    kind: "forge",
    project: "acme/widgets",
    probe: "/repos/acme/widgets",
    wrong: ["FORGE_TOKEN", "ghp_wrong0c1d2e3f"],
    advice:
      "svc cannot know FORGE_TOKEN: set FORGE_TOKEN to a forge token that can read and write the repository's issues, in the environment svc and git run in; then run svc doctor d",
  },
);

test(
  "a tracker clone: healthy (the project's GET); a rejected API token fails server with its fix",
  healthyThenRejected,
  {
    given: async (t) => {
      const tracker = await givenFakeTracker(t);
      tracker.seed("TEST", 3);
      return {
        env: givenTrackerEnv(t, tracker),
        requests: () => tracker.requests,
        exports: { TRACKER_EMAIL: tracker.email, TRACKER_API_TOKEN: tracker.apiToken },
        secret: tracker.apiToken,
      };
    },
    init: "tracker::TEST",
    kind: "tracker",
    project: "TEST",
    probe: "/rest/api/3/project/TEST",
    wrong: ["TRACKER_API_TOKEN", "wrong-api-token-8c2e"],
    advice:
      "svc cannot know TRACKER_EMAIL or TRACKER_API_TOKEN: set TRACKER_EMAIL to the email of the tracker account, and TRACKER_API_TOKEN to an API token of that tracker account, in the environment svc and git run in; then run svc doctor d",
  },
);
