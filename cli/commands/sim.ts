import { Command, Option } from "clipanion";
import { UserFacingError } from "../../core/errors.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

export class SimCommand extends SvcCommand {
  static override paths = [["sim"]];

  static override usage = Command.Usage({
    category: "The simulator",
    description: "Run the issue-tracker simulator on a loopback address",
    details: `
      Serves the simulator's REST surface on a loopback address until SIGINT or SIGTERM, then finishes the
      requests in flight, checkpoints the SQLite WAL and exits 0. The first line on stderr is
      \`svc-sim listening on http://<host>:<port>\`, with the real port when bound to port 0.
    `,
    examples: [
      ["Serve the demo project on the default address", "svc sim --seed-file fixtures/demo-seed.json"],
      ["A throwaway instance on a free port", "svc sim --ephemeral --bind 127.0.0.1:0"],
    ],
  });

  bind = withValueName(
    "host:port",
    Option.String("--bind", "127.0.0.1:7878", {
      description: "Listen address (loopback only; default 127.0.0.1:7878)",
    }),
  );
  db = withValueName(
    "file",
    Option.String("--db", "runtime/sim.db", {
      description: "SQLite file, created if absent (default runtime/sim.db)",
    }),
  );
  seedFile = withValueName(
    "file",
    Option.String("--seed-file", { description: "Seed JSON file loaded at start" }),
  );
  noSeed = Option.Boolean("--no-seed", false, { description: "Skip seeding even when --seed-file is given" });
  ephemeral = Option.Boolean("--ephemeral", false, { description: "In-memory store; every start is clean" });
  rateLimit = withValueName(
    "n",
    Option.String("--rate-limit", "100", {
      description: "Requests per second per agent (default 100; 0: no limit)",
    }),
  );

  async run(): Promise<number> {
    const { startSimServer } = await import("../../server/sim/server.js");
    const rateLimit = Number(this.rateLimit);
    if (!/^\d+(\.\d+)?$/.test(this.rateLimit) || !Number.isFinite(rateLimit)) {
      throw new UserFacingError(
        "SVC_USAGE",
        `--rate-limit ${JSON.stringify(this.rateLimit)} is not a number of requests per second; use for example 100, or 0 for no limit`,
      );
    }
    const sim = await startSimServer({
      bind: this.bind,
      db: this.db,
      ephemeral: this.ephemeral,
      seedFile: this.seedFile,
      noSeed: this.noSeed,
      rateLimit,
      logError: (message) => this.context.stderr.write(`${message}\n`),
    });
    this.context.stderr.write(`svc-sim listening on ${sim.url}\n`);
    for (const slug of sim.seed?.seeded ?? []) this.context.stderr.write(`svc-sim: seeded project ${slug}\n`);
    for (const slug of sim.seed?.skipped ?? []) {
      this.context.stderr.write(`svc-sim: project ${slug} already in the store; seed left it as it is\n`);
    }
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    this.context.stderr.write(`svc-sim: ${signal}, finishing requests in flight\n`);
    await sim.close();
    this.context.stderr.write("svc-sim: stopped\n");
    return EXIT.ok;
  }
}
