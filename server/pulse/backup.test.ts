/**
 * Online backup and migration of the pulse database (Document 2 "Limits", "Versioning"; notes row 13,
 * failure mode 11): a backup taken while a separate process keeps inserting passes `integrity_check`;
 * retention deletes only old `pulse-*.db` files by the time in their name; a damaged database leaves no
 * backup behind; `svc pulse migrate` is idempotent and the daemon's refusal of an old schema names it.
 */
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import test, { type ExecutionContext } from "ava";
import { Database } from "../../core/sqlite.js";
import { runSvcInProcess as runSvc } from "../../testing/cli.js";
import {
  BackupError,
  backupFileName,
  backupPulseDb,
  backupTimestamp,
  defaultBackupDir,
  pruneBackups,
} from "./backup.js";
import { EXIT_CONFIG } from "./config.js";
import { openPulseDb, PULSE_SCHEMA_REVISION, SchemaError, schemaRevision } from "./db.js";

// The commands let the process environment win over --environment; keep the developer's own out of the way.
for (const name of ["PULSE_DB_PATH", "PULSE_BACKUP_DIR", "PULSE_ENV_FILE"]) delete process.env[name];

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 15, 3, 0, 7);

const INSERT = `INSERT INTO pulses (prompt, source, priority, priority_rank, status, scheduled_at, run_at,
  max_attempts, created_at, updated_at) VALUES (?, 'test', 'normal', 2, 'pending', 'now', 0, 3, 0, 0)`;

function givenDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-pulse-backup-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A migrated pulse database with `rows` pulses of about 1 KiB each. */
function givenPulseDb(dir: string, rows: number): string {
  const path = join(dir, "data", "pulse.db");
  const db = openPulseDb(path, { migrate: true, create: true });
  const insert = db.prepare(INSERT);
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(`prompt ${i} ${"x".repeat(1000)}`);
  })();
  db.close();
  return path;
}

function countPulses(path: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT count(*) FROM pulses").pluck().get() as number;
  } finally {
    db.close();
  }
}

function envFile(dir: string, lines: Record<string, string>): string {
  const path = join(dir, "pulse.env");
  writeFileSync(
    path,
    Object.entries(lines)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  return path;
}

/** Rewrites the `pulses_due` index definition so its stored entries no longer match the rows. */
function damageIndex(path: string): void {
  const db = new Database(path);
  db.unsafeMode(true);
  db.pragma("writable_schema = ON");
  db.prepare(
    "UPDATE sqlite_master SET sql = replace(sql, '(status, priority_rank, run_at, id)', '(status, priority_rank, id, run_at)') WHERE name = 'pulses_due'",
  ).run();
  db.close();
}

test("backup names and timestamps round-trip, and only exact backup names carry a time", (t) => {
  t.is(backupFileName(NOW), "pulse-20260115T030007Z.db");
  t.is(backupTimestamp("pulse-20260115T030007Z.db"), Date.UTC(2026, 0, 15, 3, 0, 7));
  for (const name of [
    "pulse-20260230T000000Z.db", // 30 February
    "pulse-20260115T030007Z.db-wal",
    "pulse-20260115T030007Z.db.gz",
    "pulse-20260115T030007.db",
    "xpulse-20260115T030007Z.db",
    "pulse-2026011T030007Z.db",
    ".pulse-backup-1-abcd.tmp",
    "pulse.db",
  ]) {
    t.is(backupTimestamp(name), undefined, name);
  }
  t.is(defaultBackupDir({}, "/var/lib/svc/pulse.db"), "/var/lib/svc/backups");
  t.is(defaultBackupDir({ PULSE_BACKUP_DIR: "/srv/b" }, "/var/lib/svc/pulse.db"), "/srv/b");
  t.is(defaultBackupDir({ PULSE_BACKUP_DIR: " " }, "/var/lib/svc/pulse.db"), "/var/lib/svc/backups");
});

test("a backup taken while another process keeps inserting passes integrity_check and holds a consistent snapshot", async (t) => {
  const dir = givenDir(t);
  const dbPath = givenPulseDb(dir, 5000);
  const dbModule = pathToFileURL(join(import.meta.dirname, "db.js")).href;
  const writerSource = `
    import { openPulseDb } from ${JSON.stringify(dbModule)};
    const db = openPulseDb(${JSON.stringify(dbPath)}, { migrate: false });
    const insert = db.prepare(${JSON.stringify(INSERT)});
    let inserted = 0;
    let stop = false;
    process.on("SIGTERM", () => { stop = true; });
    (function tick() {
      if (stop) { db.close(); process.stdout.write("inserted " + inserted + "\\n"); return; }
      for (let i = 0; i < 20; i++) { insert.run("concurrent " + inserted + " " + "y".repeat(1000)); inserted++; }
      if (inserted === 200) process.stdout.write("ready\\n");
      setImmediate(tick);
    })();
  `;
  const writer = spawn(process.execPath, ["--input-type=module", "-e", writerSource], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let writerOut = "";
  let writerErr = "";
  writer.stdout.on("data", (chunk: Buffer) => {
    writerOut += chunk;
  });
  writer.stderr.on("data", (chunk: Buffer) => {
    writerErr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => writer.on("exit", (code) => resolve(code)));
  t.teardown(() => writer.kill("SIGKILL"));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (writerOut.includes("ready")) {
        clearInterval(timer);
        resolve();
      } else if (writer.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`the writer exited early: ${writerErr}`));
      }
    }, 10);
  });

  const before = countPulses(dbPath);
  const backupDir = join(dir, "backups");
  const result = await backupPulseDb({ dbPath, dir: backupDir, now: () => NOW });
  const after = countPulses(dbPath);
  writer.kill("SIGTERM");
  t.is(await exited, 0, writerErr);
  t.is(writerErr, "");
  t.true(after > before, "the writer kept inserting while the backup ran");

  t.is(result.file, join(backupDir, "pulse-20260115T030007Z.db"));
  t.is(result.integrity, "ok");
  t.is(result.revision, PULSE_SCHEMA_REVISION);
  t.deepEqual(result.removed, []);
  t.is(result.bytes, statSync(result.file).size);
  t.is(statSync(result.file).mode & 0o777, 0o600);
  t.is(statSync(backupDir).mode & 0o777, 0o700);
  t.deepEqual(
    readdirSync(backupDir),
    ["pulse-20260115T030007Z.db"],
    "one self-contained file, no temp or -wal",
  );
  t.is(readFileSync(result.file).subarray(18, 20).toString("hex"), "0101", "rollback-journal mode, not WAL");

  const copy = new Database(result.file, { readonly: true, fileMustExist: true });
  t.deepEqual(copy.pragma("integrity_check"), [{ integrity_check: "ok" }]);
  t.is(copy.pragma("user_version", { simple: true }), PULSE_SCHEMA_REVISION);
  const copied = copy.prepare("SELECT count(*) FROM pulses").pluck().get() as number;
  const maxId = copy.prepare("SELECT max(id) FROM pulses").pluck().get() as number;
  copy.close();
  t.true(copied >= before && copied <= after, `${before} <= ${copied} <= ${after}`);
  t.is(maxId, copied, "a snapshot: ids 1..n with no gaps");
  // The backup opens as a pulse database: the daemon would accept it after a restore.
  openPulseDb(result.file, { migrate: false }).close();
});

test("retention deletes only pulse-<time>.db files more than keepDays old by the time in their name", async (t) => {
  const dir = givenDir(t);
  const dbPath = givenPulseDb(dir, 3);
  const backupDir = join(dir, "backups");
  mkdirSync(backupDir);
  const names = {
    old31: backupFileName(NOW - 31 * DAY),
    old400: backupFileName(NOW - 400 * DAY),
    exactly30: backupFileName(NOW - 30 * DAY),
    recent: backupFileName(NOW - 29 * DAY),
    future: backupFileName(NOW + 2 * DAY),
  };
  const others = [
    `${names.old31}-wal`,
    `${names.old31}.gz`,
    "pulse-20200230T000000Z.db",
    "other-20200101T000000Z.db",
    "notes.txt",
    ".pulse-backup-123-dead.tmp",
  ];
  for (const name of [...Object.values(names), ...others]) writeFileSync(join(backupDir, name), "x");
  mkdirSync(join(backupDir, "pulse-20200101T000000Z.dir"));
  // A recent name with an ancient mtime is kept: the name's time counts, not the file's.
  utimesSync(join(backupDir, names.recent), new Date(0), new Date(0));
  const result = await backupPulseDb({ dbPath, dir: backupDir, now: () => NOW });
  t.deepEqual(
    [...result.removed].sort(),
    [join(backupDir, names.old400), join(backupDir, names.old31)].sort(),
  );
  t.deepEqual(
    readdirSync(backupDir).sort(),
    [
      names.exactly30,
      names.recent,
      names.future,
      backupFileName(NOW),
      ...others,
      "pulse-20200101T000000Z.dir",
    ].sort(),
  );
  // A shorter keepDays through the pure function, on the same directory.
  t.deepEqual(
    pruneBackups(backupDir, 1, NOW + DAY + 1),
    [names.exactly30, names.recent, backupFileName(NOW)].sort().map((name) => join(backupDir, name)),
  );
  t.true(readdirSync(backupDir).includes(names.future));
});

test("a database that fails integrity_check leaves no backup behind and keeps the old ones", async (t) => {
  for (const damage of ["index entries that no longer match the rows", "a page of garbage"] as const) {
    const dir = givenDir(t);
    const dbPath = givenPulseDb(dir, 500);
    if (damage === "a page of garbage") {
      const db = new Database(dbPath);
      const root = db
        .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'pulses_due'")
        .pluck()
        .get() as number;
      const pageSize = db.pragma("page_size", { simple: true }) as number;
      db.close();
      const bytes = readFileSync(dbPath);
      bytes.fill(0xff, (root - 1) * pageSize, root * pageSize);
      writeFileSync(dbPath, bytes);
    } else {
      damageIndex(dbPath);
    }
    const backupDir = join(dir, "backups");
    mkdirSync(backupDir);
    const oldBackup = backupFileName(NOW - 40 * DAY);
    writeFileSync(join(backupDir, oldBackup), "x");
    const error = await t.throwsAsync(backupPulseDb({ dbPath, dir: backupDir, now: () => NOW }), {
      instanceOf: BackupError,
    });
    t.regex(error?.message ?? "", /failed PRAGMA integrity_check/, damage);
    t.regex(error?.message ?? "", /no backup was written/, damage);
    t.deepEqual(readdirSync(backupDir), [oldBackup], `${damage}: nothing written, retention not run`);
  }
});

test("svc pulse backup prints the path and integrity ok; configuration problems exit 78 with the fix", async (t) => {
  const dir = givenDir(t);
  const dbPath = givenPulseDb(dir, 3);
  const env = envFile(dir, { PULSE_DB_PATH: dbPath });
  const ok = await runSvc(["pulse", "backup", "--environment", env]);
  t.is(ok.code, 0, ok.stderr);
  const [path, integrity] = ok.stdout.split("\n");
  t.regex(
    path ?? "",
    /\/data\/backups\/pulse-\d{8}T\d{6}Z\.db$/,
    "default dir: backups/ beside the database",
  );
  t.regex(integrity ?? "", /^integrity ok/);
  t.is(statSync(path ?? "").size > 0, true);

  const noPath = await runSvc(["pulse", "backup", "--environment", envFile(dir, {})]);
  t.is(noPath.code, EXIT_CONFIG);
  t.regex(noPath.stderr, /^svc: .*\n.*PULSE_DB_PATH is not set/);

  const missing = await runSvc([
    "pulse",
    "backup",
    "--environment",
    envFile(dir, { PULSE_DB_PATH: join(dir, "nope.db") }),
  ]);
  t.is(missing.code, EXIT_CONFIG);
  t.regex(missing.stderr, /svc pulse migrate/);

  const aFile = join(dir, "not-a-dir");
  writeFileSync(aFile, "x");
  const badDir = await runSvc([
    "pulse",
    "backup",
    "--environment",
    envFile(dir, { PULSE_DB_PATH: dbPath }),
    "--dir",
    aFile,
  ]);
  t.is(badDir.code, EXIT_CONFIG);
  t.regex(badDir.stderr, /cannot create the backup directory .*not-a-dir .*--dir or PULSE_BACKUP_DIR/);

  const badKeep = await runSvc(["pulse", "backup", "--environment", env, "--keep-days", "0"]);
  t.is(badKeep.code, 2);
  t.regex(badKeep.stderr, /--keep-days "0" is not a whole number/);

  const oldFile = join(dir, "old.db");
  const oldDb = new Database(oldFile);
  oldDb.exec("CREATE TABLE t (x)");
  oldDb.close();
  const old = await runSvc(["pulse", "backup", "--environment", envFile(dir, { PULSE_DB_PATH: oldFile })]);
  t.is(old.code, EXIT_CONFIG);
  t.regex(old.stderr, /schema revision 0, this svc needs \d+; .*svc pulse backup.*svc pulse migrate/);
});

test("svc pulse migrate brings a new or empty file to the newest revision and is idempotent", async (t) => {
  const dir = givenDir(t);
  for (const [label, prepare] of [
    ["absent file and directory", () => {}],
    ["empty file", (path: string) => writeFileSync(path, "")],
  ] as const) {
    const dbPath = join(dir, label.replace(/ /g, "-"), "pulse.db");
    if (label === "empty file") mkdirSync(join(dir, label.replace(/ /g, "-")));
    prepare(dbPath);
    const env = envFile(dir, { PULSE_DB_PATH: dbPath });
    const first = await runSvc(["pulse", "migrate", "--environment", env]);
    t.is(first.code, 0, first.stderr);
    t.is(first.stdout, `pulse database ${dbPath}: schema revision 0 -> ${PULSE_SCHEMA_REVISION}\n`, label);
    t.is(schemaRevision(dbPath), PULSE_SCHEMA_REVISION);
    const second = await runSvc(["pulse", "migrate", "--environment", env]);
    t.is(second.code, 0, second.stderr);
    t.is(second.stdout, `pulse database ${dbPath}: already at revision ${PULSE_SCHEMA_REVISION}\n`, label);
    openPulseDb(dbPath, { migrate: false }).close();
  }

  const newer = join(dir, "newer.db");
  const db = new Database(newer);
  db.pragma(`user_version = ${PULSE_SCHEMA_REVISION + 1}`);
  db.close();
  const refused = await runSvc(["pulse", "migrate", "--environment", envFile(dir, { PULSE_DB_PATH: newer })]);
  t.is(refused.code, EXIT_CONFIG);
  t.regex(refused.stderr, /newer than this svc knows/);

  const garbage = join(dir, "garbage.db");
  writeFileSync(
    garbage,
    "this is not an SQLite database, just some text that is long enough to have a header",
  );
  const notDb = await runSvc(["pulse", "migrate", "--environment", envFile(dir, { PULSE_DB_PATH: garbage })]);
  t.is(notDb.code, EXIT_CONFIG);
  t.regex(notDb.stderr, /cannot read PULSE_DB_PATH .*garbage\.db/);
});

test("the daemon's open refuses a revision-0 file and names svc pulse migrate, changing nothing", (t) => {
  const dir = givenDir(t);
  const path = join(dir, "pulse.db");
  new Database(path).close(); // a valid, empty SQLite file: user_version 0
  const error = t.throws(() => openPulseDb(path, { migrate: false }), { instanceOf: SchemaError });
  t.regex(error?.message ?? "", /schema revision 0, this svc needs \d+; .*run: svc pulse migrate/);
  t.is(schemaRevision(path), 0);
});
