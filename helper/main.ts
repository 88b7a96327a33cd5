/**
 * `git-remote-svc <remote> <url>`: the remote helper (gitremote-helpers(7); DESIGN.md §4). It speaks
 * `stateless-connect` (fetch and clone, protocol v2), `import` (git's fallback for fetch), `push`, `list` and
 * `option`. `git-remote-svc --version` prints `git-remote-svc <version>` (svc doctor compares it with svc's).
 *
 * stdout carries only the protocol; everything for people goes to stderr. Startup is on the hot path (git
 * starts the helper once per lazy fetch), so this module loads only the pkt-line reader; the cache, SQLite
 * and the backend are imported when a command needs them.
 */
import type { Writable } from "node:stream";
import { terminalSafe } from "../core/errors.js";
import { ByteReader } from "./pktline.js";
import preamble from "./preamble.cjs";
import type { Session } from "./session.js";

/** Exit codes (DESIGN.md §4): 0 ok, 1 push rejected, 2 broken. */
const EXIT_REJECTED = 1;
const EXIT_BROKEN = 2;

/** What answering git's commands needs: where they come from and go, and the session, opened on first need. */
interface HelperContext {
  readonly io: { stdout: Writable };
  readonly input: ByteReader;
  /** `refs/svc/<remote>`: where the helper's refspec puts the server's branches. */
  readonly refPrefix: string;
  readonly log: (message: string) => void;
  readonly open: () => Promise<Session>;
  /** Set when a push had a ref rejected: the helper then exits with EXIT_REJECTED. */
  rejected: boolean;
  /** Set when a push stopped at a local fault (a full or read-only cache): the helper exits with EXIT_BROKEN. */
  broken: boolean;
  /** The command being answered: a failure's report says what it had done. */
  answering: HelperCommand["name"] | undefined;
}

/** `SVC_TRACE`'s lines on stderr, stamped with the milliseconds since the process started; or nothing. */
function traceTo(log: (message: string) => void): (message: string) => void {
  return process.env.SVC_TRACE ? (message: string) => log(preamble.traceLine(message)) : () => {};
}

/** The rest of a batch (`import …` or `push …` lines ended by a blank line): the arguments of `command`'s lines. */
async function readBatch(input: ByteReader, command: string): Promise<string[]> {
  const args: string[] = [];
  for (;;) {
    const next = await input.readLine();
    if (next === undefined || next === "") return args;
    if (next.startsWith(`${command} `)) args.push(next.slice(command.length + 1));
  }
}

async function answerList(context: HelperContext, forPush: boolean): Promise<void> {
  if (forPush) {
    context.io.stdout.write(preamble.LIST_FOR_PUSH_ANSWER);
    return;
  }
  const session = await context.open();
  const tip = await session.prepare({ sync: true });
  context.io.stdout.write(`${tip} refs/heads/main\n@refs/heads/main HEAD\n\n`);
}

async function answerPush(context: HelperContext, first: string): Promise<void> {
  const specs = [first, ...(await readBatch(context.input, "push"))];
  const session = await context.open();
  const { replies, broken } = await session.push(specs);
  context.io.stdout.write(`${replies.join("\n")}\n\n`);
  // `error <ref> up to date` is how git is told there was nothing to push ("Everything up-to-date"),
  // not a rejection: git exits with the helper's status, and a no-op push must exit 0.
  if (replies.some((reply) => reply.startsWith("error") && !/^error \S+ up to date$/.test(reply)))
    context.rejected = true;
  if (broken) context.broken = true;
}

/**
 * One command line git writes to a remote helper (gitremote-helpers(7) "COMMANDS"), as this helper reads it:
 * words split at single spaces, the first names the command. Anything else is `unknown`, with the line
 * `refusal` the helper writes on stderr before it exits.
 */
export type HelperCommand =
  | { readonly name: "capabilities" }
  | { readonly name: "option"; readonly option: string; readonly supported: boolean }
  | { readonly name: "list"; readonly forPush: boolean }
  | { readonly name: "import" }
  | { readonly name: "push"; readonly spec: string }
  | { readonly name: "stateless-connect"; readonly service: string }
  | { readonly name: "unknown"; readonly refusal: string };

/** Reads one command line (without its newline). Pure; never throws. */
export function parseHelperCommand(line: string): HelperCommand {
  const [command = "", ...args] = line.split(" ");
  switch (command) {
    case "capabilities":
      return { name: "capabilities" };
    case "option": {
      const option = args[0] ?? "";
      return { name: "option", option, supported: preamble.SUPPORTED_OPTIONS.has(option) };
    }
    case "list":
      return { name: "list", forPush: args[0] === "for-push" };
    case "import":
      // git names each ref it wants; the helper has one branch and imports it whichever git named.
      return { name: "import" };
    case "push":
      return { name: "push", spec: args.join(" ") };
    case "stateless-connect":
      return { name: "stateless-connect", service: args[0] ?? "" };
    default:
      return {
        name: "unknown",
        refusal: `git-remote-svc: unknown command ${JSON.stringify(line.slice(0, 80))}; this helper speaks stateless-connect, import and push`,
      };
  }
}

/** Answers one command line; returns the exit code when the helper is done, undefined to read on. */
async function answerCommand(context: HelperContext, line: string): Promise<number | undefined> {
  const { io, input, refPrefix } = context;
  const command = parseHelperCommand(line);
  context.answering = command.name;
  switch (command.name) {
    case "capabilities":
      io.stdout.write(preamble.capabilitiesAnswer(refPrefix));
      return undefined;
    case "option":
      io.stdout.write(command.supported ? "ok\n" : "unsupported\n");
      return undefined;
    case "list":
      await answerList(context, command.forPush);
      return undefined;
    case "import": {
      await readBatch(input, "import");
      const session = await context.open();
      await session.importRefs(`${refPrefix}/main`, io.stdout);
      return undefined;
    }
    case "push":
      await answerPush(context, command.spec);
      return undefined;
    case "stateless-connect": {
      if (command.service !== "git-upload-pack") {
        io.stdout.write("fallback\n");
        return undefined;
      }
      const session = await context.open();
      io.stdout.write("\n");
      await session.serve(input, io.stdout);
      return 0;
    }
    case "unknown":
      context.log(command.refusal);
      return EXIT_BROKEN;
  }
}

/**
 * Says on stderr why the helper failed: a user-facing failure once, a local fault (a full or read-only
 * cache) named with what the command had done and the user's command to run again, a bug with its stack and
 * how to report it.
 */
async function reportFailure(
  error: unknown,
  log: (message: string) => void,
  answering: HelperContext["answering"],
): Promise<void> {
  const [{ failureReport, SvcError }, { SVC_VERSION }, { asLocalFault }, { rerunCommand }] =
    await Promise.all([
      import("../core/errors.js"),
      import("../core/version.js"),
      import("../cache/local-fault.js"),
      import("../git/user-command.js"),
    ]);
  // An error whose message is already on stderr (written before git was answered) is not repeated.
  if (error instanceof SvcError && error.data.reported === true) return;
  // A push that got as far as writing says so itself (helper/push-writes.ts); one that fails here wrote nothing.
  const outcome = answering === "push" ? "nothing was written to the server" : "nothing was fetched";
  const fault = asLocalFault(error, { outcome, rerun: rerunCommand() });
  log(failureReport(fault ?? error, SVC_VERSION).trimEnd());
}

/**
 * Answers git's commands on `io` until git is done. `pending` is a command line bin.cjs read and left to
 * this function: it is answered first, then the rest is read from `io.stdin`.
 */
export async function main(
  argv: readonly string[],
  io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
  pending?: string,
): Promise<number> {
  const [remote = "", url = ""] = argv;
  // Messages quote servers and records: no control character of theirs reaches the terminal.
  const log = (message: string) => io.stderr.write(`${terminalSafe(message)}\n`);
  if (argv.length === 1 && remote === "--version") {
    // For `svc doctor`, which compares it with svc's own. git always passes a URL as well.
    const { SVC_VERSION } = await import("../core/version.js");
    io.stdout.write(`git-remote-svc ${SVC_VERSION}\n`);
    return 0;
  }
  const trace = traceTo(log);
  trace("helper code loaded");
  if (url === "") {
    log(
      "usage: git-remote-svc <remote> <url>; git runs it for svc:: URLs, e.g. git clone svc::http://127.0.0.1:7878/projects/demo",
    );
    return EXIT_BROKEN;
  }
  // git may hang up at any moment (it exits as soon as it reads an ERR packet, or on Ctrl-C). Node reports
  // the failed write (EPIPE) as an 'error' event later; unhandled, it would crash with a stack trace.
  io.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") log(`git-remote-svc: cannot write to git: ${error.message}`);
  });
  const refPrefix = preamble.privateRefPrefix(remote);
  let session: Session | undefined;
  const context: HelperContext = {
    io,
    input: new ByteReader(io.stdin),
    refPrefix,
    log,
    open: async () => {
      if (!session) {
        const { openSession } = await import("./session.js");
        trace("session code loaded");
        session = await openSession({ remote, url, privateRefPrefix: refPrefix, log, trace });
      }
      return session;
    },
    rejected: false,
    broken: false,
    answering: undefined,
  };

  try {
    for (let next = pending; ; next = undefined) {
      const line = next ?? (await context.input.readLine());
      if (line === undefined || line === "")
        return context.broken ? EXIT_BROKEN : context.rejected ? EXIT_REJECTED : 0;
      // bin.cjs traced the line it left pending.
      if (next === undefined) trace(`< ${line}`);
      const exit = await answerCommand(context, line);
      if (exit !== undefined) return exit;
    }
  } catch (error) {
    await reportFailure(error, log, context.answering);
    return EXIT_BROKEN;
  } finally {
    session?.close();
    trace(`exit maxRSS=${process.resourceUsage().maxRSS}KB`);
  }
}
