/**
 * The refusals both front ends of the mirror share (cli/mirror/command-line.ts): a usage error shows the
 * caller's usage line and example; the mirror URLs it never pushes to are refused, a password never shown.
 */
import test from "ava";
import { UserFacingError } from "../../core/errors.js";
import { checkMirrorUrl, type MirrorUsage, usageError } from "./command-line.js";

const USAGE: MirrorUsage = { line: "m <a> <b>", example: "m x y", help: "m --help" };

test("usageError: the problem, the caller's usage line, an example and where the help is", (t) => {
  const error = usageError(USAGE, "it is wrong");
  t.true(error instanceof UserFacingError);
  t.is(error.code, "SVC_USAGE");
  t.is(error.message, "it is wrong\nusage: m <a> <b>\nfor example: m x y\n(m --help says more)");
});

const REFUSED: readonly [string, string, RegExp][] = [
  ["an empty URL", "", /^the mirror's git URL is empty\nusage: m <a> <b>\n/],
  ["an option", "--force", /^the mirror's git URL "--force" starts with -\nusage: m /],
  ["an svc remote", "svc::http://127.0.0.1:7878/projects/demo", /a push there would write to the backend/],
];

for (const [name, mirror, message] of REFUSED) {
  test(`checkMirrorUrl refuses ${name} with the caller's usage`, (t) => {
    const error = t.throws(() => checkMirrorUrl(mirror, USAGE, () => "unused"), {
      instanceOf: UserFacingError,
    });
    t.regex(error?.message ?? "", message);
  });
}

test("a mirror URL with a password is refused without the password, with the command to run instead", (t) => {
  const error = t.throws(
    () =>
      checkMirrorUrl("https://bot:s3cret-token@git.example.test/m.git", USAGE, (clean) => `again ${clean}`),
    { instanceOf: UserFacingError },
  );
  const message = error?.message ?? "";
  t.false(message.includes("s3cret-token"));
  t.true(message.endsWith("Then run: again https://bot@git.example.test/m.git"));
  // A user name alone, an SSH URL and a path are plain mirrors.
  for (const mirror of [
    "https://bot@git.example.test/m.git",
    "git@git.example.test:m.git",
    "ssh://git@h/m.git",
    "../m.git",
  ])
    t.notThrows(() => checkMirrorUrl(mirror, USAGE, (clean) => clean));
});
