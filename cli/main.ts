/**
 * `svc`: the command line (DESIGN.md §8). Usage errors go to stderr with exit 2, like every other error.
 *
 * Every command class is loaded at each start of svc (clipanion needs them all to parse), so a command
 * module imports only light things at its top and loads its implementation (SQLite, HTTP, git, the
 * simulator, the daemon) with `await import()` in `run()`: this keeps start-up at ~40 ms instead of ~115.
 */
import { type BaseContext, Builtins, Cli } from "clipanion";
import { InitCommand } from "./commands/init.js";
import { ListCommand } from "./commands/list.js";
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

export const VERSION = "0.1.0";

export function createCli(): Cli {
  const cli = new Cli({ binaryLabel: "svc", binaryName: "svc", binaryVersion: VERSION, enableColors: false });
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  cli.register(SimCommand);
  cli.register(InitCommand);
  cli.register(SyncCommand);
  cli.register(ListCommand);
  cli.register(SpacesCommand);
  cli.register(PulseDaemonCommand);
  cli.register(PulseTriggerCommand);
  cli.register(PulseMigrateCommand);
  cli.register(PulseBackupCommand);
  cli.register(PulseHeartbeatCommand);
  cli.register(PulseKeepaliveCommand);
  cli.register(PulseListenerCommand);
  cli.register(PulseProviderOauthCommand);
  return cli;
}

export async function runCli(argv: readonly string[], context: Partial<BaseContext> = {}): Promise<number> {
  const cli = createCli();
  const full = { ...Cli.defaultContext, ...context };
  let command: ReturnType<Cli["process"]>;
  try {
    command = cli.process([...argv], full);
  } catch (error) {
    full.stderr.write(cli.error(error, { colored: false }));
    return 2;
  }
  return cli.run(command, full);
}
