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
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ExecutionContext } from "ava";
import { readRequestBody } from "../core/request-body.js";
import { givenFake } from "./fake-server.js";
import { closeServer, listenOnLoopback } from "./loopback.js";
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
  const endpoint = new FakeTokenServer(options);
  await endpoint.listen();
  return endpoint;
}

/** An answer: a string body is sent as text, anything else as JSON. */
interface Reply {
  readonly status: number;
  readonly body: unknown;
}

const INVALID_GRANT = {
  error: "invalid_grant",
  error_description: "The refresh token is invalid or expired.",
};

class FakeTokenServer implements FakeTokenEndpoint {
  url = "";
  origin = "";
  readonly clientId: string;
  readonly requests: TokenRequest[] = [];
  readonly issued: IssuedTokens[] = [];
  mode: FakeTokenMode = { kind: "grant" };
  delayMs = 0;
  private readonly clientSecret: string | undefined;
  private readonly expiresIn: number | null;
  private readonly rotate: boolean;
  private readonly validRefreshTokens = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private held: Promise<void> | undefined;
  private releaseHeld: (() => void) | undefined;
  private readonly waiters: { count: number; resolve: () => void }[] = [];
  private readonly server: Server;

  constructor(options: FakeTokenEndpointOptions) {
    this.clientId = options.clientId ?? "svc-test-client";
    this.clientSecret = options.clientSecret;
    this.expiresIn = options.expiresIn === undefined ? 8 * 3600 : options.expiresIn;
    this.rotate = options.rotate ?? false;
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        // A bug in the fake, or the client went away: answer if still possible, never crash the test process.
        if (response.headersSent || response.destroyed) return;
        try {
          send(response, 500, { error: "server_error", error_description: String(error) });
        } catch {
          response.destroy();
        }
      });
    });
  }

  async listen(): Promise<void> {
    this.origin = await listenOnLoopback(this.server);
    this.url = `${this.origin}/oauth/token`;
  }

  newRefreshToken(): string {
    const token = randomToken("fake-refresh");
    this.validRefreshTokens.add(token);
    return token;
  }

  isValidRefreshToken(token: string): boolean {
    return this.validRefreshTokens.has(token);
  }

  hold(): void {
    if (this.held !== undefined) return;
    this.held = new Promise((resolve) => {
      this.releaseHeld = resolve;
    });
  }

  release(): void {
    this.releaseHeld?.();
    this.held = undefined;
    this.releaseHeld = undefined;
  }

  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  async close(): Promise<void> {
    this.release();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await closeServer(this.server);
  }

  /** Records the request, waits while held or delayed, then answers by the current mode. */
  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = (await readRequestBody(request)).bytes.toString("utf8");
    if (request.method !== "POST" || new URL(request.url ?? "/", "http://x").pathname !== "/oauth/token") {
      send(response, 404, { error: "not_found" });
      return;
    }
    const contentType = request.headers["content-type"] ?? "";
    const form = Object.fromEntries(new URLSearchParams(body));
    this.record({
      contentType,
      form,
      authorization: request.headers.authorization,
      agent: request.headers["x-svc-agent"] as string | undefined,
    });
    if (this.held !== undefined) await this.held;
    if (this.delayMs > 0) await this.delay();
    if (response.destroyed) return;
    if (!contentType.startsWith("application/x-www-form-urlencoded")) {
      send(response, 400, { error: "invalid_request", error_description: "Expected a form-encoded body." });
      return;
    }
    const reply = this.answer(form, request.headers.authorization);
    send(response, reply.status, reply.body);
  }

  private record(request: TokenRequest): void {
    this.requests.push(request);
    for (const waiter of this.waiters.filter((w) => this.requests.length >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  private delay(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, this.delayMs);
      this.timers.add(timer);
    });
  }

  /** What to answer a form-encoded request, by the current mode. */
  private answer(form: Record<string, string>, authorization: string | undefined): Reply {
    const mode = this.mode;
    if (mode.kind === "invalid_grant") return { status: 400, body: INVALID_GRANT };
    if (mode.kind === "error") return modeError(mode, form);
    if (!this.clientAuthenticated(form, authorization)) {
      return {
        status: 401,
        body: { error: "invalid_client", error_description: "Client authentication failed." },
      };
    }
    if (form.grant_type !== "refresh_token") {
      const body = { error: "unsupported_grant_type", error_description: "Only refresh_token is supported." };
      return { status: 400, body };
    }
    const used = form.refresh_token;
    if (used === undefined || !this.validRefreshTokens.has(used)) return { status: 400, body: INVALID_GRANT };
    return this.grant(used, form.scope);
  }

  /** The client id and, when one is configured, the secret: from the form or HTTP Basic. */
  private clientAuthenticated(form: Record<string, string>, authorization: string | undefined): boolean {
    let secret = form.client_secret;
    let id = form.client_id;
    if (authorization?.startsWith("Basic ")) {
      const [user, pass] = Buffer.from(authorization.slice(6), "base64").toString("utf8").split(":");
      id = decodeURIComponent(user ?? "");
      secret = decodeURIComponent(pass ?? "");
    }
    return id === this.clientId && (this.clientSecret === undefined || secret === this.clientSecret);
  }

  /** Issues an access token for a valid refresh token (rotating it when asked). */
  private grant(used: string, scope: string | undefined): Reply {
    const accessToken = randomToken("fake-access");
    let refreshToken: string | undefined;
    if (this.rotate) {
      this.validRefreshTokens.delete(used);
      refreshToken = this.newRefreshToken();
    }
    const expiresIn = this.expiresIn;
    this.issued.push({ accessToken, refreshToken, expiresIn: expiresIn ?? undefined });
    const body = {
      access_token: accessToken,
      token_type: "Bearer",
      ...(expiresIn === null ? {} : { expires_in: expiresIn }),
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
      ...(scope === undefined ? {} : { scope }),
    };
    return { status: 200, body };
  }
}

/** The answer of the `error` mode: its body as is, or `{error, error_description}`. */
function modeError(mode: Extract<FakeTokenMode, { kind: "error" }>, form: Record<string, string>): Reply {
  if (mode.body !== undefined) return { status: mode.status, body: mode.body };
  const echoed = mode.echoSecrets
    ? ` (refresh_token=${form.refresh_token ?? ""} client_secret=${form.client_secret ?? ""})`
    : "";
  const body = {
    error: mode.error ?? "server_error",
    error_description: `${mode.description ?? "internal failure"}${echoed}`,
  };
  return { status: mode.status, body };
}

/** A fake endpoint stopped when the test ends. */
export function givenFakeTokenEndpoint(
  t: ExecutionContext,
  options: FakeTokenEndpointOptions = {},
): Promise<FakeTokenEndpoint> {
  return givenFake(t, () => startFakeTokenEndpoint(options));
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
