/**
 * The help `svc` prints (cli/help.ts), run in-process as users call it: exact texts of the overview and of
 * `svc init --help`, and for every command: no clipanion `#0` placeholder, every example parsed by the
 * real command line, every line of prose within 80 columns.
 */
import test from "ava";
import { runSvcInProcess } from "../testing/cli.js";
import { describeCommand } from "./command-spec.js";
import { formatParagraphs } from "./help.js";
import { COMMANDS, createCli } from "./main.js";

const OVERVIEW = `svc 0.1.0: issue trackers and wikis as git repositories

Usage: svc <command> [arguments] [options]

Working with records
  svc init                  Clone a project (sim::, wiki::, tracker:: or forge::) into a new git working tree
  svc sync                  Bring a clone's cache up to date with the server, then git fetch
  svc log                   What changed on the server and when, as this machine's cache saw it
  svc doctor                Check a clone and what svc needs, each problem with the command that fixes it
  svc list                  List the records of a project: wiki pages, tracker, forge or simulator issues
  svc spaces                List the wiki spaces the configured account can read
  svc mirror                Copy a project's records onto a branch of a plain git repository

The simulator
  svc sim                   Run the issue-tracker simulator on a loopback address

The pulse daemon
  svc pulse daemon          Run the pulse daemon: queue, scheduler, runner, heartbeat, keep-alive and HTTP API
  svc pulse listener        Turn messenger chat messages into pulses
  svc pulse trigger         Queue a pulse through the running daemon's API
  svc pulse migrate         Bring the pulse database to the newest schema revision
  svc pulse heartbeat       Queue the hourly heartbeat pulse once (for cron users)
  svc pulse keepalive       Run the credential keep-alive providers once (for cron users)
  svc pulse backup          Back up the pulse database while the daemon runs
  svc pulse provider oauth  The OAuth keep-alive provider: check or refresh the agent's OAuth token

Inside a clone made by svc init, git itself does the rest: git pull, git commit, git push.
Each command's arguments, options and examples: svc <command> --help, e.g. svc init --help
`;

const INIT_HELP = `svc init: Clone a project (sim::, wiki::, tracker:: or forge::) into a new git working tree

Usage: svc init <kind::project> [dir] [--at <time>] [--no-comments] [--origin <url>]

Options
  --at <time>     Check out the project as this machine's cache saw it at that
                  time (read-only; see svc log --help for the forms)
  --no-comments   Clone without the records' comments (sets git config
                  svc.comments false)
  --origin <url>  Where the simulator runs, for sim:: (default $SVC_SIM_ORIGIN,
                  else http://127.0.0.1:7878)

Clones the project into dir (default: the project's name; it must not exist, or
be empty) with one Markdown file per record, checks out \`main\` tracking
\`origin/main\` and sets \`pull.rebase=false\`, so that plain \`git pull\`,
\`git commit\`, \`git push\` and \`git status\` work inside it.

The backends of this version and their forms:

  sim::<project>     a project of the issue-tracker simulator (svc sim); files
                     issues/<id>.md. The simulator is at --origin, else
                     $SVC_SIM_ORIGIN, else http://127.0.0.1:7878.
  wiki::<SPACE_KEY>  a wiki space (svc spaces --backend wiki lists them); files
                     pages/<id>.md. Needs VENDOR_API_KEY, VENDOR_EMAIL,
                     SVC_WIKI_TENANT and SVC_ALLOWED_ORIGINS.
  forge::<owner>/<repo>
                     a forge repository's issues (GitHub); files
                     issues/<number>.md, four digits at least. Needs
                     FORGE_TOKEN and SVC_ALLOWED_ORIGINS; SVC_FORGE_BASE_URL
                     replaces https://api.github.com (e.g. for GitHub
                     Enterprise: https://<host>/api/v3).
  tracker::<KEY>     a tracker project's issues (Jira Cloud); files
                     issues/<KEY>-<n>.md. Needs TRACKER_EMAIL,
                     TRACKER_API_TOKEN, SVC_TRACKER_INSTANCE and
                     SVC_ALLOWED_ORIGINS; SVC_TRACKER_BASE_URL replaces
                     https://<instance>.atlassian.net.

The checkout is complete whatever the project's size: every record file, as with
git clone of the same svc:: URL. SVC_BLOB_LIMIT (off by default) sets a cap: a
checkout of more files than that is refused, with the git sparse-checkout
command to run instead.

Each record's comments are files too, comments/<record file name without
.md>/<comment id>.md (the simulator's; other backends as their docs say);
--no-comments clones without them (it sets git config svc.comments false in the
clone, which a clone made without the option can set later).

--at <time> checks out the state this machine's cache held at that time (the
last sync or push before it; svc log lists them) instead of the server's current
one. It is what this machine saw, not the server's own history, and the working
tree is read-only: git push there is refused.

Examples
  Clone project demo of the simulator into the folder demo:
    svc init sim::demo demo
  The same from a simulator on another port:
    svc init sim::demo demo --origin http://127.0.0.1:9000
  Clone the wiki space DOCS into the folder docs:
    svc init wiki::DOCS docs
  Clone the issues of the forge repository acme/widgets:
    svc init forge::acme/widgets widgets
  Clone the tracker project TEST into the folder test:
    svc init tracker::TEST test
  The project demo as this machine's cache saw it at noon UTC on 22 November 2026:
    svc init sim::demo demo-then --at 2026-11-22T12:00Z
`;

/** The words a POSIX shell makes of `line` (plain words and single quotes: what the help prints). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? "");
  return words;
}

test("svc --help: the commands grouped, each with its one line, and nothing else; svc and svc help print the same", async (t) => {
  for (const argv of [["--help"], ["-h"], [], ["help"]]) {
    const run = await runSvcInProcess(argv);
    t.is(run.stdout, OVERVIEW, `svc ${argv.join(" ")}`);
    t.is(run.stderr, "");
    t.is(run.code, 0);
  }
});

test("svc init --help names the backends of this version, --origin and the complete checkout with SVC_BLOB_LIMIT", async (t) => {
  for (const argv of [
    ["init", "--help"],
    ["init", "-h"],
    ["help", "init"],
    ["init", "sim::demo", "--help"],
  ]) {
    const run = await runSvcInProcess(argv);
    t.is(run.stdout, INIT_HELP, `svc ${argv.join(" ")}`);
    t.is(run.stderr, "");
    t.is(run.code, 0);
  }
});

test("every command's --help: its usage line, no #0 placeholder, prose within 80 columns", async (t) => {
  const paths = COMMANDS.map((command) => describeCommand(command).path);
  t.is(paths.length, 16);
  for (const path of paths) {
    const run = await runSvcInProcess([...path, "--help"]);
    const name = `svc ${path.join(" ")}`;
    t.is(run.code, 0, name);
    t.is(run.stderr, "", name);
    t.true(run.stdout.startsWith(`${name}: `), name);
    t.regex(run.stdout, new RegExp(`\\nUsage: ${name}( |\\n)`), name);
    t.notRegex(run.stdout, /#\d|<value>/, `${name} shows every value by its name`);
    const [prose = ""] = run.stdout.split("\nExamples\n");
    for (const line of prose.split("\n").slice(1)) {
      if (!line.startsWith("Usage: ")) t.true(line.length <= 80, `${name}: ${line}`);
    }
  }
});

test("every example a command's help prints is a command line svc parses as that command, as printed", async (t) => {
  const cli = createCli();
  for (const command of COMMANDS) {
    const path = describeCommand(command).path;
    const help = await runSvcInProcess([...path, "--help"]);
    const [, examples = ""] = help.stdout.split("\nExamples\n");
    const lines = examples.split("\n").filter((line) => line.startsWith("    "));
    t.true(lines.length > 0, path.join(" "));
    for (const line of lines) {
      // A crontab line is its five time fields, then the command.
      const words = shellWords(line.trim().replace(/^(\S+ ){5}(?=svc )/, ""));
      t.is(words[0], "svc", line);
      t.true(cli.process(words.slice(1)) instanceof command, line);
    }
  }
});

test("svc pulse --help lists the pulse commands", async (t) => {
  const help = await runSvcInProcess(["pulse", "--help"]);
  t.is(help.code, 0);
  t.is(help.stderr, "");
  t.true(help.stdout.startsWith("svc pulse: The pulse daemon\n\n  svc pulse daemon  "), help.stdout);
  t.is(help.stdout.match(/^ {2}svc pulse /gm)?.length, 8);
  t.regex(help.stdout, /e\.g\. svc pulse daemon --help\n$/);
});

test("formatParagraphs: dedents, wraps prose at 80 columns without breaking a `code span`, keeps indented blocks and list items", (t) => {
  const text = `
      One two three four five six seven eight nine ten eleven twelve thirteen \`git sparse-checkout set\`
      fourteen.

        kept   as it is,
               line for line

      - an item that is long enough to be wrapped onto a second line with a hanging indent of two
      - a second item
  `;
  t.is(
    formatParagraphs(text),
    [
      "One two three four five six seven eight nine ten eleven twelve thirteen",
      "`git sparse-checkout set` fourteen.",
      "",
      "  kept   as it is,",
      "         line for line",
      "",
      "- an item that is long enough to be wrapped onto a second line with a hanging",
      "  indent of two",
      "- a second item",
    ].join("\n"),
  );
});
