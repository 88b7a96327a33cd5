import { Command, Option } from "clipanion";
import { SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";
import { CHECKS } from "../doctor/report.js";

/** Exit codes of svc doctor: 0 healthy, 1 a check failed (a folder that is no svc clone included). */
const HEALTHY = 0;
const PROBLEMS = 1;

export class DoctorCommand extends SvcCommand {
  static override paths = [["doctor"]];

  static override usage = Command.Usage({
    category: "Working with records",
    description: "Check a clone and what svc needs, each problem with the command that fixes it",
    details: `
      Checks the working tree in dir (default: the current folder) and what svc needs to serve it, changing
      nothing: the cache is opened read-only and the server gets at most one read-only request. One line per
      check (ok, FAIL, skipped, info); each FAIL is followed by \`fix: <command>\`, runnable as printed from
      the same folder, or, where svc cannot know a value (a credential) or the choice is yours, by \`fix:
      none to print;\` and what to do, in words. In a folder that is no svc clone, the fix asks the simulator
      svc init uses which projects it serves (GET /projects; not --offline). \`--json\` prints one object
      \`{"healthy", "checks": [{"id", "status", "message", "fix", …}]}\` instead. Exit 0 when healthy, 1
      otherwise.

      The checks, by id:

      ${CHECKS.map(([id, what]) => `- ${id}: ${what}`).join("\n      ")}
    `,
    examples: [
      ["Check the clone in the current folder", "svc doctor"],
      [
        "Check the clone in demo, for an agent, without asking the server",
        "svc doctor demo --json --offline",
      ],
    ],
  });

  dir = Option.String({ name: "dir", required: false });
  json = Option.Boolean("--json", false, { description: "One JSON object on stdout" });
  offline = Option.Boolean("--offline", false, { description: "Send no request to the server" });
  remote = withValueName(
    "remote",
    Option.String("--remote", "origin", { description: "The git remote to check (default origin)" }),
  );

  async run(): Promise<number> {
    const [{ runDoctor }, { isHealthy, renderJson, renderText }] = await Promise.all([
      import("../doctor/run.js"),
      import("../doctor/report.js"),
    ]);
    const findings = await runDoctor({
      dir: this.dir,
      remote: this.remote,
      offline: this.offline,
      env: process.env,
    });
    this.context.stdout.write(this.json ? renderJson(findings) : renderText(findings));
    return isHealthy(findings) ? HEALTHY : PROBLEMS;
  }
}
