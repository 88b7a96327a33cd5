import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { isRunning } from "../../core/process.js";
import { Database } from "../../core/sqlite.js";
import { callApi, eventually, givenDaemon, givenPulseFixture, installRunner } from "../../testing/pulse.js";
import { ConfigError } from "./config.js";
import { PulseDaemon, readDaemonConfig } from "./daemon.js";
import { openPulseDb } from "./db.js";
import { PulseQueue } from "./queue.js";

test("a pulse triggered for now runs the runner with run --text <prompt> in the desk and completes", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await givenDaemon(t, fixture);
  const prompt = "Check the inbox; quote ' \" $HOME `x` and a\nnewline";
  const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt, scheduled_at: "now", priority: "normal", source: "test" },
  });
  t.is(answer.status, 201);
  t.is(answer.body.pulse.status, "pending");
  const id = answer.body.pulse.id as number;
  const done = await eventually("the pulse to complete", async () => {
    const got = await callApi(daemon.url, "GET", `/api/pulse/${id}`, { token: fixture.token });
    return got.body.pulse.status === "completed" ? got.body : undefined;
  });
  t.is(done.pulse.exit_code, 0);
  t.is(done.pulse.attempt, 1);
  t.regex(done.pulse.output_tail, /ran: Check the inbox/);
  t.truthy(done.pulse.executed_at);
  t.is(done.attempts.length, 1);
  t.is(done.attempts[0].outcome, "completed");
  const runs = fixture.runs();
  t.is(runs.length, 1);
  t.is(runs[0]?.cwd, fixture.desk);
  // Arguments arrive unchanged: no shell in between.
  t.is(runs[0]?.argc, 3);
  t.deepEqual(runs[0]?.args, ["run", "--text", prompt.replace("\n", "~")]);
});

test("the runner does not see the daemon's secrets, and gets its pulse id", async (t) => {
  const fixture = givenPulseFixture(t, { env: { MESSENGER_BOT_TOKEN: "123456:bot-secret-value" } });
  const daemon = await givenDaemon(t, fixture);
  const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "env" },
  });
  const id = answer.body.pulse.id as number;
  const pulse = await eventually("completion", () => {
    const row = daemon.queue.get(id);
    return row?.status === "completed" ? row : undefined;
  });
  t.regex(pulse.output_tail ?? "", new RegExp(`SVC_PULSE_ID=${id}`));
  t.notRegex(pulse.output_tail ?? "", /PULSE_API_TOKEN|bot-secret-value/);
  t.false(readFileSync(fixture.env.LOG_FILE as string, "utf8").includes(fixture.token));
});

test("authentication: no token 401 with a challenge, a wrong one 403, health needs none", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await givenDaemon(t, fixture);
  const body = { prompt: "x" };
  const none = await callApi(daemon.url, "POST", "/api/pulse/trigger", { body });
  t.is(none.status, 401);
  t.regex(none.headers.get("www-authenticate") ?? "", /^Bearer/);
  t.is(none.body.error.code, "unauthorized");
  const basic = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    body,
    headers: { authorization: "Basic eDp5" },
  });
  t.is(basic.status, 401);
  const wrong = await callApi(daemon.url, "POST", "/api/pulse/trigger", { body, token: `${fixture.token}x` });
  t.is(wrong.status, 403);
  t.false(JSON.stringify(wrong.body).includes(fixture.token));
  t.is((await callApi(daemon.url, "GET", "/api/pulse/1", {})).status, 401);
  const health = await callApi(daemon.url, "GET", "/api/health");
  t.is(health.status, 200);
  t.is(health.body.status, "ok");
  t.is(daemon.queue.stats().pending + daemon.queue.stats().processing, 0, "refused triggers queue nothing");
});

test("the previous token is accepted during a rotation", async (t) => {
  const fixture = givenPulseFixture(t);
  const next = "n".repeat(43);
  const daemon = await givenDaemon(t, fixture, {
    PULSE_API_TOKEN: next,
    PULSE_API_TOKEN_PREVIOUS: fixture.token,
  });
  for (const token of [next, fixture.token]) {
    const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
      token,
      body: { prompt: "x", scheduled_at: "+1h" },
    });
    t.is(answer.status, 201);
  }
});

test("bad trigger bodies get 400s that name the field; nothing is queued", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await givenDaemon(t, fixture);
  const cases: [unknown, string, RegExp][] = [
    [{ scheduled_at: "now" }, "prompt", /prompt must be a non-empty string/],
    [{ prompt: "" }, "prompt", /non-empty/],
    [{ prompt: "x", scheduled_at: "tomorrow" }, "scheduled_at", /RFC 3339/],
    [{ prompt: "x", scheduled_at: "2026-11-22T09:00:00" }, "scheduled_at", /no time zone/],
    [{ prompt: "x", scheduled_at: "2026-02-30T09:00:00Z" }, "scheduled_at", /not a real date/],
    [{ prompt: "x", priority: "urgent" }, "priority", /critical, high, normal, low, deferred/],
    [{ prompt: "x", schedule_at: "now" }, "schedule_at", /unknown field/],
    [{ prompt: 5 }, "prompt", /string/],
    [{ prompt: "x".repeat(200 * 1024) }, "prompt", /at most 131071 bytes/],
    [[1, 2], "body", /JSON object/],
  ];
  for (const [body, field, message] of cases) {
    const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", { token: fixture.token, body });
    t.is(answer.status, 400, JSON.stringify(body).slice(0, 80));
    t.is(answer.body.error.field, field);
    t.regex(answer.body.error.message, message);
  }
  const notJson = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: "{prompt",
  });
  t.is(notJson.status, 400);
  t.is(notJson.body.error.code, "invalid_json");
  const wrongType = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: "prompt=x",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  t.is(wrongType.status, 415);
  const huge = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "x".repeat(600 * 1024) },
  });
  t.is(huge.status, 413);
  t.is((await callApi(daemon.url, "DELETE", "/api/pulse/trigger", { token: fixture.token })).status, 405);
  t.is((await callApi(daemon.url, "GET", "/api/nothing", { token: fixture.token })).status, 404);
  t.is((await callApi(daemon.url, "GET", "/api/pulse/abc", { token: fixture.token })).status, 404);
  t.is(daemon.queue.stats().pending, 0);
});

test("20 concurrent triggers with one dedup_key make exactly one pulse, and every answer names it", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await givenDaemon(t, fixture);
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      callApi(daemon.url, "POST", "/api/pulse/trigger", {
        token: fixture.token,
        body: { prompt: "once", scheduled_at: "+1h", dedup_key: "standup-2026-11-23" },
      }),
    ),
  );
  t.is(answers.filter((a) => a.status === 201).length, 1);
  t.is(answers.filter((a) => a.status === 200).length, 19);
  t.is(new Set(answers.map((a) => a.body.pulse.id)).size, 1);
  t.true(answers.filter((a) => a.status === 200).every((a) => a.body.deduplicated === true));
  const db = new Database(fixture.dbPath, { readonly: true });
  t.teardown(() => db.close());
  t.is((db.prepare("SELECT count(*) AS n FROM pulses").get() as { n: number }).n, 1);
  // The Idempotency-Key header works the same way.
  const viaHeader = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "once", scheduled_at: "+1h" },
    headers: { "idempotency-key": "standup-2026-11-23" },
  });
  t.is(viaHeader.status, 200);
  t.is(viaHeader.body.pulse.id, answers[0]?.body.pulse.id);
});

test("runner missing: pulses wait with their attempts, health is 503 naming the runner, installing it resumes", async (t) => {
  const fixture = givenPulseFixture(t, { withoutRunner: true });
  const daemon = await givenDaemon(t, fixture);
  const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "hello" },
  });
  const id = answer.body.pulse.id as number;
  const health = await eventually("health to report the runner", async () => {
    const got = await callApi(daemon.url, "GET", "/api/health");
    return got.status === 503 ? got : undefined;
  });
  t.is(health.body.status, "degraded");
  t.is(health.body.runner, "missing");
  t.true(health.body.reasons.some((r: string) => r.includes(fixture.runner) && r.includes("does not exist")));
  // Several ticks later the pulse still waits, untouched: never claimed, so no attempt was even begun.
  await daemon.afterTicks(3);
  t.like(daemon.queue.get(id), { status: "pending", attempt: 0 });
  t.deepEqual(daemon.queue.attempts(id), []);
  // Present but not executable is named too.
  writeFileSync(fixture.runner, "#!/bin/sh\nexit 0\n");
  chmodSync(fixture.runner, 0o644);
  await eventually("the not-executable reason", async () => {
    const got = await callApi(daemon.url, "GET", "/api/health");
    return got.body.reasons.some((r: string) => r.includes("chmod +x")) ? true : undefined;
  });
  t.like(daemon.queue.get(id), { status: "pending", attempt: 0 });
  installRunner(fixture.runner);
  const done = await eventually("the pulse to run once the runner is there", () => {
    const row = daemon.queue.get(id);
    return row?.status === "completed" ? row : undefined;
  });
  t.is(done.attempt, 1);
  t.is((await callApi(daemon.url, "GET", "/api/health")).status, 200);
  const log = readFileSync(fixture.env.LOG_FILE as string, "utf8");
  t.regex(log, /"alert":"runner:runner"/);
  t.regex(log, /"recovered":"runner:runner"/);
});

test("a missing desk also holds the queue and is named by health", async (t) => {
  const fixture = givenPulseFixture(t);
  rmSync(fixture.desk, { recursive: true });
  const daemon = await givenDaemon(t, fixture);
  await callApi(daemon.url, "POST", "/api/pulse/trigger", { token: fixture.token, body: { prompt: "x" } });
  const health = await eventually("degraded health", async () => {
    const got = await callApi(daemon.url, "GET", "/api/health");
    return got.status === 503 ? got.body : undefined;
  });
  t.true(health.reasons.some((r: string) => r.startsWith("desk: SVC_DESK_PATH")));
  t.is(health.queue.pending, 1);
});

test("a failing run is retried on the same row with backoff, then fails with its history", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await givenDaemon(t, fixture);
  const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "exit:3", max_attempts: 2 },
  });
  const id = answer.body.pulse.id as number;
  const failed = await eventually("the pulse to fail for good", async () => {
    const got = await callApi(daemon.url, "GET", `/api/pulse/${id}`, { token: fixture.token });
    return got.body.pulse.status === "failed" ? got.body : undefined;
  });
  t.is(failed.pulse.attempt, 2);
  t.is(failed.pulse.exit_code, 3);
  t.regex(failed.pulse.last_error, /exited with 3/);
  t.deepEqual(
    failed.attempts.map((a: { outcome: string; exit_code: number }) => [a.outcome, a.exit_code]),
    [
      ["retry", 3],
      ["failed", 3],
    ],
  );
  t.is(fixture.runs().length, 2);
  t.is(daemon.queue.stats().failed24h, 1);
});

const stoppedOnTimeout = test.macro({
  async exec(t, prompt: string) {
    const fixture = givenPulseFixture(t);
    const daemon = await givenDaemon(t, fixture, {
      PULSE_RUN_TIMEOUT: "400ms",
      PULSE_KILL_GRACE: "300ms",
      PULSE_MAX_ATTEMPTS: "1",
    });
    const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
      token: fixture.token,
      body: { prompt },
    });
    const id = answer.body.pulse.id as number;
    const failed = await eventually("the timeout", () => {
      const row = daemon.queue.get(id);
      return row?.status === "failed" ? row : undefined;
    });
    t.regex(failed.last_error ?? "", /timed out after 400 ms/);
    const grandchild = Number(readFileSync(join(fixture.desk, "grandchild.pid"), "utf8"));
    await eventually("the grandchild to be gone", () => (isRunning(grandchild) ? undefined : true), 5000);
    t.pass();
  },
  title: (_, prompt) => `a run over PULSE_RUN_TIMEOUT is stopped with its whole process group (${prompt})`,
});

test(stoppedOnTimeout, "spawn-sleep:30");
// The runner dies of SIGTERM and its grandchild ignores it: SIGKILL still reaches the group after the grace.
test(stoppedOnTimeout, "stubborn-sleep:30");

test("a lease shorter than 30 s is renewed in time: a second daemon does not take over a long run", async (t) => {
  const fixture = givenPulseFixture(t);
  // The default upkeep period, as deployed (the fixture's is 200 ms).
  const first = await givenDaemon(t, fixture, { PULSE_LEASE: "5s" }, { upkeepMs: undefined });
  // The run lasts until the test releases it, so it is still running when the second daemon looks.
  const release = join(fixture.dir, "release");
  t.teardown(() => writeFileSync(release, ""));
  const answer = await callApi(first.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: `until:${release}` },
  });
  const id = answer.body.pulse.id as number;
  await eventually("the run to start", () => (fixture.runs().length === 1 ? true : undefined));
  // Past the lease the claim gave, the run is still the first daemon's only if its upkeep renewed it.
  const claimed = first.queue.get(id)?.lease_until ?? 0;
  await eventually("the claim's lease to run out", () => (Date.now() > claimed ? true : undefined));
  // Another daemon on the same file resets expired leases as soon as it starts.
  await givenDaemon(t, fixture, { PULSE_LEASE: "5s" });
  writeFileSync(release, "");
  const done = await eventually(
    "the pulse to complete",
    () => {
      const row = first.queue.get(id);
      return row?.status === "completed" ? row : undefined;
    },
    10_000,
  );
  t.is(done.attempt, 1);
  t.is(fixture.runs().length, 1);
});

test("cancel: a pending pulse never runs; a running one is stopped; a finished one is 409", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await givenDaemon(t, fixture);
  const later = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "later", scheduled_at: "+1h" },
  });
  const cancelled = await callApi(daemon.url, "POST", `/api/pulse/${later.body.pulse.id}/cancel`, {
    token: fixture.token,
  });
  t.is(cancelled.status, 200);
  t.is(cancelled.body.pulse.status, "cancelled");
  const again = await callApi(daemon.url, "POST", `/api/pulse/${later.body.pulse.id}/cancel`, {
    token: fixture.token,
  });
  t.is(again.status, 409);
  t.is(again.body.error.status, "cancelled");

  const long = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "sleep:30" },
  });
  const id = long.body.pulse.id as number;
  const run = await eventually("the run to start", () => fixture.runs().find((r) => r.id === id));
  const stop = await callApi(daemon.url, "POST", `/api/pulse/${id}/cancel`, { token: fixture.token });
  t.is(stop.status, 200);
  await eventually("the runner to be stopped", () => (isRunning(run.pid) ? undefined : true), 5000);
  t.is(daemon.queue.get(id)?.status, "cancelled");
  t.is((await callApi(daemon.url, "GET", "/api/pulse/999", { token: fixture.token })).status, 404);
});

test("PULSE_MAX_CONCURRENT bounds the runs; priority decides the order", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await givenDaemon(t, fixture, { PULSE_MAX_CONCURRENT: "2" });
  // Hold both slots until their files exist, then queue low before critical: critical must start first.
  const releases = [join(fixture.dir, "release-1"), join(fixture.dir, "release-2")];
  // Teardowns run last first: a failed test releases its holders before the daemon's graceful stop.
  t.teardown(() => {
    for (const release of releases) writeFileSync(release, "");
  });
  const holders: number[] = [];
  for (const release of releases) {
    holders.push(
      (
        await callApi(daemon.url, "POST", "/api/pulse/trigger", {
          token: fixture.token,
          body: { prompt: `until:${release}` },
        })
      ).body.pulse.id as number,
    );
  }
  await eventually("two runs", () => (fixture.runs().length === 2 ? true : undefined));
  // Both queued in one synchronous step, so no slot can free up in between.
  const now = daemon.queue.now();
  const base = { source: "test", scheduledAt: new Date(now).toISOString(), runAt: now };
  const low = daemon.queue.enqueue({ ...base, prompt: "low", priority: "low" }).pulse.id;
  const critical = daemon.queue.enqueue({ ...base, prompt: "critical", priority: "critical" }).pulse.id;
  // Ticks that find both due pulses claim neither while both slots are held.
  await daemon.afterTicks(2);
  t.is(daemon.queue.stats().processing, 2, "a third run waits for a free slot");
  // One slot frees: the next claim takes one of the two; the other waits for the second slot.
  writeFileSync(releases[0] as string, "");
  await eventually("a third run", () => (fixture.runs().length >= 3 ? true : undefined));
  writeFileSync(releases[1] as string, "");
  await eventually("all four to complete", () =>
    [...holders, low, critical].every((id) => daemon.queue.get(id)?.status === "completed")
      ? true
      : undefined,
  );
  const order = fixture.runs().map((r) => r.id);
  t.true(order.indexOf(critical) < order.indexOf(low));
});

test("a locked database: trigger answers 503 with Retry-After, health degrades, nothing is lost after", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await givenDaemon(t, fixture);
  const blocker = new Database(fixture.dbPath);
  t.teardown(() => blocker.close());
  blocker.pragma("busy_timeout = 0");
  blocker.exec("BEGIN EXCLUSIVE");
  const locked = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "during the lock" },
  });
  t.is(locked.status, 503);
  t.is(locked.headers.get("retry-after"), "1");
  t.is(locked.body.error.code, "database_busy");
  blocker.exec("ROLLBACK");
  const after = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "after the lock" },
  });
  t.is(after.status, 201);
  await eventually("the pulse to complete", () =>
    daemon.queue.get(after.body.pulse.id)?.status === "completed" ? true : undefined,
  );
  t.regex(readFileSync(fixture.env.LOG_FILE as string, "utf8"), /database locked; answered 503/);
});

test("a graceful stop releases a long run with its attempt given back; the next daemon runs it", async (t) => {
  const fixture = givenPulseFixture(t);
  const config = readDaemonConfig({ PATH: process.env.PATH, ...fixture.env, PULSE_SHUTDOWN_GRACE: "300ms" });
  const daemon = await PulseDaemon.start(config, { tickMs: 50 });
  const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "once-sleep:30" },
  });
  const id = answer.body.pulse.id as number;
  const run = await eventually("the run", () => fixture.runs()[0]);
  await daemon.close();
  t.false(isRunning(run.pid), "the runner was stopped");
  const db = openPulseDb(fixture.dbPath, { migrate: false });
  const queue = new PulseQueue(db);
  t.like(queue.get(id), { status: "pending", attempt: 0 });
  t.is(queue.attempts(id)[0]?.outcome, "released");
  db.close();
  const next = await givenDaemon(t, fixture);
  const done = await eventually("the rerun", () => {
    const row = next.queue.get(id);
    return row?.status === "completed" ? row : undefined;
  });
  t.is(done.attempt, 1);
});

test("the daemon refuses a database at an old schema revision and names svc pulse migrate", async (t) => {
  const fixture = givenPulseFixture(t);
  const old = join(fixture.dir, "old.db");
  new Database(old).close();
  const config = readDaemonConfig({ ...fixture.env, PULSE_DB_PATH: old });
  const error = await t.throwsAsync(PulseDaemon.start(config), { instanceOf: ConfigError });
  t.regex(error.message, /schema revision 0.*svc pulse migrate/s);
  const missing = readDaemonConfig({ ...fixture.env, PULSE_DB_PATH: join(fixture.dir, "none.db") });
  await t.throwsAsync(PulseDaemon.start(missing), {
    message: /does not exist; create it with: svc pulse migrate/,
  });
});

test("configuration problems are all listed at once and never print a token", (t) => {
  const error = t.throws(
    () =>
      readDaemonConfig({
        PULSE_API_TOKEN: "short-secret-value",
        PULSE_MAX_CONCURRENT: "zero",
        PULSE_API_PORT: "99999",
        LOG_LEVEL: "loud",
        PULSE_RETENTION_DAYS: "0",
      }),
    { instanceOf: ConfigError },
  );
  for (const name of [
    "PULSE_DB_PATH",
    "RUNNER_COMMAND",
    "SVC_DESK_PATH",
    "PULSE_API_TOKEN",
    "PULSE_MAX_CONCURRENT",
    "PULSE_API_PORT",
    "LOG_LEVEL",
    "PULSE_RETENTION_DAYS",
  ]) {
    t.regex(error.message, new RegExp(name));
  }
  t.false(error.message.includes("short-secret-value"));
});

test("the daemon purges pulses finished before PULSE_RETENTION_DAYS at start; their dedup keys make new pulses", async (t) => {
  const fixture = givenPulseFixture(t);
  const day = 86_400_000;
  const db = openPulseDb(fixture.dbPath, { migrate: false });
  const clock = { now: Date.now() - 3 * day };
  const past = new PulseQueue(db, { now: () => clock.now });
  const enqueueFinished = (key: string) => {
    const { pulse } = past.enqueue({
      prompt: key,
      source: "test",
      priority: "normal",
      scheduledAt: new Date(clock.now).toISOString(),
      runAt: clock.now,
      dedupKey: key,
    });
    const claim = past.claim("earlier-daemon");
    if (claim) past.finish(claim, { kind: "completed", exitCode: 0, outputTail: "" });
    return pulse.id;
  };
  const old = enqueueFinished("three-days-ago");
  clock.now = Date.now() - day / 2;
  const recent = enqueueFinished("half-a-day-ago");
  db.close();

  const daemon = await givenDaemon(t, fixture, { PULSE_RETENTION_DAYS: "2" });
  t.is(daemon.config.retentionMs, 2 * day);
  await eventually("the old pulse purged", () => (daemon.queue.get(old) === undefined ? true : undefined));
  t.is(daemon.queue.get(recent)?.status, "completed");
  const answer = (key: string) =>
    callApi(daemon.url, "POST", "/api/pulse/trigger", {
      token: fixture.token,
      body: { prompt: "again", scheduled_at: "+1h", dedup_key: key },
    });
  t.is((await answer("three-days-ago")).status, 201);
  const kept = await answer("half-a-day-ago");
  t.is(kept.status, 200);
  t.is(kept.body.pulse.id, recent);
  const log = readFileSync(fixture.env.LOG_FILE as string, "utf8");
  t.regex(log, /"finished pulses purged".*"pulses":1.*"retention_days":2/);
});

test("the daemon queues the hourly heartbeat once and runs the keep-alive providers", async (t) => {
  const fixture = givenPulseFixture(t);
  const providers = join(fixture.dir, "providers");
  mkdirSync(providers);
  const marker = join(fixture.dir, "provider-ran");
  writeFileSync(join(providers, "probe"), `#!/bin/sh\necho "$1" >> ${marker}\nexit 0\n`);
  chmodSync(join(providers, "probe"), 0o755);
  const daemon = await givenDaemon(t, fixture, {
    PULSE_HEARTBEAT: "on",
    PULSE_TZ: "Europe/Berlin",
    PULSE_PROVIDERS_DIR: providers,
  });
  const heartbeat = await eventually("the heartbeat pulse to complete", () => {
    const row = daemon.queue.get(1);
    return row?.status === "completed" ? row : undefined;
  });
  t.is(heartbeat.source, "heartbeat");
  t.regex(heartbeat.dedup_key ?? "", /^heartbeat:20\d\d-\d\d-\d\dT\d\d:00:00\.000Z$/);
  t.regex(heartbeat.prompt, /Europe\/Berlin/);
  t.is(
    await eventually("the provider check", () =>
      existsSync(marker) ? readFileSync(marker, "utf8") : undefined,
    ),
    "check\n",
  );
  // The run is recorded as finished, so no daemon claims that keep-alive slot again after the lease.
  const slots = () =>
    Object.fromEntries(
      (
        daemon.queue.db.prepare("SELECT name, last_slot FROM schedules").all() as {
          name: string;
          last_slot: number;
        }[]
      ).map((row) => [row.name, row.last_slot]),
    );
  await eventually("the keep-alive to be recorded as done", () =>
    slots()["keepalive:done"] ? true : undefined,
  );
  t.is(slots()["keepalive:done"], slots().keepalive);
  // A second daemon on the same file (a restart, or one started by mistake) adds no heartbeat for the slot.
  const other = await givenDaemon(t, fixture, { PULSE_HEARTBEAT: "on", PULSE_TZ: "Europe/Berlin" });
  // Its first tick looks at the schedules; a heartbeat queued there would be pending, or claimed and running.
  await other.afterTicks(1);
  t.is(other.queue.stats().pending + other.queue.stats().processing, 0);
  t.is(fixture.runs().filter((run) => run.args[2]?.startsWith("Hourly heartbeat")).length, 1);
});

test("credentials that need a login pause the runs until a later keep-alive finds them valid", async (t) => {
  const fixture = givenPulseFixture(t);
  const providers = join(fixture.dir, "providers");
  mkdirSync(providers);
  const loggedIn = join(fixture.dir, "logged-in");
  // check: 0 once logged in, else 2 (expired); refresh: 2 (a person must log in).
  writeFileSync(
    join(providers, "agent-token"),
    `#!/bin/sh\nif [ -e ${loggedIn} ]; then exit 0; fi\nexit 2\n`,
  );
  chmodSync(join(providers, "agent-token"), 0o755);
  const daemon = await givenDaemon(
    t,
    fixture,
    { PULSE_PROVIDERS_DIR: providers },
    { loginRecheckMs: 100, schedulesMs: 50 },
  );
  const health = await eventually("health to name the credentials", async () => {
    const got = await callApi(daemon.url, "GET", "/api/health");
    return got.status === 503 ? got.body : undefined;
  });
  t.true(
    health.reasons.some((r: string) => r.startsWith("credentials: agent-token") && r.includes("log in")),
  );
  const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "x" },
  });
  // The trigger asked for a tick at once; a claim would have happened in it.
  await daemon.afterTicks(3);
  t.like(daemon.queue.get(answer.body.pulse.id), { status: "pending", attempt: 0 });
  writeFileSync(loggedIn, "");
  await eventually("the pulse to run after the login", () =>
    daemon.queue.get(answer.body.pulse.id)?.status === "completed" ? true : undefined,
  );
  t.is((await callApi(daemon.url, "GET", "/api/health")).status, 200);
});

test("a RUNNER_COMMAND with arguments is split into program and arguments, without a shell", async (t) => {
  const fixture = givenPulseFixture(t);
  chmodSync(fixture.runner, 0o644);
  const daemon = await givenDaemon(t, fixture, { RUNNER_COMMAND: `sh ${fixture.runner}` });
  const answer = await callApi(daemon.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "split; echo not-a-shell" },
  });
  t.is(answer.body.id, answer.body.pulse.id);
  await eventually("completion", () =>
    daemon.queue.get(answer.body.id)?.status === "completed" ? true : undefined,
  );
  t.deepEqual(fixture.runs()[0]?.args, ["run", "--text", "split; echo not-a-shell"]);
});
