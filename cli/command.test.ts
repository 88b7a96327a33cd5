/**
 * How a failed command reports (cli/command.ts, core/errors.ts `failureReport`): a user-facing error is its
 * message alone, a bug says "internal error" with its stack and how to report it.
 */
import { PassThrough } from "node:stream";
import test from "ava";
import { Cli } from "clipanion";
import { UserFacingError } from "../core/errors.js";
import { SVC_VERSION } from "../core/version.js";
import { capturedStream } from "../testing/cli.js";
import { SvcCommand } from "./command.js";

/** Runs a command whose `run()` throws `error`; returns its exit code and stderr. */
async function failWith(error: unknown): Promise<{ code: number; stderr: string }> {
  class FailingCommand extends SvcCommand {
    static override paths = [["fail"]];
    async run(): Promise<number> {
      throw error;
    }
  }
  const cli = new Cli({ binaryName: "svc", enableColors: false });
  cli.register(FailingCommand);
  const stderr = capturedStream();
  const code = await cli.run(["fail"], {
    ...Cli.defaultContext,
    stdout: new PassThrough(),
    stderr: stderr.stream,
  });
  return { code, stderr: stderr.text() };
}

const STACK_LINE = /^\s+at .+$/m;
const REPORT = `svc: this is a bug in svc ${SVC_VERSION}; please report it to the svc maintainers with the lines above and the output of \`svc --version\`\n`;

test("a user-facing error prints its message alone: no stack, no report line", async (t) => {
  const { code, stderr } = await failWith(
    new UserFacingError("SVC_USAGE", "--format yaml is not known; use table or json"),
  );
  t.is(code, 2);
  t.is(stderr, "svc: --format yaml is not known; use table or json\n");
});

test("an unexpected error prints internal error, its stack and how to report it", async (t) => {
  const { code, stderr } = await failWith(
    new TypeError("Cannot read properties of undefined (reading 'id')"),
  );
  t.is(code, 2);
  t.true(
    stderr.startsWith("svc: internal error: Cannot read properties of undefined (reading 'id')\n"),
    stderr,
  );
  t.regex(stderr, /^TypeError: Cannot read properties of undefined \(reading 'id'\)\n\s+at /m);
  t.regex(stderr, STACK_LINE);
  t.true(stderr.endsWith(REPORT), stderr);
});

test("an unexpected error shows its cause's stack too", async (t) => {
  const { stderr } = await failWith(
    new Error("could not settle the journal", { cause: new RangeError("bad index") }),
  );
  t.regex(stderr, /^caused by: RangeError: bad index\n\s+at /m);
  t.true(stderr.endsWith(REPORT));
});

test("a thrown non-Error is an internal error that says no stack was there", async (t) => {
  const { stderr } = await failWith("just a string");
  t.is(
    stderr,
    `svc: internal error: just a string\njust a string\n(no stack: a string was thrown, not an Error)\n${REPORT}`,
  );
});
