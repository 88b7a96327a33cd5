/**
 * `svc mirror <svc-remote-url> <mirror-git-url> [--branch <name>] [--dry-run]`: the mirror's command line.
 * The mirror itself (its steps, messages and exit codes 0/1/2) is cli/mirror/refresh.ts, which the
 * `scripts/mirror-refresh` launcher runs too; this names `svc mirror` in its refusals and in the command it
 * prints to run again.
 */
import { Command, Option } from "clipanion";
import { shellWord } from "../../core/errors.js";
import { SvcCommand } from "../command.js";
import { describeCommand, usageLine, withValueName } from "../command-spec.js";
import type { MirrorUsage } from "../mirror/command-line.js";

const EXAMPLE = "svc mirror svc::http://127.0.0.1:7878/projects/demo /srv/git/demo-mirror.git";

export class MirrorCommand extends SvcCommand {
  static override paths = [["mirror"]];

  static override usage = Command.Usage({
    category: "Working with records",
    description: "Copy a project's records onto a branch of a plain git repository",
    details: `
      Overlays the records folder of an svc project (pages/ for a wiki, issues/ for the others) onto a
      plain git repository and fast-forwards its branch. The mirror's other files (a README, CI files)
      stay as they are. It never writes to the backend and never force-pushes.

        <svc-remote-url>  the project's svc remote as \`git remote -v\` shows
                          it, with or without svc::, e.g.
                          svc::http://127.0.0.1:7878/projects/demo;
                          credentials come from the environment, as for
                          svc init (VENDOR_EMAIL and VENDOR_API_KEY for a
                          wiki, ...)
        <mirror-git-url>  any URL git can push to: a bare repository on
                          disk, a forge, an internal host; not an svc::
                          remote, and no password in it

      Each run syncs the project's cache with a full listing (as \`svc sync --reconcile\` does, so records
      deleted on the server leave the mirror), commits the records on the mirror's tip only if they
      changed (the same records on the same tip give the same commit id), pushes with plain \`git push\`,
      then fetches the branch back and compares every file of the records folder with the cache byte for
      byte. A mirror that moved since it was read refuses the push; nothing is overwritten, and the next
      run builds on its new tip.

      For the wiki test space (SVC_WIKI_TEST_SPACE) it refuses unless the two durable fixture pages
      SVC_WIKI_DURABLE_PARENT_ID and SVC_WIKI_DURABLE_CHILD_ID are in the listing and labelled
      svc-durable-fixture.

      Exit codes:

        0  up to date, or fast-forwarded and verified; or a dry run
        1  the mirror refused the push (it moved since it was read, a hook
           declined), or the verification found a difference
        2  bad arguments or URLs, missing credentials, an unreachable backend
           or mirror, or the wiki test space without its durable pages

      \`scripts/mirror-refresh\` (and \`npm run mirror-refresh --\`) in svc's folder runs the same with the
      same arguments.
    `,
    examples: [
      ["Mirror project demo of the simulator into a bare repository on disk", EXAMPLE],
      [
        "List what would change on the branch records, pushing nothing",
        "svc mirror svc::http://127.0.0.1:7878/projects/demo /srv/git/demo-mirror.git --branch records --dry-run",
      ],
    ],
  });

  remote = Option.String({ name: "svc-remote-url" });
  mirror = Option.String({ name: "mirror-git-url" });
  branch = withValueName(
    "name",
    Option.String("--branch", "main", {
      description: "The mirror's branch (default main); an absent one gets a first commit",
    }),
  );
  dryRun = Option.Boolean("--dry-run", false, {
    description: "List on stdout what would be added (A), changed (M), removed (D); push nothing",
  });

  async run(): Promise<number> {
    const [{ checkMirrorUrl }, { refreshMirror }] = await Promise.all([
      import("../mirror/command-line.js"),
      import("../mirror/refresh.js"),
    ]);
    // For the refusals the mirror makes itself (cli/mirror/command-line.ts): the usage line help prints.
    const usage: MirrorUsage = {
      line: usageLine(describeCommand(MirrorCommand)),
      example: EXAMPLE,
      help: "svc mirror --help",
    };
    const rerun = (argv: readonly string[]) => ["svc", ...argv].map(shellWord).join(" ");
    checkMirrorUrl(this.mirror, usage, (clean) =>
      rerun(this.argv.map((arg) => (arg === this.mirror ? clean : arg))),
    );
    return refreshMirror(
      { remote: this.remote, mirror: this.mirror, branch: this.branch, dryRun: this.dryRun },
      {
        stdout: (text) => this.context.stdout.write(text),
        stderr: (text) => this.context.stderr.write(text),
        env: this.context.env,
        rerun: rerun(this.argv),
        usage,
      },
    );
  }
}
