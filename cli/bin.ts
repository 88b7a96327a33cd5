#!/usr/bin/env node
/**
 * `svc` as ES modules, without the bundle. The installed `svc` is not this file: package.json's `bin` and
 * bin/svc point at dist/cli/bin.cjs (cli/bin.cts), which runs the bundle. This entry stays for links an older
 * install made to it, and for tests that start `svc pulse daemon` from the compiled modules (testing/pulse.ts).
 */
import { runCli } from "./main.js";

process.exitCode = await runCli(process.argv.slice(2));
