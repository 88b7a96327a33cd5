import { Command, Option } from "clipanion";
import { wikiConfig } from "../../backends/wiki/config.js";
import { UserFacingError } from "../../core/errors.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

export class SpacesCommand extends SvcCommand {
  static override paths = [["spaces"]];

  static override usage = Command.Usage({
    category: "Working with records",
    description: "List the wiki spaces the configured account can read",
    details: `
      Needs VENDOR_API_KEY, VENDOR_EMAIL, SVC_WIKI_TENANT and SVC_ALLOWED_ORIGINS (Document 3). Prints the
      key, name and URL of each space; a key (or its alias) is what \`svc init wiki::<KEY>\` takes.
    `,
    examples: [["List the spaces", "svc spaces --backend wiki"]],
  });

  backend = withValueName(
    "wiki",
    Option.String("--backend", "wiki", { description: "The backend (only wiki has spaces)" }),
  );
  format = withValueName("table|json", Option.String("--format", "table", { description: "table or json" }));

  async run(): Promise<number> {
    const { WikiBackend } = await import("../../backends/wiki/backend.js");
    if (this.backend !== "wiki") {
      throw new UserFacingError(
        "SVC_USAGE",
        `--backend ${this.backend}: only the wiki backend has spaces; use --backend wiki`,
      );
    }
    if (this.format !== "table" && this.format !== "json") {
      throw new UserFacingError("SVC_USAGE", `--format ${this.format} is not known; use table or json`);
    }
    const backend = WikiBackend.create(wikiConfig(), "", `svc-${process.pid}`);
    const spaces = await backend.spaces();
    if (this.format === "json") {
      this.context.stdout.write(
        `${JSON.stringify(
          spaces.map(({ key, name, url }) => ({ key, name, url })),
          null,
          2,
        )}\n`,
      );
    } else {
      const { formatTable } = await import("../table.js");
      this.context.stdout.write(
        formatTable(
          ["KEY", "NAME", "URL"],
          spaces.map((space) => [space.key, space.name, space.url]),
        ),
      );
    }
    return EXIT.ok;
  }
}
