import test from "ava";
import { Cli } from "clipanion";
import { COMMANDS, candidateCommands, createCli } from "./main.js";

const CONTEXT = Cli.defaultContext;

/** What clipanion makes of `argv`: the command class and its options, or the refusal's message. */
function parse(commands: Parameters<typeof createCli>[0], argv: readonly string[]): unknown {
  try {
    const command = createCli(commands).process([...argv], CONTEXT) as unknown as Record<string, unknown>;
    const options = Object.fromEntries(
      Object.entries(command).filter(([key]) => !["cli", "context", "path"].includes(key)),
    );
    return { command: command.constructor.name, options: JSON.stringify(options) };
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

test("clipanion given only the commands a command line can name parses and refuses it as with every command", (t) => {
  const lines = [
    ["init", "sim::demo", "demo"],
    ["init", "sim::demo", "demo", "--origin", "http://127.0.0.1:1", "--at", "2026-01-01"],
    ["init"],
    ["init", "--orign", "x"],
    ["init", "a", "b", "c"],
    ["ini", "sim::demo"],
    ["sync", "--reconcile"],
    ["sync", "--bogus"],
    ["log", "--since", "1h"],
    ["list", "--backend", "wiki"],
    ["pulse"],
    ["pulse", "trigger", "--desk", "d"],
    ["pulse", "daemonn"],
    ["pulse", "migrate", "extra"],
    ["sim", "--bind", "127.0.0.1:0"],
    ["doctor", "--fix"],
    ["--version"],
    ["-v"],
    ["--bogus"],
    [],
  ];
  for (const argv of lines) {
    t.deepEqual(parse(candidateCommands(argv), argv), parse(COMMANDS, argv), argv.join(" "));
  }
  // What is compared: the command and its options, or clipanion's refusal.
  t.like(parse(COMMANDS, ["init", "sim::demo", "demo"]), { command: "InitCommand" });
  t.regex(String((parse(COMMANDS, ["init", "--orign", "x"]) as { refused?: string }).refused), /--orign/);
  t.deepEqual(
    candidateCommands(["pulse", "daemon"]).map((command) => command.paths?.[0]?.join(" ")),
    COMMANDS.filter((command) => command.paths?.[0]?.[0] === "pulse").map((command) =>
      command.paths?.[0]?.join(" "),
    ),
  );
  t.is(candidateCommands(["init"]).length, 1);
  t.is(candidateCommands(["nope"]), COMMANDS);
});
