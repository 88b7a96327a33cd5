/**
 * `svc sim` as a user runs it (Document 1 "Configuration flags"; DESIGN.md §5 shutdown): the real process
 * on an ephemeral port, stopped with signals. Data survives a restart with `--db` (and a crash), an
 * `--ephemeral` start is clean, seeding is deterministic and leaves existing projects alone, `--no-seed`
 * wins, SIGTERM and SIGINT exit 0 after finishing the request in flight and checkpointing the WAL, and the
 * ways it refuses to start exit 2 with a message.
 */
import { once } from "node:events";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { Agent } from "node:http";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { SimIssue } from "../../backends/sim/schema.js";
import { Database } from "../../core/sqlite.js";
import { repoRoot } from "../../testing/paths.js";
import { givenProject, givenTempDir, runSvc, type SpawnedSim, spawnSim } from "../../testing/sim.js";
import { callSim, expectResponse, rawRequest } from "../../testing/sim-http.js";

const DEMO_SEED = join(repoRoot, "fixtures", "demo-seed.json");

function walCheckpointed(t: ExecutionContext, db: string): void {
  const wal = `${db}-wal`;
  t.true(
    !existsSync(wal) || statSync(wal).size === 0,
    `${wal} still holds ${existsSync(wal) && statSync(wal).size} bytes`,
  );
}

async function stopCleanly(t: ExecutionContext, sim: SpawnedSim, signal: NodeJS.Signals = "SIGTERM") {
  t.is(await sim.stop(signal), 0, sim.stderr());
  t.regex(sim.stderr(), new RegExp(`${signal}, finishing requests in flight[\\s\\S]*stopped`));
}

test("data survives a SIGTERM restart with the same --db; ids keep growing", async (t) => {
  const db = join(givenTempDir(t), "state", "sim.db");
  const first = await spawnSim(t, ["--db", db]);
  await givenProject(first.url, "p", [{ title: "one" }, { title: "two", labels: ["x"] }, { title: "three" }]);
  t.is((await callSim(first.url, "PATCH", "/projects/p/issues/1", { json: { status: "done" } })).status, 200);
  t.is((await callSim(first.url, "DELETE", "/projects/p/issues/3")).status, 204);
  const before = (await callSim(first.url, "GET", "/projects/p/issues")).text;
  await stopCleanly(t, first, "SIGTERM");
  walCheckpointed(t, db);

  const second = await spawnSim(t, ["--db", db]);
  t.is((await callSim(second.url, "GET", "/projects/p/issues")).text, before);
  const created = await callSim(second.url, "POST", "/projects/p/issues", { json: { title: "four" } });
  t.is(created.json<SimIssue>().frontmatter.id, 4);
  await stopCleanly(t, second, "SIGINT");
  walCheckpointed(t, db);

  const file = new Database(db, { readonly: true });
  t.teardown(() => file.close());
  t.is(file.pragma("integrity_check", { simple: true }), "ok");
  t.deepEqual(file.prepare("SELECT id FROM issues WHERE project = 'p' ORDER BY id").pluck().all(), [1, 2, 4]);
  // Both runs audited into the same append-only table.
  t.is(file.prepare("SELECT count(*) FROM audit_events").pluck().get(), 3 + 1 + 1 + 1 + 1 + 1);
});

test("committed writes survive a crash (SIGKILL) too", async (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const first = await spawnSim(t, ["--db", db]);
  await givenProject(first.url, "p", [{ title: "one" }, { title: "two" }]);
  t.is(await first.stop("SIGKILL"), null);
  const second = await spawnSim(t, ["--db", db]);
  const titles = (await callSim(second.url, "GET", "/projects/p/issues"))
    .json<SimIssue[]>()
    .map((issue) => issue.frontmatter.title);
  t.deepEqual(titles, ["one", "two"]);
  await stopCleanly(t, second);
});

test("--ephemeral starts clean every time and never touches --db", async (t) => {
  const db = join(givenTempDir(t), "never.db");
  const first = await spawnSim(t, ["--ephemeral", "--db", db]);
  await givenProject(first.url, "p", [{ title: "gone after the restart" }]);
  t.is((await callSim(first.url, "GET", "/projects")).json<unknown[]>().length, 1);
  await stopCleanly(t, first);
  const second = await spawnSim(t, ["--ephemeral", "--db", db]);
  t.deepEqual((await callSim(second.url, "GET", "/projects")).json(), []);
  await stopCleanly(t, second);
  t.false(existsSync(db));
});

test("two instances seeded from the demo file serve byte-identical data", async (t) => {
  const [a, b] = await Promise.all([
    spawnSim(t, ["--ephemeral", "--seed-file", DEMO_SEED]),
    spawnSim(t, ["--ephemeral", "--seed-file", DEMO_SEED]),
  ]);
  for (const path of ["/projects", "/projects/demo", "/projects/demo/issues", "/projects/demo/issues/5"]) {
    const [left, right] = await Promise.all([callSim(a.url, "GET", path), callSim(b.url, "GET", path)]);
    t.is(left.status, 200, path);
    t.true(left.bytes.equals(right.bytes), path);
  }
  const seedTitles = (
    JSON.parse(readFileSync(DEMO_SEED, "utf8")) as { projects: { issues: { title: string }[] }[] }
  ).projects[0]?.issues.map((issue) => issue.title);
  const served = (await callSim(a.url, "GET", "/projects/demo/issues")).json<SimIssue[]>();
  t.deepEqual(
    served.map((issue) => issue.frontmatter.title),
    seedTitles,
  );
  await waitFor(() => a.stderr().includes("seeded project demo"));
});

test("on restart with --db the seed leaves an existing project as clients left it", async (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const first = await spawnSim(t, ["--db", db, "--seed-file", DEMO_SEED]);
  t.is(
    (await callSim(first.url, "PATCH", "/projects/demo/issues/1", { json: { title: "edited" } })).status,
    200,
  );
  t.is((await callSim(first.url, "DELETE", "/projects/demo/issues/6")).status, 204);
  const before = (await callSim(first.url, "GET", "/projects/demo/issues")).text;
  await stopCleanly(t, first);

  const second = await spawnSim(t, ["--db", db, "--seed-file", DEMO_SEED]);
  await waitFor(() => /project demo already in the store; seed left it as it is/.test(second.stderr()));
  t.is((await callSim(second.url, "GET", "/projects/demo/issues")).text, before);
  t.like((await callSim(second.url, "GET", "/projects/demo")).json(), { issue_count: 5 });
  await stopCleanly(t, second);
});

test("--no-seed skips the seed file", async (t) => {
  const sim = await spawnSim(t, ["--ephemeral", "--seed-file", DEMO_SEED, "--no-seed"]);
  t.deepEqual((await callSim(sim.url, "GET", "/projects")).json(), []);
  t.notRegex(sim.stderr(), /seeded/);
  await stopCleanly(t, sim);
});

test("SIGTERM while a request is in flight: the request completes, then exit 0 with the WAL checkpointed", async (t) => {
  const db = join(givenTempDir(t), "sim.db");
  const sim = await spawnSim(t, ["--db", db]);
  const body = Buffer.from(JSON.stringify({ title: "written during shutdown" }));
  let started!: () => void;
  const serverHasRequest = new Promise<void>((resolve) => {
    started = resolve;
  });
  let signalled!: () => void;
  const afterSignal = new Promise<void>((resolve) => {
    signalled = resolve;
  });
  // `Expect: 100-continue` makes the server confirm it holds the request before any body is sent; the
  // body follows only once the server has said that it is stopping.
  const keepAlive = new Agent({ keepAlive: true });
  t.teardown(() => keepAlive.destroy());
  const inFlight = rawRequest(sim.url, {
    agent: keepAlive,
    method: "POST",
    path: "/projects/p/issues",
    headers: {
      "content-type": "application/json",
      "content-length": String(body.length),
      expect: "100-continue",
    },
    body: async function* (request) {
      const continued = once(request, "continue");
      request.flushHeaders();
      await continued;
      started();
      await afterSignal;
      yield body;
    },
  });
  await serverHasRequest;
  const exit = sim.stop("SIGTERM");
  await waitFor(() => sim.stderr().includes("SIGTERM, finishing requests in flight"));
  signalled();
  const response = expectResponse(await inFlight);
  t.is(response.status, 201, response.text);
  // A keep-alive connection is told it ends with this answer, so it cannot hold the stop up.
  t.is(response.headers.connection, "close");
  t.is(await exit, 0, sim.stderr());
  walCheckpointed(t, db);
  const file = new Database(db, { readonly: true });
  t.teardown(() => file.close());
  t.is(
    file.prepare("SELECT title FROM issues WHERE project = 'p' AND id = 1").pluck().get(),
    "written during shutdown",
  );
  t.is(file.prepare("SELECT status FROM audit_events ORDER BY id DESC LIMIT 1").pluck().get(), 201);
});

/** Polls `condition` every 10 ms, failing after 10 s. */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 10_000) throw new Error("condition not met within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("SIGINT and SIGTERM on an idle server exit 0", async (t) => {
  const dir = givenTempDir(t);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    const db = join(dir, `${signal}.db`);
    const sim = await spawnSim(t, ["--db", db]);
    t.is((await callSim(sim.url, "GET", "/healthz")).text, "ok");
    await stopCleanly(t, sim, signal);
    walCheckpointed(t, db);
  }
});

test("svc sim refuses to start, with exit 2 and a message, on bad flags and bad files", async (t) => {
  const dir = givenTempDir(t);
  const notADatabase = join(dir, "notes.txt");
  writeFileSync(notADatabase, "not a database\n".repeat(200));
  const badSeed = join(dir, "seed.json");
  writeFileSync(badSeed, JSON.stringify({ projects: [{ slug: "../escape" }] }));
  const cases: [string[], RegExp][] = [
    [["--bind", "0.0.0.0:0"], /not a loopback address/],
    [["--bind", "192.168.1.10:7878"], /not a loopback address/],
    [["--bind", "localhost"], /not host:port/],
    [["--bind", "127.0.0.1:0", "--rate-limit", "fast"], /--rate-limit "fast"/],
    [["--bind", "127.0.0.1:0", "--rate-limit", "-1"], /--rate-limit/],
    [["--bind", "127.0.0.1:0", "--ephemeral", "--seed-file", badSeed], /seed file .*projects\[0\]\.slug/],
    [["--bind", "127.0.0.1:0", "--ephemeral", "--seed-file", join(dir, "absent.json")], /seed file/],
    [["--bind", "127.0.0.1:0", "--db", notADatabase], /cannot use .*notes\.txt as the simulator store/],
  ];
  for (const [args, message] of cases) {
    const { code, stderr } = await runSvc(t, ["sim", ...args]);
    t.is(code, 2, `${args.join(" ")}: ${stderr}`);
    t.regex(stderr, message, args.join(" "));
    t.notRegex(stderr, /internal error|\n\s+at /, args.join(" "));
  }
  t.true(readFileSync(notADatabase, "utf8").startsWith("not a database"));
});

test("a port already in use is refused with exit 2", async (t) => {
  const sim = await spawnSim(t, ["--ephemeral"]);
  const { port } = new URL(sim.url);
  const { code, stderr } = await runSvc(t, ["sim", "--ephemeral", "--bind", `127.0.0.1:${port}`]);
  t.is(code, 2, stderr);
  t.regex(stderr, /EADDRINUSE/);
  await stopCleanly(t, sim);
});
