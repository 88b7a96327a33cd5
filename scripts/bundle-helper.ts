/**
 * `npm run build`'s second step: bundles the remote helper proper (dist/helper/main.js and everything it
 * imports, at once or later) into one CommonJS file, dist/helper/bundle.cjs, which the executable
 * (dist/helper/bin.cjs, kept small so that `capabilities` is answered before any of it is read) runs when
 * a command needs the project. git starts the helper for every fetch, push and lazy blob batch; measured on
 * a no-op `git fetch` (issue 18), loading the same code as one file instead of ~30 ES modules cut the time
 * from the `stateless-connect` command to the session's code being loaded from ~50 ms to ~15 ms: no ES module
 * loader, one file read, and V8 compiles each function only when it first runs. Modules loaded on demand
 * (`await import(…)`: a push, a backend) stay lazy: they are in the file and run when first imported.
 *
 * Beside it goes the V8 code cache of that file, `bundle.cjs.cache`, which bin.cjs uses to skip parsing it.
 *
 * npm packages stay outside (`better-sqlite3` is native; the others are loaded from node_modules as before).
 * `import.meta.url`, which the helper's modules only pass to `createRequire`, becomes the bundle's own path
 * (`__filename`, which `createRequire` takes as well); a use of `import.meta.url` as a URL would fail the build.
 */
import { readFileSync, writeFileSync } from "node:fs";
import Module from "node:module";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { build } from "esbuild";

const helperDir = fileURLToPath(new URL("../helper/", import.meta.url));
const outfile = `${helperDir}bundle.cjs`;

await build({
  entryPoints: [`${helperDir}main.js`],
  outfile,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  packages: "external",
  define: { "import.meta.url": "__filename" },
  logLevel: "warning",
});
const bundled = readFileSync(outfile, "utf8");
const uses = bundled.match(/.{0,15}__filename/g) ?? [];
const other = uses.filter((use) => !use.endsWith("createRequire)(__filename"));
if (other.length > 0) {
  throw new Error(`${outfile}: import.meta.url is used other than with createRequire: ${other.join(", ")}`);
}
// The V8 code cache bin.cjs hands to `vm.Script` (the same wrapped source it compiles): V8 reads it instead
// of parsing the file, and ignores it under another node binary or other flags.
writeFileSync(`${outfile}.cache`, new Script(Module.wrap(bundled), { filename: outfile }).createCachedData());
