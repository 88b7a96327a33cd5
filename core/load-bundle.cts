/**
 * Runs a bundle of scripts/bundle.ts (`dist/helper/bundle.cjs`, `dist/cli/bundle.cjs`: a `main.js` and
 * everything it imports, npm packages included, in one CommonJS file) as `require` would, with the V8 code
 * cache beside it (`<file>.cache`): compiling the helper's bundle costs ~10 ms, reading its cache ~4 ms.
 * V8 checks the cache against the source and its own version and flags, and compiles as usual when it does
 * not fit (another node binary, a missing or damaged file). Returns the compiled script too, for
 * `foldIntoCodeCache`.
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

/**
 * Rewrites `<file>.cache` once after the first successful run of each command of `folded` (the executable
 * calls it with the command that just ran), and whenever V8 refused the cache (another node binary). The
 * build's cache holds only the functions V8 compiles before running anything; a cache made after a run
 * holds every function that run compiled, so the next run of that command compiles almost nothing
 * (measured on a one-record push at 10,000 records: ~5-10 ms less; on `svc init`'s start: ~3-5 ms).
 * `<file>.cache.commands` lists the commands folded in so far; the build removes it. Each file is written
 * beside and renamed into place, so no process ever reads half of one, and a read-only install keeps the
 * build's cache.
 */
function foldIntoCodeCache(
  file: string,
  script: vm.Script,
  command: string,
  folded: ReadonlySet<string>,
): void {
  if (!folded.has(command)) return;
  const listFile = `${file}.cache.commands`;
  let done: string[] = [];
  try {
    done = fs.readFileSync(listFile, "utf8").split("\n").filter(Boolean);
  } catch {
    // None folded in yet.
  }
  if (script.cachedDataRejected === true) done = [];
  else if (done.includes(command)) return;
  const replace = (target: string, data: string | Buffer) => {
    const temp = `${target}.${process.pid}`;
    try {
      fs.writeFileSync(temp, data);
      fs.renameSync(temp, target);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw error;
    }
  };
  try {
    replace(`${file}.cache`, script.createCachedData());
    replace(listFile, `${[...done, command].join("\n")}\n`);
  } catch {
    // A read-only install: the build's cache stays.
  }
}

export = { loadBundle, foldIntoCodeCache };
