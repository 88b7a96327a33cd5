/**
 * The audit log (Document 1 "Audit record"; DESIGN.md §5): exactly one row per request whatever its fate,
 * the request body cut at 256 characters, `response_summary` computed from the bytes the client received,
 * and a table that refuses UPDATE and DELETE.
 */
import { join } from "node:path";
import test from "ava";
import { Database } from "../../core/sqlite.js";
import { givenProject, givenSim, givenTempDir } from "../../testing/sim.js";
import {
  callSim,
  expectResponse,
  rawRequest,
  responseSummary,
  type SimResponse,
  TIMESTAMP,
} from "../../testing/sim-http.js";

interface Expected {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly agent?: string;
  readonly body?: Buffer;
  readonly headers?: Record<string, string>;
}

test("every request leaves exactly one row with its method, path, status, agent, body and summary", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "p", [{ title: "one" }, { title: "two" }]);
  const json = { "content-type": "application/json" };
  const cases: Expected[] = [
    { name: "health", method: "GET", path: "/healthz", status: 200, agent: "a-1" },
    { name: "health without an agent", method: "GET", path: "/healthz", status: 200 },
    { name: "HEAD", method: "HEAD", path: "/healthz", status: 200 },
    { name: "list", method: "GET", path: "/projects", status: 200, agent: "a-1" },
    { name: "query", method: "GET", path: "/projects/p/issues?since=2026-01-01T00:00:00Z", status: 200 },
    {
      name: "create",
      method: "POST",
      path: "/projects/p/issues",
      status: 201,
      agent: "git-remote-svc-4242",
      headers: json,
      body: Buffer.from('{"title":"three"}'),
    },
    {
      name: "invalid",
      method: "POST",
      path: "/projects/p/issues",
      status: 400,
      headers: json,
      body: Buffer.from('{"title":3}'),
    },
    {
      name: "415",
      method: "POST",
      path: "/projects/p/issues",
      status: 415,
      body: Buffer.from('{"title":"x"}'),
    },
    {
      name: "update",
      method: "PATCH",
      path: "/projects/p/issues/1",
      status: 200,
      headers: { ...json, "if-match": '"1"' },
      body: Buffer.from('{"status":"done"}'),
    },
    {
      name: "conflict",
      method: "PATCH",
      path: "/projects/p/issues/1",
      status: 409,
      headers: { ...json, "if-match": '"1"' },
      body: Buffer.from('{"status":"open"}'),
    },
    { name: "transitions", method: "GET", path: "/projects/p/issues/1/transitions", status: 200 },
    { name: "delete", method: "DELETE", path: "/projects/p/issues/2", status: 204, agent: "a-2" },
    { name: "absent", method: "GET", path: "/projects/p/issues/2", status: 404 },
    { name: "unknown route", method: "GET", path: "/no/such/route", status: 404 },
    { name: "escaping slug", method: "GET", path: "/projects/..%2F../issues", status: 404 },
    { name: "405", method: "PUT", path: "/projects/p/issues/1", status: 405 },
    {
      name: "invalid UTF-8",
      method: "POST",
      path: "/projects/p/issues",
      status: 400,
      headers: json,
      body: Buffer.from([0x7b, 0xff, 0x7d]),
    },
    {
      name: "413",
      method: "POST",
      path: "/projects/p/issues",
      status: 413,
      headers: json,
      body: Buffer.alloc(2_000_000, 0x61),
    },
  ];
  for (const c of cases) {
    const before = sim.store.auditRows();
    const started = new Date().toISOString();
    const response: SimResponse = expectResponse(
      await rawRequest(sim.url, {
        method: c.method,
        path: c.path,
        headers: { ...c.headers, ...(c.agent === undefined ? {} : { "x-svc-agent": c.agent }) },
        body: c.body,
      }),
    );
    const finished = new Date().toISOString();
    t.is(response.status, c.status, `${c.name}: ${response.text.slice(0, 200)}`);
    const after = sim.store.auditRows();
    t.is(after.length, before.length + 1, c.name);
    t.deepEqual(after.slice(0, before.length), before, `${c.name}: earlier rows unchanged`);
    const row = after.at(-1);
    t.like(
      row,
      {
        agent_id: c.agent ?? null,
        method: c.method,
        path: c.path,
        status: c.status,
        request_body: (c.body ?? Buffer.alloc(0)).toString("utf8").slice(0, 256),
        response_summary: responseSummary(c.status, response.bytes),
      },
      c.name,
    );
    t.regex(row?.ts ?? "", TIMESTAMP, c.name);
    t.true(started <= (row?.ts ?? "") && (row?.ts ?? "") <= finished, c.name);
  }
  const ids = sim.store.auditRows().map((row) => row.id);
  t.deepEqual(
    ids,
    [...ids].sort((a, b) => a - b),
  );
});

test("request_body keeps the first 256 characters, counted as characters, not bytes or UTF-16 units", async (t) => {
  const sim = await givenSim(t);
  const cases = [
    "x".repeat(300),
    "é".repeat(600),
    "日本".repeat(400),
    "🎉".repeat(300),
    `{"title":"${"a🎉".repeat(200)}"}`,
    "short",
    "x".repeat(256),
  ];
  for (const text of cases) {
    await callSim(sim.url, "POST", "/projects/p/issues", { body: text, contentType: "application/json" });
    const row = sim.store.auditRows().at(-1);
    t.is(row?.request_body, Array.from(text).slice(0, 256).join(""), text.slice(0, 20));
  }
  await callSim(sim.url, "GET", "/projects");
  t.is(sim.store.auditRows().at(-1)?.request_body, "");
});

test("the agent header is recorded as sent (at most 200 characters); absent or empty is null", async (t) => {
  const sim = await givenSim(t);
  await callSim(sim.url, "GET", "/healthz", { agent: "git-remote-svc-12345" });
  t.is(sim.store.auditRows().at(-1)?.agent_id, "git-remote-svc-12345");
  await callSim(sim.url, "GET", "/healthz", { agent: "a".repeat(500) });
  t.is(sim.store.auditRows().at(-1)?.agent_id, "a".repeat(200));
  await callSim(sim.url, "GET", "/healthz", { agent: "" });
  t.is(sim.store.auditRows().at(-1)?.agent_id, null);
  await callSim(sim.url, "GET", "/healthz");
  t.is(sim.store.auditRows().at(-1)?.agent_id, null);
});

test("concurrent requests each leave their own row", async (t) => {
  const sim = await givenSim(t);
  const responses = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0
        ? callSim(sim.url, "POST", "/projects/p/issues", { json: { title: `t${i}` }, agent: `agent-${i}` })
        : callSim(sim.url, "GET", i % 3 === 1 ? "/healthz" : "/nope", { agent: `agent-${i}` }),
    ),
  );
  const rows = sim.store.auditRows();
  t.is(rows.length, 60);
  for (const [i, response] of responses.entries()) {
    const mine = rows.filter((row) => row.agent_id === `agent-${i}`);
    t.is(mine.length, 1);
    t.is(mine[0]?.response_summary, responseSummary(response.status, response.bytes));
  }
});

test("audit_events refuses UPDATE and DELETE; the rows stay as written", async (t) => {
  const dir = givenTempDir(t);
  const db = join(dir, "sim.db");
  const sim = await givenSim(t, { ephemeral: false, db });
  await givenProject(sim.url, "p", [{ title: "one" }]);
  await callSim(sim.url, "GET", "/nope");
  const before = sim.store.auditRows();
  t.is(before.length, 2);

  const other = new Database(db);
  t.teardown(() => other.close());
  for (const statement of [
    "UPDATE audit_events SET status = 200",
    "UPDATE audit_events SET request_body = '' WHERE id = 1",
    "INSERT INTO audit_events (id, ts, method, path) VALUES (1, 'x', 'GET', '/') ON CONFLICT (id) DO UPDATE SET path = '/'",
    "DELETE FROM audit_events",
    "DELETE FROM audit_events WHERE id = 2",
    // REPLACE deletes the old row without firing delete triggers.
    "INSERT OR REPLACE INTO audit_events (id, ts, method, path) VALUES (1, 'x', 'GET', '/')",
    "REPLACE INTO audit_events (id, ts, method, path) VALUES (2, 'x', 'GET', '/')",
  ]) {
    t.throws(() => other.prepare(statement).run(), { any: true, message: /append-only/ }, statement);
  }
  t.deepEqual(sim.store.auditRows(), before);
  // Appending is what the table is for.
  await callSim(sim.url, "GET", "/healthz");
  t.is(sim.store.auditRows().length, 3);
});
