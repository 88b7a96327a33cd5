import { Command, Option } from "clipanion";
import { UserFacingError } from "../../core/errors.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

export class LogCommand extends SvcCommand {
  static override paths = [["log"]];

  static override usage = Command.Usage({
    category: "Working with records",
    description: "What changed on the server and when, as this machine's cache saw it",
    details: `
      Lists, newest first, each state of the project that this machine's cache noted (a sync that found
      changes, a push made from here) with the records that changed since the state before: created,
      changed (and which frontmatter fields, and whether the body), deleted; the time the server gives the
      new version; who made it where the backend says (the wiki names each version's author) and, for a
      push from here, the pushed commit's author.

      This is what this machine observed, not the server's own audit trail: two edits of a record between
      two syncs are one change here, and svc sync (or git fetch) brings the changes made since the last one.
      The history begins when the cache was made. A cache that was rebuilt begins again: its first listing
      continues the working tree's origin/main and lists the records that changed since that state.

      --since keeps the changes made on the server at or after that time (a deletion: seen here at or after
      it). Times: 2026-11-23T14:30:00Z, 2026-11-23T14:30:00+01:00, 2026-11-23 14:30 (local time),
      2026-11-23, "3 hours ago" (or 3h ago, "2h 30m ago"), @<seconds since 1970>, now. Files after -- keep
      those records only.
    `,
    examples: [
      ["What changed in the working tree of the current folder", "svc log"],
      [
        "The changes in demo since midnight (local time) of 22 November 2026",
        "svc log demo --since 2026-11-22",
      ],
      ["The changes of one record", "svc log -- issues/0001.md"],
      ["The same as JSON, for scripts and agents", "svc log --json -- issues/0001.md"],
    ],
  });

  words = Option.Rest({ name: "[dir] [-- <file>...]" });
  since = withValueName(
    "time",
    Option.String("--since", { description: "Only changes made at or after this time" }),
  );
  json = Option.Boolean("--json", false, {
    description: "One JSON object: the remote, the last sync and the states, newest first",
  });
  remote = withValueName(
    "remote",
    Option.String("--remote", "origin", {
      description: "The git remote whose history to show (default origin)",
    }),
  );

  async run(): Promise<number> {
    const { showLog } = await import("../history.js");
    const files = this.wordsAfterDashes();
    const before = this.words.slice(0, this.words.length - files);
    if (before.length > 1) {
      throw new UserFacingError(
        "SVC_USAGE",
        `svc log takes one folder, then files after --; for example: svc log ${before[0]} -- ${before.slice(1).join(" ")}`,
      );
    }
    await showLog({
      dir: before[0] ?? ".",
      files: this.words.slice(this.words.length - files),
      since: this.since,
      json: this.json,
      remote: this.remote,
      stdout: this.context.stdout,
      stderr: this.context.stderr,
    });
    return EXIT.ok;
  }
}
