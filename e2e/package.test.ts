/**
 * The shipped artifact (STYLE.md rule 9): `npm pack`, unpacked into a temp folder the way npm installs it
 * (bins linked from package.json's `bin`), beside it only the production dependencies, then a clone, an
 * edit and a push with only those bins on PATH, then the shipped `scripts/mirror-refresh`. A runtime
 * dependency listed only in `devDependencies` fails here.
 *
 * The production dependencies are copied from the project's node_modules, not installed: `npm install
 * --omit=dev <tarball>` works (the registry is reachable) but asks the registry, which a test should not
 * need. What is copied is
 * npm's own list of the production tree, `npm ls --omit=dev --all --parseable --package-lock-only` (without
 * `--package-lock-only`, npm ls ignores `--omit` for the linked node_modules and lists the dev tree too),
 * each package without the nested node_modules that the list names by itself.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { delimiter, join, relative, sep } from "node:path";
import test from "ava";
import { git, givenGitEnv, run } from "../testing/git.js";
import { repoRoot } from "../testing/paths.js";
import { givenProject, givenSim, givenTempDir } from "../testing/sim.js";

/** The project's production dependencies, as paths relative to its root (`node_modules/a/node_modules/b`). */
function productionDependencies(): string[] {
  const listed = execFileSync("npm", ["ls", "--omit=dev", "--all", "--parseable", "--package-lock-only"], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  return listed
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => relative(repoRoot, line))
    .filter((path) => path.startsWith(`node_modules${sep}`));
}

/** Copies each package alone: its nested node_modules are listed (and copied) on their own when needed. */
function copyProductionDependencies(into: string): string[] {
  const packages = productionDependencies();
  for (const path of packages) {
    const from = join(repoRoot, path);
    cpSync(from, join(into, path), {
      recursive: true,
      filter: (source) => !source.slice(from.length).includes(`${sep}node_modules`),
    });
  }
  return packages;
}

test("the packed package has both bins and works on its own: init, edit, push, mirror-refresh", async (t) => {
  const root = givenTempDir(t, "svc-pack-");
  const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", root], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false" },
  })
    .trim()
    .split("\n")
    .pop() as string;
  const pkg = join(root, "package");
  execFileSync("tar", ["-xzf", join(root, tarball), "-C", root]);
  const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as {
    bin: Record<string, string>;
  };
  t.deepEqual(Object.keys(manifest.bin).sort(), ["git-remote-svc", "svc"]);
  t.false(existsSync(join(pkg, "dist", "e2e")), "tests are not shipped");
  t.false(existsSync(join(pkg, "dist", "helper", "main.test.js")), "unit tests are not shipped");
  t.false(existsSync(join(pkg, "bin")), "the checkout's bin/ links are not shipped");
  const packages = copyProductionDependencies(pkg);
  for (const dependency of ["clipanion", "js-yaml", "micro"])
    t.true(packages.includes(join("node_modules", dependency)), `${dependency} is a production dependency`);
  for (const devDependency of ["ava", "fast-check", "typescript", "@biomejs/biome"])
    t.false(existsSync(join(pkg, "node_modules", devDependency)), `${devDependency} is not installed`);
  const bin = join(root, "bin");
  mkdirSync(bin);
  for (const [name, target] of Object.entries(manifest.bin)) {
    chmodSync(join(pkg, target), 0o755);
    symlinkSync(join(pkg, target), join(bin, name));
  }

  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", [{ title: "First", body: "one\n" }, { title: "Second" }]);
  const gitEnv = givenGitEnv(t);
  const path = [bin, join(process.execPath, ".."), "/usr/bin", "/bin"].join(delimiter);
  const init = await run(gitEnv, "svc", ["init", "sim::demo", "d", "--origin", sim.url], {
    env: { PATH: path },
  });
  t.is(init.code, 0, init.stderr);
  t.true(existsSync(join(gitEnv.dir, "d", "issues", "0001.md")));
  const file = join(gitEnv.dir, "d", "issues", "0002.md");
  execFileSync("sed", ["-i", "s/^status: open/status: done/", file]);
  t.is((await git(gitEnv, ["commit", "-qam", "done"], { cwd: "d", env: { PATH: path } })).code, 0);
  const push = await git(gitEnv, ["push"], { cwd: "d", env: { PATH: path } });
  t.is(push.code, 0, push.stderr);
  const issue = (await (await fetch(`${sim.url}/projects/demo/issues/2`)).json()) as {
    frontmatter: { status: string };
  };
  t.is(issue.frontmatter.status, "done");

  // The mirror-refresh script as shipped (package.json "files" has scripts/): its shim, run by its path
  // from another folder, finds the compiled script beside it and mirrors the project.
  const shim = join(pkg, "scripts", "mirror-refresh");
  t.true((statSync(shim).mode & 0o111) !== 0, "the shim is executable");
  t.true(existsSync(join(pkg, "dist", "scripts", "mirror-refresh.js")));
  t.is((await git(gitEnv, ["init", "--quiet", "--bare", "mirror.git"])).code, 0);
  const mirrored = await run(gitEnv, shim, [`svc::${sim.url}/projects/demo`, "../mirror.git"], {
    cwd: "d",
    env: { PATH: path },
  });
  t.is(mirrored.code, 0, mirrored.stderr);
  t.regex(
    mirrored.stderr,
    /^svc: verified: 2 files in issues\/ of \.\.\/mirror\.git match the cache byte for byte$/m,
  );
});
