/**
 * core/errors.ts: `shellWord`, the one quoting of every command svc prints for the user to run. Each word
 * is checked against a real shell too: `sh -c 'printf %s <word>'` must print the text unchanged.
 */
import { execFileSync } from "node:child_process";
import test from "ava";
import { failureReport, shellWord, terminalSafe, UserFacingError } from "./errors.js";

const CASES: readonly [text: string, word: string][] = [
  ["/tmp/svc-e2e-x/work/big", "/tmp/svc-e2e-x/work/big"],
  ["issues/0002.md", "issues/0002.md"],
  ["issues/00[1-2]*", "'issues/00[1-2]*'"],
  ["pages/*", "'pages/*'"],
  ["", "''"],
  ["Keep NOTES.md out of svc", '"Keep NOTES.md out of svc"'],
  ["my notes.txt", '"my notes.txt"'],
  ["it's", `"it's"`],
  ["issues/it's $HOME.md", `'issues/it'\\''s $HOME.md'`],
  ['say "hi"', `'say "hi"'`],
  ["a `b`", "'a `b`'"],
  ["back\\slash", "'back\\slash'"],
  ["wow!", "'wow!'"],
  // Control characters: spelled by printf, so the printed command holds none and fits one line.
  ["two\nlines", `"$(printf 'two\\012lines')"`],
  ["issues/\u001b[31mit's 100%!.md", `"$(printf 'issues/\\033[31mit'\\''s 100%%\\041.md')"`],
  ["a\tb\\c\u202e.md", `"$(printf 'a\\011b\\\\c\\342\\200\\256.md')"`],
  ["ends in newlines\u0007\n\n", `"$(printf 'ends in newlines\\007')"'\n\n'`],
  ["~/x", "'~/x'"],
  ["a;b|c&d", "'a;b|c&d'"],
];

test("shellWord: plain words as they are, prose in double quotes, anything else in single quotes", (t) => {
  for (const [text, word] of CASES) t.is(shellWord(text), word, JSON.stringify(text));
});

test("shellWord's words are read back by real shells as the text: sh (dash here) and bash", (t) => {
  for (const shell of ["sh", "bash"]) {
    for (const [text] of CASES) {
      const echoed = execFileSync(shell, ["-c", `printf %s ${shellWord(text)}`], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: "/nonexistent-home" },
      });
      t.is(echoed, text, `${shell}: ${JSON.stringify(text)}`);
    }
  }
});

test("terminalSafe keeps line feeds, tabs and text; escape sequences, carriage returns and bidi overrides become U+FFFD", (t) => {
  t.is(terminalSafe("line one\n\tline two é 日本"), "line one\n\tline two é 日本");
  t.is(terminalSafe("\u001b[2J\u001b]0;pwned\u0007"), "\ufffd[2J\ufffd]0;pwned\ufffd");
  t.is(terminalSafe("ok\rsvc: all good"), "ok\ufffdsvc: all good");
  t.is(
    terminalSafe("\u009b31m\u202egnp.exe\u2066x\u2069\u007f"),
    "\ufffd31m\ufffdgnp.exe\ufffdx\ufffd\ufffd",
  );
});

test("failureReport shows a message quoting hostile server text without its control characters", (t) => {
  const error = new UserFacingError("SVC_BACKEND", "GET /x answered 500: \u001b[31mfine\u001b[0m\rall good");
  t.is(failureReport(error, "0.0.0"), "svc: GET /x answered 500: \ufffd[31mfine\ufffd[0m\ufffdall good\n");
});
