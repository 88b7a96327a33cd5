/**
 * How the remote helper reports a failure on stderr (helper/main.ts): a bug says "internal error" with its
 * stack and how to report it, and the helper exits 2; stdout, git's protocol channel, gets nothing of it.
 */
import { PassThrough } from "node:stream";
import test from "ava";
import { SVC_VERSION } from "../core/version.js";
import { capturedStream } from "../testing/cli.js";
import { main } from "./main.js";

/** Runs the helper with `url`, feeding `input` (or failing stdin with `failure`); its exit, stdout, stderr. */
async function runHelper(
  url: string,
  input: string | Error,
): Promise<{ exit: number; stdout: string; stderr: string }> {
  const stdin = new PassThrough();
  const stdout = capturedStream();
  const stderr = capturedStream();
  const exit = main(["origin", url], {
    stdin: stdin as unknown as typeof process.stdin,
    stdout: stdout.stream as unknown as typeof process.stdout,
    stderr: stderr.stream as unknown as typeof process.stderr,
  });
  if (input instanceof Error) stdin.destroy(input);
  else stdin.end(input);
  return { exit: await exit, stdout: stdout.text(), stderr: stderr.text() };
}

test("a user-facing error in the helper prints its message alone", async (t) => {
  const run = await runHelper("svc::ftp://example.invalid/x", "list\n\n");
  t.is(run.exit, 2);
  t.is(
    run.stderr,
    'svc: remote URL "svc::ftp://example.invalid/x" must use http or https, like svc::http://127.0.0.1:7878/projects/demo\n',
  );
  t.is(run.stdout, "");
});

test("an unexpected error in the helper prints internal error, its stack and the report line on stderr", async (t) => {
  const run = await runHelper("svc::http://127.0.0.1:9/projects/demo", new Error("read ECONNRESET"));
  t.is(run.exit, 2);
  const text = run.stderr;
  t.true(text.startsWith("svc: internal error: read ECONNRESET\nError: read ECONNRESET\n"), text);
  t.regex(text, /^\s+at .+$/m);
  t.true(
    text.endsWith(
      `svc: this is a bug in svc ${SVC_VERSION}; please report it to the svc maintainers with the lines above and the output of \`svc --version\`\n`,
    ),
    text,
  );
  t.is(run.stdout, "");
});

test("git-remote-svc --version prints its version on stdout and exits 0, reading nothing", async (t) => {
  const stdout = capturedStream();
  const stderr = capturedStream();
  const stdin = new PassThrough();
  const exit = await main(["--version"], {
    stdin: stdin as unknown as typeof process.stdin,
    stdout: stdout.stream as unknown as typeof process.stdout,
    stderr: stderr.stream as unknown as typeof process.stderr,
  });
  t.is(exit, 0);
  t.is(stdout.text(), `git-remote-svc ${SVC_VERSION}\n`);
  t.is(stderr.text(), "");
});
