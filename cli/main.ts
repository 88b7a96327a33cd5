/**
 * `svc`: the command line (DESIGN.md §8). clipanion parses; the help and the refusals are svc's own
 * (cli/help.ts, cli/usage-error.ts): help goes to stdout with exit 0, a refused command line to stderr with
 * exit 2 and the command to run instead, like every other error.
 *
 * Every command class is loaded at each start of svc (clipanion needs them all to parse), so a command
 * module imports only light things at its top and loads its implementation (SQLite, HTTP, git, the
 * simulator, the daemon) with `await import()` in `run()`: this keeps start-up at ~40 ms instead of ~115.
 */
import { type BaseContext, Builtins, Cli, type CommandClass } from "clipanion";
import { SVC_VERSION } from "../core/version.js";
import { remoteUrlOf } from "../git/user-git.js";
import { EXIT, SvcCommand } from "./command.js";
import {
  type CommandSpec,
  describeCommand,
  groupPrefix,
  leadingWords,
  longestCommand,
} from "./command-spec.js";
import { DoctorCommand } from "./commands/doctor.js";
import { InitCommand } from "./commands/init.js";
import { ListCommand } from "./commands/list.js";
import { LogCommand } from "./commands/log.js";
import { MirrorCommand } from "./commands/mirror.js";
import { PulseBackupCommand } from "./commands/pulse-backup.js";
import { PulseDaemonCommand } from "./commands/pulse-daemon.js";
import { PulseHeartbeatCommand } from "./commands/pulse-heartbeat.js";
import { PulseKeepaliveCommand } from "./commands/pulse-keepalive.js";
import { PulseListenerCommand } from "./commands/pulse-listener.js";
import { PulseMigrateCommand } from "./commands/pulse-migrate.js";
import { PulseProviderOauthCommand } from "./commands/pulse-provider.js";
import { PulseTriggerCommand } from "./commands/pulse-trigger.js";
import { SimCommand } from "./commands/sim.js";
import { SpacesCommand } from "./commands/spaces.js";
import { SyncCommand } from "./commands/sync.js";
import { renderCommandHelp, renderGroupHelp, renderOverview } from "./help.js";
import { explainRefusal } from "./usage-error.js";

/** Every command, in the order `svc --help` lists them (grouped by their `usage.category`). */
export const COMMANDS: readonly CommandClass[] = [
  InitCommand,
  SyncCommand,
  LogCommand,
  DoctorCommand,
  ListCommand,
  SpacesCommand,
  MirrorCommand,
  SimCommand,
  PulseDaemonCommand,
  PulseListenerCommand,
  PulseTriggerCommand,
  PulseMigrateCommand,
  PulseHeartbeatCommand,
  PulseKeepaliveCommand,
  PulseBackupCommand,
  PulseProviderOauthCommand,
];

export function createCli(commands: readonly CommandClass[] = COMMANDS): Cli {
  const cli = new Cli({
    binaryLabel: "svc",
    binaryName: "svc",
    binaryVersion: SVC_VERSION,
    enableColors: false,
  });
  cli.register(Builtins.VersionCommand);
  for (const command of commands) cli.register(command);
  return cli;
}

/**
 * The commands `argv` can name: those whose path begins with its first word, or every command when none
 * does (so that a refusal weighs them all, as before). clipanion builds its parser from every command it
 * is given, which took ~9-14 ms of each start with all of them and is nearly nothing with the one or the
 * few (`svc pulse …`) a command line can name.
 */
export function candidateCommands(argv: readonly string[]): readonly CommandClass[] {
  const first = argv[0];
  const named = COMMANDS.filter((command) => command.paths?.some((path) => path[0] === first));
  return named.length > 0 ? named : COMMANDS;
}

/** The declarations of every command, for the help and the refusals. */
export function commandSpecs(): CommandSpec[] {
  return COMMANDS.map(describeCommand);
}

export async function runCli(argv: readonly string[], context: Partial<BaseContext> = {}): Promise<number> {
  const full = { ...Cli.defaultContext, ...context };
  for (const stream of [full.stdout, full.stderr]) endQuietlyWhenClosed(stream);
  const help = helpFor(argv);
  if (help !== undefined) {
    full.stdout.write(help);
    return EXIT.ok;
  }
  const cli = createCli(candidateCommands(argv));
  let command: ReturnType<Cli["process"]>;
  try {
    command = cli.process([...argv], full);
  } catch (error) {
    const words = argv[0] === "help" ? argv.slice(1) : argv;
    const inside = (await remoteUrlOf("origin"))?.startsWith("svc::") ?? false;
    full.stderr.write(
      explainRefusal(words, commandSpecs(), { insideSvcClone: () => inside }, (error as Error).message),
    );
    return EXIT.broken;
  }
  if (command instanceof SvcCommand) command.argv = argv;
  return cli.run(command, full);
}

/**
 * Ends svc at once and says nothing when the reader of its stdout or stderr went away (`svc log | head -1`):
 * what it would still print has no one to read it. The exit status is the one the command already
 * decided, else 0. Node ignores SIGPIPE and reports the failed write as an 'error' event on the stream,
 * which unhandled crashed svc with `Error: write EPIPE` and a stack.
 */
function endQuietlyWhenClosed(stream: NodeJS.WritableStream): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(process.exitCode ?? EXIT.ok);
  });
}

/**
 * The help `argv` asks for, or undefined when it asks for none: `svc`, `svc --help` and `svc help` give the
 * overview; `-h` or `--help` anywhere before `--` (`svc init sim::demo --help`), or `svc help <command>`,
 * give that command's help (`svc pulse --help`: the group's). Help for a command that does not exist is
 * undefined: the refusal says what exists.
 */
export function helpFor(argv: readonly string[]): string | undefined {
  if (argv.length === 0) return renderOverview(commandSpecs(), SVC_VERSION);
  const asked = argv[0] === "help";
  const rest = asked ? argv.slice(1) : argv;
  const end = rest.indexOf("--");
  const flagged = (end === -1 ? rest : rest.slice(0, end)).some((token) =>
    /^(-h|--help)(=\d+)?$/.test(token),
  );
  if (!asked && !flagged) return undefined;
  const specs = commandSpecs();
  const words = leadingWords(rest);
  if (words.length === 0) return renderOverview(specs, SVC_VERSION);
  const spec = longestCommand(words, specs);
  if (spec) return renderCommandHelp(spec);
  const group = groupPrefix(words, specs);
  if (group.length === words.length) return renderGroupHelp(group, specs);
  return undefined;
}
