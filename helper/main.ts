/**
 * `git-remote-svc <remote> <url>`: the remote helper (gitremote-helpers(7); DESIGN.md §4).
 *
 * stdout carries only the protocol; everything for people goes to stderr. Startup is on the hot path (git
 * starts the helper once per lazy fetch), so this module loads only the pkt-line reader; the cache, SQLite
 * and the backend are imported when a command needs them.
 */
import { ByteReader } from "./pktline.js";
import type { Session } from "./session.js";

/** Exit codes (DESIGN.md §4): 0 ok, 1 push rejected, 2 broken. */
const EXIT_REJECTED = 1;
const EXIT_BROKEN = 2;

function remoteRefPrefix(remote: string): string {
  return /^[A-Za-z0-9._-]+$/.test(remote) ? remote : "svc-url";
}

export async function main(
  argv: readonly string[],
  io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const [remote = "", url = ""] = argv;
  const log = (message: string) => io.stderr.write(`${message}\n`);
  const started = performance.now();
  const trace = process.env.SVC_TRACE
    ? (message: string) =>
        log(`svc-trace ${process.pid} +${Math.round(performance.now() - started)}ms ${message}`)
    : () => {};
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
  const input = new ByteReader(io.stdin);
  const refPrefix = `refs/svc/${remoteRefPrefix(remote)}`;
  let session: Session | undefined;
  let rejected = false;
  const open = async () => {
    if (!session) {
      const { openSession } = await import("./session.js");
      session = await openSession({ remote, url, privateRefPrefix: refPrefix, log, trace });
    }
    return session;
  };

  try {
    for (;;) {
      const line = await input.readLine();
      if (line === undefined || line === "") return rejected ? EXIT_REJECTED : 0;
      trace(`< ${line}`);
      const [command = "", ...args] = line.split(" ");
      switch (command) {
        case "capabilities":
          io.stdout.write(`stateless-connect\nimport\npush\nrefspec refs/heads/*:${refPrefix}/*\noption\n\n`);
          break;
        case "option": {
          const [name] = args;
          io.stdout.write(
            name === "from-promisor" || name === "verbosity" || name === "progress"
              ? "ok\n"
              : "unsupported\n",
          );
          break;
        }
        case "list": {
          if (args[0] === "for-push") {
            // Unknown on purpose: with the real id git would lazily fetch it and then refuse, by itself, a
            // user who is behind on other records; staleness is judged per record by the push itself.
            io.stdout.write("? refs/heads/main\n@refs/heads/main HEAD\n\n");
            break;
          }
          const current = await open();
          const tip = await current.prepare({ sync: true });
          io.stdout.write(`${tip} refs/heads/main\n@refs/heads/main HEAD\n\n`);
          break;
        }
        case "import": {
          const refs = [args.join(" ")];
          for (;;) {
            const next = await input.readLine();
            if (next === undefined || next === "") break;
            if (next.startsWith("import ")) refs.push(next.slice(7));
          }
          const current = await open();
          await current.importRefs(`${refPrefix}/main`, io.stdout);
          break;
        }
        case "push": {
          const specs = [args.join(" ")];
          for (;;) {
            const next = await input.readLine();
            if (next === undefined || next === "") break;
            if (next.startsWith("push ")) specs.push(next.slice(5));
          }
          const current = await open();
          const replies = await current.push(specs);
          io.stdout.write(`${replies.join("\n")}\n\n`);
          // `error <ref> up to date` is how git is told there was nothing to push ("Everything up-to-date"),
          // not a rejection: git exits with the helper's status, and a no-op push must exit 0.
          if (replies.some((reply) => reply.startsWith("error") && !/^error \S+ up to date$/.test(reply)))
            rejected = true;
          break;
        }
        case "stateless-connect": {
          if (args[0] !== "git-upload-pack") {
            io.stdout.write("fallback\n");
            break;
          }
          const current = await open();
          io.stdout.write("\n");
          await current.serve(input, io.stdout);
          return 0;
        }
        default:
          log(
            `git-remote-svc: unknown command ${JSON.stringify(line.slice(0, 80))}; this helper speaks stateless-connect and import`,
          );
          return EXIT_BROKEN;
      }
    }
  } catch (error) {
    const { SvcError } = await import("../backends/errors.js");
    // An error whose message is already on stderr (written before git was answered) is not repeated.
    if (error instanceof SvcError) {
      if (error.data.reported !== true) log(`svc: ${error.message}`);
    } else log(`svc: internal error (a bug in svc, please report it):\n${(error as Error).stack}`);
    return EXIT_BROKEN;
  } finally {
    session?.close();
    trace(`exit maxRSS=${process.resourceUsage().maxRSS}KB`);
  }
}
