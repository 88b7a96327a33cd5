/**
 * `npm run build`'s second step: bundles the remote helper proper (dist/helper/main.js and everything it
 * imports, at once or later) into one CommonJS file, dist/helper/bundle.cjs, which the executable
 * (dist/helper/bin.cjs, kept small so that `capabilities` is answered before any of it is read) runs when
 * a command needs the project. git starts the helper for every fetch, push and lazy blob batch; measured on
 * a no-op `git fetch` (issue 18), loading the same code as one file instead of ~30 ES modules cut the time
 * from the `stateless-connect` command to the session's code being loaded from ~50 ms to ~15 ms at first: no ES
 * module loader, one file read, and V8 compiles each function only when it first runs. With the code cache
 * (below) and without whitespace (`minifyWhitespace`) it is ~7 ms (SVC_TRACE, medians of ten no-op fetches). Modules loaded on demand
 * (`await import(…)`: a push, a backend) stay lazy: they are in the file and run when first imported.
 *
 * The command line is bundled the same way (dist/cli/main.js into dist/cli/bundle.cjs, run by
 * dist/cli/bin.cjs): `svc --version` took ~83 ms as ES modules and takes ~53 ms so (`node -e 0`: ~24 ms).
 *
 * Beside each goes the V8 code cache of that file, `bundle.cjs.cache`, which core/load-bundle.cts uses to
 * skip parsing it.
 *
 * The npm packages are in the bundles as well, so that they share the code cache instead of going through
 * node's module resolution and compiler on each start (measured on a push: js-yaml 7.4 ms, node-diff3
 * 2.9 ms that way). `createRequire(import.meta.url)("<package>")`, which svc's modules use to load a package
 * on first use only (js-yaml for parsing, node-diff3 for merging), becomes `require("<package>")`, which
 * esbuild follows: the package is bundled and still initialized on that first call. SQLite is node's own
 * (`node:sqlite`, core/sqlite.ts): nothing native to find.
 *
 * `import.meta.url` becomes the bundle's own path (`__filename`), which svc's modules pass to
 * `createRequire` (which takes a path as well), and which cli/helper-path.ts reads as `here`
 * (`here=__filename` once whitespace is minified) and turns into its folder itself (the bundle sits in the
 * same folder as that module). Any other use (as a URL) fails the build.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import Module from "node:module";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { build, type Plugin } from "esbuild";

const dist = fileURLToPath(new URL("../", import.meta.url));

/** `createRequire(import.meta.url)("<package>")` as tsc writes it, for an npm package (not `node:`). */
const LAZY_PACKAGE = /\bcreateRequire\)?\(import\.meta\.url\)\("((?!node:)[^"]+)"\)/g;

/** The rewrite above. */
const bundlePackages: Plugin = {
  name: "svc-bundle-packages",
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (!LAZY_PACKAGE.test(source)) return undefined;
      return { contents: source.replace(LAZY_PACKAGE, 'require("$1")'), loader: "js" };
    });
  },
};

/** Bundles `<folder>/main.js` of dist into `<folder>/bundle.cjs`, with its V8 code cache beside it. */
async function bundle(folder: string): Promise<void> {
  const outfile = `${dist}${folder}/bundle.cjs`;
  await build({
    entryPoints: [`${dist}${folder}/main.js`],
    outfile,
    bundle: true,
    platform: "node",
    target: "node22",
    format: "cjs",
    plugins: [bundlePackages],
    define: { "import.meta.url": "__filename" },
    // Without comments and indentation the helper's bundle was ~430 KB instead of ~580 KB when this was measured
    // (~730 KB instead of ~1,020 KB today), and all ASCII:
    // the comments held a few characters such as "→", which made node read the whole file as a two-byte
    // string. Loading it took ~7 ms instead of ~13 ms of each helper start (SVC_TRACE, "stateless-connect"
    // to "helper code loaded", medians of ten no-op fetches each, alternating). Names are kept, so a stack
    // trace still names each function (at line 1 of the bundle).
    minifyWhitespace: true,
    charset: "ascii",
    legalComments: "none",
    logLevel: "warning",
  });
  const bundled = readFileSync(outfile, "utf8");
  const unbundled = [...bundled.matchAll(/require\("((?!node:)[^".][^"]*)"\)/g)]
    .map((match) => match[1] ?? "")
    .filter((name) => !Module.builtinModules.includes(name));
  if (unbundled.length > 0) {
    throw new Error(`${outfile}: npm packages left outside the bundle: ${unbundled.join(", ")}`);
  }
  const uses = bundled.match(/.{0,15}__filename/g) ?? [];
  const other = uses.filter(
    (use) => !use.endsWith("createRequire)(__filename") && !use.endsWith("here=__filename"),
  );
  if (other.length > 0) {
    throw new Error(`${outfile}: import.meta.url is used other than with createRequire: ${other.join(", ")}`);
  }
  // The V8 code cache core/load-bundle.cts hands to `vm.Script` (the same wrapped source it compiles): V8
  // reads it instead of parsing the file, and ignores it under another node binary or other flags.
  // helper/bin.cts (a fetch, a push) and cli/bin.cts (`svc init`) fold the code of each command into this
  // cache after that command's first successful run (`foldIntoCodeCache`), listing what they folded in
  // `bundle.cjs.cache.commands`: a new build starts that list again.
  writeFileSync(
    `${outfile}.cache`,
    new Script(Module.wrap(bundled), { filename: outfile }).createCachedData(),
  );
  rmSync(`${outfile}.cache.commands`, { force: true });
}

await bundle("helper");
await bundle("cli");
