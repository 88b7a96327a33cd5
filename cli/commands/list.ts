import { Command, Option } from "clipanion";
import type { BackendRecord } from "../../backends/backend.js";
import { wikiConfig } from "../../backends/wiki/config.js";
import { UserFacingError } from "../../core/errors.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

/** Document 3 "Limits": pages per list call. */
export const LIST_LIMIT = 500;

export class ListCommand extends SvcCommand {
  static override paths = [["list"]];

  static override usage = Command.Usage({
    category: "Working with records",
    description: "List the records of a project: wiki pages, tracker, forge or simulator issues",
    details: `
      For the wiki, the tracker and the forge, at most ${LIST_LIMIT} records are listed; with more, the first ${LIST_LIMIT} are
      printed and a warning goes to stderr, or, with \`--no-truncate\`, nothing is printed and the exit code is 1.
    `,
    examples: [
      ["The pages of a wiki space, as a table", "svc list --backend wiki --project DOCS --format table"],
      ["The issues of a forge repository", "svc list --backend forge --project acme/widgets"],
      ["The issues of the tracker project TEST", "svc list --backend tracker --project TEST"],
      ["The issues of the demo project, as JSON", "svc list --backend sim --project demo --format json"],
    ],
  });

  backend = withValueName(
    "wiki|tracker|forge|sim",
    Option.String("--backend", { required: true, description: "wiki, tracker, forge or sim" }),
  );
  project = withValueName(
    "project",
    Option.String("--project", {
      required: true,
      description:
        "Wiki space key (or alias), tracker project key, forge <owner>/<repo>, or sim project slug",
    }),
  );
  format = withValueName("table|json", Option.String("--format", "table", { description: "table or json" }));
  noTruncate = Option.Boolean("--no-truncate", false, {
    description: `Fail instead of listing only ${LIST_LIMIT} records`,
  });
  origin = withValueName(
    "url",
    Option.String("--origin", {
      description: "Where the simulator runs, for sim (default $SVC_SIM_ORIGIN, else http://127.0.0.1:7878)",
    }),
  );

  async run(): Promise<number> {
    if (this.format !== "table" && this.format !== "json") {
      throw new UserFacingError("SVC_USAGE", `--format ${this.format} is not known; use table or json`);
    }
    const records = await this.records(`svc-${process.pid}`);
    if (records === undefined) return EXIT.rejected;
    if (this.format === "json") {
      this.context.stdout.write(
        `${JSON.stringify(
          records.map((record) => ({ ...record.content.fields })),
          null,
          2,
        )}\n`,
      );
      return EXIT.ok;
    }
    const rows = records.map((record) => {
      const fields = record.content.fields;
      return [
        String(fields.key ?? fields.id ?? record.key),
        String(record.version ?? ""),
        record.updatedAt,
        String(fields.status ?? fields.parentId ?? ""),
        String(fields.title ?? ""),
      ];
    });
    const { formatTable } = await import("../table.js");
    const fourth = this.backend === "wiki" ? "PARENT" : "STATUS";
    this.context.stdout.write(formatTable(["ID", "VERSION", "UPDATED", fourth, "TITLE"], rows));
    return EXIT.ok;
  }

  /** The records to print; undefined when `--no-truncate` refuses a partial list (said on stderr). */
  private async records(agent: string): Promise<BackendRecord[] | undefined> {
    if (this.backend === "tracker") {
      const [{ TrackerBackend }, { trackerConfig }] = await Promise.all([
        import("../../backends/tracker/backend.js"),
        import("../../backends/tracker/config.js"),
      ]);
      const backend = TrackerBackend.create(trackerConfig(), this.project, agent);
      return this.firstOnes(
        await backend.listSome(LIST_LIMIT),
        "project",
        "issues",
        `tracker::${this.project}`,
      );
    }
    const project = this.project;
    if (this.backend === "wiki") {
      const { WikiBackend } = await import("../../backends/wiki/backend.js");
      const backend = WikiBackend.create(wikiConfig(), project, agent);
      return this.firstOnes(await backend.listSome(LIST_LIMIT), "space", "pages", `wiki::${project}`);
    }
    if (this.backend === "forge") {
      const [{ ForgeBackend }, { forgeConfig }] = await Promise.all([
        import("../../backends/forge/backend.js"),
        import("../../backends/forge/config.js"),
      ]);
      const backend = ForgeBackend.create(forgeConfig(), project, agent);
      return this.firstOnes(await backend.listSome(LIST_LIMIT), "repository", "issues", `forge::${project}`);
    }
    if (this.backend === "sim") {
      const origin = (this.origin ?? process.env.SVC_SIM_ORIGIN ?? "http://127.0.0.1:7878").replace(
        /\/+$/,
        "",
      );
      const [{ HttpClient }, { SimBackend }] = await Promise.all([
        import("../../core/http.js"),
        import("../../backends/sim/backend.js"),
      ]);
      const http = new HttpClient({ agent });
      http.checkEgress(origin);
      return [...(await new SimBackend(origin, project, http).listAll()).records];
    }
    throw new UserFacingError(
      "SVC_USAGE",
      `--backend ${this.backend} is not known; use wiki, tracker, forge or sim`,
    );
  }

  /** At most `LIST_LIMIT` records, with the warning (or, with `--no-truncate`, the refusal) when there are more. */
  private firstOnes(
    some: { records: BackendRecord[]; more: boolean },
    container: string,
    plural: string,
    spec: string,
  ): BackendRecord[] | undefined {
    if (!some.more) return some.records;
    const what = `${container} ${spec.slice(spec.indexOf("::") + 2)} has more than ${LIST_LIMIT} ${plural}`;
    if (this.noTruncate) {
      this.context.stderr.write(
        `svc: ${what}; --no-truncate refuses a partial list (svc init ${spec} clones them all)\n`,
      );
      return undefined;
    }
    this.context.stderr.write(
      `svc: warning: ${what}; showing the first ${LIST_LIMIT} (--no-truncate makes this an error)\n`,
    );
    return some.records;
  }
}
