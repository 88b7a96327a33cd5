import test from "ava";
import { type AuditRow, checkInvariants, type Observed } from "./invariants.js";
import type { OpRecord } from "./record.js";

function op(fields: Partial<OpRecord> & Pick<OpRecord, "agent" | "op" | "action" | "line">): OpRecord {
  return {
    outcome: "accepted",
    carried: true,
    pushes: [{ at: 0, ms: 10, result: "accepted" }],
    resolvedContent: 0,
    resolvedDeletes: 0,
    pulls: 0,
    ...fields,
  };
}

const AUDIT: readonly AuditRow[] = [
  { method: "GET", path: "/projects/swarm/issues?since=x", status: 200, requestBody: null },
  { method: "PATCH", path: "/projects/swarm/issues/1", status: 200, requestBody: '{"body":"…"}' },
  { method: "PATCH", path: "/projects/swarm/issues/1", status: 429, requestBody: '{"body":"…"}' },
  { method: "POST", path: "/projects/swarm/issues", status: 201, requestBody: '{"title":"swarm-a1-n2"}' },
  { method: "POST", path: "/projects/swarm/issues", status: 201, requestBody: '{"title":"swarm-a1-n3"}' },
  { method: "DELETE", path: "/projects/swarm/issues/4", status: 204, requestBody: null },
];

/** A run where every invariant holds: an edit, two creates, and a delete of the second one. */
function healthy(): Observed {
  return {
    project: "swarm",
    ops: [
      op({ agent: 0, op: 1, action: "edit", issue: 1, line: "agent-0 op-1" }),
      op({ agent: 1, op: 2, action: "create", line: "agent-1 op-2", token: "swarm-a1-n2", createdId: 3 }),
      op({ agent: 1, op: 3, action: "create", line: "agent-1 op-3", token: "swarm-a1-n3", createdId: 4 }),
      op({ agent: 0, op: 2, action: "delete", issue: 4, line: "agent-0 op-2" }),
      op({
        agent: 0,
        op: 3,
        action: "edit",
        issue: 2,
        line: "agent-0 op-3",
        outcome: "abandoned",
        carried: false,
      }),
    ],
    issues: [
      { id: 1, title: "Overlapping issue 1", body: "Seed\nagent-0 op-1\n", version: 2 },
      { id: 2, title: "Overlapping issue 2", body: "Seed\n", version: 1 },
      { id: 3, title: "swarm-a1-n2", body: "agent-1 op-2\n", version: 1 },
    ],
    audit: AUDIT,
    proxied: AUDIT.map(({ method, path, status }) => ({ method, path, status: status ?? 0 })),
    unanswered: [],
    trees: [{ agent: 0, problems: [] }],
    stores: [{ what: "cache shared-0 repo.git" }],
    agents: [{ agent: 0, code: 0, log: "" }],
  };
}

function violations(observed: Observed): string[][] {
  return checkInvariants(observed).map((invariant) => [...invariant.violations]);
}

test("a run where everything holds has no violations", (t) => {
  t.deepEqual(violations(healthy()), [[], [], [], [], [], []]);
});

test("1: a line removed behind the agents' backs, a version that does not add up, a delete twice", (t) => {
  const base = healthy();
  const observed: Observed = {
    ...base,
    issues: [{ id: 1, title: "Overlapping issue 1", body: "Seed\n", version: 3 }, ...base.issues.slice(1)],
    audit: [...base.audit, AUDIT[5] as AuditRow],
  };
  t.deepEqual(violations(observed)[0], [
    'agent 0 op 1 (edit): "agent-0 op-1" was accepted, but the body of issue 1 lacks it',
    "agent 0 op 2 (delete): issue 4 is not on the server and was deleted 2 times",
    "issue 4 was deleted 2 times",
    "issue 1 is at version 3, but the simulator accepted 1 PATCHes of it",
  ]);
});

test("1: an accepted delete of an issue still on the server; an edit of a gone issue never deleted", (t) => {
  const base = healthy();
  const observed: Observed = {
    ...base,
    ops: [...base.ops, op({ agent: 2, op: 1, action: "delete", issue: 2, line: "agent-2 op-1" })],
    issues: base.issues.filter((issue) => issue.id !== 1),
  };
  t.deepEqual(violations(observed)[0], [
    "agent 0 op 1 (edit): issue 1 is not on the server and was deleted 0 times",
    "agent 2 op 1 (delete): its delete was accepted, but issue 2 is on the server",
  ]);
});

test("2: a token POSTed twice and on the server twice; an accepted create that vanished", (t) => {
  const base = healthy();
  const observed: Observed = {
    ...base,
    audit: [...base.audit, AUDIT[3] as AuditRow],
    issues: [...base.issues, { id: 5, title: "swarm-a1-n2", body: "agent-1 op-2\n", version: 1 }],
    ops: [...base.ops, op({ agent: 3, op: 1, action: "create", line: "agent-3 op-1", token: "swarm-a3-n1" })],
  };
  t.deepEqual(violations(observed)[1], [
    "swarm-a1-n2 was created 2 times (accepted POSTs in the audit)",
    "swarm-a1-n2 is the title of 2 issues on the server",
    "agent 1 op 2: the accepted create of swarm-a1-n2 was POSTed 2 times",
    "agent 3 op 1: the accepted create of swarm-a3-n1 was POSTed 0 times",
    "agent 3 op 1: the accepted create of swarm-a3-n1 is not on the server, and svc named no record",
  ]);
});

test("3: an audit row without a request, a request without a row, a request without an answer", (t) => {
  const base = healthy();
  const observed: Observed = {
    ...base,
    audit: [
      ...base.audit,
      { method: "PATCH", path: "/projects/swarm/issues/2", status: 200, requestBody: null },
    ],
    proxied: [...base.proxied, { method: "GET", path: "/projects/swarm/issues", status: 429 }],
    unanswered: ["GET /projects/swarm/issues: socket hang up"],
  };
  t.deepEqual(violations(observed)[2], [
    "1 audit rows match no request through the proxy: PATCH /projects/swarm/issues/2 200",
    "1 answered requests have no audit row: GET /projects/swarm/issues 429",
    "1 requests got no answer from the simulator: GET /projects/swarm/issues: socket hang up",
  ]);
});

test("4, 5 and 6: tree and store problems, failed operations and agents are named", (t) => {
  const base = healthy();
  const observed: Observed = {
    ...base,
    trees: [{ agent: 2, problems: ["issues/0001.md differs from the server's issue"] }],
    stores: [{ what: "simulator sim.db", problem: "PRAGMA integrity_check: row 3 missing" }],
    agents: [{ agent: 1, code: 1, log: "boom" }],
    ops: [
      ...base.ops,
      op({
        agent: 1,
        op: 4,
        action: null,
        line: "agent-1 op-4",
        outcome: "failed",
        error: "git pull exited 1",
      }),
    ],
  };
  const [, , , trees, stores, agents] = violations(observed);
  t.deepEqual(trees, ["agent 2: issues/0001.md differs from the server's issue"]);
  t.deepEqual(stores, ["simulator sim.db: PRAGMA integrity_check: row 3 missing"]);
  t.deepEqual(agents, ["agent 1 exited 1: boom", "agent 1 op 4: git pull exited 1"]);
});
