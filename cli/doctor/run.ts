/**
 * `svc doctor`: every check of report.ts `CHECKS`, in that order, changing nothing (not the working tree,
 * not the cache, not the server: its one request is a read). A check that depends on one that failed is
 * `skipped`, saying which.
 */
import { lastServerCommit } from "../../cache/open.js";
import { userRepository } from "../../git/user-git.js";
import { checkCache } from "./cache.js";
import type { Place } from "./place.js";
import { checkRefLocks } from "./ref-locks.js";
import { checkAllowlist, checkCredentials, checkRemote, checkServer } from "./remote.js";
import { CHECKS, type Finding, skipped } from "./report.js";
import { checkGitVersion, checkHelper, checkNodeVersion } from "./tools.js";
import { checkPullConfig, checkSparseCheckout } from "./worktree.js";

export interface DoctorOptions extends Place {
  /** No request to the server: the `server` check is skipped. */
  readonly offline: boolean;
  readonly env: NodeJS.ProcessEnv;
}

export async function runDoctor(options: DoctorOptions): Promise<Finding[]> {
  const place: Place = { dir: options.dir, remote: options.remote };
  const git = await checkGitVersion();
  const findings: Finding[] = [checkNodeVersion(), git.finding, await checkHelper(options.env.PATH)];
  const rest = CHECKS.map(([id]) => id).filter(
    (id) => id !== "node-version" && id !== "git-version" && id !== "helper",
  );
  if (!git.usable) return [...findings, ...rest.map((id) => skipped(id, "git cannot be run"))];

  const found = await checkRemote(place, { env: options.env, offline: options.offline });
  findings.push(found.finding);
  const { remote } = found;
  if (!remote) {
    return [...findings, ...rest.slice(1).map((id) => skipped(id, "no svc remote to check"))];
  }
  const allowlist = checkAllowlist(remote, options.env);
  const credentials = checkCredentials(remote, options.env, place);
  findings.push(allowlist, credentials);
  findings.push(
    await checkServer(remote, {
      offline: options.offline,
      blockedBy: [allowlist, credentials],
      env: options.env,
      place,
    }),
  );
  const user = await lastServerCommit(
    userRepository([`refs/remotes/${place.remote}/main`, `refs/svc/${place.remote}/main`], place.dir ?? "."),
  );
  findings.push(...checkCache(remote, place, user), await checkRefLocks(place, remote));
  findings.push(await checkSparseCheckout(place), await checkPullConfig(place));
  return inCheckOrder(findings);
}

/** `findings` in the order of `CHECKS` (the order `--help` documents). */
function inCheckOrder(findings: readonly Finding[]): Finding[] {
  const order = CHECKS.map(([id]) => id as string);
  return [...findings].sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
}
