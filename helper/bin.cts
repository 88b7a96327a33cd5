#!/usr/bin/env node
/**
 * The `git-remote-svc` executable (bin/git-remote-svc links here). git starts it for every fetch, push and
 * lazy blob batch, so its start is on the hot path: this CommonJS file answers git's opening commands
 * (`capabilities`, `option`, `list for-push`) with synchronous reads and writes on fds 0 and 1, which cost
 * no ES module loader and no stream, and loads the helper proper (main.js and what it imports, bundled into
 * one CommonJS file, bundle.cjs, by scripts/bundle.ts; core/load-bundle.cts runs it) only when a command needs the project. A helper
 * asked only for its capabilities then starts as fast as `node -e 0`.
 *
 * stdin is read one byte at a time up to each newline, so nothing main.js reads next is consumed here. A
 * read that would block on a non-blocking stdin (EAGAIN), or anything but these commands, hands over to
 * main.js, which reads on from where this stopped.
 */
import fs = require("node:fs");

import path = require("node:path");
import nodeVersion = require("../core/node-version.cjs");
import preamble = require("./preamble.cjs");

/** helper/main.ts's `main`, as bundle.cjs exports it. */
type Main = (argv: readonly string[], io: undefined, pending: string | undefined) => Promise<number>;

const byte = Buffer.alloc(1);
/** For a 1 ms sleep between reads of a non-blocking stdin in the middle of a line. */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** The next line on stdin without its newline; undefined at the end; "blocked" when stdin would block. */
function readLineSync(): string | undefined | "blocked" {
  const bytes: number[] = [];
  for (;;) {
    let read: number;
    try {
      read = fs.readSync(0, byte, 0, 1, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      if (bytes.length === 0) return "blocked";
      Atomics.wait(pause, 0, 0, 1);
      continue;
    }
    if (read === 0) return bytes.length === 0 ? undefined : Buffer.from(bytes).toString("utf8");
    if (byte[0] === 0x0a) return Buffer.from(bytes).toString("utf8");
    bytes.push(byte[0] as number);
  }
}

/** `SVC_TRACE`'s line on stderr (preamble.cts `traceLine`, as main.js writes it), or nothing. */
function trace(message: string): void {
  if (process.env.SVC_TRACE) process.stderr.write(`${preamble.traceLine(message)}\n`);
}

/** Answers the opening commands; returns the exit code, or the line main.js must answer first. */
function answerOpening(argv: readonly string[]): number | { pending: string | undefined } {
  const [remote = "", url = ""] = argv;
  if (argv.length !== 2 || url === "") return { pending: undefined };
  const refPrefix = preamble.privateRefPrefix(remote);
  for (;;) {
    const line = readLineSync();
    if (line === "blocked") return { pending: undefined };
    if (line === undefined || line === "") return 0;
    const [command = "", option = ""] = line.split(" ");
    if (command === "capabilities") {
      trace(`< ${line}`);
      fs.writeSync(1, preamble.capabilitiesAnswer(refPrefix));
    } else if (command === "option") {
      trace(`< ${line}`);
      fs.writeSync(1, preamble.SUPPORTED_OPTIONS.has(option) ? "ok\n" : "unsupported\n");
    } else if (line === "list for-push") {
      trace(`< ${line}`);
      fs.writeSync(1, preamble.LIST_FOR_PUSH_ANSWER);
    } else {
      trace(`< ${line}`);
      return { pending: line };
    }
  }
}

/** The commands whose code `foldIntoCodeCache` adds to the cache: a fetch (and clone), a push. */
const FOLDED_COMMANDS = new Set(["stateless-connect", "push"]);

async function run(argv: readonly string[]): Promise<never> {
  const refusal = nodeVersion.nodeRefusal();
  if (refusal !== undefined) {
    process.stderr.write(`git-remote-svc: ${refusal}\n`);
    process.exit(2);
  }
  let opening: number | { pending: string | undefined };
  try {
    opening = answerOpening(argv);
  } catch (error) {
    // git hung up (EPIPE): no one is left to answer or to tell; the helper ends quietly, as main.js does.
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
    process.exit(0);
  }
  if (typeof opening === "number") {
    trace(`exit maxRSS=${process.resourceUsage().maxRSS}KB`);
    process.exit(opening);
  }
  // Loaded only now: a helper asked for its capabilities alone reads nothing more.
  const loader = require("../core/load-bundle.cjs") as typeof import("../core/load-bundle.cjs");
  const file = path.join(__dirname, "bundle.cjs");
  const { exports: bundled, script } = loader.loadBundle(file);
  const main = bundled.main as Main;
  const code = await main(argv, undefined, opening.pending);
  if (code === 0)
    loader.foldIntoCodeCache(file, script, opening.pending?.split(" ")[0] ?? "", FOLDED_COMMANDS);
  // Exits as soon as stdout is flushed instead of waiting for idle sockets or timers; git waits for the exit.
  process.stdout.write("", () => process.exit(code));
  return new Promise<never>(() => {});
}

void run(process.argv.slice(2));
