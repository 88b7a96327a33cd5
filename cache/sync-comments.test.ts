import test, { type ExecutionContext } from "ava";
import type { Backend, BackendRecord, Listing } from "../backends/backend.js";
import type { CommentListing, CommentSource, ServerComment } from "../backends/comment.js";
import { SIM_SCHEMA } from "../backends/sim/schema.js";
import { givenScriptedCache, issueRecord } from "../testing/cache.js";
import type { ProjectCache } from "./cache.js";
import { syncCache } from "./sync.js";

/** Comments whose listings say how many the server holds; they note what they were asked. */
class ScriptedComments implements CommentSource {
  readonly versioned = true;
  readonly comments = new Map<string, ServerComment>();

  constructor(private readonly server: ScriptedServer) {}

  add(id: number, parentKey: string): void {
    const at = this.server.tick();
    this.comments.set(String(id), {
      id: String(id),
      parentKey,
      author: "alice@example.com",
      authorId: "alice@example.com",
      body: `Comment ${id}.\n`,
      createdAt: at,
      updatedAt: at,
      version: 1,
    });
  }

  private said(comments: ServerComment[]): CommentListing {
    return { comments, complete: true, liveCount: this.comments.size };
  }

  async listAll(): Promise<CommentListing> {
    this.server.asked.push("comments full");
    return this.said([...this.comments.values()]);
  }

  async listChangedSince(since: string): Promise<CommentListing> {
    this.server.asked.push("comments delta");
    return this.said([...this.comments.values()].filter((comment) => comment.updatedAt >= since));
  }

  create(): Promise<ServerComment> {
    throw new Error("not scripted");
  }
  update(): Promise<never> {
    throw new Error("not scripted");
  }
  remove(): Promise<never> {
    throw new Error("not scripted");
  }
  async whoAmI() {
    return { id: "me", author: "me" };
  }
}

/** Records whose listings say how many the server holds (`Listing.liveCount`, as the simulator's). */
class ScriptedServer implements Backend {
  readonly kind = "sim";
  readonly project = "demo";
  readonly schema = SIM_SCHEMA;
  readonly description = "scripted project demo";
  readonly maxRecordBytes = 1 << 20;
  readonly overlapMs = 0;
  readonly records = new Map<string, BackendRecord>();
  readonly asked: string[] = [];
  readonly commentSource = new ScriptedComments(this);
  private clock = Date.parse("2026-01-01T00:00:00.000Z");

  tick(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  add(id: number): void {
    this.records.set(String(id), issueRecord(id, this.tick()));
  }

  async listAll(): Promise<Listing> {
    this.asked.push("records full");
    return { records: [...this.records.values()], complete: true, liveCount: this.records.size };
  }

  async listChangedSince(since: string): Promise<Listing> {
    this.asked.push("records delta");
    const records = [...this.records.values()].filter((record) => record.updatedAt >= since);
    return { records, complete: true, liveCount: this.records.size };
  }
}

async function givenCache(t: ExecutionContext, server: ScriptedServer): Promise<ProjectCache> {
  const cache = await givenScriptedCache(t, server, "svc-sync-comments-");
  return cache;
}

function givenServer(): ScriptedServer {
  const server = new ScriptedServer();
  for (const id of [1, 2, 3]) server.add(id);
  server.commentSource.add(1000000001, "1");
  server.commentSource.add(1000000002, "2");
  return server;
}

test("a first sync puts each comment's file in its record's folder, and keeps the two counts apart", async (t) => {
  const server = givenServer();
  const cache = await givenCache(t, server);
  t.deepEqual(server.asked, ["records full", "comments full"]);
  t.is(cache.db.liveCountOf("records"), 3);
  t.is(cache.db.liveCountOf("comments"), 2);
  t.deepEqual(
    cache.db
      .treeEntries()
      .map((entry) => entry.path)
      .sort(),
    [
      "comments/0001/1000000001.md",
      "comments/0002/1000000002.md",
      "issues/0001.md",
      "issues/0002.md",
      "issues/0003.md",
    ],
  );
  t.is(cache.db.record("comment:1000000001")?.version, 1);
});

test("a comment deleted on the server: the comments' count differs, and only the comments are listed in full", async (t) => {
  const server = givenServer();
  const cache = await givenCache(t, server);
  server.commentSource.comments.delete("1000000001");
  server.asked.length = 0;
  const result = await syncCache(cache, server);
  t.deepEqual(server.asked, ["records delta", "comments delta", "comments full"]);
  t.is(result.deleted, 1);
  t.is(result.deletions, "counted", "the records' deletions were checked by their count");
  t.is(cache.db.record("comment:1000000001"), undefined);
  t.is(cache.db.liveCountOf("comments"), 1);
  t.is(cache.db.liveCountOf("records"), 3);
});

test("a record deleted and a comment added: the records' count differs, the comments' (the delta brought the new one) does not", async (t) => {
  const server = givenServer();
  const cache = await givenCache(t, server);
  server.records.delete("3");
  server.commentSource.add(1000000003, "2");
  server.asked.length = 0;
  const result = await syncCache(cache, server);
  t.deepEqual(server.asked, ["records delta", "comments delta", "records full"]);
  t.is(result.deleted, 1);
  t.is(result.deletions, "listed");
  t.deepEqual([cache.db.liveCountOf("records"), cache.db.liveCountOf("comments")], [2, 3]);
  t.truthy(cache.db.record("comment:1000000003"));
});

test("nothing changed: one delta of each, no full listing, no commit", async (t) => {
  const server = givenServer();
  const cache = await givenCache(t, server);
  server.asked.length = 0;
  const result = await syncCache(cache, server);
  t.deepEqual(server.asked, ["records delta", "comments delta"]);
  t.is(result.commit, undefined);
});
