/**
 * git/ref-locks.ts: which lock files under refs/ are stale, against lock files laid out as git leaves
 * them (the new value and a newline) and real processes for the pids.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { givenTempDir } from "../testing/sim.js";
import { isStale, type RefLock, refLockFiles, STALE_AFTER_MS, staleRefLocks } from "./ref-locks.js";

const PUSHED = "1".repeat(40);
const OTHER = "2".repeat(40);

/** A pid no process has any more. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid as number;
}

/** `<dir>/<ref>.lock` holding `content`, last modified `ageMs` ago. */
function givenLock(dir: string, ref: string, content: string, ageMs = 0): RefLock {
  const path = join(dir, `${ref}.lock`);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
  const at = (Date.now() - ageMs) / 1000;
  utimesSync(path, at, at);
  return { path, ref };
}

test("refLockFiles finds every lock under refs/ or under one folder of it, with the ref each locks", (t) => {
  const dir = givenTempDir(t);
  givenLock(dir, "refs/svc/origin/main", `${PUSHED}\n`);
  givenLock(dir, "refs/heads/topic/x", "");
  writeFileSync(join(dir, "refs", "heads", "main"), `${OTHER}\n`);
  t.deepEqual(
    refLockFiles(dir)
      .map((lock) => lock.ref)
      .sort(),
    ["refs/heads/topic/x", "refs/svc/origin/main"],
  );
  t.deepEqual(refLockFiles(dir, "refs/svc/origin"), [
    { path: join(dir, "refs/svc/origin/main.lock"), ref: "refs/svc/origin/main" },
  ]);
  t.deepEqual(refLockFiles(dir, "refs/svc/upstream"), []);
});

test("a lock holding a pushed commit is stale at once when every git told ok for it is gone, not while one runs", async (t) => {
  const dir = givenTempDir(t);
  const lock = givenLock(dir, "refs/svc/origin/main", `${PUSHED}\n`);
  const dead = await deadPid();
  t.true(isStale(lock, (commit) => (commit === PUSHED ? [dead] : [])));
  t.false(isStale(lock, (commit) => (commit === PUSHED ? [dead, process.pid] : [])));
  t.false(
    isStale(lock, () => []),
    "a commit no push was answered ok for: its writer is unknown",
  );
});

test("any other lock is stale once it is STALE_AFTER_MS old: empty, another value, or its git still running", (t) => {
  const dir = givenTempDir(t);
  const noPush = () => [];
  const running = () => [process.pid];
  t.false(isStale(givenLock(dir, "refs/heads/a", ""), noPush));
  t.false(isStale(givenLock(dir, "refs/heads/b", `${OTHER}\n`, STALE_AFTER_MS - 2000), noPush));
  t.false(isStale(givenLock(dir, "refs/heads/c", `${PUSHED}\n`), running));
  t.true(isStale(givenLock(dir, "refs/heads/d", "", STALE_AFTER_MS + 1000), noPush));
  t.true(isStale(givenLock(dir, "refs/heads/e", `${PUSHED}\n`, STALE_AFTER_MS + 1000), running));
  t.false(isStale({ path: join(dir, "refs/heads/gone.lock"), ref: "refs/heads/gone" }, noPush));
  t.deepEqual(
    staleRefLocks(dir, "refs", noPush)
      .map((lock) => lock.ref)
      .sort(),
    ["refs/heads/d", "refs/heads/e"],
  );
});
