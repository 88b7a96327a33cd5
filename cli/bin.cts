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
import nodeVersion = require("../core/node-version.cjs");

/**
 * The commands whose code `foldIntoCodeCache` adds to the code cache after their first successful run:
 * `svc init`, whose start is part of every clone's time (issue 18).
 */
const FOLDED_COMMANDS = new Set(["init"]);

const refusal = nodeVersion.nodeRefusal();
if (refusal !== undefined) {
  process.stderr.write(`svc: ${refusal}\n`);
  process.exit(2);
}
const file = path.join(__dirname, "bundle.cjs");
const { exports: bundled, script } = loader.loadBundle(file);
const runCli = bundled.runCli as (argv: readonly string[]) => Promise<number>;
const argv = process.argv.slice(2);
void runCli(argv).then((code) => {
  process.exitCode = code;
  if (code === 0) loader.foldIntoCodeCache(file, script, argv[0] ?? "", FOLDED_COMMANDS);
});
