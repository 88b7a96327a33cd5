/**
 * The command line of the `scripts/mirror-refresh` launcher (scripts/mirror-refresh.ts): its arguments, its
 * refusals with its own usage line, its help, and the command it prints to run again. The mirror's own parts
 * are tested in cli/mirror/ and git/remote-output.test.ts; the runs against real git and real servers are
 * in e2e/mirror-refresh.test.ts and e2e/mirror-command.test.ts (which runs `svc mirror` beside it).
 */
import test from "ava";
import { UserFacingError } from "../core/errors.js";
import { HELP, main, parseMirrorArgs, rerunCommand } from "./mirror-refresh.js";

test("parseMirrorArgs: two positionals, --branch in both forms, --dry-run, --help", (t) => {
  t.deepEqual(parseMirrorArgs(["svc::http://127.0.0.1:7878/projects/demo", "/srv/m.git"]), {
    remote: "svc::http://127.0.0.1:7878/projects/demo",
    mirror: "/srv/m.git",
    branch: "main",
    dryRun: false,
  });
  t.deepEqual(parseMirrorArgs(["--dry-run", "r", "m", "--branch", "records"]), {
    remote: "r",
    mirror: "m",
    branch: "records",
    dryRun: true,
  });
  t.like(parseMirrorArgs(["r", "m", "--branch=x/y"]), { branch: "x/y" });
  t.is(parseMirrorArgs(["--help"]), "help");
  t.is(parseMirrorArgs(["-h", "r"]), "help");
});

const REFUSED: readonly [string, readonly string[], RegExp][] = [
  ["no arguments", [], /needs two arguments/],
  ["one argument", ["svc::http://127.0.0.1:7878/projects/demo"], /needs two arguments/],
  ["three arguments", ["r", "m", "extra"], /unexpected argument "extra"/],
  ["an unknown option", ["r", "m", "--force"], /Unknown option '--force'/],
  ["--branch without a value", ["r", "m", "--branch"], /--branch/],
  ["an svc remote as the mirror", ["r", "svc::http://127.0.0.1:7878/projects/demo"], /write to the backend/],
  ["an empty mirror URL", ["r", ""], /empty/],
];

for (const [name, argv, message] of REFUSED) {
  test(`parseMirrorArgs refuses ${name} with the usage and an example`, (t) => {
    const error = t.throws(() => parseMirrorArgs(argv), { instanceOf: UserFacingError });
    t.regex(error?.message ?? "", message);
    t.regex(error?.message ?? "", /^usage: scripts\/mirror-refresh <svc-remote-url> <mirror-git-url>/m);
    t.regex(error?.message ?? "", /^for example: scripts\/mirror-refresh svc::/m);
  });
}

test("a mirror URL with a password is refused without the password, with the launcher's command to run instead", (t) => {
  const argv = [
    "svc::http://127.0.0.1:7878/projects/demo",
    "https://bot:s3cret-token@git.example.test/m.git",
  ];
  const error = t.throws(() => parseMirrorArgs(argv), { instanceOf: UserFacingError });
  const message = error?.message ?? "";
  t.false(message.includes("s3cret-token"));
  t.true(
    message.endsWith(`Then run: ${rerunCommand([argv[0] as string, "https://bot@git.example.test/m.git"])}`),
  );
});

test("rerunCommand names the shipped shim by its absolute path and quotes each argument", (t) => {
  const command = rerunCommand([
    "svc::http://127.0.0.1:7878/projects/demo",
    "/srv/my mirror.git",
    "--dry-run",
  ]);
  t.regex(
    command,
    /^\/\S*\/scripts\/mirror-refresh svc::http:\/\/127\.0\.0\.1:7878\/projects\/demo "\/srv\/my mirror\.git" --dry-run$/,
  );
});

test("main prints the help on stdout with exit 0, and a refused command line on stderr with exit 2", async (t) => {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    stdout: (text: string) => out.push(text),
    stderr: (text: string) => err.push(text),
    rerun: "x",
  };
  t.is(await main(["--help"], io), 0);
  t.is(out.join(""), HELP);
  t.deepEqual(err, []);
  t.is(await main(["only-one"], io), 2);
  t.regex(err.join(""), /^svc: mirror-refresh needs two arguments/);
  t.notRegex(err.join(""), /^\s+at /m, "no stack for the user's mistake");
});
