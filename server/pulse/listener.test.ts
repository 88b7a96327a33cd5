/**
 * The messenger listener against a fake bot API and a fake daemon on loopback ports: delivery, chat
 * filtering, a daemon that is down (nothing lost, nothing doubled), a crash between the daemon's answer and
 * the offset save, restart from the saved offset, refused tokens (bot and daemon), 409, 429, 503, the
 * backlog alert, the state file's atomic replacement, configuration errors (exit 78) and redaction.
 *
 * Sleeps are injected: they are recorded and shortened to a few ms, so backoff sequences are asserted as
 * numbers, never measured. Every wait on the listener is bounded by `until`, which fails the test instead of
 * hanging it.
 */
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import test, { type ExecutionContext } from "ava";
import { Cli } from "clipanion";
import { PulseListenerCommand } from "../../cli/commands/pulse-listener.js";
import { FAKE_BOT_TOKEN, type FakeMessenger, givenFakeMessenger } from "../../testing/fake-messenger.js";
import { FAKE_PULSE_API_TOKEN, type FakePulseApi, givenFakePulseApi } from "../../testing/fake-pulse-api.js";
import { ConfigError, EXIT_CONFIG, loadEnvironment } from "./config.js";
import { LISTENER_ALERTS, MessengerListener, type MessengerListenerOptions } from "./listener.js";
import { type ListenerConfig, readListenerConfig } from "./listener-config.js";
import { FileOffsetStore, parseListenerState } from "./listener-state.js";
import { backoffDelay, sleepUnlessAborted } from "./listener-timing.js";
import { decideUpdate, triggerBody } from "./listener-updates.js";
import { Logger } from "./log.js";

const CHAT = 4242;
const STRANGER = 999;

interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly alert?: string;
  readonly recovered?: string;
  readonly [field: string]: unknown;
}

interface Running {
  readonly listener: MessengerListener;
  readonly controller: AbortController;
  readonly done: Promise<void>;
  /** Aborts and waits for `run()` to return. */
  stop(): Promise<void>;
}

interface Setup {
  readonly messenger: FakeMessenger;
  readonly api: FakePulseApi;
  readonly dir: string;
  readonly envFile: string;
  readonly statePath: string;
  /** Every log line as written (text), oldest first. */
  readonly logText: string[];
  /** Every injected sleep's requested duration, oldest first (HttpClient's own waits included). */
  readonly sleeps: number[];
  /** Runs before each injected sleep. */
  onSleep: ((ms: number) => void) | undefined;
  /** Replaces the environment file: the defaults with `overrides` over them. */
  writeEnv(overrides?: Record<string, string>): void;
  config(): ListenerConfig;
  lines(): LogLine[];
  start(options?: Partial<MessengerListenerOptions>): Running;
}

/** Polls `condition` every few ms; fails the test (never hangs it) after `timeoutMs`. */
async function until(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function given(t: ExecutionContext, timing: MessengerListenerOptions["timing"] = {}): Promise<Setup> {
  t.timeout(30_000);
  const messenger = await givenFakeMessenger(t);
  const api = await givenFakePulseApi(t);
  const dir = mkdtempSync(join(tmpdir(), "svc-listener-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const envFile = join(dir, "pulse.env");
  const statePath = join(dir, "state", "listener-state.json");
  const logText: string[] = [];
  const sleeps: number[] = [];
  const apiPort = new URL(api.url).port;
  const setup: Setup = {
    messenger,
    api,
    dir,
    envFile,
    statePath,
    logText,
    sleeps,
    onSleep: undefined,
    writeEnv(overrides = {}) {
      const values: Record<string, string> = {
        MESSENGER_BOT_TOKEN: messenger.token,
        MESSENGER_CHAT_ID: String(CHAT),
        MESSENGER_API_BASE: messenger.url,
        MESSENGER_POLL_TIMEOUT_S: "2",
        PULSE_API_HOST: "127.0.0.1",
        PULSE_API_PORT: apiPort,
        PULSE_API_TOKEN: api.token,
        LISTENER_STATE_PATH: statePath,
        LOG_LEVEL: "DEBUG",
        ...overrides,
      };
      writeFileSync(
        envFile,
        Object.entries(values)
          .map(([key, value]) => `${key}=${value}\n`)
          .join(""),
      );
    },
    // The process environment is left out, so nothing on the machine running the tests leaks in.
    config: () => readListenerConfig(loadEnvironment(envFile, {})),
    lines: () => logText.map((line) => JSON.parse(line) as LogLine),
    start(options = {}) {
      // No `secrets` on purpose: the listener must redact by itself, not rely on the logger.
      const logger = new Logger({
        level: "DEBUG",
        component: "pulse-listener",
        stderr: new Writable({
          write(chunk: Buffer, _encoding, callback) {
            for (const line of chunk.toString("utf8").split("\n")) if (line !== "") logText.push(line);
            callback();
          },
        }),
      });
      const listener = new MessengerListener({
        config: setup.config(),
        logger,
        reloadConfig: setup.config,
        sleep: (ms, signal) => {
          sleeps.push(ms);
          setup.onSleep?.(ms);
          return sleepUnlessAborted(Math.min(ms, 3), signal);
        },
        random: () => 0,
        timing: { backoffBaseMs: 10, backoffCapMs: 80, degradedRetryMs: 500, ...timing },
        ...options,
      });
      const controller = new AbortController();
      const done = listener.run(controller.signal);
      // Marked handled at once; tests that care await `done` themselves.
      done.catch(() => {});
      const stop = async () => {
        controller.abort();
        let settled = false;
        await Promise.race([
          done.then(
            () => {
              settled = true;
            },
            () => {
              settled = true;
            },
          ),
          new Promise((resolve) => setTimeout(resolve, 5000)),
        ]);
        if (!settled) throw new Error("the listener did not stop within 5 s of the abort");
      };
      t.teardown(() => stop().catch(() => {}));
      return { listener, controller, done, stop };
    },
  };
  setup.writeEnv();
  return setup;
}

function savedOffset(setup: Setup): number | undefined {
  try {
    return parseListenerState(readFileSync(setup.statePath, "utf8")).offset;
  } catch {
    return undefined;
  }
}

/** The test fails if any token shows up anywhere in the log; `[redacted]` proves one was there. */
function assertNoSecrets(t: ExecutionContext, setup: Setup, secrets: readonly string[]): void {
  const all = setup.logText.join("\n");
  for (const secret of secrets) t.false(all.includes(secret), "a token appears in the log");
}

// ---------------------------------------------------------------------------------------------------------
// Pure parts

test("decideUpdate delivers text from the configured chat only", (t) => {
  const message = (chat: number | string, text?: string) => ({
    update_id: 5,
    message: { message_id: 7, chat: { id: chat }, date: 1, ...(text === undefined ? {} : { text }) },
  });
  t.deepEqual(decideUpdate(message(CHAT, "hi"), String(CHAT)), {
    action: "deliver",
    chatId: "4242",
    messageId: 7,
    text: "hi",
  });
  t.deepEqual(decideUpdate(message(-100123, "hi"), "-100123"), {
    action: "deliver",
    chatId: "-100123",
    messageId: 7,
    text: "hi",
  });
  t.like(decideUpdate(message(STRANGER, "hi"), String(CHAT)), { action: "skip", reason: "other-chat" });
  t.like(decideUpdate(message(CHAT), String(CHAT)), { action: "skip", reason: "no-text" });
  t.like(decideUpdate(message(CHAT, "  "), String(CHAT)), { action: "skip", reason: "no-text" });
  t.like(decideUpdate({ update_id: 5 }, String(CHAT)), { action: "skip", reason: "not-a-message" });
});

test("triggerBody carries source, priority, now and the dedup key", (t) => {
  t.deepEqual(triggerBody({ chatId: "-1001", messageId: 12, text: "do it" }), {
    prompt: "do it",
    scheduled_at: "now",
    priority: "normal",
    source: "messenger",
    dedup_key: "messenger:-1001:12",
  });
});

test("backoffDelay doubles up to the cap and jitters down by at most half", (t) => {
  const policy = { baseMs: 1000, capMs: 30_000 };
  t.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 40].map((n) => backoffDelay(n, policy, () => 0)),
    [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
  );
  t.is(
    backoffDelay(2, policy, () => 0.999_999),
    2000,
  );
  t.is(
    backoffDelay(5, policy, () => 0.5),
    22_500,
  );
});

// ---------------------------------------------------------------------------------------------------------
// Configuration

function baseEnv(): Record<string, string> {
  return {
    MESSENGER_BOT_TOKEN: FAKE_BOT_TOKEN,
    MESSENGER_CHAT_ID: "-1001234567890",
    PULSE_API_TOKEN: "a".repeat(43),
    PULSE_DB_PATH: "/var/lib/svc-pulse/pulse.db",
  };
}

test("readListenerConfig: defaults, state path beside the database, egress for both origins", (t) => {
  const config = readListenerConfig({ ...baseEnv(), SVC_ALLOWED_ORIGINS: "https://proxy.example:8443" });
  t.is(config.messengerBase, "https://api.telegram.org");
  t.is(config.apiBase, "http://127.0.0.1:7879");
  t.is(config.statePath, "/var/lib/svc-pulse/listener-state.json");
  t.is(config.pollTimeoutS, 25);
  t.is(config.chatId, "-1001234567890");
  t.is(config.allowedOrigins, "https://api.telegram.org,http://127.0.0.1:7879,https://proxy.example:8443");
  t.is(
    readListenerConfig({ ...baseEnv(), LISTENER_STATE_PATH: "/srv/state.json" }).statePath,
    "/srv/state.json",
  );
});

test("readListenerConfig reports every problem at once and never prints a token", (t) => {
  const badToken = "bad token with spaces!";
  const error = t.throws(
    () =>
      readListenerConfig({
        MESSENGER_BOT_TOKEN: badToken,
        MESSENGER_CHAT_ID: "@mychannel",
        MESSENGER_API_BASE: "http://api.example.com",
        MESSENGER_POLL_TIMEOUT_S: "90",
      }),
    { instanceOf: ConfigError },
  );
  const text = error?.message ?? "";
  t.regex(text, /MESSENGER_BOT_TOKEN is not a bot token/);
  t.regex(text, /MESSENGER_CHAT_ID="@mychannel" is not a numeric chat id/);
  t.regex(text, /MESSENGER_API_BASE=.* uses plain http/);
  t.regex(text, /MESSENGER_POLL_TIMEOUT_S="90"/);
  t.regex(text, /PULSE_API_TOKEN is not set/);
  t.regex(text, /LISTENER_STATE_PATH is not set, and neither is PULSE_DB_PATH/);
  t.false(text.includes(badToken));
});

test("svc pulse listener exits 78 on a configuration error, without the token on stderr", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "svc-listener-cli-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const envFile = join(dir, "pulse.env");
  writeFileSync(
    envFile,
    `MESSENGER_BOT_TOKEN=${FAKE_BOT_TOKEN}\nMESSENGER_CHAT_ID=12\nPULSE_API_TOKEN=short\n`,
  );
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
  const cli = Cli.from([PulseListenerCommand]);
  const code = await cli.run(["pulse", "listener", "--environment", envFile], {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr,
  });
  const text = Buffer.concat(chunks).toString("utf8");
  t.is(code, EXIT_CONFIG);
  t.regex(text, /PULSE_API_TOKEN must be at least 32/);
  t.false(text.includes(FAKE_BOT_TOKEN));

  const missing = await cli.run(["pulse", "listener", "--environment", join(dir, "absent.env")], {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
  });
  t.is(missing, EXIT_CONFIG);
});

// ---------------------------------------------------------------------------------------------------------
// The state file

test("the state file is replaced by rename, mode 0600, with no temporary file left", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "svc-listener-state-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "listener-state.json");
  const store = new FileOffsetStore(path, () => Date.UTC(2026, 0, 2, 3, 4, 5));
  store.prepare();
  t.deepEqual(store.load(), { offset: undefined });
  store.save(100);
  const before = statSync(path);
  // A reader holding the old file keeps seeing it whole: the new content went to a new inode.
  const fd = openSync(path, "r");
  t.teardown(() => closeSync(fd));
  store.save(101);
  const buffer = Buffer.alloc(200);
  const oldText = buffer.subarray(0, readSync(fd, buffer, 0, 200, 0)).toString("utf8");
  t.is(parseListenerState(oldText).offset, 100);
  const after = statSync(path);
  t.not(after.ino, before.ino);
  t.is(after.mode & 0o777, 0o600);
  t.deepEqual(JSON.parse(readFileSync(path, "utf8")), {
    version: 1,
    offset: 101,
    saved_at: "2026-01-02T03:04:05.000Z",
  });
  t.deepEqual(store.load(), { offset: 101 });
  t.deepEqual(readdirSync(dir), ["listener-state.json"]);
});

test("an unreadable state file is reported and the listener starts without an offset", async (t) => {
  const setup = await given(t);
  const store = new FileOffsetStore(setup.statePath);
  store.prepare();
  writeFileSync(setup.statePath, "{not json");
  t.like(store.load(), { offset: undefined });
  t.regex(store.load().problem ?? "", /not JSON/);
  setup.messenger.sendMessage(CHAT, "after corruption");
  setup.start();
  await until("the pulse", () => setup.api.pulses.length === 1);
  t.true(setup.lines().some((line) => /state file is unreadable/.test(line.message)));
  t.is(setup.messenger.requests[0]?.offset, undefined);
  await until("the offset save", () => savedOffset(setup) !== undefined);
});

// ---------------------------------------------------------------------------------------------------------
// Delivery

test("text messages from the chat become pulses with the right body and headers", async (t) => {
  const setup = await given(t);
  const first = setup.messenger.sendMessage(CHAT, "check the calendar");
  const second = setup.messenger.sendMessage(CHAT, "and the inbox");
  setup.start();
  await until("two pulses", () => setup.api.pulses.length === 2);
  await until("the offset save", () => savedOffset(setup) === second.update_id + 1);

  const [a, b] = setup.api.triggers;
  t.is(a?.authorization, `Bearer ${setup.api.token}`);
  t.regex(a?.contentType ?? "", /^application\/json/);
  t.deepEqual(a?.body, {
    prompt: "check the calendar",
    scheduled_at: "now",
    priority: "normal",
    source: "messenger",
    dedup_key: `messenger:${CHAT}:${first.message?.message_id}`,
  });
  t.like(b?.body, { prompt: "and the inbox", dedup_key: `messenger:${CHAT}:${second.message?.message_id}` });
  t.deepEqual(
    setup.api.pulses.map((pulse) => [pulse.prompt, pulse.source, pulse.priority]),
    [
      ["check the calendar", "messenger", "normal"],
      ["and the inbox", "messenger", "normal"],
    ],
  );

  const firstPoll = setup.messenger.requests[0];
  t.is(firstPoll?.offset, undefined);
  t.is(firstPoll?.timeout, 2);
  t.deepEqual(firstPoll?.allowedUpdates, ["message"]);
  // The next poll confirms both updates to the bot API.
  await until("the confirming poll", () =>
    setup.messenger.requests.some((request) => request.offset === second.update_id + 1),
  );
  t.deepEqual(setup.messenger.pending(), []);
  t.false(setup.logText.join("\n").includes("check the calendar"), "message text is not logged");
  assertNoSecrets(t, setup, [setup.messenger.token, setup.api.token]);
});

test("messages from other chats, edits and photos are skipped, and their offset advances", async (t) => {
  const setup = await given(t);
  setup.messenger.sendMessage(STRANGER, "secret stranger text");
  setup.messenger.sendEdit(CHAT, "edited");
  setup.messenger.sendMessage(CHAT); // a photo
  setup.messenger.sendMessage(STRANGER, "again");
  const last = setup.messenger.sendMessage(CHAT, "the only prompt");
  setup.start();
  await until("the pulse", () => setup.api.pulses.length === 1);
  await until("the offset save", () => savedOffset(setup) === last.update_id + 1);
  t.is(setup.api.triggers.length, 1);
  t.is(setup.api.pulses[0]?.prompt, "the only prompt");
  const lines = setup.lines();
  const strangerLines = lines.filter((line) => /other than MESSENGER_CHAT_ID/.test(line.message));
  t.deepEqual(
    strangerLines.map((line) => [line.level, line.chat_id]),
    [
      ["INFO", String(STRANGER)],
      ["DEBUG", String(STRANGER)],
    ],
  );
  t.true(lines.some((line) => /without text/.test(line.message)));
  t.false(setup.logText.join("\n").includes("secret stranger text"));
});

test("a daemon that is down loses nothing: no confirmation, backoff, each message once when it is back", async (t) => {
  const setup = await given(t);
  await setup.api.down();
  const first = setup.messenger.sendMessage(CHAT, "one");
  const second = setup.messenger.sendMessage(CHAT, "two");
  let backoffs = 0;
  setup.onSleep = () => {
    backoffs++;
  };
  setup.start();
  await until("six backoffs", () => backoffs >= 6);
  // Still down: nothing saved, nothing confirmed, every poll so far started before the first message.
  t.is(savedOffset(setup), undefined);
  t.true(setup.messenger.requests.every((request) => request.offset === undefined));
  t.is(setup.messenger.pending().length, 2);
  t.deepEqual(setup.sleeps.slice(0, 6), [10, 20, 40, 80, 80, 80]);
  t.true(
    setup.lines().some((line) => line.level === "WARNING" && /ECONNREFUSED/.test(String(line.reason))),
    "the refused connection is logged",
  );

  await setup.api.up();
  await until("both pulses", () => setup.api.pulses.length === 2);
  await until("the offset save", () => savedOffset(setup) === second.update_id + 1);
  t.deepEqual(
    setup.api.pulses.map((pulse) => pulse.prompt),
    ["one", "two"],
  );
  t.deepEqual(
    setup.api.triggers.map((trigger) => trigger.status),
    [201, 201],
  );
  t.like(setup.api.pulses[0], { dedup_key: `messenger:${CHAT}:${first.message?.message_id}` });
});

test("a crash between the daemon's answer and the offset save replays without a second pulse", async (t) => {
  const setup = await given(t);
  const update = setup.messenger.sendMessage(CHAT, "exactly once");
  const crashed = setup.start();
  // The daemon commits, then the listener "dies" before it sees the answer.
  setup.api.onStored = () => crashed.controller.abort();
  await until("the first trigger", () => setup.api.triggers.length === 1);
  await crashed.stop();
  t.is(savedOffset(setup), undefined);
  t.is(setup.messenger.pending().length, 1, "the update was not confirmed to the bot API");

  setup.api.onStored = undefined;
  setup.start();
  await until("the replayed trigger", () => setup.api.triggers.length === 2);
  await until("the offset save", () => savedOffset(setup) === update.update_id + 1);
  t.is(setup.api.pulses.length, 1);
  t.deepEqual(
    setup.api.triggers.map((trigger) => trigger.status),
    [201, 200],
  );
  t.true(setup.lines().some((line) => line.deduplicated === true));
});

test("a restarted listener resumes from the saved offset", async (t) => {
  const setup = await given(t);
  setup.messenger.sendMessage(CHAT, "first");
  const second = setup.messenger.sendMessage(CHAT, "second");
  const before = setup.start();
  await until("two pulses", () => setup.api.pulses.length === 2);
  await until("the offset save", () => savedOffset(setup) === second.update_id + 1);
  await before.stop();
  const requestsBefore = setup.messenger.requests.length;

  const third = setup.messenger.sendMessage(CHAT, "third");
  setup.start();
  await until("the third pulse", () => setup.api.pulses.length === 3);
  t.is(setup.messenger.requests[requestsBefore]?.offset, second.update_id + 1);
  t.deepEqual(
    setup.api.pulses.map((pulse) => pulse.prompt),
    ["first", "second", "third"],
  );
  t.is(setup.api.triggers.length, 3);
  await until("the offset save", () => savedOffset(setup) === third.update_id + 1);
});

test("a daemon that refuses a message for good (400) makes the listener skip it and go on", async (t) => {
  const setup = await given(t);
  setup.api.fail({ status: 400, times: 1 });
  setup.messenger.sendMessage(CHAT, "refused");
  const kept = setup.messenger.sendMessage(CHAT, "kept");
  setup.start();
  await until("the second message's pulse", () => setup.api.pulses.length === 1);
  await until("the offset save", () => savedOffset(setup) === kept.update_id + 1);
  t.is(setup.api.pulses[0]?.prompt, "kept");
  t.true(
    setup
      .lines()
      .some((line) => line.level === "ERROR" && /refused this message for good/.test(line.message)),
  );
});

test("a busy daemon (503 with Retry-After) is waited for as told", async (t) => {
  const setup = await given(t);
  setup.api.fail({ status: 503, retryAfter: 3, times: 2 });
  setup.messenger.sendMessage(CHAT, "patience");
  setup.start();
  await until("the pulse", () => setup.api.pulses.length === 1);
  t.deepEqual(
    setup.api.triggers.map((trigger) => trigger.status),
    [503, 503, 201],
  );
  t.deepEqual(setup.sleeps.slice(0, 2), [3000, 3000]);
});

test("a refused PULSE_API_TOKEN is re-read from the environment file before anything else", async (t) => {
  const setup = await given(t);
  const rotated = "rotated-pulse-api-token-0123456789abcdefghijklmn";
  setup.start(); // reads the old token
  setup.api.setToken(rotated);
  setup.writeEnv({ PULSE_API_TOKEN: rotated });
  setup.messenger.sendMessage(CHAT, "after rotation");
  await until("the pulse", () => setup.api.pulses.length === 1);
  t.deepEqual(
    setup.api.triggers.map((trigger) => trigger.status),
    [401, 201],
  );
  t.false(
    setup.lines().some((line) => line.alert !== undefined),
    "no alert when the file has the new token",
  );
  assertNoSecrets(t, setup, [rotated, FAKE_BOT_TOKEN]);
});

test("a refused PULSE_API_TOKEN with no new one alerts, keeps the message and retries slowly", async (t) => {
  const setup = await given(t);
  const rotated = "rotated-pulse-api-token-0123456789abcdefghijklmn";
  setup.api.setToken(rotated);
  const update = setup.messenger.sendMessage(CHAT, "kept while refused");
  setup.start();
  await until("three refusals", () => setup.api.triggers.length >= 3);
  const alerts = setup.lines().filter((line) => line.alert === LISTENER_ALERTS.apiTokenRefused);
  t.is(alerts.length, 1, "one alert per cooldown");
  t.true(setup.sleeps.filter((ms) => ms === 500).length >= 2, "degraded retries use degradedRetryMs");
  t.is(savedOffset(setup), undefined);

  setup.writeEnv({ PULSE_API_TOKEN: rotated });
  await until("the pulse", () => setup.api.pulses.length === 1);
  await until("the offset save", () => savedOffset(setup) === update.update_id + 1);
  t.true(setup.lines().some((line) => line.recovered === LISTENER_ALERTS.apiTokenRefused));
  assertNoSecrets(t, setup, [rotated, FAKE_PULSE_API_TOKEN, FAKE_BOT_TOKEN]);
});

test("messages waiting more than backlogAlertMs for the daemon raise one alert, then a recovery", async (t) => {
  let clock = Date.UTC(2026, 0, 1);
  const setup = await given(t, { backlogAlertMs: 3_600_000, backoffBaseMs: 1000, backoffCapMs: 30_000 });
  await setup.api.down();
  setup.onSleep = (ms) => {
    clock += ms;
  };
  setup.messenger.sendMessage(CHAT, "urgent");
  setup.start({ now: () => clock });
  // 1 h at a 30 s cap is ~125 retries of virtual time.
  await until("the backlog alert", () =>
    setup.lines().some((line) => line.alert === LISTENER_ALERTS.backlog),
  );
  await until("more retries after the alert", () => setup.sleeps.length >= 140);
  const alerts = setup.lines().filter((line) => line.alert === LISTENER_ALERTS.backlog);
  t.is(alerts.length, 1);
  t.regex(alerts[0]?.message ?? "", /24 h/);
  await setup.api.up();
  await until("the pulse", () => setup.api.pulses.length === 1);
  // The fake stores the pulse before the listener reads the answer: wait for the listener's side too.
  await until("the recovery line", () =>
    setup.lines().some((line) => line.recovered === LISTENER_ALERTS.backlog),
  );
});

// ---------------------------------------------------------------------------------------------------------
// The bot API's failures

test("a revoked bot token (401) degrades without exiting, never logs the token, and recovers from the file", async (t) => {
  const setup = await given(t);
  const oldToken = setup.messenger.token;
  const newToken = "987654321:AANewBotToken_abcdefghijklmnopqrstuvw";
  setup.messenger.setToken(newToken);
  const running = setup.start();
  let exited = false;
  running.done.then(
    () => {
      exited = true;
    },
    () => {
      exited = true;
    },
  );
  await until("three refused polls", () => setup.messenger.requests.filter((r) => !r.tokenOk).length >= 3);
  t.false(exited, "the listener stays up");
  const alerts = setup.lines().filter((line) => line.alert === LISTENER_ALERTS.botTokenRefused);
  t.is(alerts.length, 1, "one alert per cooldown");
  t.regex(alerts[0]?.message ?? "", /@BotFather/);
  t.true(setup.sleeps.filter((ms) => ms === 500).length >= 2, "degraded polls use degradedRetryMs");

  setup.writeEnv({ MESSENGER_BOT_TOKEN: newToken });
  setup.messenger.sendMessage(CHAT, "back");
  await until("the pulse", () => setup.api.pulses.length === 1);
  t.true(setup.lines().some((line) => line.recovered === LISTENER_ALERTS.botTokenRefused));
  assertNoSecrets(t, setup, [oldToken, newToken, setup.api.token]);
});

test("the bot token is redacted from network errors (the URL path holds it)", async (t) => {
  const setup = await given(t);
  await setup.messenger.close();
  let failures = 0;
  setup.onSleep = () => {
    failures++;
  };
  setup.start();
  await until("three failed polls", () => failures >= 3);
  const reasons = setup
    .lines()
    .filter((line) => /getUpdates failed/.test(line.message))
    .map((line) => String(line.reason));
  t.true(reasons.length >= 3);
  t.true(
    reasons.every((reason) => reason.includes("/bot[redacted]/getUpdates")),
    "the URL was in the error, redacted",
  );
  assertNoSecrets(t, setup, [FAKE_BOT_TOKEN, encodeURIComponent(FAKE_BOT_TOKEN)]);
});

test("409 Conflict is reported as another poller or a webhook, and polling resumes after it", async (t) => {
  const setup = await given(t);
  setup.messenger.fail({ status: 409, times: 3 });
  setup.messenger.sendMessage(CHAT, "after the conflict");
  setup.start();
  await until("the pulse", () => setup.api.pulses.length === 1);
  const alerts = setup.lines().filter((line) => line.alert === LISTENER_ALERTS.conflict);
  t.is(alerts.length, 1);
  t.regex(alerts[0]?.message ?? "", /another listener or a webhook is using this bot token/);
  t.deepEqual(setup.sleeps.slice(0, 3), [10, 20, 40]);
  t.true(setup.lines().some((line) => line.recovered === LISTENER_ALERTS.conflict));
});

test("two listeners on one bot token both see the conflict", async (t) => {
  const setup = await given(t);
  setup.start();
  setup.start();
  await until(
    "a conflict alert from each",
    () => setup.lines().filter((line) => line.alert === LISTENER_ALERTS.conflict).length >= 2,
  );
  t.true(setup.messenger.requests.some((request) => request.status === 409));
});

test("429 waits parameters.retry_after before the next poll", async (t) => {
  const setup = await given(t);
  setup.messenger.fail({ status: 429, retryAfter: 7 });
  let requestsWhenWaiting: number | undefined;
  setup.onSleep = (ms) => {
    if (ms === 7000 && requestsWhenWaiting === undefined) {
      requestsWhenWaiting = setup.messenger.requests.length;
      setup.messenger.clearFailure();
    }
  };
  setup.messenger.sendMessage(CHAT, "rate limited");
  setup.start();
  await until("the pulse", () => setup.api.pulses.length === 1);
  t.not(requestsWhenWaiting, undefined, "the listener waited retry_after");
  const answered = setup.messenger.requests.map((request) => request.status);
  t.true(answered.slice(0, requestsWhenWaiting).every((status) => status === 429));
  t.is(answered[requestsWhenWaiting as number], 200, "the next poll came after the wait");
});

test("an abort ends run() while a long poll is still waiting", async (t) => {
  const setup = await given(t);
  setup.writeEnv({ MESSENGER_POLL_TIMEOUT_S: "50" });
  const running = setup.start();
  await until("the long poll", () => setup.messenger.requests.length === 1);
  await running.stop();
  t.is(setup.messenger.requests[0]?.status, undefined, "the poll was still open when run() returned");
  t.true(setup.lines().some((line) => line.message === "messenger listener stopped"));
});

// Serial: ava runs serial tests before the concurrent ones, so no other test has signal handlers installed.
test.serial("svc pulse listener runs until SIGTERM and exits 0", async (t) => {
  const setup = await given(t);
  setup.messenger.sendMessage(CHAT, "via the command");
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
  const exit = Cli.from([PulseListenerCommand]).run(["pulse", "listener", "--environment", setup.envFile], {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr,
  });
  await until("the pulse", () => setup.api.pulses.length === 1);
  // The handlers are installed before the first poll, and the pulse came after it.
  process.kill(process.pid, "SIGTERM");
  t.is(await exit, 0);
  const text = Buffer.concat(chunks).toString("utf8");
  t.regex(text, /"signal":"SIGTERM"/);
  t.regex(text, /messenger listener stopped/);
  t.false(text.includes(setup.messenger.token));
  t.is(process.listenerCount("SIGTERM"), 0, "the command removed its signal handlers");
});

test("a state directory that cannot be created is a configuration error (exit 78)", async (t) => {
  const setup = await given(t);
  writeFileSync(join(setup.dir, "a-file"), "");
  setup.writeEnv({ LISTENER_STATE_PATH: join(setup.dir, "a-file", "listener-state.json") });
  const error = await t.throwsAsync(setup.start().done, { instanceOf: ConfigError });
  t.regex(error?.message ?? "", /LISTENER_STATE_PATH=.*a-file is not a directory/);
  const code = await Cli.from([PulseListenerCommand]).run(
    ["pulse", "listener", "--environment", setup.envFile],
    {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr: new PassThrough(),
    },
  );
  t.is(code, EXIT_CONFIG);
});

test("an error leaving run() is redacted", async (t) => {
  const setup = await given(t);
  const token = setup.messenger.token;
  const running = setup.start({
    store: {
      prepare() {
        throw new Error(`cannot open ${setup.messenger.url}/bot${token}/state`);
      },
      load: () => ({ offset: undefined }),
      save() {},
    },
  });
  const error = await t.throwsAsync(running.done);
  t.regex(error?.message ?? "", /\/bot\[redacted\]\/state/);
  t.false(`${error?.message}\n${error?.stack}`.includes(token));
});

test("an offset that cannot be saved raises an alert and delivery goes on", async (t) => {
  const setup = await given(t);
  const saved: number[] = [];
  let refuse = true;
  setup.messenger.sendMessage(CHAT, "one");
  setup.start({
    store: {
      prepare() {},
      load: () => ({ offset: undefined }),
      save(offset) {
        if (refuse) throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
        saved.push(offset);
      },
    },
  });
  await until("the first pulse", () => setup.api.pulses.length === 1);
  await until("the alert", () =>
    setup.lines().some((line) => line.alert === LISTENER_ALERTS.stateUnwritable),
  );
  refuse = false;
  const second = setup.messenger.sendMessage(CHAT, "two");
  await until("the second pulse", () => setup.api.pulses.length === 2);
  await until("the save", () => saved.includes(second.update_id + 1));
  await until("the recovery line", () =>
    setup.lines().some((line) => line.recovered === LISTENER_ALERTS.stateUnwritable),
  );
  t.pass();
});
