/**
 * What a command class declares (its path, `static usage`, options and positional arguments), read as data
 * for the help (cli/help.ts) and for explaining a refused command line (cli/usage-error.ts).
 *
 * clipanion keeps these declarations in a private builder and prints an option's value as `#0`
 * (`--origin #0`). We read the same declarations by handing each option field's own `definition` a
 * recording builder, so what the help shows is exactly what clipanion parses; the value's name comes from
 * `withValueName`. Also here: which command (or group of commands, `svc pulse`) the words of a command line
 * name, for the help and the refusals alike.
 */
import { Command, type CommandClass } from "clipanion";

const VALUE_NAME = Symbol("svc/valueName");

/**
 * Names the value of a string option in help and usage lines: `withValueName("url", Option.String("--origin"))`
 * shows `--origin <url>`. Returns the option unchanged (its type too), so it wraps any `Option.String(…)`.
 */
export function withValueName<T>(valueName: string, option: T): T {
  (option as unknown as Record<symbol, string>)[VALUE_NAME] = valueName;
  return option;
}

export interface OptionSpec {
  /** `["--environment", "--env-file"]`: the first is the one help shows. */
  readonly names: readonly string[];
  /** The value's name (`url`), or undefined for a flag that takes no value (`--reconcile`). */
  readonly valueName: string | undefined;
  readonly required: boolean;
  readonly description: string;
}

export interface PositionalSpec {
  readonly name: string;
  readonly required: boolean;
  /** A rest argument: any number of words (`<prompt>...`). */
  readonly repeated: boolean;
}

export interface CommandSpec {
  /** `["pulse", "daemon"]`. */
  readonly path: readonly string[];
  /** The overview's group, e.g. "Working with records". */
  readonly category: string;
  /** One line. */
  readonly description: string;
  /** Paragraphs as written in `static usage` (cli/help.ts formats them). */
  readonly details: string;
  /** `[what it does, the command]`; every command is runnable as printed. */
  readonly examples: readonly (readonly [string, string])[];
  readonly options: readonly OptionSpec[];
  readonly positionals: readonly PositionalSpec[];
}

interface OptionDeclaration {
  readonly names: string[];
  readonly description?: string;
  readonly arity?: number;
  readonly hidden?: boolean;
  readonly required?: boolean;
}

type Definition = (builder: unknown, key: string) => void;

/** Reads `commandClass` (an `svc` command: one path, a `static usage`) into a `CommandSpec`. */
export function describeCommand(commandClass: CommandClass): CommandSpec {
  const path = commandClass.paths?.[0];
  const usage = commandClass.usage;
  if (!path || !usage?.description) {
    throw new Error(`${commandClass.name} needs static paths and a static usage with a description`);
  }
  const options: OptionSpec[] = [];
  const positionals: PositionalSpec[] = [];
  let valueName: string | undefined;
  // The methods clipanion's option definitions call on its CommandBuilder (core.ts); nothing else is used.
  const recorder = {
    addPath() {},
    addOption({ names, description = "", arity = 0, hidden = false, required = false }: OptionDeclaration) {
      if (hidden) return;
      options.push({
        names,
        valueName: arity === 0 ? undefined : (valueName ?? "value"),
        required,
        description,
      });
    },
    addPositional({ name = "arg", required = true }: { name?: string; required?: boolean } = {}) {
      positionals.push({ name, required, repeated: false });
    },
    addRest({ name = "arg", required = 0 }: { name?: string; required?: number } = {}) {
      positionals.push({ name, required: required > 0, repeated: true });
    },
    addProxy({ required = 0 }: { required?: number } = {}) {
      positionals.push({ name: "arg", required: required > 0, repeated: true });
    },
  };
  const instance = new commandClass() as unknown as Record<string, unknown>;
  for (const key of Object.keys(instance)) {
    const field = instance[key] as Record<symbol, unknown> | null;
    if (typeof field !== "object" || field === null || field[Command.isOption] !== true) continue;
    valueName = field[VALUE_NAME] as string | undefined;
    (field as unknown as { definition: Definition }).definition(recorder, key);
  }
  return {
    path,
    category: usage.category ?? "Other commands",
    description: usage.description,
    details: usage.details ?? "",
    examples: usage.examples ?? [],
    options,
    positionals,
  };
}

/** `svc init <kind::project> [dir] [--origin <url>]`: positional arguments first, then the options. */
export function usageLine(spec: CommandSpec): string {
  const words = ["svc", ...spec.path];
  for (const { name, required, repeated } of spec.positionals) {
    const shown = repeated ? `${name}...` : name;
    words.push(required ? `<${shown}>` : `[${shown}]`);
  }
  for (const option of spec.options) {
    const shown = optionWithValue(option);
    words.push(option.required ? shown : `[${shown}]`);
  }
  return words.join(" ");
}

/** `--origin <url>`, `--reconcile`. */
export function optionWithValue(option: OptionSpec, name = option.names[0]): string {
  return option.valueName === undefined ? `${name}` : `${name} <${option.valueName}>`;
}

/** The command path words at the start of `argv`: up to the first option or `--`. */
export function leadingWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (const token of argv) {
    if (isOptionLike(token) || token === "--") break;
    words.push(token);
  }
  return words;
}

/** The command whose path is the longest prefix of `words`. */
export function longestCommand(
  words: readonly string[],
  specs: readonly CommandSpec[],
): CommandSpec | undefined {
  let best: CommandSpec | undefined;
  for (const spec of specs) {
    if (startsWith(words, spec.path) && spec.path.length > (best?.path.length ?? 0)) best = spec;
  }
  return best;
}

/** The longest prefix of `words` that starts some command's path without being one (`pulse`). */
export function groupPrefix(words: readonly string[], specs: readonly CommandSpec[]): string[] {
  let prefix: string[] = [];
  for (let length = 1; length <= words.length; length++) {
    const candidate = words.slice(0, length);
    if (specs.some((spec) => spec.path.length > length && startsWith(spec.path, candidate)))
      prefix = candidate;
    else break;
  }
  return prefix;
}

/** As clipanion sees it: `-x`, `--name`, `--name=value`; not `-` (standard input) nor `--`. */
export function isOptionLike(token: string): boolean {
  return /^-[A-Za-z]|^--[A-Za-z]/.test(token);
}

/** Whether `words` begins with every word of `prefix`. */
export function startsWith(words: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= words.length && prefix.every((word, index) => words[index] === word);
}
