#!/usr/bin/env node
/**
 * The `svc` executable (bin/svc links here): runs cli/main.ts and everything it imports, bundled into one
 * CommonJS file (dist/cli/bundle.cjs, by scripts/bundle.ts) and loaded with its V8 code cache
 * (core/load-bundle.cts), as git-remote-svc runs the helper. Every command class is loaded at each start
 * (clipanion needs them all to parse): as ~40 ES modules that took ~50 ms before a command ran.
 * (cli/bin.ts, the same entry as an ES module, stays for links made by an older install.)
 */
import path = require("node:path");
import loader = require("../core/load-bundle.cjs");

const bundle = loader.loadBundle(path.join(__dirname, "bundle.cjs"));
const runCli = bundle.exports.runCli as (argv: readonly string[]) => Promise<number>;
void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
