/**
 * The pure parts of scripts/mirror-refresh.ts: the command line, the mirror URL refusals, and the readings
 * of git's output (`diff-tree -z` as folder changes, `push --porcelain`, recorded from git 2.39; the
 * `ls-tree -z` reader is git/plumbing.ts's). The runs against real git and real servers are in
 * e2e/mirror-refresh.test.ts.
 */
import test from "ava";
import { UserFacingError } from "../core/errors.js";
import {
  checkMirrorUrl,
  countChanges,
  describeComparison,
  HELP,
  main,
  mirrorCommitMessage,
  parseMirrorArgs,
  parsePushPorcelain,
  parseTreeDiff,
  rerunCommand,
} from "./mirror-refresh.js";

const OID_A = "a".repeat(40);
const OID_B = "b".repeat(40);

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

test("a mirror URL with a password is refused without the password, with the command to run instead", (t) => {
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
  // A user name alone, an SSH URL and a path are plain mirrors.
  for (const mirror of [
    "https://bot@git.example.test/m.git",
    "git@git.example.test:m.git",
    "ssh://git@h/m.git",
    "../m.git",
  ])
    t.notThrows(() => checkMirrorUrl(mirror, (clean) => clean));
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

test("parseTreeDiff reads diff-tree -r -z --no-renames; a mode change counts as changed", (t) => {
  const zero = "0".repeat(40);
  const output = Buffer.from(
    [
      `:000000 100644 ${zero} ${OID_A} A`,
      "issues/0004.md",
      `:100644 100644 ${OID_A} ${OID_B} M`,
      "issues/0001.md",
      `:100644 000000 ${OID_B} ${zero} D`,
      "issues/0002.md",
      `:100755 100644 ${OID_A} ${OID_A} T`,
      "issues/0003.md",
      "",
    ].join("\0"),
  );
  const changes = parseTreeDiff(output);
  t.deepEqual(changes, [
    { status: "A", path: "issues/0004.md" },
    { status: "M", path: "issues/0001.md" },
    { status: "D", path: "issues/0002.md" },
    { status: "M", path: "issues/0003.md" },
  ]);
  t.deepEqual(countChanges(changes), { added: 1, changed: 2, removed: 1 });
  t.deepEqual(parseTreeDiff(Buffer.alloc(0)), []);
});

test("parsePushPorcelain: pushed, moved (fetch first, non-fast-forward), refused by a hook, or no line at all", (t) => {
  const ref = "refs/heads/main";
  t.deepEqual(parsePushPorcelain(`To /m.git\n \t${OID_A}:${ref}\t0cff47f..5ee0797\nDone\n`, ref), {
    kind: "pushed",
  });
  t.deepEqual(parsePushPorcelain(`To /m.git\n*\t${OID_A}:${ref}\t[new branch]\nDone\n`, ref), {
    kind: "pushed",
  });
  t.deepEqual(parsePushPorcelain(`To /m.git\n!\t${OID_A}:${ref}\t[rejected] (fetch first)\nDone\n`, ref), {
    kind: "moved",
    reason: "fetch first",
  });
  t.deepEqual(parsePushPorcelain(`To ../m.git\n!\tHEAD:${ref}\t[rejected] (non-fast-forward)\nDone\n`, ref), {
    kind: "moved",
    reason: "non-fast-forward",
  });
  t.deepEqual(
    parsePushPorcelain(
      `To ../m.git\n!\tHEAD:${ref}\t[remote rejected] (pre-receive hook declined)\nDone\n`,
      ref,
    ),
    { kind: "refused", reason: "[remote rejected] (pre-receive hook declined)" },
  );
  // Another ref's line is not this one's; refs/heads/main is not refs/heads/xmain.
  t.deepEqual(parsePushPorcelain(`!\tHEAD:refs/heads/xmain\t[rejected] (fetch first)\n`, ref), {
    kind: "refused",
    reason: "",
  });
  t.deepEqual(parsePushPorcelain("", ref), { kind: "refused", reason: "" });
});

test("the mirror commit message is the same for the same inputs", (t) => {
  const counts = { added: 1, changed: 2, removed: 3 };
  t.is(
    mirrorCommitMessage("wiki", "DOCS", counts, OID_A),
    `svc: mirror wiki project DOCS\n\n1 added, 2 changed, 3 removed\n\nsvc-cache-commit: ${OID_A}\n`,
  );
});

test("describeComparison names every kind of difference and shortens long lists", (t) => {
  t.is(describeComparison({ missing: [], extra: [], different: [] }), "");
  t.is(
    describeComparison({
      missing: ["issues/0002.md"],
      extra: ["issues/9999.md"],
      different: ["issues/0001.md"],
    }),
    "1 with other bytes: issues/0001.md; 1 missing: issues/0002.md; 1 not in the cache: issues/9999.md",
  );
  const many = Array.from({ length: 25 }, (_, i) => `pages/${i}.md`);
  const text = describeComparison({ missing: many, extra: [], different: [] });
  t.true(text.startsWith("25 missing: pages/0.md, pages/1.md,"));
  t.true(text.endsWith("pages/19.md and 5 more"));
});
