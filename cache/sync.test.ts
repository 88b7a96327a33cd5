import test, { type ExecutionContext } from "ava";
import type { Backend, BackendRecord, RemovedRecords, ValidatorStore } from "../backends/backend.js";
import type { RecordSchema } from "../backends/record.js";
import { SIM_SCHEMA } from "../backends/sim/schema.js";
import { givenScriptedCache, issueRecord } from "../testing/cache.js";
import type { ProjectCache } from "./cache.js";
import { syncCache } from "./sync.js";

const PAGE_URL = "http://127.0.0.1:1/page?1";

/** A server of records whose count (and removed records) a test sets; it notes what it was asked. */
class ScriptedServer implements Backend {
  readonly kind = "sim";
  readonly project = "demo";
  schema: RecordSchema = SIM_SCHEMA;
  readonly description = "scripted project demo";
  /** What the validator store handed at each sync said of `PAGE_URL`. */
  readonly pageValidator: (string | undefined)[] = [];
  readonly maxRecordBytes = 1 << 20;
  readonly overlapMs = 0;
  readonly records = new Map<string, BackendRecord>();
  readonly asked: string[] = [];
  /** What countLive says; undefined: the true number. */
  countSays: number | undefined;
  private clock = Date.parse("2026-01-01T00:00:00.000Z");

  constructor(
    count: number,
    readonly counting: "approximate" | "exact" | "none",
    readonly removed?: () => RemovedRecords,
  ) {
    for (let id = 1; id <= count; id++) this.add(id);
    if (counting === "none") Object.assign(this, { countLive: undefined });
    if (!removed) Object.assign(this, { listRemoved: undefined });
  }

  add(id: number): void {
    this.clock += 1000;
    this.records.set(String(id), issueRecord(id, new Date(this.clock).toISOString()));
  }

  async listAll() {
    this.asked.push("full");
    return { records: [...this.records.values()], complete: true };
  }

  async listChangedSince(since: string) {
    this.asked.push("delta");
    return { records: [...this.records.values()].filter((r) => r.updatedAt >= since), complete: true };
  }

  async countLive() {
    this.asked.push("count");
    return { count: this.countSays ?? this.records.size, approximate: this.counting === "approximate" };
  }

  useValidators(store: ValidatorStore): void {
    this.pageValidator.push(store.lookup(PAGE_URL)?.etag);
  }

  async listRemoved() {
    this.asked.push("removed");
    return this.removed?.() ?? { keys: [], complete: true };
  }
}

async function givenCache(t: ExecutionContext, server: ScriptedServer): Promise<ProjectCache> {
  const cache = await givenScriptedCache(t, server, "svc-sync-");
  server.asked.length = 0;
  return cache;
}

interface Observed {
  readonly asked: readonly string[];
  readonly deletions: string;
  readonly changed: number;
  readonly deleted: number;
  readonly live: number;
}

/**
 * One sync: what it asked the server (exactly `expected.asked`, in order) and, as far as `expected` says,
 * what it says about deletions, how many records it changed and removed, and how many the cache holds after.
 */
async function syncOnce(
  t: ExecutionContext,
  cache: ProjectCache,
  server: ScriptedServer,
  expected: Partial<Observed>,
  options = {},
): Promise<void> {
  server.asked.length = 0;
  const result = await syncCache(cache, server, options);
  const { asked, ...rest } = expected;
  if (asked) t.deepEqual(server.asked, asked);
  if (Object.keys(rest).length > 0)
    t.like(
      {
        deletions: result.deletions,
        changed: result.changed,
        deleted: result.deleted,
        live: cache.db.liveCount(),
      },
      rest,
    );
}

test("a count that differs from the cache's makes one full listing at once, and is asked once", async (t) => {
  const server = new ScriptedServer(5, "exact");
  const cache = await givenCache(t, server);
  await syncOnce(t, cache, server, { asked: ["delta", "count"], deletions: "counted", live: 5 });
  server.records.delete("3");
  await syncOnce(t, cache, server, {
    asked: ["delta", "count", "full"],
    deletions: "listed",
    deleted: 1,
    live: 4,
  });
  await syncOnce(t, cache, server, { asked: ["delta", "count"], deletions: "counted", live: 4 });
});

test("an approximate count that lags behind a deletion: no full listing while it says what the last one saw, nor after the full listing that finds it", async (t) => {
  const server = new ScriptedServer(5, "approximate");
  const cache = await givenCache(t, server);
  server.records.delete("2");
  server.countSays = 5;
  await syncOnce(t, cache, server, { asked: ["delta", "count"], deletions: "counted", live: 5 });
  // The reconcile period's full listing finds it; the count (still 5) is asked before it and kept.
  await syncOnce(
    t,
    cache,
    server,
    {
      asked: ["count", "full"],
      deletions: "listed",
      deleted: 1,
      live: 4,
    },
    { reconcile: true },
  );
  for (let n = 0; n < 3; n++)
    await syncOnce(t, cache, server, { asked: ["delta", "count"], deletions: "counted", live: 4 });
  // Caught up: 4. A creation the count does not show yet (4, the cache 5) no longer says what it said at the
  // last full listing (5): that costs one full listing, which keeps the 4, and then no more.
  server.countSays = undefined;
  await syncOnce(t, cache, server, { asked: ["delta", "count"] });
  server.add(6);
  server.countSays = 4;
  await syncOnce(t, cache, server, { asked: ["delta", "count", "full"], live: 5 });
  for (let n = 0; n < 3; n++) await syncOnce(t, cache, server, { asked: ["delta", "count"], live: 5 });
});

test("an approximate count that lags behind a creation is no deletion", async (t) => {
  const server = new ScriptedServer(5, "approximate");
  const cache = await givenCache(t, server);
  server.add(6);
  server.countSays = 5;
  for (let n = 0; n < 3; n++)
    await syncOnce(t, cache, server, { asked: ["delta", "count"], deletions: "counted", live: 6 });
  // An exact count that says the same is a deletion (or a creation not listed yet): one full listing.
  const exact = new ScriptedServer(5, "exact");
  const exactCache = await givenCache(t, exact);
  exact.add(6);
  exact.countSays = 5;
  await syncOnce(t, exactCache, exact, { asked: ["delta", "count", "full"], live: 6 });
});

test("an approximate count that always counts two records no listing shows makes one full listing, not one a sync", async (t) => {
  const server = new ScriptedServer(5, "approximate");
  const cache = await givenCache(t, server);
  server.countSays = 7;
  await syncOnce(t, cache, server, { asked: ["delta", "count", "full"], live: 5 });
  for (let n = 0; n < 3; n++) await syncOnce(t, cache, server, { asked: ["delta", "count"], live: 5 });
  // A deletion changes the count: found at once.
  server.records.delete("1");
  server.countSays = 6;
  await syncOnce(t, cache, server, { asked: ["delta", "count", "full"], deleted: 1, live: 4 });
  await syncOnce(t, cache, server, { asked: ["delta", "count"], live: 4 });
});

test("records the server names as removed go at once, even when the delta listed them; a partial answer leaves deletions unchecked", async (t) => {
  let removal: () => RemovedRecords = () => ({ keys: [], complete: true });
  const server = new ScriptedServer(5, "none", () => removal());
  const cache = await givenCache(t, server);
  await syncOnce(t, cache, server, { asked: ["delta", "removed"], deletions: "named", deleted: 0 });
  // 2 changes (the delta lists it), then 2 and 4 are removed before the removed records are asked; 9 was
  // removed long ago, and the cache never held it.
  server.add(2);
  removal = () => {
    for (const key of ["2", "4"]) server.records.delete(key);
    return { keys: ["2", "4", "9"], complete: true };
  };
  await syncOnce(t, cache, server, {
    asked: ["delta", "removed"],
    deletions: "named",
    changed: 0,
    deleted: 2,
    live: 3,
  });
  t.deepEqual(
    cache.db
      .treeEntries()
      .map((entry) => entry.path)
      .sort(),
    ["issues/0001.md", "issues/0003.md", "issues/0005.md"],
  );
  removal = () => {
    server.records.delete("5");
    return { keys: ["5"], complete: false };
  };
  await syncOnce(t, cache, server, { deletions: "unchecked", deleted: 1, live: 2 });
  // A full listing asks for no removed records: it sees every deletion itself.
  await syncOnce(
    t,
    cache,
    server,
    {
      asked: ["full"],
      deletions: "listed",
      live: 2,
    },
    { reconcile: true },
  );
});

test("a server with neither a count nor removed records leaves deletions unchecked", async (t) => {
  const server = new ScriptedServer(3, "none");
  const cache = await givenCache(t, server);
  server.records.delete("1");
  await syncOnce(t, cache, server, { asked: ["delta"], deletions: "unchecked", live: 3 });
});

test("files rendered by another schema rendering are listed whole, without validators, and rendered anew once", async (t) => {
  const server = new ScriptedServer(3, "none");
  const cache = await givenCache(t, server);
  cache.db.keepValidator({ url: PAGE_URL, etag: '"page-1"', payload: "" });
  await syncOnce(t, cache, server, { asked: ["delta"], changed: 0 });
  // The same records render to other bytes now (no labels line): an older cache must show what a new one shows.
  server.schema = {
    ...SIM_SCHEMA,
    fields: SIM_SCHEMA.fields.filter((spec) => spec.name !== "labels"),
    rendering: "2",
  };
  server.pageValidator.length = 0;
  await syncOnce(t, cache, server, { asked: ["full"], changed: 3, deleted: 0 });
  t.deepEqual(server.pageValidator, ['"page-1"', undefined], "the listing is made without HTTP validators");
  const tree = cache.db.liveRecordsOf("records");
  t.is(tree.size, 3);
  for (const { rendered_oid } of tree.values()) {
    t.false(cache.db.blob(rendered_oid)?.content.toString("utf8").includes("labels:"));
  }
  await syncOnce(t, cache, server, { asked: ["delta"], changed: 0 });
});

test("a new cache keeps the rendering it was made with: its next sync is a delta", async (t) => {
  const server = new ScriptedServer(2, "none");
  server.schema = { ...SIM_SCHEMA, rendering: "2" };
  const cache = await givenCache(t, server);
  await syncOnce(t, cache, server, { asked: ["delta"], changed: 0 });
});
