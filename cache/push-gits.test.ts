/** cache/push-gits.ts: the gits of a pushed commit, from a real cache database's audit rows. */
import test from "ava";
import { Database } from "../core/sqlite.js";
import { pushGitsFrom } from "./push-gits.js";

const PUSHED = "1".repeat(40);
const OTHER = "2".repeat(40);

test("pushGitsFrom reads the gits of the push-accept rows of a commit", (t) => {
  const db = new Database(":memory:");
  t.teardown(() => db.close());
  db.exec("CREATE TABLE audit_events_cache (id INTEGER PRIMARY KEY, op TEXT, oid TEXT, detail TEXT)");
  const insert = db.prepare("INSERT INTO audit_events_cache (op, oid, detail) VALUES (?, ?, ?)");
  insert.run("push-accept", PUSHED, JSON.stringify({ create: 1, gitPid: 4321 }));
  insert.run("push-accept", PUSHED, JSON.stringify({ create: 0 })); // from before svc noted the git
  insert.run("push-start", PUSHED, JSON.stringify({ gitPid: 99 }));
  insert.run("push-accept", OTHER, JSON.stringify({ gitPid: 1234 }));
  const gits = pushGitsFrom(db);
  t.deepEqual(gits(PUSHED), [4321]);
  t.deepEqual(gits(OTHER), [1234]);
  t.deepEqual(gits("3".repeat(40)), []);
});
