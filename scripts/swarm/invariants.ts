/**
 * The swarm's invariants, judged from what was observed once every agent stopped and every working tree
 * pulled a last time: the agents' records, the server's issues, the simulator's audit table, the requests
 * the counting proxy forwarded, and the checks of each working tree and store. Pure: each invariant is a
 * list of violations, empty when it holds, each naming the record, issue or request at fault.
 */
import type { ProxiedRequest } from "./counting-proxy.js";
import type { OpRecord } from "./record.js";

export interface ServerIssue {
  readonly id: number;
  readonly title: string;
  readonly body: string;
  readonly version: number;
}

/** A row of the simulator's `audit_events`. */
export interface AuditRow {
  readonly method: string;
  readonly path: string;
  readonly status: number | null;
  readonly requestBody: string | null;
}

/** One working tree after its final `git pull`; every problem is a sentence, none when it is fine. */
export interface TreeCheck {
  readonly agent: number;
  readonly problems: readonly string[];
}

/** `git fsck` of a repository or `PRAGMA integrity_check` of a database. */
export interface StoreCheck {
  readonly what: string;
  /** What was wrong; undefined when clean. */
  readonly problem?: string;
}

export interface AgentExit {
  readonly agent: number;
  readonly code: number | null;
  /** The end of its stderr, for an agent that did not exit 0. */
  readonly log: string;
}

export interface Observed {
  readonly project: string;
  readonly ops: readonly OpRecord[];
  readonly issues: readonly ServerIssue[];
  readonly audit: readonly AuditRow[];
  readonly proxied: readonly ProxiedRequest[];
  readonly unanswered: readonly string[];
  readonly trees: readonly TreeCheck[];
  readonly stores: readonly StoreCheck[];
  readonly agents: readonly AgentExit[];
}

export interface InvariantResult {
  readonly name: string;
  readonly violations: readonly string[];
}

export function checkInvariants(observed: Observed): InvariantResult[] {
  return [
    { name: "no lost update", violations: lostUpdates(observed) },
    { name: "no duplicate create", violations: duplicateCreates(observed) },
    { name: "audit rows equal requests", violations: auditMismatches(observed) },
    { name: "working trees clean and equal to the server", violations: treeProblems(observed) },
    { name: "git fsck and PRAGMA integrity_check clean", violations: storeProblems(observed) },
    {
      name: "every refused push said fetch first; every agent exited 0",
      violations: agentFailures(observed),
    },
  ];
}

/** `PATCH /projects/<p>/issues/<id>` → id, for `method` and a 2xx `status` the caller names. */
function writesById(observed: Observed, method: string, status: number): Map<number, number> {
  const prefix = `/projects/${observed.project}/issues/`;
  const counts = new Map<number, number>();
  for (const row of observed.audit) {
    if (row.method !== method || row.status !== status || !row.path.startsWith(prefix)) continue;
    const id = Number(row.path.slice(prefix.length));
    if (Number.isSafeInteger(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

function bodyHasLine(issue: ServerIssue, line: string): boolean {
  return issue.body.split("\n").includes(line);
}

/**
 * Every line an accepted push carried is in the final body of its issue, or the issue is gone and its
 * DELETE was accepted exactly once; every accepted delete's issue is gone, deleted once; no issue was
 * deleted twice; each issue's version is 1 plus the PATCHes the simulator accepted for it.
 */
function lostUpdates(observed: Observed): string[] {
  const violations: string[] = [];
  const present = new Map(observed.issues.map((issue) => [issue.id, issue]));
  const deletes = writesById(observed, "DELETE", 204);
  const patches = writesById(observed, "PATCH", 200);
  const deletedOnce = (id: number, what: string) => {
    const count = deletes.get(id) ?? 0;
    if (count !== 1)
      violations.push(`${what}: issue ${id} is not on the server and was deleted ${count} times`);
  };
  for (const op of observed.ops) {
    if (op.outcome !== "accepted" || !op.carried) continue;
    const what = `agent ${op.agent} op ${op.op} (${op.action})`;
    const id = op.action === "create" ? op.createdId : op.issue;
    if (id === undefined) continue;
    const issue = present.get(id);
    if (op.action === "delete") {
      if (issue) violations.push(`${what}: its delete was accepted, but issue ${id} is on the server`);
      else deletedOnce(id, what);
    } else if (!issue) {
      if (op.action === "edit") deletedOnce(id, what);
    } else if (!bodyHasLine(issue, op.line)) {
      violations.push(`${what}: "${op.line}" was accepted, but the body of issue ${id} lacks it`);
    }
  }
  for (const [id, count] of deletes) {
    if (count > 1) violations.push(`issue ${id} was deleted ${count} times`);
  }
  for (const issue of observed.issues) {
    const expected = 1 + (patches.get(issue.id) ?? 0);
    if (issue.version !== expected) {
      violations.push(
        `issue ${issue.id} is at version ${issue.version}, but the simulator accepted ${expected - 1} PATCHes of it`,
      );
    }
  }
  return violations;
}

const TOKEN = /swarm-a\d+-n\d+/g;

function countTokens(texts: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const token of text.match(TOKEN) ?? []) counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  return counts;
}

/**
 * No token was created twice (accepted POSTs in the audit, issues on the server); each accepted create's
 * token was POSTed once and is on the server once, or its record was deleted once.
 */
function duplicateCreates(observed: Observed): string[] {
  const violations: string[] = [];
  const createPath = `/projects/${observed.project}/issues`;
  const posted = countTokens(
    observed.audit
      .filter((row) => row.method === "POST" && row.status === 201 && row.path === createPath)
      .map((row) => row.requestBody ?? ""),
  );
  const onServer = countTokens(observed.issues.map((issue) => issue.title));
  for (const [token, count] of posted) {
    if (count > 1) violations.push(`${token} was created ${count} times (accepted POSTs in the audit)`);
  }
  for (const [token, count] of onServer) {
    if (count > 1) violations.push(`${token} is the title of ${count} issues on the server`);
  }
  const deletes = writesById(observed, "DELETE", 204);
  for (const op of observed.ops) {
    if (op.action !== "create" || op.outcome !== "accepted" || op.token === undefined) continue;
    const what = `agent ${op.agent} op ${op.op}: the accepted create of ${op.token}`;
    const posts = posted.get(op.token) ?? 0;
    if (posts !== 1) violations.push(`${what} was POSTed ${posts} times`);
    if ((onServer.get(op.token) ?? 0) > 0) continue;
    if (op.createdId === undefined) violations.push(`${what} is not on the server, and svc named no record`);
    else if ((deletes.get(op.createdId) ?? 0) !== 1) {
      violations.push(`${what} (issue ${op.createdId}) is not on the server and was not deleted once`);
    }
  }
  return violations;
}

function describe(request: { method: string; path: string; status: number | null }): string {
  return `${request.method} ${request.path} ${request.status ?? "(no status)"}`;
}

/** The audit table holds one row per request the simulator answered: the same method, path and status. */
function auditMismatches(observed: Observed): string[] {
  const pending = new Map<string, number>();
  for (const request of observed.proxied) {
    const key = describe(request);
    pending.set(key, (pending.get(key) ?? 0) + 1);
  }
  const extraRows: string[] = [];
  for (const row of observed.audit) {
    const key = describe(row);
    const count = pending.get(key) ?? 0;
    if (count === 0) extraRows.push(key);
    else pending.set(key, count - 1);
  }
  const missingRows = [...pending].flatMap(([key, count]) => Array<string>(count).fill(key));
  const violations: string[] = [];
  if (extraRows.length > 0) {
    violations.push(
      `${extraRows.length} audit rows match no request through the proxy: ${sample(extraRows)}`,
    );
  }
  if (missingRows.length > 0) {
    violations.push(`${missingRows.length} answered requests have no audit row: ${sample(missingRows)}`);
  }
  if (observed.unanswered.length > 0) {
    violations.push(
      `${observed.unanswered.length} requests got no answer from the simulator: ${sample(observed.unanswered)}`,
    );
  }
  return violations;
}

function treeProblems(observed: Observed): string[] {
  return observed.trees.flatMap((tree) => tree.problems.map((problem) => `agent ${tree.agent}: ${problem}`));
}

function storeProblems(observed: Observed): string[] {
  return observed.stores.flatMap((store) => (store.problem ? [`${store.what}: ${store.problem}`] : []));
}

function agentFailures(observed: Observed): string[] {
  const violations = observed.agents
    .filter((agent) => agent.code !== 0)
    .map((agent) => `agent ${agent.agent} exited ${agent.code}: ${agent.log}`);
  for (const op of observed.ops) {
    if (op.outcome === "failed") violations.push(`agent ${op.agent} op ${op.op}: ${op.error ?? "failed"}`);
  }
  return violations;
}

/** The first few of `items`, with how many more there are. */
function sample(items: readonly string[], count = 5): string {
  const shown = items.slice(0, count).join("; ");
  return items.length > count ? `${shown}; and ${items.length - count} more` : shown;
}
