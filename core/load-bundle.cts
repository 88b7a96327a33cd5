/**
 * Runs a bundle of scripts/bundle.ts (`dist/helper/bundle.cjs`, `dist/cli/bundle.cjs`: a `main.js` and
 * everything it imports, npm packages included, in one CommonJS file) as `require` would, with the V8 code
 * cache beside it (`<file>.cache`): compiling the helper's bundle costs ~10 ms, reading its cache ~4 ms.
 * V8 checks the cache against the source and its own version and flags, and compiles as usual when it does
 * not fit (another node binary, a missing or damaged file). Returns the compiled script too, for
 * helper/bin.cts `foldIntoCodeCache`.
 *
 * CommonJS and free of imports but node's own, so that the executables (helper/bin.cts, cli/bin.cts) load
 * no ES module loader before the bundle.
 */
import fs = require("node:fs");

import nodeModule = require("node:module");

import path = require("node:path");
import vm = require("node:vm");

function loadBundle(file: string): { exports: Record<string, unknown>; script: vm.Script } {
  const source = fs.readFileSync(file, "utf8");
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(`${file}.cache`);
  } catch {
    // No cache: V8 compiles the source.
  }
  const script = new vm.Script(nodeModule.wrap(source), { filename: file, cachedData });
  const compiled = script.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} as Record<string, unknown> };
  compiled.call(
    module.exports,
    module.exports,
    nodeModule.createRequire(file),
    module,
    file,
    path.dirname(file),
  );
  return { exports: module.exports, script };
}

export = { loadBundle };
