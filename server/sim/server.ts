/**
 * Starting and stopping the simulator (Document 1 "Configuration flags", "Authentication" 2; DESIGN.md §5
 * shutdown): loopback-only bind, store, seed, the HTTP listener, and a graceful stop that finishes in-flight
 * requests and checkpoints the WAL.
 */

import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isLoopbackHost } from "../../core/checks.js";
import { UserFacingError } from "../../core/errors.js";
import { createSimHandler } from "./app.js";
import { loadSeed, type SeedReport } from "./seed.js";
import { SimStore } from "./store.js";

export interface SimServerOptions {
  /** `host:port`; `[::1]:0` for IPv6. Port 0 picks a free port. */
  readonly bind: string;
  /** SQLite file; ignored when `ephemeral`. */
  readonly db: string;
  readonly ephemeral: boolean;
  readonly seedFile?: string;
  readonly noSeed: boolean;
  readonly rateLimit: number;
  readonly logError?: (message: string) => void;
}

export interface RunningSim {
  /** `http://127.0.0.1:<port>` with the real port. */
  readonly url: string;
  readonly store: SimStore;
  readonly seed: SeedReport | undefined;
  /** Stops accepting, lets in-flight requests finish (idle keep-alive connections are closed), closes the store. */
  close(): Promise<void>;
}

export interface BindAddress {
  readonly host: string;
  readonly port: number;
}

/** Parses `--bind` and refuses anything but loopback: the simulator has no authentication. */
export function parseBind(bind: string): BindAddress {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(bind.trim());
  const port = match ? Number(match[3]) : Number.NaN;
  if (!match || port > 65535) {
    throw new UserFacingError(
      "SVC_USAGE",
      `--bind ${JSON.stringify(bind)} is not host:port; use for example 127.0.0.1:7878, or 127.0.0.1:0 for a free port`,
    );
  }
  const host = match[1] ?? match[2] ?? "";
  if (!isLoopbackHost(host)) {
    throw new UserFacingError(
      "SVC_USAGE",
      `--bind ${host} is not a loopback address; the simulator has no authentication and listens only on ` +
        "127.0.0.0/8, ::1 or localhost",
    );
  }
  return { host, port };
}

function listen(server: Server, address: BindAddress): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new UserFacingError(
          "SVC_USAGE",
          `cannot listen on ${address.host}:${address.port}: ${error.code ?? error.message}` +
            (error.code === "EADDRINUSE" ? "; another process holds the port: pick another with --bind" : ""),
          { cause: error },
        ),
      );
    };
    server.once("error", onError);
    server.listen(address.port, address.host, () => {
      server.off("error", onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** How long a graceful stop waits for busy connections before cutting them. */
const DRAIN_MS = 5000;

export async function startSimServer(options: SimServerOptions): Promise<RunningSim> {
  const address = parseBind(options.bind);
  const store = new SimStore(options.ephemeral ? ":memory:" : options.db);
  let seed: SeedReport | undefined;
  try {
    if (options.seedFile && !options.noSeed) seed = loadSeed(store, options.seedFile);
  } catch (error) {
    store.close();
    throw error;
  }
  const handler = createSimHandler({ store, rateLimit: options.rateLimit, logError: options.logError });
  // Answers still to be written. Once a stop begins they go out with `Connection: close`, so their
  // keep-alive connections end with them instead of holding the stop up until the drain timeout.
  const unanswered = new Set<ServerResponse>();
  let stopping = false;
  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    if (stopping) {
      res.setHeader("connection", "close");
    } else {
      unanswered.add(res);
      res.once("close", () => unanswered.delete(res));
    }
    handler(req, res);
  });
  let bound: AddressInfo;
  try {
    bound = await listen(server, address);
  } catch (error) {
    store.close();
    throw error;
  }
  // `--bind localhost:…` is announced as localhost: the address it resolved to (often ::1) is not on the
  // default egress allowlist, the name is.
  const host =
    address.host === "localhost"
      ? "localhost"
      : bound.family === "IPv6"
        ? `[${bound.address}]`
        : bound.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${bound.port}`,
    store,
    seed,
    close() {
      stopping = true;
      for (const res of unanswered) if (!res.headersSent) res.setHeader("connection", "close");
      closing ??= new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
        server.close(() => {
          clearTimeout(force);
          store.close();
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
