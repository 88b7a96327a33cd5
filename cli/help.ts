/**
 * The help `svc` prints: the overview (`svc --help`), a group (`svc pulse --help`) and one command
 * (`svc init --help`), rendered from the commands' declarations (cli/command-spec.ts). Pure functions of
 * their input; cli/main.ts decides which one a command line asks for.
 *
 * Every command line in the help is runnable as printed: no `$ ` prompt in front of examples, no `#0`.
 */
import { type CommandSpec, optionWithValue, startsWith, usageLine } from "./command-spec.js";

const WIDTH = 80;

/** `svc --help` (and `svc` alone): the commands grouped by category, each with its one-line description. */
export function renderOverview(specs: readonly CommandSpec[], version: string): string {
  const lines = [
    `svc ${version}: issue trackers and wikis as git repositories`,
    "",
    "Usage: svc <command> [arguments] [options]",
  ];
  const width = Math.max(...specs.map((spec) => commandName(spec).length));
  for (const category of categories(specs)) {
    lines.push("", category);
    for (const spec of specs.filter((each) => each.category === category)) {
      lines.push(`  ${commandName(spec).padEnd(width)}  ${spec.description}`);
    }
  }
  lines.push(
    "",
    "Inside a clone made by svc init, git itself does the rest: git pull, git commit, git push.",
    "Each command's arguments, options and examples: svc <command> --help, e.g. svc init --help",
    "",
  );
  return lines.join("\n");
}

/** `svc pulse --help`: the commands whose path starts with `prefix`. */
export function renderGroupHelp(prefix: readonly string[], specs: readonly CommandSpec[]): string {
  const members = specs.filter((spec) => startsWith(spec.path, prefix));
  const width = Math.max(...members.map((spec) => commandName(spec).length));
  const group = `svc ${prefix.join(" ")}`;
  const [category] = categories(members);
  const first = members[0] ? commandName(members[0]) : group;
  return [
    `${group}: ${category ?? "commands"}`,
    "",
    ...members.map((spec) => `  ${commandName(spec).padEnd(width)}  ${spec.description}`),
    "",
    `Each command's arguments, options and examples: ${group} <command> --help, e.g. ${first} --help`,
    "",
  ].join("\n");
}

/** `svc init --help`: description, usage line, options, details, examples. */
export function renderCommandHelp(spec: CommandSpec): string {
  const lines = [`${commandName(spec)}: ${spec.description}`, "", `Usage: ${usageLine(spec)}`];
  if (spec.options.length > 0) {
    const shown = spec.options.map((option) => {
      const also = option.names.slice(1);
      const notes = [option.required ? "required" : "", also.length > 0 ? `also ${also.join(", ")}` : ""];
      const note = notes.filter((each) => each !== "").join("; ");
      return {
        definition: optionWithValue(option),
        description: note === "" ? option.description : `${option.description} (${note})`,
      };
    });
    const width = Math.max(...shown.map(({ definition }) => definition.length));
    const indent = " ".repeat(width + 4);
    lines.push("", "Options");
    for (const { definition, description } of shown) {
      const text = wrap(description, Math.max(WIDTH - indent.length, 30), "", indent);
      lines.push(`  ${definition.padEnd(width)}  ${text}`);
    }
  }
  const details = formatParagraphs(spec.details);
  if (details !== "") lines.push("", details);
  if (spec.examples.length > 0) {
    lines.push("", "Examples");
    for (const [what, command] of spec.examples) {
      lines.push(`  ${/[?:.!]$/.test(what) ? what : `${what}:`}`, `    ${command}`);
    }
  }
  lines.push("");
  return lines.join("\n");
}

/** `svc pulse daemon`. */
export function commandName(spec: CommandSpec): string {
  return ["svc", ...spec.path].join(" ");
}

/** The categories in the order their first command appears. */
function categories(specs: readonly CommandSpec[]): string[] {
  return [...new Set(specs.map((spec) => spec.category))];
}

/**
 * `static usage` details as printed: the template literal's indentation removed, paragraphs (separated by
 * blank lines) wrapped at 80 columns (never inside a `code span`), `- ` items wrapped with a hanging indent. A paragraph whose lines are
 * all indented further is a block (a table of forms, a command) and is kept line for line.
 */
export function formatParagraphs(text: string): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const indent = Math.min(
    ...lines.filter((line) => line.trim() !== "").map((line) => line.length - line.trimStart().length),
  );
  const paragraphs = lines
    .map((line) => line.slice(indent).trimEnd())
    .join("\n")
    .split(/\n{2,}/)
    .map((paragraph) => paragraph.replace(/^\n+|\n+$/g, ""))
    .filter((paragraph) => paragraph !== "");
  return paragraphs
    .map((paragraph) => {
      const paragraphLines = paragraph.split("\n");
      if (paragraphLines.every((line) => line.startsWith("  "))) return paragraph;
      const items: string[] = [];
      for (const line of paragraphLines) {
        if (line.startsWith("- ") || items.length === 0) items.push(line);
        else items[items.length - 1] += ` ${line.trim()}`;
      }
      return items
        .map((item) =>
          item.startsWith("- ") ? wrap(item.slice(2), WIDTH - 2, "- ", "  ") : wrap(item, WIDTH, "", ""),
        )
        .join("\n");
    })
    .join("\n\n");
}

function wrap(text: string, width: number, firstPrefix: string, restPrefix: string): string {
  const out: string[] = [];
  let line = "";
  // A `code span` is never broken across lines.
  for (const word of text.match(/(?:`[^`]*`|[^\s`]|`)+/g) ?? []) {
    if (line !== "" && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") out.push(line);
  return out.map((each, index) => `${index === 0 ? firstPrefix : restPrefix}${each}`).join("\n");
}
