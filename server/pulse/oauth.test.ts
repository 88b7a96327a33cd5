/**
 * The OAuth keep-alive provider against the fake token endpoint: which tokens are refreshed and which are
 * not, what the rewritten file keeps, the error answers, the lock (concurrent refreshers in separate
 * processes send one grant; a reader never sees a partial file; stale locks are taken over), and that no
 * token value ever reaches output, errors or logs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import test, { type ExecutionContext } from "ava";
import { runSvcInProcess } from "../../testing/cli.js";
import {
  type FakeTokenEndpoint,
  givenFakeTokenEndpoint,
  writeProviderCli,
} from "../../testing/fake-token-endpoint.js";
import { ConfigReader } from "./config.js";
import { Logger } from "./log.js";
import {
  checkCredential,
  InvalidGrantError,
  LockTimeoutError,
  type OauthConfig,
  OauthError,
  parseCredentials,
  readOauthConfig,
  refreshCredential,
} from "./oauth.js";

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 2, 8, 12, 0, 0);

async function givenTempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "svc-oauth-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

interface CredentialSpec {
  readonly expiresAtMs: number;
  readonly style?: "camel" | "snake";
  /** The key the token object sits under; undefined: top level. Default `claudeAiOauth`. */
  readonly key?: string | null;
  readonly refreshToken?: string | null;
  readonly pretty?: boolean;
}

interface GivenCredentials {
  readonly file: string;
  readonly dir: string;
  readonly accessToken: string;
  readonly refreshToken: string | undefined;
  readonly text: string;
}

/** A credential file like an agent writes, with extra fields that a rewrite must keep. */
async function givenCredentials(
  t: ExecutionContext,
  endpoint: FakeTokenEndpoint,
  spec: CredentialSpec,
): Promise<GivenCredentials> {
  const dir = await givenTempDir(t);
  const file = join(dir, ".credentials.json");
  const accessToken = `old-access-${Math.random().toString(36).slice(2)}-0123456789`;
  const refreshToken =
    spec.refreshToken === null ? undefined : (spec.refreshToken ?? endpoint.newRefreshToken());
  const token =
    spec.style === "snake"
      ? {
          access_token: accessToken,
          ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
          expires_at: Math.floor(spec.expiresAtMs / 1000),
          expires_in: 3600,
          token_type: "Bearer",
          scope: "user:inference",
          id_token_hint: "kept",
        }
      : {
          accessToken,
          ...(refreshToken === undefined ? {} : { refreshToken }),
          expiresAt: spec.expiresAtMs,
          scopes: ["user:inference", "user:profile"],
          subscriptionType: "max",
        };
  const key = spec.key === undefined ? "claudeAiOauth" : spec.key;
  const document =
    key === null ? token : { [key]: token, mcpOAuth: { other: { accessToken: "x" } }, version: 3 };
  const text = spec.pretty === false ? JSON.stringify(document) : `${JSON.stringify(document, null, 2)}\n`;
  await writeFile(file, text, { mode: 0o600 });
  return { file, dir, accessToken, refreshToken, text };
}

function oauthEnv(endpoint: FakeTokenEndpoint, file: string, extra: Record<string, string> = {}) {
  return {
    OAUTH_CREDENTIALS_FILE: file,
    OAUTH_TOKEN_ENDPOINT: endpoint.url,
    OAUTH_CLIENT_ID: endpoint.clientId,
    ...extra,
  };
}

function configFor(
  endpoint: FakeTokenEndpoint,
  file: string,
  extra: Record<string, string> = {},
): OauthConfig {
  const reader = new ConfigReader(oauthEnv(endpoint, file, extra));
  const config = readOauthConfig(reader);
  reader.check();
  return config;
}

/** Every secret a test knows, for "never printed" assertions. */
function assertNoSecrets(t: ExecutionContext, text: string, secrets: readonly (string | undefined)[]): void {
  for (const secret of secrets) {
    if (secret !== undefined) t.false(text.includes(secret), `a secret leaked into: ${text.slice(0, 300)}`);
  }
}

async function listDir(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

// ---------------------------------------------------------------------------------------------------------
// The credential document

test("parseCredentials reads both styles at the top level and under one key", (t) => {
  const camel = parseCredentials(
    JSON.stringify({
      claudeAiOauth: { accessToken: "a-token", refreshToken: "r-token", expiresAt: 1_000_000 },
    }),
    "f",
  );
  t.like(camel, {
    key: "claudeAiOauth",
    style: "camelCase",
    expiresAtMs: 1_000_000,
    refreshToken: "r-token",
  });
  const snake = parseCredentials(JSON.stringify({ access_token: "a-token", expires_at: 1_000 }), "f");
  t.like(snake, { key: undefined, style: "snake_case", expiresAtMs: 1_000_000, refreshToken: undefined });
  const chosen = parseCredentials(
    JSON.stringify({ a: { accessToken: "a1", expiresAt: 1 }, b: { access_token: "b1", expires_at: 2 } }),
    "f",
    "b",
  );
  t.like(chosen, { key: "b", expiresAtMs: 2000 });
});

test("parseCredentials says what it expected and never quotes a value", (t) => {
  const secret = "sk-secret-value-1234567890";
  const cases: [string, RegExp][] = [
    [`{"accessToken": "${secret}", "expiresAt": }`, /is not valid JSON/],
    [`["${secret}"]`, /does not hold a JSON object/],
    [JSON.stringify({ other: { token: secret } }), /holds no token object/],
    [
      JSON.stringify({ a: { accessToken: secret, expiresAt: 1 }, b: { accessToken: secret, expiresAt: 1 } }),
      /several token objects \("a", "b"\); set OAUTH_CREDENTIALS_KEY/,
    ],
    [
      JSON.stringify({ k: { accessToken: secret, expiresAt: "1700000000000" } }),
      /no numeric "expiresAt" under "k" \(epoch milliseconds; got string\)/,
    ],
    [JSON.stringify({ access_token: secret }), /no numeric "expires_at" at its top level \(epoch seconds/],
    [JSON.stringify({ k: { accessToken: 42, expiresAt: 1 } }), /no "accessToken" string under "k"/],
    [
      JSON.stringify({ k: { accessToken: secret, expiresAt: 1e300 } }),
      /"expiresAt" under "k" that is out of range/,
    ],
  ];
  for (const [text, expected] of cases) {
    const error = t.throws(() => parseCredentials(text, "/x/creds.json"), { instanceOf: OauthError });
    t.regex(error?.message ?? "", expected);
    t.false(error?.message.includes(secret));
    t.is((error as OauthError).exitCode, 2);
  }
});

test("the configuration needs an https endpoint (http only on loopback) and reports every problem", (t) => {
  const reader = new ConfigReader({
    OAUTH_TOKEN_ENDPOINT: "http://auth.example.com/token",
    OAUTH_REFRESH_THRESHOLD: "soon",
  });
  readOauthConfig(reader);
  const text = reader.problems.join("\n");
  t.regex(text, /OAUTH_CREDENTIALS_FILE is not set/);
  t.regex(text, /OAUTH_CLIENT_ID is not set/);
  t.regex(text, /must be an https URL/);
  t.regex(text, /OAUTH_REFRESH_THRESHOLD="soon" is not a duration/);
  const good = new ConfigReader({
    OAUTH_CREDENTIALS_FILE: "/f",
    OAUTH_TOKEN_ENDPOINT: "https://auth.example.com/oauth/token",
    OAUTH_CLIENT_ID: "c",
    SVC_ALLOWED_ORIGINS: "https://proxy.example.com",
  });
  const config = readOauthConfig(good);
  t.deepEqual(good.problems, []);
  t.is(config.thresholdMs, 6 * HOUR);
  t.is(config.allowedOrigins, "https://auth.example.com,https://proxy.example.com");
});

// ---------------------------------------------------------------------------------------------------------
// check

test("check: 7 h left is healthy, 5 h is within the 6 h threshold, the past is expired, a missing file is 2", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const now = () => NOW;
  const cases: [number, number, string][] = [
    [7 * HOUR, 0, "healthy"],
    [6 * HOUR, 1, "expiring"],
    [5 * HOUR, 1, "expiring"],
    [-1, 2, "expired"],
  ];
  for (const [left, exitCode, state] of cases) {
    const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + left });
    const outcome = await checkCredential(configFor(endpoint, given.file), { now });
    t.like(outcome, { exitCode, state }, `${left} ms left`);
    assertNoSecrets(t, outcome.message, [given.accessToken, given.refreshToken]);
  }
  const dir = await givenTempDir(t);
  const missing = await checkCredential(configFor(endpoint, join(dir, "absent.json")), { now });
  t.like(missing, { exitCode: 2, state: "unreadable" });
  t.regex(missing.message, /does not exist; log in to the agent/);
  t.is(endpoint.requests.length, 0);
});

// ---------------------------------------------------------------------------------------------------------
// refresh

test("refresh: a token expiring in 5 hours is refreshed with one grant; other fields kept, mode 0600", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t, { rotate: true });
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + 5 * HOUR });
  const outcome = await refreshCredential(configFor(endpoint, given.file), { now: () => NOW });
  t.is(outcome.state, "refreshed");
  t.is(endpoint.requests.length, 1);
  const request = endpoint.requests[0];
  t.is(request?.contentType, "application/x-www-form-urlencoded");
  t.deepEqual(request?.form, {
    grant_type: "refresh_token",
    refresh_token: given.refreshToken,
    client_id: "svc-test-client",
  });
  t.is(request?.agent, "svc-pulse-keepalive");
  const issued = endpoint.issued[0];
  const after = JSON.parse(await readFile(given.file, "utf8"));
  const before = JSON.parse(given.text);
  t.deepEqual(after, {
    ...before,
    claudeAiOauth: {
      ...before.claudeAiOauth,
      accessToken: issued?.accessToken,
      refreshToken: issued?.refreshToken,
      expiresAt: NOW + 8 * HOUR,
    },
  });
  t.deepEqual(Object.keys(after.claudeAiOauth), Object.keys(before.claudeAiOauth), "key order kept");
  t.is((await stat(given.file)).mode & 0o777, 0o600);
  t.deepEqual(await listDir(given.dir), [".credentials.json"], "no temp or lock file left behind");
  t.regex(outcome.message, /expires in 8h 0m/);
  assertNoSecrets(t, outcome.message, [
    given.accessToken,
    given.refreshToken,
    issued?.accessToken,
    issued?.refreshToken,
  ]);
});

test("refresh: a token expiring in 7 hours is left alone and no grant is sent", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + 7 * HOUR });
  const outcome = await refreshCredential(configFor(endpoint, given.file), { now: () => NOW });
  t.is(outcome.state, "not-needed");
  t.is(endpoint.requests.length, 0);
  t.is(await readFile(given.file, "utf8"), given.text);
  t.deepEqual(await listDir(given.dir), [".credentials.json"]);
});

test("refresh: an expired snake_case token is refreshed; secret and scope are sent; an unrotated refresh token is kept", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t, { clientSecret: "client-secret-abcdefgh" });
  const given = await givenCredentials(t, endpoint, {
    expiresAtMs: NOW - HOUR,
    style: "snake",
    key: null,
    pretty: false,
  });
  const config = configFor(endpoint, given.file, {
    OAUTH_CLIENT_SECRET: "client-secret-abcdefgh",
    OAUTH_SCOPE: "user:inference",
  });
  const outcome = await refreshCredential(config, { now: () => NOW });
  t.is(outcome.state, "refreshed");
  t.like(endpoint.requests[0]?.form, { client_secret: "client-secret-abcdefgh", scope: "user:inference" });
  const text = await readFile(given.file, "utf8");
  t.false(text.includes("\n"), "a compact file stays compact");
  t.deepEqual(JSON.parse(text), {
    ...JSON.parse(given.text),
    access_token: endpoint.issued[0]?.accessToken,
    refresh_token: given.refreshToken,
    expires_at: NOW / 1000 + 8 * 3600,
    expires_in: 8 * 3600,
  });
  t.is((await stat(given.file)).mode & 0o777, 0o600);
});

test("refresh: invalid_grant says to log in again, exits 2, and leaves the file untouched", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  endpoint.mode = { kind: "invalid_grant" };
  const before = await stat(given.file);
  const error = await t.throwsAsync(refreshCredential(configFor(endpoint, given.file), { now: () => NOW }), {
    instanceOf: InvalidGrantError,
  });
  t.is((error as InvalidGrantError).exitCode, 2);
  t.regex(error?.message ?? "", /revoked or has expired\. Log in to the agent again/);
  t.regex(error?.message ?? "", /400 error=invalid_grant/);
  assertNoSecrets(t, error?.message ?? "", [given.accessToken, given.refreshToken]);
  t.is(await readFile(given.file, "utf8"), given.text);
  t.is((await stat(given.file)).mtimeMs, before.mtimeMs);
  t.deepEqual(await listDir(given.dir), [".credentials.json"]);
});

test("refresh: a server error names the status and OAuth error but redacts tokens the server echoed", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t, { clientSecret: "client-secret-abcdefgh" });
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  endpoint.mode = {
    kind: "error",
    status: 500,
    error: "server_error",
    description: "database down",
    echoSecrets: true,
  };
  const lines: string[] = [];
  const stderr = new PassThrough();
  stderr.on("data", (chunk: Buffer) => lines.push(chunk.toString("utf8")));
  const logger = new Logger({ level: "DEBUG", stderr, component: "test" });
  const config = configFor(endpoint, given.file, { OAUTH_CLIENT_SECRET: "client-secret-abcdefgh" });
  const error = await t.throwsAsync(refreshCredential(config, { now: () => NOW, logger }), {
    instanceOf: OauthError,
  });
  t.is((error as OauthError).exitCode, 1);
  t.regex(
    error?.message ?? "",
    /answered 500 with error=server_error \(database down \(refresh_token=\[redacted\] client_secret=\[redacted\]\)\)/,
  );
  t.regex(error?.message ?? "", /the next keep-alive run tries again/);
  t.true(lines.join("").includes("refresh failed"), "the failure is logged");
  assertNoSecrets(t, `${error?.message}\n${lines.join("")}`, [
    given.accessToken,
    given.refreshToken,
    "client-secret-abcdefgh",
  ]);
  t.is(await readFile(given.file, "utf8"), given.text);

  endpoint.mode = { kind: "error", status: 502, body: `<html>bad gateway ${given.refreshToken}</html>` };
  const raw = await t.throwsAsync(refreshCredential(config, { now: () => NOW }), { instanceOf: OauthError });
  t.regex(
    raw?.message ?? "",
    /answered 502 with a body that is not an OAuth error object \(\d+ bytes, text\/plain/,
  );
  assertNoSecrets(t, raw?.message ?? "", [given.refreshToken]);
  t.is(await readFile(given.file, "utf8"), given.text);
});

test("refresh: a slow endpoint times out, the file is untouched and the lock released", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  endpoint.delayMs = 5_000;
  const config = configFor(endpoint, given.file, { SVC_HTTP_TIMEOUT_MS: "200" });
  const error = await t.throwsAsync(refreshCredential(config, { now: () => NOW }), {
    instanceOf: OauthError,
  });
  t.regex(error?.message ?? "", /no answer within 200 ms/);
  t.is(await readFile(given.file, "utf8"), given.text);
  t.deepEqual(await listDir(given.dir), [".credentials.json"]);
});

test("refresh: without a refresh token it exits 2 and asks for a new login", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR, refreshToken: null });
  const error = await t.throwsAsync(refreshCredential(configFor(endpoint, given.file), { now: () => NOW }), {
    instanceOf: OauthError,
  });
  t.is((error as OauthError).exitCode, 2);
  t.regex(error?.message ?? "", /has no refresh token.*log in to the agent again/);
  t.is(endpoint.requests.length, 0);
});

test("refresh: a missing file or directory exits 2 without a grant and leaves no lock behind", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const dir = await givenTempDir(t);
  for (const file of [join(dir, "absent.json"), join(dir, "no-such-dir", "absent.json")]) {
    const error = await t.throwsAsync(refreshCredential(configFor(endpoint, file), { now: () => NOW }), {
      instanceOf: OauthError,
    });
    t.is((error as OauthError).exitCode, 2);
    t.regex(error?.message ?? "", /does not exist; log in to the agent/);
  }
  t.deepEqual(await listDir(dir), []);
  t.is(endpoint.requests.length, 0);
});

test("refresh: an answer without expires_in is written as expiring at the threshold, so the next run refreshes again", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t, { expiresIn: null });
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  const config = configFor(endpoint, given.file, { OAUTH_REFRESH_THRESHOLD: "6h" });
  t.is((await refreshCredential(config, { now: () => NOW })).expiresAtMs, NOW + 6 * HOUR);
  t.is((await checkCredential(config, { now: () => NOW })).exitCode, 1);
});

test("refresh: the endpoint must be allowlisted; SVC_ALLOWED_ORIGINS cannot take the endpoint's origin away", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  const config = configFor(endpoint, given.file, { SVC_ALLOWED_ORIGINS: "https://elsewhere.example.com" });
  t.is((await refreshCredential(config, { now: () => NOW })).state, "refreshed");
  const denied: OauthConfig = { ...config, allowedOrigins: "https://elsewhere.example.com" };
  await writeFile(given.file, given.text);
  const error = await t.throwsAsync(refreshCredential(denied, { now: () => NOW }), {
    instanceOf: OauthError,
  });
  t.regex(error?.message ?? "", /origin not allowlisted/);
  t.is(endpoint.requests.length, 1);
});

// ---------------------------------------------------------------------------------------------------------
// The lock

function lockText(pid: number, host = hostname()): string {
  return `${JSON.stringify({ pid, host, since: new Date(NOW).toISOString(), nonce: "someone-else" })}\n`;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid as number;
}

test("a lock whose holder is not running is taken over", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  await writeFile(`${given.file}.lock`, lockText(await deadPid()));
  const takeovers: string[] = [];
  const stderr = new PassThrough();
  stderr.on("data", (chunk: Buffer) => takeovers.push(chunk.toString("utf8")));
  const logger = new Logger({ level: "INFO", stderr, component: "test" });
  const outcome = await refreshCredential(configFor(endpoint, given.file), { now: () => NOW, logger });
  t.is(outcome.state, "refreshed");
  t.is(endpoint.requests.length, 1);
  t.regex(takeovers.join(""), /took over a stale lock.*is not running/);
  t.deepEqual(await listDir(given.dir), [".credentials.json"]);
});

test("a lock not touched for more than 2 minutes is taken over even if its holder runs", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  const lock = `${given.file}.lock`;
  // The parent of this test process is alive and is not us.
  await writeFile(lock, lockText(process.ppid));
  const old = new Date(Date.now() - 3 * 60_000);
  await utimes(lock, old, old);
  const outcome = await refreshCredential(configFor(endpoint, given.file), { now: () => Date.now() });
  t.is(outcome.state, "refreshed");
  t.is(endpoint.requests.length, 1);
});

test("a fresh lock held by a live process is waited for, boundedly, and no grant is sent", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  await writeFile(`${given.file}.lock`, lockText(process.ppid));
  let waited = 0;
  const error = await t.throwsAsync(
    refreshCredential(configFor(endpoint, given.file), {
      now: () => NOW,
      lockWaitMs: 300,
      onLockWait: (holder) => {
        waited++;
        t.is(holder?.pid, process.ppid);
      },
    }),
    { instanceOf: LockTimeoutError },
  );
  t.is(waited, 1);
  t.regex(error?.message ?? "", /another refresh holds .*\.lock \(pid \d+ on .* since .*\)/);
  t.is(endpoint.requests.length, 0);
  t.is(
    await readFile(`${given.file}.lock`, "utf8"),
    lockText(process.ppid),
    "someone else's lock is not removed",
  );
});

test("after taking the lock the file is re-read: a token written meanwhile is kept and no grant is sent", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t);
  const given = await givenCredentials(t, endpoint, { expiresAtMs: NOW + HOUR });
  const lock = `${given.file}.lock`;
  await writeFile(lock, lockText(process.ppid));
  const fresher = given.text.replace(String(NOW + HOUR), String(NOW + 10 * HOUR));
  const outcome = await refreshCredential(configFor(endpoint, given.file), {
    now: () => NOW,
    // The other refresher (or the agent) finishes while we wait: it writes its token and lets go.
    onLockWait: () => {
      void writeFile(given.file, fresher).then(() => rm(lock, { force: true }));
    },
  });
  t.is(outcome.state, "not-needed");
  t.is(endpoint.requests.length, 0);
  t.is(await readFile(given.file, "utf8"), fresher);
});

// ---------------------------------------------------------------------------------------------------------
// Separate processes, through the command

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runProcess(child: ChildProcess, onStderr?: (text: string) => void): Promise<Finished> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    onStderr?.(stderr);
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("5 refreshes started at once in separate processes send exactly one grant; a reader never sees a partial file", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t, { rotate: true });
  const given = await givenCredentials(t, endpoint, { expiresAtMs: Date.now() + 5 * HOUR });
  const bin = await givenTempDir(t);
  const svc = await writeProviderCli(bin);
  // The first grant is held until the four others are seen waiting for the lock.
  endpoint.hold();
  let waiting = 0;
  let allSeenWaiting: () => void = () => undefined;
  const allWaiting = new Promise<void>((resolve) => {
    allSeenWaiting = resolve;
  });
  const env = { ...process.env, ...oauthEnv(endpoint, given.file) };
  const runs = Array.from({ length: 5 }, () => {
    let counted = false;
    return runProcess(
      spawn(svc, ["pulse", "provider", "oauth", "refresh"], { env, stdio: ["ignore", "pipe", "pipe"] }),
      (text) => {
        if (counted || !text.includes("waiting for the lock")) return;
        counted = true;
        if (++waiting === 4) allSeenWaiting();
      },
    );
  });
  let reads = 0;
  let invalid = 0;
  let reading = true;
  const reader = (async () => {
    while (reading) {
      try {
        JSON.parse(await readFile(given.file, "utf8"));
      } catch {
        invalid++;
      }
      reads++;
    }
  })();
  await endpoint.waitForRequests(1);
  await allWaiting;
  endpoint.release();
  const results = await Promise.all(runs);
  reading = false;
  await reader;
  t.deepEqual(
    results.map((r) => r.code),
    [0, 0, 0, 0, 0],
    results.map((r) => r.stderr).join("\n"),
  );
  t.is(endpoint.requests.length, 1, "exactly one grant");
  t.is(results.filter((r) => r.stdout.startsWith("refreshed")).length, 1);
  t.is(results.filter((r) => r.stdout.includes("no refresh needed")).length, 4);
  t.true(reads > 0);
  t.is(invalid, 0, `${invalid} of ${reads} reads saw a partial file`);
  const after = JSON.parse(await readFile(given.file, "utf8"));
  t.is(after.claudeAiOauth.accessToken, endpoint.issued[0]?.accessToken);
  t.is(after.claudeAiOauth.refreshToken, endpoint.issued[0]?.refreshToken);
  t.true(
    endpoint.isValidRefreshToken(after.claudeAiOauth.refreshToken),
    "the rotated refresh token was persisted",
  );
  t.deepEqual(await listDir(given.dir), [".credentials.json"]);
  const output = results.map((r) => r.stdout + r.stderr).join("\n");
  assertNoSecrets(t, output, [
    given.accessToken,
    given.refreshToken,
    endpoint.issued[0]?.accessToken,
    endpoint.issued[0]?.refreshToken,
  ]);
});

test("the command: check exit codes, refresh, invalid_grant, configuration errors (78), a bad action (64)", async (t) => {
  const endpoint = await givenFakeTokenEndpoint(t, { rotate: true, clientSecret: "client-secret-abcdefgh" });
  const given = await givenCredentials(t, endpoint, { expiresAtMs: Date.now() + 5 * HOUR });
  const logFile = join(given.dir, "pulse.log");
  const envFile = join(given.dir, "pulse.env");
  await writeFile(
    envFile,
    Object.entries(
      oauthEnv(endpoint, given.file, { OAUTH_CLIENT_SECRET: "client-secret-abcdefgh", LOG_FILE: logFile }),
    )
      .map(([k, v]) => `${k}=${v}`)
      .join("\n"),
  );
  const env = { PATH: process.env.PATH };
  const check = await runOauthCli(["check", "--environment", envFile], env);
  t.is(check.code, 1, check.stderr);
  t.regex(check.stdout, /expires in [45]h \d+m .*within the 6h 0m threshold; refresh it/);

  const refresh = await runOauthCli(["refresh", "--environment", envFile], env);
  t.is(refresh.code, 0, refresh.stderr);
  t.regex(refresh.stdout, /^refreshed the token in .* \(under "claudeAiOauth"\): it expires in 8h 0m/);
  const healthy = await runOauthCli(["check", "--environment", envFile], env);
  t.is(healthy.code, 0);

  // Later: the token has expired and the refresh token was revoked.
  const expired = JSON.parse(await readFile(given.file, "utf8"));
  expired.claudeAiOauth.expiresAt = Date.now() - 60_000;
  await writeFile(given.file, JSON.stringify(expired));
  t.is((await runOauthCli(["check", "--environment", envFile], env)).code, 2);
  endpoint.mode = { kind: "invalid_grant" };
  const revoked = await runOauthCli(["refresh", "--environment", envFile], env);
  t.is(revoked.code, 2);
  t.regex(revoked.stderr, /^svc: the refresh token was rejected .* Log in to the agent again/);

  const unconfigured = await runOauthCli(["check"], { OAUTH_CREDENTIALS_FILE: given.file });
  t.is(unconfigured.code, 78);
  t.regex(unconfigured.stderr, /OAUTH_TOKEN_ENDPOINT is not set/);
  t.regex(unconfigured.stderr, /OAUTH_CLIENT_ID is not set/);
  const missingEnvFile = await runOauthCli(["check", "--environment", join(given.dir, "absent.env")], env);
  t.is(missingEnvFile.code, 78);
  const bad = await runOauthCli(["renew", "--environment", envFile], env);
  t.is(bad.code, 64);
  t.regex(bad.stderr, /use check or refresh/);

  const everything = [check, refresh, healthy, revoked, unconfigured, bad]
    .map((r) => r.stdout + r.stderr)
    .concat(await readFile(logFile, "utf8"))
    .join("\n");
  t.regex(everything, /"message":"oauth: refreshed the token/);
  assertNoSecrets(t, everything, [
    given.accessToken,
    given.refreshToken,
    "client-secret-abcdefgh",
    ...endpoint.issued.flatMap((i) => [i.accessToken, i.refreshToken]),
  ]);
});

function runOauthCli(argv: string[], env: Record<string, string | undefined>) {
  return runSvcInProcess(["pulse", "provider", "oauth", ...argv], env);
}
