/**
 * The pulse daemon as users run it: `svc pulse daemon` and `svc pulse trigger` processes from the built
 * bins, the fake runner, real signals.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import test from "ava";
import { isRunning } from "../core/process.js";
import { openPulseDb } from "../server/pulse/db.js";
import { PulseQueue } from "../server/pulse/queue.js";
import { givenFakeMessenger } from "../testing/fake-messenger.js";
import { repoRoot } from "../testing/paths.js";
import { callApi, eventually, givenPulseFixture, spawnDaemon } from "../testing/pulse.js";

const svc = join(repoRoot, "dist", "cli", "bin.js");

test("SIGKILL during a run: after a restart the pulse runs again exactly once and the old run is stopped", async (t) => {
  const fixture = givenPulseFixture(t);
  const first = await spawnDaemon(t, fixture);
  const answer = await callApi(first.url, "POST", "/api/pulse/trigger", {
    token: fixture.token,
    body: { prompt: "first-sleep:60", scheduled_at: "now", priority: "normal", source: "e2e" },
  });
  t.is(answer.status, 201);
  const id = answer.body.pulse.id as number;
  const run = await eventually("the first run", () => fixture.runs()[0]);
  // The lease token the first run got: the fencing token a late finisher would present.
  const db = openPulseDb(fixture.dbPath, { migrate: false });
  t.teardown(() => db.close());
  const queue = new PulseQueue(db);
  const held = await eventually("the runner pid to be recorded", () => {
    const row = queue.get(id);
    return row?.runner_pid ? row : undefined;
  });
  first.child.kill("SIGKILL");
  await first.exited;
  t.true(isRunning(run.pid), "the runner outlives its daemon (own process group)");

  const second = await spawnDaemon(t, fixture);
  const done = await eventually("the rerun to complete", () => {
    const row = queue.get(id);
    return row?.status === "completed" ? row : undefined;
  });
  t.is(done.attempt, 2);
  await eventually(
    "the orphaned first run to be stopped",
    () => (isRunning(run.pid) ? undefined : true),
    5000,
  );
  // A would-be third run comes first: the fixture runs one pulse at a time, and a due pulse is claimed
  // before any of lower priority. So once a deferred pulse queued now has run, a third run would show.
  const marker = await runDeferredMarker(second.url, fixture.token, queue);
  t.deepEqual(
    fixture.runs().map((r) => [r.id, r.attempt]),
    [
      [id, 1],
      [id, 2],
      [marker, 1],
    ],
  );
  // The old run's claim can no longer change the pulse.
  const stale = { pulse: held, token: held.lease_token as string };
  t.false(queue.finish(stale, { kind: "failed", exitCode: 9, signal: null, outputTail: "", error: "late" }));
  t.like(queue.get(id), { status: "completed", exit_code: 0 });
  t.deepEqual(
    queue.attempts(id).map((a) => a.outcome),
    ["lost", "completed"],
  );
  second.child.kill("SIGTERM");
  t.is(await second.exited, 0);
  t.regex(second.stderr(), /svc-pulse: SIGTERM, stopping/);
});

test("svc pulse trigger queues through the API; a repeated dedup key names the first pulse", async (t) => {
  const fixture = givenPulseFixture(t);
  const daemon = await spawnDaemon(t, fixture);
  const port = new URL(daemon.url).port;
  const env = { ...process.env, PULSE_API_PORT: port };
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [svc, "pulse", "trigger", "--environment", fixture.envFile, ...args], {
      env,
      encoding: "utf8",
      timeout: 20_000,
    });
  const queued = run("--at", "+1h", "--dedup-key", "k1", "Plan", "the", "week");
  t.is(queued.status, 0, queued.stderr);
  t.regex(queued.stdout, /^pulse 1 queued \(normal, runs at 20\d\d-/);
  const again = run("--at", "+1h", "--dedup-key", "k1", "Plan the week");
  t.is(again.status, 0, again.stderr);
  t.regex(again.stdout, /already queued as pulse 1 \(pending\)/);
  const bad = run("--at", "tomorrow", "x");
  t.is(bad.status, 1);
  t.regex(bad.stderr, /refused the pulse \(400\): scheduled_at "tomorrow"/);
  const down = spawnSync(process.execPath, [svc, "pulse", "trigger", "--environment", fixture.envFile, "x"], {
    env: { ...env, PULSE_API_PORT: "1" },
    encoding: "utf8",
    timeout: 20_000,
  });
  t.is(down.status, 2);
  t.regex(down.stderr, /cannot reach the pulse daemon at http:\/\/127\.0\.0\.1:1/);
  t.false(`${queued.stdout}${queued.stderr}${bad.stderr}${down.stderr}`.includes(fixture.token));
});

test("svc pulse daemon with unusable configuration exits 78 and lists every problem", (t) => {
  const result = spawnSync(process.execPath, [svc, "pulse", "daemon"], {
    env: { PATH: process.env.PATH, PULSE_API_TOKEN: "too-short-secret" },
    encoding: "utf8",
    timeout: 20_000,
  });
  t.is(result.status, 78);
  for (const name of ["PULSE_DB_PATH", "RUNNER_COMMAND", "SVC_DESK_PATH", "PULSE_API_TOKEN"]) {
    t.regex(result.stderr, new RegExp(name));
  }
  t.false(result.stderr.includes("too-short-secret"));
  const missingFile = spawnSync(
    process.execPath,
    [svc, "pulse", "daemon", "--environment", "/nonexistent/pulse.env"],
    {
      env: { PATH: process.env.PATH },
      encoding: "utf8",
      timeout: 20_000,
    },
  );
  t.is(missingFile.status, 78);
  t.regex(missingFile.stderr, /cannot read the environment file \/nonexistent\/pulse\.env \(ENOENT\)/);
});

/** Queues a pulse of the lowest priority through the API and waits until it completed; returns its id. */
async function runDeferredMarker(url: string, token: string, queue: PulseQueue): Promise<number> {
  const answer = await callApi(url, "POST", "/api/pulse/trigger", {
    token,
    body: { prompt: "marker", scheduled_at: "now", priority: "deferred", source: "e2e" },
  });
  if (answer.status !== 201) throw new Error(`the marker pulse was not queued: ${answer.status}`);
  const id = answer.body.pulse.id as number;
  await eventually("the marker pulse to complete", () =>
    queue.get(id)?.status === "completed" ? true : undefined,
  );
  return id;
}

/** How often the listener's log says it kept `updateId` after the daemon did not take it. */
function retriesOf(logFile: string, updateId: number | undefined): number {
  return readFileSync(logFile, { encoding: "utf8", flag: "a+" })
    .split("\n")
    .filter((line) => line.includes("the daemon did not take the message"))
    .filter((line) => (JSON.parse(line) as { update_id?: number }).update_id === updateId).length;
}

/** A loopback port nobody listens on right now (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("listener: messages sent while the daemon is down are delivered once when it comes back; other chats ignored", async (t) => {
  const fixture = givenPulseFixture(t);
  const messenger = await givenFakeMessenger(t);
  const port = String(await freePort());
  const env = {
    PATH: process.env.PATH,
    HOME: fixture.dir,
    PULSE_API_PORT: port,
    MESSENGER_API_BASE: messenger.url,
    MESSENGER_BOT_TOKEN: messenger.token,
    MESSENGER_CHAT_ID: "4242",
    MESSENGER_POLL_TIMEOUT_S: "1",
  };
  const listener = spawn(process.execPath, [svc, "pulse", "listener", "--environment", fixture.envFile], {
    stdio: ["ignore", "ignore", "pipe"],
    env,
  });
  let stderr = "";
  listener.stderr?.setEncoding("utf8");
  listener.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | string | null>((resolve) =>
    listener.once("exit", (code, signal) => resolve(code ?? signal)),
  );
  t.teardown(async () => {
    if (listener.exitCode === null && listener.signalCode === null) {
      listener.kill("SIGKILL");
      await exited;
    }
  });
  messenger.sendMessage(4242, "Book the dentist");
  messenger.sendMessage(999, "Not for this agent");
  messenger.sendMessage(4242, "Water the plants");
  // The daemon is down: the listener keeps trying and confirms nothing it could not hand over.
  await eventually("the listener to try the daemon", () =>
    readFileSync(fixture.env.LOG_FILE as string, { encoding: "utf8", flag: "a+" }).includes("daemon")
      ? true
      : undefined,
  );
  // Only a getUpdates with a higher `offset` confirms; the listener polls again only after it has handed
  // over the first message or given it up. Its second try at the same message shows it did neither.
  const firstUpdate = messenger.pending()[0]?.update_id;
  await eventually("the listener to try the same message again", () =>
    retriesOf(fixture.env.LOG_FILE as string, firstUpdate) >= 2 ? true : undefined,
  );
  t.true(
    messenger.requests.every(
      (request) => request.offset === undefined || request.offset <= (firstUpdate ?? 0),
    ),
  );
  t.deepEqual(
    messenger
      .pending()
      .filter((update) => update.message?.chat.id === 4242)
      .map((update) => update.message?.text),
    ["Book the dentist", "Water the plants"],
  );
  const daemon = await spawnDaemon(t, fixture, { PULSE_API_PORT: port });
  const db = openPulseDb(fixture.dbPath, { migrate: false });
  t.teardown(() => db.close());
  const queue = new PulseQueue(db);
  await eventually(
    "both pulses to complete",
    () => ([1, 2].every((id) => queue.get(id)?.status === "completed") ? true : undefined),
    30_000,
  );
  await eventually("the messenger to see the updates confirmed", () =>
    messenger.pending().length === 0 ? true : undefined,
  );
  // A repeated delivery or run of the first two would come before a later message's: its pulse is queued
  // after theirs, and the fixture runs one pulse at a time.
  messenger.sendMessage(4242, "Call the plumber");
  await eventually("the later message's pulse to complete", () =>
    queue.get(3)?.status === "completed" ? true : undefined,
  );
  const rows = db.prepare("SELECT prompt, source, dedup_key FROM pulses ORDER BY id").all() as {
    prompt: string;
    source: string;
    dedup_key: string;
  }[];
  t.deepEqual(
    rows.map((row) => [row.prompt, row.source]),
    [
      ["Book the dentist", "messenger"],
      ["Water the plants", "messenger"],
      ["Call the plumber", "messenger"],
    ],
  );
  t.true(rows.every((row) => /^messenger:4242:\d+$/.test(row.dedup_key)));
  t.deepEqual(
    fixture.runs().map((run) => [run.id, run.attempt]),
    [
      [1, 1],
      [2, 1],
      [3, 1],
    ],
  );
  listener.kill("SIGTERM");
  t.is(await exited, 0);
  const log = readFileSync(fixture.env.LOG_FILE as string, "utf8");
  t.false(`${stderr}${daemon.stderr()}${log}`.includes(messenger.token), "the bot token is never written");
});

test("svc pulse heartbeat --now: one pulse per real hour across the New York fall-back, both 01:00s", (t) => {
  const fixture = givenPulseFixture(t);
  const heartbeat = (now: string) =>
    spawnSync(process.execPath, [svc, "pulse", "heartbeat", "--environment", fixture.envFile, "--now", now], {
      env: { PATH: process.env.PATH, PULSE_TZ: "America/New_York" },
      encoding: "utf8",
      timeout: 20_000,
    });
  const outputs = [
    "2026-11-01T01:00:00-04:00",
    "2026-11-01T01:40:00-04:00",
    "2026-11-01T01:01:00-05:00",
    "2026-11-01T01:50:00-05:00",
    "2026-11-01T02:00:00-05:00",
  ].map((now) => {
    const result = heartbeat(now);
    t.is(result.status, 0, result.stderr);
    return result.stdout.trim();
  });
  t.deepEqual(outputs, [
    "heartbeat 2026-11-01T01:00-04:00 America/New_York: pulse 1 queued",
    "heartbeat 2026-11-01T01:00-04:00 America/New_York: already queued as pulse 1",
    "heartbeat 2026-11-01T01:00-05:00 America/New_York: pulse 2 queued",
    "heartbeat 2026-11-01T01:00-05:00 America/New_York: already queued as pulse 2",
    "heartbeat 2026-11-01T02:00-05:00 America/New_York: pulse 3 queued",
  ]);
  const db = openPulseDb(fixture.dbPath, { migrate: false });
  t.teardown(() => db.close());
  const prompts = (db.prepare("SELECT prompt FROM pulses ORDER BY id").all() as { prompt: string }[]).map(
    (r) => r.prompt,
  );
  t.true(prompts.slice(0, 2).every((prompt) => /night/.test(prompt)));
});
