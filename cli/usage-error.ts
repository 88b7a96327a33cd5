/**
 * What `svc` prints when clipanion refuses a command line: what is wrong, once, and the command to run
 * instead, runnable as printed (agents follow it literally). clipanion parses; this module only explains a
 * refusal, from the commands' declarations (cli/command-spec.ts). Pure, except for the one question about
 * the current folder (`Situation`), asked only for git's own words (`svc pull`).
 *
 * - An unknown command: git's words map to what does that job (`svc clone x` → `svc init sim::x`, `svc pull`
 *   → `git pull` in the clone), anything else to the nearest command by edit distance, with the rest of the
 *   line kept.
 * - A known command with bad arguments: each problem named once (an unknown option with the nearest valid
 *   one), the usage line once, and the corrected command line when every problem has a sure fix.
 */
import { parseRemoteUrl } from "../core/remote-url.js";
import {
  type CommandSpec,
  groupPrefix,
  isOptionLike,
  leadingWords,
  longestCommand,
  type OptionSpec,
  optionWithValue,
  startsWith,
  usageLine,
} from "./command-spec.js";
import { commandName } from "./help.js";

export interface Situation {
  /** Whether the current folder is inside a clone made by svc init (its `origin` is an `svc::` URL). */
  readonly insideSvcClone: () => boolean;
}

/** The refusal `svc` prints on stderr (exit 2) for `argv`, which clipanion could not parse. */
export function explainRefusal(
  argv: readonly string[],
  specs: readonly CommandSpec[],
  situation: Situation,
  /** clipanion's own message, printed only when nothing more precise is found. */
  fallback = "",
): string {
  const words = leadingWords(argv);
  const spec = longestCommand(words, specs);
  if (spec) return explainArguments(argv, spec, fallback);
  return explainUnknownCommand(argv, words, specs, situation);
}

// ---------------------------------------------------------------------------------------------------------
// Unknown commands

/** git's commands that work as they are inside a clone made by svc init. */
const GIT_IN_CLONE = new Set([
  "pull",
  "push",
  "fetch",
  "status",
  "commit",
  "diff",
  "add",
  "rm",
  "mv",
  "merge",
  "rebase",
  "branch",
  "switch",
  "restore",
  "reset",
  "show",
  "stash",
  "checkout",
]);

function explainUnknownCommand(
  argv: readonly string[],
  words: readonly string[],
  specs: readonly CommandSpec[],
  situation: Situation,
): string {
  if (words.length === 0) {
    const option = argv.find((token) => !/^(-h|--help|-v|--version)$/.test(token)) ?? argv[0];
    return `svc: unknown option ${option}; svc itself takes only --help and --version. The commands:\n  svc --help\n`;
  }
  const group = groupPrefix(words, specs);
  if (group.length === words.length) return explainIncompleteGroup(group, specs);
  const typed = words.slice(0, group.length + 1).join(" ");
  const rest = argv.slice(group.length + 1);
  if (group.length === 0) {
    const word = words[0] as string;
    if (word === "clone") return explainClone(word, rest);
    if (GIT_IN_CLONE.has(word)) return explainGitWord(word, rest, situation);
    if (word === "version") return `svc: unknown command "version"; run:\n  svc --version\n`;
  }
  const corrections = correctCommandWords(words, specs);
  const corrected = ({ path, consumed }: Correction) =>
    quoteCommand(["svc", ...path, ...argv.slice(consumed)]);
  if (corrections.length === 1) {
    const [correction] = corrections as [Correction];
    const meant = `svc ${correction.path.join(" ")}`;
    return `svc: unknown command "${typed}"; did you mean ${meant}? Run:\n  ${corrected(correction)}\n`;
  }
  if (corrections.length > 1) {
    const lines = corrections.map(corrected);
    return `svc: unknown command "${typed}"; did you mean one of these?\n${lines.map((line) => `  ${line}`).join("\n")}\n`;
  }
  const under = specs.filter((spec) => startsWith(spec.path, group));
  const names = [...new Set(under.map((spec) => spec.path[group.length]))].join(", ");
  const helpLine = group.length === 0 ? "svc --help" : `svc ${group.join(" ")} --help`;
  return `svc: unknown command "${typed}"; the commands${group.length === 0 ? "" : ` of svc ${group.join(" ")}`} are ${names}. What each does:\n  ${helpLine}\n`;
}

/** `svc pulse`: a group without its command. */
function explainIncompleteGroup(group: readonly string[], specs: readonly CommandSpec[]): string {
  const under = specs.filter((spec) => startsWith(spec.path, group));
  const names = under.map((spec) => spec.path.slice(group.length).join(" "));
  const last = names.pop();
  const list = names.length > 0 ? `${names.join(", ")} or ${last}` : `${last}`;
  const name = `svc ${group.join(" ")}`;
  return `svc: ${name} needs one more word: ${list}. What each does:\n  ${name} --help\n`;
}

/** `svc clone <what> [dir]` (or `checkout`, outside a clone): svc init makes clones. */
function explainClone(word: string, rest: readonly string[]): string {
  const [what, dir] = rest.filter((token) => !isOptionLike(token));
  const extra = dir === undefined ? [] : [dir];
  const lead = `svc: unknown command "${word}"; svc init makes the clone`;
  const help = "See svc init --help for more.";
  if (what === undefined) {
    return `${lead}, e.g. of project demo of the simulator (svc sim) into the folder demo:\n  svc init sim::demo demo\n${help}\n`;
  }
  const neither =
    `${lead} of a simulator project (sim::<project>), a wiki space (wiki::<SPACE_KEY>), a tracker project (tracker::<KEY>) or a forge repository (forge::<owner>/<repo>), and ` +
    `${JSON.stringify(what)} is neither. For example, of project demo of the simulator:\n  svc init sim::demo demo\n${help}\n`;
  const kind = /^([a-z]+)::/.exec(what)?.[1];
  if (kind === "sim" || kind === "wiki" || kind === "tracker" || kind === "forge") {
    return `${lead}. Run:\n  ${quoteCommand(["svc", "init", what, ...extra])}\n`;
  }
  if (kind !== undefined && kind !== "svc") return neither;
  if (/^(svc::)?https?:\/\//.test(what)) {
    try {
      const remote = parseRemoteUrl(what);
      if (remote.kind === "sim") {
        const line = quoteCommand([
          "svc",
          "init",
          `sim::${remote.project}`,
          ...extra,
          "--origin",
          remote.origin,
        ]);
        return `${lead}. Run:\n  ${line}\n`;
      }
      const spec = `${remote.kind}::${remote.project}`;
      return `${lead}. Run:\n  ${quoteCommand(["svc", "init", spec, ...extra])}\n${help}\n`;
    } catch {
      // Not a URL svc can clone.
    }
    return neither;
  }
  return (
    `${lead}. Run, for project ${what} of the simulator (svc sim):\n  ${quoteCommand(["svc", "init", `sim::${what}`, ...extra])}\n` +
    `or, for the wiki space ${what}:\n  ${quoteCommand(["svc", "init", `wiki::${what}`, ...extra])}\n${help}\n`
  );
}

/** `svc pull`, `svc push`, …: git does these in the clone. */
function explainGitWord(word: string, rest: readonly string[], situation: Situation): string {
  const line = quoteCommand(["git", word, ...rest]);
  if (situation.insideSvcClone()) {
    return `svc: unknown command "${word}"; in a clone made by svc init, git itself does that. Run:\n  ${line}\n`;
  }
  if (word === "checkout") return explainClone(word, rest);
  return (
    `svc: unknown command "${word}"; git itself does that in a clone made by svc init, and this folder is not ` +
    `in one (its origin is not an svc:: URL). In the clone's folder, run:\n  ${line}\n` +
    `To make a clone: svc init --help\n`
  );
}

/** A command path meant by the first `consumed` words typed. */
export interface Correction {
  readonly path: readonly string[];
  readonly consumed: number;
}

/**
 * The command paths `words` may have meant: word by word, a word that is not a known path word is replaced
 * by the nearest one under the words before it (edit distance), or, as the first word, by a whole path whose
 * last word it is near (`daemon` → `pulse daemon`). Several paths when the nearest are tied; none when
 * nothing is near.
 */
export function correctCommandWords(words: readonly string[], specs: readonly CommandSpec[]): Correction[] {
  const results: Correction[] = [];
  const visit = (done: readonly string[], index: number): void => {
    const complete = specs.find((spec) => sameWords(spec.path, done));
    if (complete) {
      if (!results.some((result) => sameWords(result.path, done)))
        results.push({ path: done, consumed: index });
      return;
    }
    const word = words[index];
    if (word === undefined) return;
    const under = specs.filter((spec) => spec.path.length > done.length && startsWith(spec.path, done));
    const next = [...new Set(under.map((spec) => spec.path[done.length] as string))];
    if (next.includes(word)) {
      visit([...done, word], index + 1);
      return;
    }
    const options = next.map((candidate) => ({
      replacement: [candidate],
      distance: editDistance(word, candidate),
    }));
    if (done.length === 0) {
      for (const spec of specs) {
        if (spec.path.length < 2) continue;
        const distance = editDistance(word, spec.path[spec.path.length - 1] as string);
        options.push({ replacement: [...spec.path], distance });
      }
    }
    const best = Math.min(...options.map((option) => option.distance));
    if (best > allowedDistance(word)) return;
    for (const option of options.filter((each) => each.distance === best)) {
      visit([...done, ...option.replacement], index + 1);
    }
  };
  visit([], 0);
  return results;
}

/** How far a mistyped word may be from the word meant: 1 edit for short words, up to 3 for long ones. */
function allowedDistance(word: string): number {
  return word.length <= 3 ? 1 : word.length <= 6 ? 2 : 3;
}

// ---------------------------------------------------------------------------------------------------------
// A known command with bad arguments

interface Problem {
  readonly text: string;
  /** Edits the argv (a token in place) when this problem has one sure fix; undefined when it has none. */
  readonly fix: ((argv: string[]) => void) | undefined;
}

function explainArguments(argv: readonly string[], spec: CommandSpec, fallback: string): string {
  const name = commandName(spec);
  const problems = argumentProblems(argv, spec);
  const lines: string[] = [];
  if (problems.length === 0) {
    const said = fallback.split("\n")[0]?.trim() ?? "";
    lines.push(
      `${name}: cannot read the arguments ${quoteCommand(argv.slice(spec.path.length))}${said ? ` (${said})` : ""}`,
    );
  } else {
    lines.push(`${name}: ${problems.map((problem) => problem.text).join("; ")}`);
  }
  lines.push(`usage: ${usageLine(spec)}`);
  if (problems.length > 0 && problems.every((problem) => problem.fix !== undefined)) {
    const fixed = [...argv];
    for (const problem of problems) problem.fix?.(fixed);
    lines.push(`Run:\n  ${quoteCommand(["svc", ...fixed])}`);
  } else {
    const example = spec.examples[0]?.[1];
    lines.push(
      example === undefined
        ? `More: ${name} --help`
        : `For example:\n  ${example}\nMore examples and every option: ${name} --help`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function argumentProblems(argv: readonly string[], spec: CommandSpec): Problem[] {
  const problems: Problem[] = [];
  const positionals: string[] = [];
  const seen = new Set<OptionSpec>();
  let onlyPositionals = false;
  for (let index = spec.path.length; index < argv.length; index++) {
    const token = argv[index] as string;
    if (onlyPositionals || !isOptionLike(token)) {
      if (token === "--" && !onlyPositionals) onlyPositionals = true;
      else positionals.push(token);
      continue;
    }
    const { problem, tokens } = optionProblem(argv, index, spec, seen);
    if (problem) problems.push(problem);
    index += tokens - 1;
  }
  problems.push(...missingAndExtraProblems(positionals, spec, seen));
  return problems;
}

/**
 * The option token at `argv[index]`: its problem, if any, and how many tokens it takes (2 when its value
 * follows it). The option it names, or the one it was meant to name, joins `seen`.
 */
function optionProblem(
  argv: readonly string[],
  index: number,
  spec: CommandSpec,
  seen: Set<OptionSpec>,
): { problem: Problem | undefined; tokens: number } {
  const token = argv[index] as string;
  const equals = token.indexOf("=");
  const optionName = equals === -1 ? token : token.slice(0, equals);
  const option = spec.options.find((each) => each.names.includes(optionName));
  if (option) {
    seen.add(option);
    if (option.valueName === undefined && equals !== -1) {
      return {
        problem: {
          text: `${optionName} takes no value`,
          fix: (fixed) => {
            fixed[index] = optionName;
          },
        },
        tokens: 1,
      };
    }
    if (option.valueName !== undefined && equals === -1) {
      const value = argv[index + 1];
      if (value === undefined || isOptionLike(value)) {
        return {
          problem: {
            text: `${optionName} needs a value: ${optionWithValue(option, optionName)}`,
            fix: undefined,
          },
          tokens: 1,
        };
      }
      return { problem: undefined, tokens: 2 };
    }
    return { problem: undefined, tokens: 1 };
  }
  const nearest = nearestOption(optionName, spec.options);
  if (nearest === undefined) {
    const known = spec.options.map((each) => each.names[0]).join(", ");
    return {
      problem: {
        text: `unknown option ${optionName} (${known === "" ? "it takes no options" : `its options are ${known}`})`,
        fix: undefined,
      },
      tokens: 1,
    };
  }
  const [meant, meantName] = nearest;
  seen.add(meant);
  // The mistyped option takes what the one meant takes.
  const next = argv[index + 1];
  const needsValue = meant.valueName !== undefined && equals === -1;
  const hasValue = next !== undefined && !isOptionLike(next);
  return {
    problem:
      needsValue && !hasValue
        ? {
            text: `unknown option ${optionName} (did you mean ${optionWithValue(meant, meantName)}?)`,
            fix: undefined,
          }
        : {
            text: `unknown option ${optionName} (did you mean ${meantName}?)`,
            fix: (fixed) => {
              fixed[index] = equals === -1 ? meantName : `${meantName}${token.slice(equals)}`;
            },
          },
    tokens: needsValue && hasValue ? 2 : 1,
  };
}

/** Missing and unexpected positionals, then required options not `seen`. */
function missingAndExtraProblems(
  positionals: readonly string[],
  spec: CommandSpec,
  seen: ReadonlySet<OptionSpec>,
): Problem[] {
  const problems: Problem[] = [];
  const fixed = spec.positionals.filter((each) => !each.repeated);
  const repeated = spec.positionals.find((each) => each.repeated);
  const required = spec.positionals.filter((each) => each.required);
  for (const missing of required.slice(positionals.length)) {
    problems.push({ text: `missing <${missing.name}${missing.repeated ? "..." : ""}>`, fix: undefined });
  }
  if (!repeated) {
    for (const extra of positionals.slice(fixed.length)) {
      problems.push({ text: `unexpected argument ${JSON.stringify(extra)}`, fix: undefined });
    }
  }
  for (const option of spec.options) {
    if (option.required && !seen.has(option)) {
      problems.push({ text: `missing ${optionWithValue(option)}`, fix: undefined });
    }
  }
  return problems;
}

/** The valid option name nearest to a mistyped one, with the option it names. */
function nearestOption(typed: string, options: readonly OptionSpec[]): [OptionSpec, string] | undefined {
  let best: [OptionSpec, string] | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const option of options) {
    for (const name of option.names) {
      const distance = editDistance(typed.replace(/^-+/, ""), name.replace(/^-+/, ""));
      if (distance < bestDistance) {
        best = [option, name];
        bestDistance = distance;
      }
    }
  }
  return bestDistance <= allowedDistance(typed.replace(/^-+/, "")) ? best : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Small pure helpers

function sameWords(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && startsWith(a, b);
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost 1. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: columns }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] as number;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < columns; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, at(i - 2, j - 2) + 1);
      }
      (d[i] as number[])[j] = value;
    }
  }
  return at(a.length, b.length);
}

/** A POSIX shell word for `token`: as it is when it needs no quoting, else in single quotes. */
export function quoteWord(token: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(token)) return token;
  return `'${token.replace(/'/g, `'\\''`)}'`;
}

/** A command line a POSIX shell runs as the argv given. */
export function quoteCommand(argv: readonly string[]): string {
  return argv.map(quoteWord).join(" ");
}
