/**
 * `svc` in this process, as users call it (every command registered by `cli/main.ts`): the argv, the
 * environment the command sees (`context.env`), and what it wrote to stdout and stderr.
 */
import { PassThrough } from "node:stream";
import { Cli } from "clipanion";
import { runCli } from "../cli/main.js";

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runSvcInProcess(
  argv: readonly string[],
  env: Record<string, string | undefined> = process.env,
): Promise<CliRun> {
  const stdout = capturedStream();
  const stderr = capturedStream();
  const code = await runCli(argv, {
    ...Cli.defaultContext,
    env,
    stdout: stdout.stream,
    stderr: stderr.stream,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A stream to hand to code under test as its stdout or stderr, and what was written to it so far. */
export function capturedStream(): { readonly stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}
