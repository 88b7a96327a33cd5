/**
 * The lock file on its own (the OAuth provider's use of it is tested in oauth.test.ts): what a held lock
 * holds, a bounded wait that names the holder, takeover of a dead holder's lock, release that spares a lock
 * that is no longer ours, and node:fs's own error when the directory is missing.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { acquireLock, LockWaitTimeoutError } from "./file-lock.js";

async function givenLockPath(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "svc-file-lock-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return join(dir, "guarded.json.lock");
}

const holderText = (pid: number): string =>
  `${JSON.stringify({ pid, host: hostname(), since: "2026-03-08T12:00:00.000Z", nonce: "someone-else" })}\n`;

test("a held lock is a file naming this process; release removes it", async (t) => {
  const path = await givenLockPath(t);
  const lock = await acquireLock(path, { waitMs: 100, staleMs: 120_000 });
  const holder = JSON.parse(await readFile(path, "utf8"));
  t.is(holder.pid, process.pid);
  t.is(holder.host, hostname());
  await lock.release();
  t.deepEqual(await readdir(join(path, "..")), []);
});

test("a live holder is waited for, boundedly, and named in the timeout; its lock stays", async (t) => {
  const path = await givenLockPath(t);
  await writeFile(path, holderText(process.ppid));
  const seen: (number | undefined)[] = [];
  const error = await t.throwsAsync(
    acquireLock(path, { waitMs: 150, staleMs: 120_000, onWait: (holder) => seen.push(holder?.pid) }),
    { instanceOf: LockWaitTimeoutError },
  );
  t.deepEqual(seen, [process.ppid]);
  t.is((error as LockWaitTimeoutError).holder?.pid, process.ppid);
  t.is(await readFile(path, "utf8"), holderText(process.ppid));
});

test("the lock of a holder that is not running is taken over, with the reason", async (t) => {
  const path = await givenLockPath(t);
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  await writeFile(path, holderText(child.pid as number));
  const reasons: string[] = [];
  const lock = await acquireLock(path, {
    waitMs: 1000,
    staleMs: 120_000,
    onTakeover: (r) => reasons.push(r),
  });
  t.regex(reasons.join(), /is not running/);
  await lock.release();
});

test("release leaves a lock that was taken over by someone else", async (t) => {
  const path = await givenLockPath(t);
  const lock = await acquireLock(path, { waitMs: 100, staleMs: 120_000 });
  await writeFile(path, holderText(process.ppid));
  await lock.release();
  t.is(await readFile(path, "utf8"), holderText(process.ppid));
});

test("a missing directory is node:fs's ENOENT, for the caller to explain", async (t) => {
  const path = join(await givenLockPath(t), "..", "no-such-dir", "x.lock");
  const error = await t.throwsAsync(acquireLock(path, { waitMs: 100, staleMs: 120_000 }));
  t.is((error as NodeJS.ErrnoException).code, "ENOENT");
});
