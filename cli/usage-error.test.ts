/**
 * Refused command lines (cli/usage-error.ts), run in-process as users type them: the exact stderr, nothing
 * on stdout, exit 2 (README "Exit codes": bad arguments). e2e/cli-errors.test.ts runs the commands these
 * messages name against a real simulator.
 */
import test from "ava";
import { runSvcInProcess } from "../testing/cli.js";
import type { CommandSpec } from "./command-spec.js";
import { commandSpecs } from "./main.js";
import { correctCommandWords, editDistance, explainRefusal, quoteCommand } from "./usage-error.js";

async function refused(argv: readonly string[]): Promise<string> {
  const run = await runSvcInProcess(argv);
  if (run.code !== 2 || run.stdout !== "") {
    throw new Error(`svc ${argv.join(" ")}: exit ${run.code}, stdout ${JSON.stringify(run.stdout)}`);
  }
  return run.stderr;
}

test("svc clone x points to svc init, for a simulator project and for a wiki space", async (t) => {
  t.is(
    await refused(["clone", "x"]),
    `svc: unknown command "clone"; svc init makes the clone. Run, for project x of the simulator (svc sim):
  svc init sim::x
or, for the wiki space x:
  svc init wiki::x
See svc init --help for more.
`,
  );
  t.is(
    await refused(["clone", "svc::http://127.0.0.1:9000/projects/demo", "d"]),
    `svc: unknown command "clone"; svc init makes the clone. Run:
  svc init sim::demo d --origin http://127.0.0.1:9000
`,
  );
  t.is(
    await refused(["clone"]),
    `svc: unknown command "clone"; svc init makes the clone, e.g. of project demo of the simulator (svc sim) into the folder demo:
  svc init sim::demo demo
See svc init --help for more.
`,
  );
  t.is(
    await refused(["clone", "wiki::DOCS"]),
    `svc: unknown command "clone"; svc init makes the clone. Run:\n  svc init wiki::DOCS\n`,
  );
  t.is(await refused(["help", "clone"]), await refused(["clone"]), "svc help clone");
});

test("a mistyped option is named once with the nearest valid one, the usage line once, and the corrected command", async (t) => {
  t.is(
    await refused(["init", "sim::demo", "d", "--orign", "http://x"]),
    `svc init: unknown option --orign (did you mean --origin?)
usage: svc init <kind::project> [dir] [--at <time>] [--no-comments] [--origin <url>]
Run:
  svc init sim::demo d --origin http://x
`,
  );
  t.is(
    await refused(["init", "sim::demo", "d", "--orign=http://x"]),
    `svc init: unknown option --orign (did you mean --origin?)
usage: svc init <kind::project> [dir] [--at <time>] [--no-comments] [--origin <url>]
Run:
  svc init sim::demo d --origin=http://x
`,
  );
  t.is(
    await refused(["init", "sim::demo", "d", "--orign"]),
    `svc init: unknown option --orign (did you mean --origin <url>?)
usage: svc init <kind::project> [dir] [--at <time>] [--no-comments] [--origin <url>]
For example:
  svc init sim::demo demo
More examples and every option: svc init --help
`,
    "no corrected line when the value is missing too",
  );
  t.is(
    await refused(["spaces", "--bakend", "wiki", "--frmat", "json"]),
    `svc spaces: unknown option --bakend (did you mean --backend?); unknown option --frmat (did you mean --format?)
usage: svc spaces [--backend <wiki>] [--format <table|json>]
Run:
  svc spaces --backend wiki --format json
`,
  );
  t.is(
    await refused(["sync", "--reconcile=3"]),
    `svc sync: --reconcile takes no value
usage: svc sync [dir] [--reconcile] [--remote <remote>]
Run:
  svc sync --reconcile
`,
  );
});

test("missing or extra arguments: each named, the usage line, an example and where the rest is", async (t) => {
  t.is(
    await refused(["init"]),
    `svc init: missing <kind::project>
usage: svc init <kind::project> [dir] [--at <time>] [--no-comments] [--origin <url>]
For example:
  svc init sim::demo demo
More examples and every option: svc init --help
`,
  );
  t.is(
    await refused(["init", "a", "b", "c", "-x"]),
    `svc init: unknown option -x (its options are --at, --no-comments, --origin); unexpected argument "c"
usage: svc init <kind::project> [dir] [--at <time>] [--no-comments] [--origin <url>]
For example:
  svc init sim::demo demo
More examples and every option: svc init --help
`,
  );
  t.is(
    await refused(["list", "--backend"]),
    `svc list: --backend needs a value: --backend <wiki|tracker|forge|sim>; missing --project <project>
usage: svc list --backend <wiki|tracker|forge|sim> --project <project> [--format <table|json>] [--no-truncate] [--origin <url>]
For example:
  svc list --backend wiki --project DOCS --format table
More examples and every option: svc list --help
`,
  );
});

test("an unknown command: the nearest command by edit distance with the rest of the line, else what exists", async (t) => {
  t.is(
    await refused(["iint", "sim::demo", "d"]),
    `svc: unknown command "iint"; did you mean svc init? Run:\n  svc init sim::demo d\n`,
  );
  t.is(
    await refused(["daemon", "--environment", "pulse env"]),
    `svc: unknown command "daemon"; did you mean svc pulse daemon? Run:\n  svc pulse daemon --environment 'pulse env'\n`,
  );
  t.is(
    await refused(["pulse", "deamon"]),
    `svc: unknown command "pulse deamon"; did you mean svc pulse daemon? Run:\n  svc pulse daemon\n`,
  );
  t.is(
    await refused(["frobnicate"]),
    `svc: unknown command "frobnicate"; the commands are init, sync, log, doctor, list, spaces, mirror, sim, pulse. What each does:\n  svc --help\n`,
  );
  t.is(
    await refused(["pulse", "frobnicate"]),
    `svc: unknown command "pulse frobnicate"; the commands of svc pulse are daemon, listener, trigger, migrate, heartbeat, keepalive, backup, provider. What each does:\n  svc pulse --help\n`,
  );
  t.is(
    await refused(["pulse"]),
    "svc: svc pulse needs one more word: daemon, listener, trigger, migrate, heartbeat, keepalive, backup or provider oauth. What each does:\n  svc pulse --help\n",
  );
  t.is(
    await refused(["--orign"]),
    "svc: unknown option --orign; svc itself takes only --help and --version. The commands:\n  svc --help\n",
  );
  t.is(
    await refused(["--version", "--frob"]),
    "svc: unknown option --frob; svc itself takes only --help and --version. The commands:\n  svc --help\n",
  );
  t.is(await refused(["version"]), `svc: unknown command "version"; run:\n  svc --version\n`);
});

test("git's own words: git itself in a clone made by svc init; outside one, where to run it", (t) => {
  const specs = commandSpecs();
  const inside = { insideSvcClone: () => true };
  const outside = { insideSvcClone: () => false };
  t.is(
    explainRefusal(["pull"], specs, inside),
    `svc: unknown command "pull"; in a clone made by svc init, git itself does that. Run:\n  git pull\n`,
  );
  t.is(
    explainRefusal(["push", "origin", "main"], specs, inside),
    `svc: unknown command "push"; in a clone made by svc init, git itself does that. Run:\n  git push origin main\n`,
  );
  t.is(
    explainRefusal(["fetch"], specs, outside),
    `svc: unknown command "fetch"; git itself does that in a clone made by svc init, and this folder is not in one (its origin is not an svc:: URL). In the clone's folder, run:
  git fetch
To make a clone: svc init --help
`,
  );
  t.is(
    explainRefusal(["checkout", "x"], specs, outside),
    `svc: unknown command "checkout"; svc init makes the clone. Run, for project x of the simulator (svc sim):
  svc init sim::x
or, for the wiki space x:
  svc init wiki::x
See svc init --help for more.
`,
  );
  let asked = 0;
  explainRefusal(["frobnicate"], specs, { insideSvcClone: () => ++asked > 0 });
  t.is(asked, 0, "the folder is looked at only for git's words");
});

test("svc doctor takes no such option: the nearest one, its usage line and the corrected command", async (t) => {
  t.regex(await refused(["doctor", "--ofline"]), /--offline/);
  t.regex(await refused(["doctor", "--ofline"]), /usage: svc doctor \[dir\]/);
});

test("correctCommandWords: every path tied nearest, none when nothing is near", (t) => {
  const spec = (path: string[]): CommandSpec => ({
    path,
    category: "",
    description: "x",
    details: "",
    examples: [],
    options: [],
    positionals: [],
  });
  const specs = [spec(["sync"]), spec(["sink"]), spec(["pulse", "daemon"]), spec(["pulse", "backup"])];
  t.deepEqual(correctCommandWords(["sinc", "a"], specs), [
    { path: ["sync"], consumed: 1 },
    { path: ["sink"], consumed: 1 },
  ]);
  t.deepEqual(correctCommandWords(["plse", "bakup", "a"], specs), [
    { path: ["pulse", "backup"], consumed: 2 },
  ]);
  t.deepEqual(correctCommandWords(["backup"], specs), [{ path: ["pulse", "backup"], consumed: 1 }]);
  t.deepEqual(correctCommandWords(["zzzz"], specs), []);
});

test("editDistance counts an adjacent swap as one edit; quoteCommand quotes only what the shell would split", (t) => {
  t.is(editDistance("snyc", "sync"), 1);
  t.is(editDistance("orign", "origin"), 1);
  t.is(editDistance("", "abc"), 3);
  t.is(editDistance("kitten", "sitting"), 3);
  t.is(
    quoteCommand(["svc", "init", "sim::demo", "it's here", "--origin=http://x", "$HOME", ""]),
    `svc init sim::demo 'it'\\''s here' --origin=http://x '$HOME' ''`,
  );
});
