/**
 * The deployment templates in scripts/deploy/ (shipped in the package) carry Document 2's "Limits" and
 * agree with each other: the unit sandboxes allow writing every path the example environment file names,
 * the example names every variable of Document 2's table, and logrotate keeps 14 compressed daily files.
 * When `systemd-analyze` is installed the units must also pass `systemd-analyze verify` without a warning.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import test from "ava";
import { repoRoot } from "../../testing/paths.js";
import { ConfigReader, checkToken, parseEnvFile } from "./config.js";

const DEPLOY = join(repoRoot, "scripts", "deploy");
const UNITS = [
  "svc-pulse.service",
  "svc-pulse-listener.service",
  "svc-pulse-backup.service",
  "svc-pulse-backup.timer",
];

/** Document 2 "Environment variables", every row. */
const DOCUMENT_2_VARIABLES = [
  "PULSE_DB_PATH",
  "RUNNER_COMMAND",
  "SVC_DESK_PATH",
  "PULSE_API_HOST",
  "PULSE_API_PORT",
  "PULSE_API_TOKEN",
  "PULSE_MAX_CONCURRENT",
  "MESSENGER_BOT_TOKEN",
  "MESSENGER_CHAT_ID",
  "LOG_LEVEL",
  "LOG_FILE",
];

/** Variables of DESIGN.md §7 beyond Document 2's table that the example must document. */
const OUR_VARIABLES = [
  "PULSE_TZ",
  "PULSE_PROVIDERS_DIR",
  "PULSE_BACKUP_DIR",
  "PULSE_RUN_TIMEOUT",
  "OAUTH_CREDENTIALS_FILE",
  "OAUTH_TOKEN_ENDPOINT",
  "OAUTH_CLIENT_ID",
  "OAUTH_CLIENT_SECRET",
  "OAUTH_REFRESH_THRESHOLD",
  "MESSENGER_API_BASE",
  "LISTENER_STATE_PATH",
];

type Unit = Record<string, Record<string, string[]>>;

/** systemd's INI form: [Section], Key=Value (repeatable), # and ; comments; no line continuations used. */
function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section: Record<string, string[]> | undefined;
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      section = {};
      unit[header[1] as string] = section;
      continue;
    }
    const pair = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!pair || section === undefined) {
      throw new Error(`line ${index + 1}: not a Key=Value in a section: ${line}`);
    }
    const key = pair[1] as string;
    section[key] = [...(section[key] ?? []), (pair[2] as string).trim()];
  }
  return unit;
}

function readUnit(name: string): Unit {
  return parseUnit(readFileSync(join(DEPLOY, name), "utf8"));
}

/** The one value of a key that must appear once. */
function one(unit: Unit, section: string, key: string): string | undefined {
  const values = unit[section]?.[key];
  return values?.length === 1 ? values[0] : undefined;
}

function words(unit: Unit, section: string, key: string): string[] {
  return (unit[section]?.[key] ?? []).flatMap((v) => v.split(/\s+/));
}

const env = parseEnvFile(readFileSync(join(DEPLOY, "pulse.env.example"), "utf8"), "pulse.env.example");

for (const name of ["svc-pulse.service", "svc-pulse-listener.service"]) {
  test(`${name} carries Document 2's restart and resource limits and never migrates by itself`, (t) => {
    const unit = readUnit(name);
    t.is(one(unit, "Service", "MemoryMax"), "2G");
    t.is(one(unit, "Service", "CPUQuota"), "100%");
    t.is(one(unit, "Service", "Restart"), "always");
    t.is(one(unit, "Service", "RestartSec"), "10");
    t.is(one(unit, "Unit", "StartLimitBurst"), "5");
    t.is(one(unit, "Unit", "StartLimitIntervalSec"), "200");
    t.true(
      words(unit, "Service", "RestartPreventExitStatus").includes("78"),
      "config errors (EXIT_CONFIG) not restarted",
    );
    t.is(one(unit, "Service", "User"), "svc");
    // The file is read by svc itself, not by systemd: variables systemd sets would win over the file, and a
    // token rotated by editing the file would never be seen by the listener's re-read.
    t.false("EnvironmentFile" in (unit.Service ?? {}));
    t.regex(one(unit, "Service", "ExecStart") ?? "", /--environment \/etc\/svc\/pulse\.env$/);
    t.is(one(unit, "Service", "KillMode"), "mixed");
    t.is(one(unit, "Service", "NoNewPrivileges"), "true");
    t.is(one(unit, "Service", "ProtectSystem"), "strict");
    t.is(one(unit, "Service", "PrivateTmp"), "true");
    t.false(
      "ExecStartPre" in (unit.Service ?? {}),
      "migration is an explicit upgrade step (Document 2 Versioning)",
    );
    t.notRegex(readFileSync(join(DEPLOY, name), "utf8").replace(/^#.*$/gm, ""), /migrate/);
    t.is(unit.Install?.WantedBy?.[0], "multi-user.target");
  });
}

test("the daemon unit runs svc pulse daemon and waits longer than the daemon's graceful stop", (t) => {
  const unit = readUnit("svc-pulse.service");
  t.is(one(unit, "Service", "ExecStart"), "/usr/bin/env svc pulse daemon --environment /etc/svc/pulse.env");
  // PULSE_SHUTDOWN_GRACE (60 s) plus PULSE_KILL_GRACE (10 s) must end before systemd's SIGKILL.
  t.true(Number(one(unit, "Service", "TimeoutStopSec")) >= 60 + 10 + 10);
});

test("the listener unit wants the daemon and starts after it", (t) => {
  const unit = readUnit("svc-pulse-listener.service");
  t.is(one(unit, "Service", "ExecStart"), "/usr/bin/env svc pulse listener --environment /etc/svc/pulse.env");
  t.true(words(unit, "Unit", "Wants").includes("svc-pulse.service"));
  t.true(words(unit, "Unit", "After").includes("svc-pulse.service"));
});

test("the backup runs once a day at 03:00 as a oneshot svc pulse backup, catching up after downtime", (t) => {
  const service = readUnit("svc-pulse-backup.service");
  t.is(one(service, "Service", "Type"), "oneshot");
  t.is(
    one(service, "Service", "ExecStart"),
    "/usr/bin/env svc pulse backup --environment /etc/svc/pulse.env",
  );
  t.is(one(service, "Service", "User"), "svc");
  const timer = readUnit("svc-pulse-backup.timer");
  t.is(one(timer, "Timer", "OnCalendar"), "*-*-* 03:00:00");
  t.is(one(timer, "Timer", "Persistent"), "true");
  t.is(one(timer, "Timer", "Unit"), "svc-pulse-backup.service");
  t.is(timer.Install?.WantedBy?.[0], "timers.target");
});

test("logrotate rotates LOG_FILE daily, keeps 14 compressed files and needs no reload hook", (t) => {
  const text = readFileSync(join(DEPLOY, "logrotate", "svc-pulse"), "utf8");
  const block = /^(\S+)\s*\{([^}]*)\}/m.exec(text.replace(/^\s*#.*$/gm, ""));
  t.truthy(block, "one log block");
  const directives = (block?.[2] ?? "")
    .split("\n")
    .map((l) => l.trim().replace(/\s+/g, " "))
    .filter((l) => l !== "");
  for (const wanted of [
    "daily",
    "rotate 14",
    "compress",
    "delaycompress",
    "missingok",
    "notifempty",
    "create 0640 svc svc",
  ]) {
    t.true(directives.includes(wanted), wanted);
  }
  for (const forbidden of ["postrotate", "prerotate", "copytruncate", "sharedscripts"]) {
    t.false(
      directives.some((d) => d.startsWith(forbidden)),
      forbidden,
    );
  }
  const pattern = block?.[1] ?? "";
  t.is(dirname(pattern), dirname(env.LOG_FILE ?? ""), "rotates the directory LOG_FILE is in");
  t.true(
    new RegExp(
      `^${pattern
        .split("*")
        .map((p) => p.replace(/[.]/g, "\\."))
        .join(".*")}$`,
    ).test(env.LOG_FILE ?? ""),
  );
});

test("pulse.env.example sets every variable of Document 2's table and documents ours", (t) => {
  for (const name of DOCUMENT_2_VARIABLES) t.true(name in env, `${name} is set`);
  const text = readFileSync(join(DEPLOY, "pulse.env.example"), "utf8");
  for (const name of OUR_VARIABLES) t.regex(text, new RegExp(`^#?${name}=`, "m"), `${name} is documented`);
  t.is(env.PULSE_API_HOST, "127.0.0.1", "loopback by default");
  t.is(env.PULSE_MAX_CONCURRENT, "1");
  t.is(env.LOG_LEVEL, "INFO");
  // Placeholders must not pass for real secrets.
  const reader = new ConfigReader(env);
  t.is(checkToken(reader, "PULSE_API_TOKEN", true), undefined);
  t.is(reader.problems.length, 1);
  for (const name of ["PULSE_API_TOKEN", "MESSENGER_BOT_TOKEN", "MESSENGER_CHAT_ID", "OAUTH_CLIENT_ID"]) {
    t.regex(env[name] ?? "", /^<[A-Z_]+>$/, `${name} is a placeholder`);
  }
});

test("the units' sandboxes allow writing every path the example environment file names", (t) => {
  const writable = (name: string) => words(readUnit(name), "Service", "ReadWritePaths");
  const inside = (path: string, roots: string[]) =>
    roots.some((root) => path === root || path.startsWith(`${root}/`));
  const daemon = writable("svc-pulse.service");
  for (const name of [
    "PULSE_DB_PATH",
    "SVC_DESK_PATH",
    "LOG_FILE",
    "OAUTH_CREDENTIALS_FILE",
    "PULSE_PROVIDERS_DIR",
  ]) {
    t.true(inside(env[name] ?? "", daemon), `daemon: ${name}=${env[name]}`);
  }
  const listener = writable("svc-pulse-listener.service");
  for (const name of ["LISTENER_STATE_PATH", "LOG_FILE"]) {
    t.true(inside(env[name] ?? "", listener), `listener: ${name}=${env[name]}`);
  }
  // The backup's source connection writes -wal/-shm beside the database; the default backup directory is
  // beside it too.
  t.true(inside(dirname(env.PULSE_DB_PATH ?? ""), writable("svc-pulse-backup.service")));
});

test("the units pass systemd-analyze verify without warnings (where systemd-analyze is installed)", (t) => {
  const probe = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" });
  if (probe.error !== undefined) {
    t.log("systemd-analyze is not installed; skipped");
    t.pass();
    return;
  }
  // verify loads units by path; copies keep it from reading anything else in the repository.
  const dir = mkdtempSync(join(tmpdir(), "svc-units-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of UNITS) copyFileSync(join(DEPLOY, name), join(dir, name));
  const result = spawnSync("systemd-analyze", ["verify", "--man=no", ...UNITS.map((n) => join(dir, n))], {
    encoding: "utf8",
  });
  t.is(result.status, 0, result.stderr);
  t.is(`${result.stdout}${result.stderr}`.trim(), "", "no warnings");
});
