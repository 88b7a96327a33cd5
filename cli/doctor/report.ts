/**
 * What `svc doctor` finds, and its two renderings (pure): one line per check for people, each failure
 * followed by its fix, and one JSON object for agents. Healthy means no check failed; `skipped` and `info`
 * are not failures.
 */

/** The checks, in the order they run and are printed; `svc doctor --help` lists them from here. */
export const CHECKS = [
  ["node-version", "the Node running svc, and the oldest svc takes (22.16)"],
  ["git-version", "git 2.30 or newer is on PATH (the oldest git svc is tested with)"],
  ["helper", "git-remote-svc is on PATH and is the same version as svc"],
  ["remote", "the folder is a git working tree whose remote is an svc:: URL; its backend kind"],
  ["allowlist", "SVC_ALLOWED_ORIGINS lets svc reach the remote's origin"],
  ["credentials", "every variable the backend needs is set (names only, never values)"],
  ["server", "the server accepts the credentials and knows the project: one read-only request"],
  [
    "cache",
    "the project's cache: SVC_CACHE_DIR usable, found, writable (space, not read-only, permissions), repo.git, cache.db integrity_check, audit triggers, tip commit",
  ],
  ["temp-refs", "no temporary refs of a push that died in the cache repository"],
  ["history", "the working tree's last server commit (origin/main) is in the cache"],
  [
    "ref-locks",
    "no lock file under the clone's refs/ that a killed git left (git then cannot update that ref)",
  ],
  ["sparse-checkout", "every sparse-checkout pattern matches a record file"],
  ["pull-config", "pull.rebase and pull.ff let git pull merge, as svc's flow expects"],
  ["records", "info: how many records the cache holds"],
  ["cache-size", "info: the cache's size on disk"],
  ["last-sync", "info: when the cache last synced, and what the server answered"],
] as const;

export type CheckId = (typeof CHECKS)[number][0];

export type CheckStatus = "ok" | "fail" | "skipped" | "info";

export interface Finding {
  readonly id: CheckId;
  readonly status: CheckStatus;
  /** What was found, in one line. Never a credential's value. */
  readonly message: string;
  /**
   * For a failure: the command that fixes it, runnable as printed from the folder svc doctor ran in, with
   * real values only. Null when svc cannot print one (a credential, a choice only the user can make):
   * `advice` says in words what to do.
   */
  readonly fix: string | null;
  /** What to do when no command can be printed. */
  readonly advice?: string;
  /** Facts for agents, added to the check's JSON object (never under the names above). */
  readonly details?: Readonly<Record<string, unknown>>;
}

export function ok(id: CheckId, message: string, details?: Record<string, unknown>): Finding {
  return { id, status: "ok", message, fix: null, ...(details ? { details } : {}) };
}

export function info(id: CheckId, message: string, details?: Record<string, unknown>): Finding {
  return { id, status: "info", message, fix: null, ...(details ? { details } : {}) };
}

export function skipped(id: CheckId, why: string): Finding {
  return { id, status: "skipped", message: why, fix: null };
}

export function fail(
  id: CheckId,
  message: string,
  fix: string | { advice: string },
  details?: Record<string, unknown>,
): Finding {
  return {
    id,
    status: "fail",
    message,
    ...(typeof fix === "string" ? { fix } : { fix: null, advice: fix.advice }),
    ...(details ? { details } : {}),
  };
}

export function isHealthy(findings: readonly Finding[]): boolean {
  return findings.every((finding) => finding.status !== "fail");
}

const LABELS: Record<CheckStatus, string> = { ok: "ok", fail: "FAIL", skipped: "skipped", info: "info" };

/** One line per check (`FAIL    cache: …`), each failure followed by `  fix: …`; the verdict last. */
export function renderText(findings: readonly Finding[]): string {
  const lines: string[] = [];
  for (const finding of findings) {
    lines.push(`${LABELS[finding.status].padEnd(8)}${finding.id}: ${finding.message}`);
    if (finding.status !== "fail") continue;
    lines.push(
      finding.fix === null ? `  fix: none to print; ${finding.advice ?? ""}` : `  fix: ${finding.fix}`,
    );
  }
  const problems = findings.filter((finding) => finding.status === "fail").length;
  lines.push(
    problems === 0
      ? "svc doctor: healthy"
      : `svc doctor: ${problems} ${problems === 1 ? "problem" : "problems"}`,
  );
  return `${lines.join("\n")}\n`;
}

function withoutKeys(
  record: Readonly<Record<string, unknown>>,
  keys: readonly string[],
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)));
}

/** `{"healthy": …, "checks": [{id, status, message, fix, advice?, …details}]}` on one line. */
export function renderJson(findings: readonly Finding[]): string {
  const checks = findings.map((finding) => ({
    id: finding.id,
    status: finding.status,
    message: finding.message,
    fix: finding.fix,
    ...(finding.advice === undefined ? {} : { advice: finding.advice }),
    ...withoutKeys(finding.details ?? {}, ["id", "status", "message", "fix", "advice"]),
  }));
  return `${JSON.stringify({ healthy: isHealthy(findings), checks })}\n`;
}
