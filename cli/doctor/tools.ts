/**
 * The tools svc runs through: Node (core/node-version.cts), git (`MIN_GIT`) and `git-remote-svc`, which git
 * must find on PATH for every `svc::` URL and which must be the same svc as the `svc` being run.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { MIN_GIT, MIN_GIT_REASON } from "../../cache/cache.js";
import { LocalFaultError } from "../../cache/root.js";
import nodeVersion from "../../core/node-version.cjs";
import { SVC_VERSION } from "../../core/version.js";
import { parseGitVersion } from "../../git/plumbing.js";
import { userGit } from "../../git/user-git.js";
import { findOnPath, ownBinDirPlan } from "../helper-path.js";
import { prependToPath, words } from "./place.js";
import { type Finding, fail, ok } from "./report.js";

const INSTALL_GIT = `install git ${MIN_GIT.join(".")} or newer with your system's package manager (or from https://git-scm.com/downloads), then run svc doctor again`;

/**
 * The Node running svc. Always ok when svc runs at all: an older Node is refused by the executable before
 * any command (core/node-version.cts); the line says which Node it is and the oldest svc takes.
 */
export function checkNodeVersion(): Finding {
  return ok(
    "node-version",
    `Node ${process.versions.node} (${process.execPath}); svc needs ${nodeVersion.MIN_NODE.join(".")} or later`,
    { version: process.versions.node },
  );
}

/** `git version`; `usable` is false when git cannot be run at all (every later check needs it). */
export async function checkGitVersion(): Promise<{ finding: Finding; usable: boolean }> {
  const result = await userGit(["version"]);
  if (result.code !== 0) {
    const why =
      result.code === null ? `git cannot be started (${result.stderr.trim()})` : result.stderr.trim();
    return {
      finding: fail("git-version", `git is not usable: ${why}`, { advice: INSTALL_GIT }),
      usable: false,
    };
  }
  const text = result.stdout.trim();
  const version = parseGitVersion(text);
  if (!version) {
    return {
      finding: fail("git-version", `git version printed ${JSON.stringify(text.slice(0, 80))}`, {
        advice: INSTALL_GIT,
      }),
      usable: true,
    };
  }
  const [major, minor] = version;
  const tooOld = major < MIN_GIT[0] || (major === MIN_GIT[0] && minor < MIN_GIT[1]);
  const details = { version: text.replace(/^git version /, "") };
  if (tooOld) {
    return {
      finding: fail(
        "git-version",
        `${text} is too old: svc needs git ${MIN_GIT.join(".")} or newer (${MIN_GIT_REASON})`,
        { advice: `no command can do it for every system: ${INSTALL_GIT}` },
        details,
      ),
      usable: true,
    };
  }
  return { finding: ok("git-version", text, details), usable: true };
}

/** What `<helper> --version` prints, or why it printed nothing usable. */
function helperVersion(path: string): Promise<{ line: string } | { error: string }> {
  return new Promise((done) => {
    execFile(path, ["--version"], { timeout: 10_000, encoding: "utf8" }, (error, stdout, stderr) => {
      const line = stdout.trim().split("\n")[0] ?? "";
      if (error && line === "") {
        done({ error: (stderr.trim().split("\n")[0] ?? "") || error.message });
        return;
      }
      done({ line });
    });
  });
}

/**
 * `git-remote-svc` on `path` (the user's PATH), answering `--version` with svc's version. The fix puts the
 * folder of this svc's own helper first on PATH (making the link `svc init` would make, where there is none
 * yet).
 */
export async function checkHelper(path: string | undefined): Promise<Finding> {
  let plan: ReturnType<typeof ownBinDirPlan>;
  try {
    plan = ownBinDirPlan();
  } catch (error) {
    // An installed svc links its helper into the cache folder; the cache check says what is wrong with it.
    if (!(error instanceof LocalFaultError)) throw error;
    return fail("helper", `svc's own git-remote-svc would be linked in the cache folder: ${error.summary}`, {
      advice: "fix the cache folder first (see the cache check), then run svc doctor again",
    });
  }
  const binDir = resolve(plan.dir);
  const exportPath = prependToPath(binDir);
  const fix = plan.link
    ? `${words(["mkdir", "-p", binDir])} && ${words(["ln", "-sf", plan.target, plan.link])} && ${exportPath}`
    : exportPath;
  const found = findOnPath("git-remote-svc", path);
  if (!found) {
    return fail(
      "helper",
      `git-remote-svc is not on PATH: git cannot fetch or push svc:: remotes; svc's own is in ${binDir}`,
      fix,
    );
  }
  const expected = `git-remote-svc ${SVC_VERSION}`;
  const answer = await helperVersion(found);
  if ("error" in answer) {
    return fail(
      "helper",
      `${found} (the git-remote-svc on PATH) does not answer --version (${answer.error.slice(0, 200)}); it is not svc ${SVC_VERSION}'s, which is in ${binDir}`,
      fix,
      { path: found },
    );
  }
  if (answer.line !== expected) {
    return fail(
      "helper",
      `${found} (the git-remote-svc on PATH) says ${JSON.stringify(answer.line.slice(0, 80))}, not ${expected}; svc ${SVC_VERSION}'s is in ${binDir}`,
      fix,
      { path: found, version: answer.line },
    );
  }
  return ok("helper", `${found}: ${expected}`, { path: found, version: SVC_VERSION });
}
