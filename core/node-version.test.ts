import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import test from "ava";
import { repoRoot } from "../testing/paths.js";
import nodeVersion from "./node-version.cjs";

test("a Node older than 22.16 is refused, naming the version found, its path and the one needed", (t) => {
  for (const old of ["20.20.2", "22.15.1", "18.0.0", "22.5.0"]) {
    t.is(
      nodeVersion.nodeRefusal(old, "/usr/bin/node"),
      `svc needs Node 22.16 or later, and this is Node ${old} (/usr/bin/node); install Node 24 LTS (or 22.16+) and put it first on PATH, then run the same command again`,
    );
  }
  for (const good of ["22.16.0", "22.23.3", "24.21.0", "26.12.1", "100.0.0"]) {
    t.is(nodeVersion.nodeRefusal(good, "/x/node"), undefined, good);
  }
});

/** The machine's other Node, when it is one svc refuses (these machines carry Node 20 in /usr/bin). */
function olderNode(): string | undefined {
  try {
    const version = execFileSync("/usr/bin/node", ["-p", "process.versions.node"], {
      encoding: "utf8",
    }).trim();
    return nodeVersion.nodeRefusal(version) === undefined ? undefined : "/usr/bin/node";
  } catch {
    return undefined;
  }
}

test("both executables refuse an old Node before anything else: exit 2 and the one line", (t) => {
  const node = olderNode();
  if (node === undefined) {
    t.log("SKIP: no Node older than 22.16 at /usr/bin/node on this machine");
    t.pass();
    return;
  }
  for (const [bin, name, args] of [
    ["cli/bin.cjs", "svc", ["--version"]],
    ["helper/bin.cjs", "git-remote-svc", ["origin", "svc::http://127.0.0.1:1/projects/demo"]],
  ] as const) {
    const result = spawnSync(node, [join(repoRoot, "dist", bin), ...args], {
      input: "capabilities\n\n",
      encoding: "utf8",
    });
    t.is(result.status, 2, bin);
    t.is(result.stdout, "", `${bin}: git is told nothing`);
    t.regex(
      result.stderr,
      new RegExp(
        `^${name}: svc needs Node 22\\.16 or later, and this is Node 2\\d\\.\\d+\\.\\d+ \\(/usr/bin/node\\); install Node 24 LTS \\(or 22\\.16\\+\\) and put it first on PATH, then run the same command again\\n$`,
      ),
    );
  }
});
