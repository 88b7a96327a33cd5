#!/usr/bin/env node
/**
 * The `git-remote-svc` executable. Run directly as an ES module (bin/git-remote-svc links here) so that
 * start-up costs no dynamic import: git starts the helper once per fetch. It exits as soon as the session
 * is over and stdout is flushed, instead of waiting for idle sockets or timers; git waits for the exit.
 */
import { main } from "./main.js";

const code = await main(process.argv.slice(2));
process.stdout.write("", () => process.exit(code));
