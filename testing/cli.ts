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
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on("data", (chunk: Buffer) => out.push(chunk));
  stderr.on("data", (chunk: Buffer) => err.push(chunk));
  const code = await runCli(argv, { ...Cli.defaultContext, env, stdout, stderr });
  return { code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
}
