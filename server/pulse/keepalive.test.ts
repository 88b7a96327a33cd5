/**
 * The providers-directory contract with small `#!/bin/sh` providers in temp dirs: each exit code, failures,
 * skipped files, timeouts that kill the whole process group, the missing directory, the command's exit
 * codes, and the shipped `scripts/providers/oauth-token` end to end against the fake token endpoint.
 */
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import test, { type ExecutionContext } from "ava";
import { runSvcInProcess } from "../../testing/cli.js";
import { givenFakeTokenEndpoint, writeProviderCli } from "../../testing/fake-token-endpoint.js";
import { repoRoot } from "../../testing/paths.js";
import { formatKeepaliveSummary, type ProviderReport, runKeepalive } from "./keepalive.js";
import { Logger } from "./log.js";

async function givenTempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "svc-keepalive-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A `#!/bin/sh` provider: `check` and `refresh` are shell snippets run for that argument. */
async function givenProvider(
  dir: string,
  name: string,
  spec: { check: string; refresh?: string },
  mode = 0o755,
): Promise<string> {
  const path = join(dir, name);
  await writeFile(
    path,
    `#!/bin/sh\ncase "$1" in\n  check) ${spec.check} ;;\n  refresh) ${spec.refresh ?? "exit 0"} ;;\n  *) echo "usage: $0 check|refresh" >&2; exit 64 ;;\nesac\n`,
  );
  await chmod(path, mode);
  return path;
}

function givenLogger(): { logger: Logger; text: () => string } {
  let text = "";
  const stderr = new PassThrough();
  stderr.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  return { logger: new Logger({ level: "DEBUG", stderr, component: "test" }), text: () => text };
}

function byName(reports: readonly ProviderReport[], name: string): ProviderReport {
  const report = reports.find((r) => r.name === name);
  if (report === undefined) throw new Error(`no report for ${name}`);
  return report;
}

/** Dead, or a zombie nobody reaps (PID 1 in a container may not). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

async function waitUntilGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (isGone(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

test("each provider is reported by its check and refresh exit codes, in name order", async (t) => {
  const dir = await givenTempDir(t);
  const marks = await givenTempDir(t);
  await givenProvider(dir, "a-healthy", {
    check: "echo fine; exit 0",
    refresh: `touch ${marks}/a-refreshed`,
  });
  await givenProvider(dir, "b-soon", {
    check: "exit 1",
    refresh: `touch ${marks}/b-refreshed; echo refreshed b`,
  });
  await givenProvider(dir, "c-expired", { check: "exit 2", refresh: "exit 0" });
  await givenProvider(dir, "d-failing", {
    check: "echo 'cannot reach the vault' >&2; exit 7",
    refresh: `touch ${marks}/d`,
  });
  await givenProvider(dir, "e-refresh-fails", {
    check: "exit 1",
    refresh: "echo 'server said no' >&2; exit 1",
  });
  await givenProvider(dir, "f-needs-login", { check: "exit 2", refresh: "echo 'log in again' >&2; exit 2" });
  await givenProvider(dir, "g-not-executable", { check: "exit 0" }, 0o644);
  await givenProvider(dir, ".hidden", { check: `touch ${marks}/hidden-ran` });
  await mkdir(join(dir, "h-subdir"));
  await givenProvider(join(dir, "h-subdir"), "inner", { check: `touch ${marks}/inner-ran` });
  await givenProvider(dir, "i-env-and-cwd", { check: 'echo "var=$KEEPALIVE_TEST_VAR cwd=$(pwd)"; exit 0' });
  const { logger, text } = givenLogger();

  const report = await runKeepalive({
    dir,
    env: { ...process.env, KEEPALIVE_TEST_VAR: "passed-through" },
    logger,
  });

  t.deepEqual(
    report.providers.map((p) => p.name),
    ["a-healthy", "b-soon", "c-expired", "d-failing", "e-refresh-fails", "f-needs-login", "i-env-and-cwd"],
  );
  t.like(byName(report.providers, "a-healthy"), {
    check: "healthy",
    refreshAttempted: false,
    ok: true,
    outputTail: "fine\n",
  });
  t.false(existsSync(join(marks, "a-refreshed")), "a healthy provider is not refreshed");
  t.like(byName(report.providers, "b-soon"), {
    check: "expiring",
    refreshed: true,
    ok: true,
    outputTail: "refreshed b\n",
  });
  t.true(existsSync(join(marks, "b-refreshed")));
  t.like(byName(report.providers, "c-expired"), { check: "expired", refreshed: true, ok: true });
  t.like(byName(report.providers, "d-failing"), {
    check: "failed",
    refreshAttempted: false,
    ok: false,
    error: "check exited 7: cannot reach the vault",
  });
  t.false(existsSync(join(marks, "d")), "a failed check is not followed by a refresh");
  t.like(byName(report.providers, "e-refresh-fails"), {
    check: "expiring",
    refreshAttempted: true,
    refreshed: false,
    needsLogin: false,
    ok: false,
    error: "expiring soon, refresh exited 1: server said no",
  });
  t.like(byName(report.providers, "f-needs-login"), {
    check: "expired",
    needsLogin: true,
    ok: false,
    error: "expired, refresh exited 2 (a new login is needed): log in again",
  });
  t.is(byName(report.providers, "i-env-and-cwd").outputTail, `var=passed-through cwd=${dir}\n`);
  t.deepEqual(
    report.skipped.map((s) => [s.name, s.reason]),
    [["g-not-executable", "not-executable"]],
  );
  t.regex(report.skipped[0]?.message ?? "", /chmod \+x .*g-not-executable/);
  t.false(existsSync(join(marks, "hidden-ran")));
  t.false(existsSync(join(marks, "inner-ran")));
  t.false(report.ok);

  t.deepEqual(formatKeepaliveSummary(report).slice(0, 6), [
    "a-healthy: healthy",
    "b-soon: expiring soon, refreshed",
    "c-expired: expired, refreshed",
    "d-failing: check exited 7: cannot reach the vault",
    "e-refresh-fails: expiring soon, refresh exited 1: server said no",
    "f-needs-login: expired, refresh exited 2 (a new login is needed): log in again",
  ]);
  const log = text();
  t.regex(log, /"level":"WARNING".*skipped g-not-executable is not executable/);
  t.regex(log, /"level":"ERROR".*"alert":"keepalive:d-failing"/);
  t.regex(
    log,
    /"level":"ERROR".*"alert":"keepalive:c-expired"/,
    "an expired credential alerts even when refreshed",
  );
  t.regex(log, /"level":"INFO".*b-soon: expiring soon, refreshed/);
});

test("a provider that hangs is killed with its process group and reported as failed", async (t) => {
  const dir = await givenTempDir(t);
  const marks = await givenTempDir(t);
  // The grandchild must die too; the second provider also ignores SIGTERM, so only SIGKILL ends it.
  await givenProvider(dir, "hangs", { check: `sleep 30 & echo $! > ${marks}/grandchild; wait` });
  await givenProvider(dir, "ignores-term", { check: "trap '' TERM; sleep 30; exit 0" });
  await givenProvider(dir, "hangs-in-refresh", { check: "exit 1", refresh: "sleep 30" });
  await givenProvider(dir, "z-after", { check: "exit 0" });
  const report = await runKeepalive({ dir, timeoutMs: 300, killGraceMs: 200 });
  t.like(byName(report.providers, "hangs"), {
    check: "failed",
    ok: false,
    error: "check timed out and was killed",
  });
  t.like(byName(report.providers, "ignores-term"), {
    check: "failed",
    ok: false,
    error: "check timed out and was killed",
  });
  t.like(byName(report.providers, "hangs-in-refresh"), {
    check: "expiring",
    refreshed: false,
    ok: false,
    error: "expiring soon, refresh timed out and was killed",
  });
  t.like(byName(report.providers, "z-after"), { ok: true }, "later providers still run");
  const grandchild = Number((await readFile(join(marks, "grandchild"), "utf8")).trim());
  t.true(await waitUntilGone(grandchild), `the provider's child ${grandchild} was killed`);
});

test("output is capped to its tail", async (t) => {
  const dir = await givenTempDir(t);
  await givenProvider(dir, "chatty", {
    check:
      'i=0; while [ $i -lt 20000 ]; do echo "line $i of a lot of output"; i=$((i+1)); done; echo LAST; exit 0',
  });
  const report = await runKeepalive({ dir });
  const tail = byName(report.providers, "chatty").outputTail;
  t.true(tail.length <= 2_001, `${tail.length} characters kept`);
  t.true(tail.endsWith("LAST\n"));
});

test("a missing directory is reported with what to create; an empty one is fine", async (t) => {
  const parent = await givenTempDir(t);
  const missing = join(parent, "providers");
  const { logger, text } = givenLogger();
  const report = await runKeepalive({ dir: missing, logger });
  t.false(report.ok);
  t.deepEqual(report.providers, []);
  t.regex(
    report.error ?? "",
    new RegExp(`the providers directory ${missing} does not exist; create it \\(mkdir -p ${missing}\\)`),
  );
  t.regex(text(), /"alert":"keepalive:dir"/);
  await mkdir(missing);
  const empty = await runKeepalive({ dir: missing, logger });
  t.true(empty.ok);
  t.deepEqual(formatKeepaliveSummary(empty), [`keepalive: no providers in ${missing}`]);
  const file = join(parent, "a-file");
  await writeFile(file, "");
  t.regex((await runKeepalive({ dir: file })).error ?? "", /is not a directory/);
});

test("svc pulse keepalive: 0 when all are healthy or refreshed, 1 otherwise, 78 without PULSE_PROVIDERS_DIR", async (t) => {
  const dir = await givenTempDir(t);
  await givenProvider(dir, "one", { check: "exit 0" });
  await givenProvider(dir, "two", { check: "exit 1", refresh: "exit 0" });
  const env = { PATH: process.env.PATH, PULSE_PROVIDERS_DIR: dir };
  const good = await runKeepaliveCli([], env);
  t.is(good.code, 0, good.stderr);
  t.is(good.stdout, "one: healthy\ntwo: expiring soon, refreshed\n");

  await givenProvider(dir, "zz-three", { check: "exit 9" });
  const bad = await runKeepaliveCli([], env);
  t.is(bad.code, 1);
  t.regex(bad.stdout, /zz-three: check exited 9\n$/);
  const json = await runKeepaliveCli(["--json"], env);
  t.is(json.code, 1);
  t.like(JSON.parse(json.stdout), { dir, ok: false });

  const unset = await runKeepaliveCli([], { PATH: process.env.PATH });
  t.is(unset.code, 78);
  t.regex(unset.stderr, /PULSE_PROVIDERS_DIR is not set/);
  const badTimeout = await runKeepaliveCli([], { ...env, PULSE_PROVIDER_TIMEOUT: "forever" });
  t.is(badTimeout.code, 78);

  const missing = await runKeepaliveCli([], { ...env, PULSE_PROVIDERS_DIR: join(dir, "nope") });
  t.is(missing.code, 1);
  t.regex(missing.stderr, /does not exist; create it \(mkdir -p/);
});

test("the shipped oauth-token provider, linked into the directory, refreshes through svc on PATH", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t, { rotate: true });
  const home = await givenTempDir(t);
  const providers = join(home, "providers");
  await mkdir(providers);
  await symlink(join(repoRoot, "scripts/providers/oauth-token"), join(providers, "oauth-token"));
  const bin = join(home, "bin");
  await mkdir(bin);
  await writeProviderCli(bin);
  const file = join(home, "credentials.json");
  const refreshToken = endpoint.newRefreshToken();
  const accessToken = "old-access-token-0123456789";
  await writeFile(
    file,
    JSON.stringify({ claudeAiOauth: { accessToken, refreshToken, expiresAt: Date.now() + 5 * 3_600_000 } }),
    { mode: 0o600 },
  );
  const envFile = join(home, "pulse.env");
  await writeFile(
    envFile,
    [
      `PULSE_PROVIDERS_DIR=${providers}`,
      `OAUTH_CREDENTIALS_FILE=${file}`,
      `OAUTH_TOKEN_ENDPOINT=${endpoint.url}`,
      `OAUTH_CLIENT_ID=${endpoint.clientId}`,
    ].join("\n"),
  );
  const env = { PATH: `${bin}:${process.env.PATH}` };
  const first = await runKeepaliveCli(["--environment", envFile], env);
  t.is(first.code, 0, first.stdout + first.stderr);
  t.is(first.stdout, "oauth-token: expiring soon, refreshed\n");
  t.is(endpoint.requests.length, 1);
  const written = JSON.parse(await readFile(file, "utf8"));
  t.is(written.claudeAiOauth.accessToken, endpoint.issued[0]?.accessToken);

  const second = await runKeepaliveCli(["--environment", envFile, "--json"], env);
  t.is(second.code, 0);
  t.is(endpoint.requests.length, 1, "a fresh token is not refreshed again");

  endpoint.mode = { kind: "invalid_grant" };
  written.claudeAiOauth.expiresAt = Date.now() - 1000;
  await writeFile(file, JSON.stringify(written));
  const revoked = await runKeepaliveCli(["--environment", envFile, "--json"], env);
  t.is(revoked.code, 1);
  const report = JSON.parse(revoked.stdout);
  t.like(report.providers[0], { name: "oauth-token", check: "expired", needsLogin: true, ok: false });
  t.regex(
    report.providers[0].error,
    /refresh exited 2 \(a new login is needed\): svc: the refresh token was rejected/,
  );

  const everything = [first, second, revoked].map((r) => r.stdout + r.stderr).join("\n");
  for (const secret of [
    accessToken,
    refreshToken,
    endpoint.issued[0]?.accessToken,
    endpoint.issued[0]?.refreshToken,
  ]) {
    t.false(everything.includes(secret as string), "no token in the output");
  }
});

function runKeepaliveCli(argv: string[], env: Record<string, string | undefined>) {
  return runSvcInProcess(["pulse", "keepalive", ...argv], env);
}
