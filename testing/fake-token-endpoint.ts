/**
 * A fake OAuth 2.0 token endpoint on an ephemeral loopback port, for the keep-alive provider's tests. It
 * speaks RFC 6749's shapes for the refresh-token grant (§6): a form-encoded POST with `grant_type`,
 * `refresh_token`, `client_id` and optionally `client_secret` (also accepted as HTTP Basic, §2.3.1) and
 * `scope`; a success is 200 `{access_token, token_type: "Bearer", expires_in, refresh_token?, scope?}`
 * with `Cache-Control: no-store` (§5.1); an error is 400 (401 for `invalid_client`)
 * `{error, error_description}` (§5.2).
 *
 * Switches for failures: `mode` (answer `invalid_grant`, or any status and body), `delayMs` (be slow),
 * `hold()`/`release()` (keep every request waiting until the test lets it go), `rotate` (issue a new
 * refresh token on every grant and revoke the old one).
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ExecutionContext } from "ava";
import { repoRoot } from "./paths.js";

export type FakeTokenMode =
  /** Grant valid requests (default). */
  | { readonly kind: "grant" }
  /** Answer every request 400 `invalid_grant`, as for a revoked refresh token. */
  | { readonly kind: "invalid_grant" }
  /**
   * Answer every request with `status` and either `body` as is or `{error, error_description}`; with
   * `echoSecrets` the description repeats the request's refresh token and client secret (a careless server:
   * the client must not print them).
   */
  | {
      readonly kind: "error";
      readonly status: number;
      readonly error?: string;
      readonly description?: string;
      readonly body?: string;
      readonly echoSecrets?: boolean;
    };

export interface FakeTokenEndpointOptions {
  /** Default `svc-test-client`. */
  readonly clientId?: string;
  /** When set, the request must carry it (body or Basic). */
  readonly clientSecret?: string;
  /** `expires_in` of issued tokens, seconds; default 8 hours. `null` leaves it out. */
  readonly expiresIn?: number | null;
  /** Issue a new refresh token with every grant and revoke the one used. Default false. */
  readonly rotate?: boolean;
}

/** One request the endpoint received (tokens included: tests compare them). */
export interface TokenRequest {
  readonly contentType: string;
  readonly form: Readonly<Record<string, string>>;
  readonly authorization: string | undefined;
  readonly agent: string | undefined;
}

export interface IssuedTokens {
  readonly accessToken: string;
  readonly refreshToken: string | undefined;
  readonly expiresIn: number | undefined;
}

export interface FakeTokenEndpoint {
  /** The token endpoint, `http://127.0.0.1:<port>/oauth/token`. */
  readonly url: string;
  readonly origin: string;
  readonly clientId: string;
  /** Every POST to the token path, in arrival order (also the ones answered with an error). */
  readonly requests: TokenRequest[];
  /** Tokens issued by successful grants, in order. */
  readonly issued: IssuedTokens[];
  mode: FakeTokenMode;
  /** Wait this long before answering. */
  delayMs: number;
  /** A new refresh token the endpoint accepts. */
  newRefreshToken(): string;
  /** Whether `token` is currently accepted (false once rotated away). */
  isValidRefreshToken(token: string): boolean;
  /** Requests wait (after being recorded) until `release()`. */
  hold(): void;
  release(): void;
  /** Resolves once `count` requests have arrived in all. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

function randomToken(prefix: string): string {
  return `${prefix}-${randomBytes(18).toString("base64url")}`;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  response.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json;charset=UTF-8",
    "cache-control": "no-store",
    pragma: "no-cache",
    "content-length": String(Buffer.byteLength(text)),
  });
  response.end(text);
}

export async function startFakeTokenEndpoint(
  options: FakeTokenEndpointOptions = {},
): Promise<FakeTokenEndpoint> {
  const clientId = options.clientId ?? "svc-test-client";
  const expiresIn = options.expiresIn === undefined ? 8 * 3600 : options.expiresIn;
  const validRefreshTokens = new Set<string>();
  const requests: TokenRequest[] = [];
  const issued: IssuedTokens[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let held: Promise<void> | undefined;
  let releaseHeld: (() => void) | undefined;
  const waiters: { count: number; resolve: () => void }[] = [];

  const endpoint: FakeTokenEndpoint = {
    url: "",
    origin: "",
    clientId,
    requests,
    issued,
    mode: { kind: "grant" },
    delayMs: 0,
    newRefreshToken() {
      const token = randomToken("fake-refresh");
      validRefreshTokens.add(token);
      return token;
    },
    isValidRefreshToken: (token) => validRefreshTokens.has(token),
    hold() {
      if (held !== undefined) return;
      held = new Promise((resolve) => {
        releaseHeld = resolve;
      });
    },
    release() {
      releaseHeld?.();
      held = undefined;
      releaseHeld = undefined;
    },
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close: async () => undefined,
  };

  const answer = (
    form: Record<string, string>,
    authorization: string | undefined,
    response: ServerResponse,
  ): void => {
    const mode = endpoint.mode;
    if (mode.kind === "invalid_grant") {
      send(response, 400, {
        error: "invalid_grant",
        error_description: "The refresh token is invalid or expired.",
      });
      return;
    }
    if (mode.kind === "error") {
      if (mode.body !== undefined) {
        send(response, mode.status, mode.body);
        return;
      }
      const echoed = mode.echoSecrets
        ? ` (refresh_token=${form.refresh_token ?? ""} client_secret=${form.client_secret ?? ""})`
        : "";
      send(response, mode.status, {
        error: mode.error ?? "server_error",
        error_description: `${mode.description ?? "internal failure"}${echoed}`,
      });
      return;
    }
    let secret = form.client_secret;
    let id = form.client_id;
    if (authorization?.startsWith("Basic ")) {
      const [user, pass] = Buffer.from(authorization.slice(6), "base64").toString("utf8").split(":");
      id = decodeURIComponent(user ?? "");
      secret = decodeURIComponent(pass ?? "");
    }
    if (id !== clientId || (options.clientSecret !== undefined && secret !== options.clientSecret)) {
      send(response, 401, { error: "invalid_client", error_description: "Client authentication failed." });
      return;
    }
    if (form.grant_type !== "refresh_token") {
      send(response, 400, {
        error: "unsupported_grant_type",
        error_description: "Only refresh_token is supported.",
      });
      return;
    }
    const used = form.refresh_token;
    if (used === undefined || !validRefreshTokens.has(used)) {
      send(response, 400, {
        error: "invalid_grant",
        error_description: "The refresh token is invalid or expired.",
      });
      return;
    }
    const accessToken = randomToken("fake-access");
    let refreshToken: string | undefined;
    if (options.rotate) {
      validRefreshTokens.delete(used);
      refreshToken = endpoint.newRefreshToken();
    }
    issued.push({ accessToken, refreshToken, expiresIn: expiresIn ?? undefined });
    send(response, 200, {
      access_token: accessToken,
      token_type: "Bearer",
      ...(expiresIn === null ? {} : { expires_in: expiresIn }),
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
      ...(form.scope === undefined ? {} : { scope: form.scope }),
    });
  };

  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      if (request.method !== "POST" || new URL(request.url ?? "/", "http://x").pathname !== "/oauth/token") {
        send(response, 404, { error: "not_found" });
        return;
      }
      const contentType = request.headers["content-type"] ?? "";
      const form = Object.fromEntries(new URLSearchParams(body));
      requests.push({
        contentType,
        form,
        authorization: request.headers.authorization,
        agent: request.headers["x-svc-agent"] as string | undefined,
      });
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      if (held !== undefined) await held;
      if (endpoint.delayMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, endpoint.delayMs);
          timers.add(timer);
        });
      }
      if (response.destroyed) return;
      if (!contentType.startsWith("application/x-www-form-urlencoded")) {
        send(response, 400, { error: "invalid_request", error_description: "Expected a form-encoded body." });
        return;
      }
      answer(form, request.headers.authorization, response);
    })().catch((error: unknown) => {
      // A bug in the fake, or the client went away: answer if still possible, never crash the test process.
      if (response.headersSent || response.destroyed) return;
      try {
        send(response, 500, { error: "server_error", error_description: String(error) });
      } catch {
        response.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  Object.assign(endpoint, {
    url: `${origin}/oauth/token`,
    origin,
    close: async () => {
      endpoint.release();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return endpoint;
}

/** A fake endpoint stopped when the test ends. */
export async function givenFakeTokenEndpoint(
  t: ExecutionContext,
  options: FakeTokenEndpointOptions = {},
): Promise<FakeTokenEndpoint> {
  const endpoint = await startFakeTokenEndpoint(options);
  t.teardown(() => endpoint.close());
  return endpoint;
}

/**
 * Writes `<dir>/svc`: an executable that runs the OAuth provider command from `dist/` the way the installed
 * `svc` does (cli/main.ts registers it there), so tests can run it as separate processes and put `dir` on
 * PATH for `scripts/providers/oauth-token`. Returns its path.
 */
export async function writeProviderCli(dir: string): Promise<string> {
  const script = join(dir, "provider-cli.mjs");
  await writeFile(
    script,
    [
      'import { createRequire } from "node:module";',
      `const require = createRequire(${JSON.stringify(join(repoRoot, "package.json"))});`,
      'const { Cli } = require("clipanion");',
      `const { PulseProviderOauthCommand } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, "dist/cli/commands/pulse-provider.js")).href)});`,
      'const cli = new Cli({ binaryName: "svc" });',
      "cli.register(PulseProviderOauthCommand);",
      "process.exitCode = await cli.run(process.argv.slice(2), Cli.defaultContext);",
      "",
    ].join("\n"),
  );
  const shim = join(dir, "svc");
  await writeFile(
    shim,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} "$@"\n`,
    {
      mode: 0o755,
    },
  );
  return shim;
}
