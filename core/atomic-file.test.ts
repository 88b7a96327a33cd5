/**
 * The one atomic file replace: the new content under the target's name, the mode asked exactly (whatever
 * the umask), no temporary file left, a crash's leftover untouched; and a failed write leaves the old file.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { fsyncPath, writeFileAtomically } from "./atomic-file.js";

function givenDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-atomic-file-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("writeFileAtomically writes mode 0600 through a fresh temporary file, whatever a crash left behind", (t) => {
  const dir = givenDir(t);
  const path = join(dir, "s.json");
  const leftover = `.s.json.tmp-${process.pid}-000000000000`;
  writeFileSync(join(dir, leftover), "half", { mode: 0o644 });
  writeFileAtomically(path, "{}\n");
  t.is(statSync(path).mode & 0o777, 0o600);
  t.is(readFileSync(path, "utf8"), "{}\n");
  t.deepEqual(readdirSync(dir).sort(), [leftover, "s.json"].sort());
});

test("an existing file is replaced: bytes, the mode asked, not synced when not durable", (t) => {
  const dir = givenDir(t);
  const path = join(dir, "object");
  writeFileSync(path, "old", { mode: 0o644 });
  writeFileAtomically(path, Buffer.from([0, 1, 2, 255]), { mode: 0o444, durable: false });
  t.deepEqual(readFileSync(path), Buffer.from([0, 1, 2, 255]));
  t.is(statSync(path).mode & 0o777, 0o444);
  t.deepEqual(readdirSync(dir), ["object"]);
});

test("a write that cannot happen leaves the old file as it was and no temporary file", (t) => {
  if (process.getuid?.() === 0) {
    t.pass("root writes into a read-only directory");
    return;
  }
  const dir = givenDir(t);
  const path = join(dir, "s.json");
  writeFileSync(path, "old");
  chmodSync(dir, 0o500);
  t.teardown(() => chmodSync(dir, 0o700));
  t.throws(() => writeFileAtomically(path, "new"), { code: "EACCES" });
  chmodSync(dir, 0o700);
  t.is(readFileSync(path, "utf8"), "old");
  t.deepEqual(readdirSync(dir), ["s.json"]);
});

test("fsyncPath syncs a file and a directory, and throws for a path that is not there", (t) => {
  const dir = givenDir(t);
  const path = join(dir, "f");
  writeFileSync(path, "x");
  t.notThrows(() => fsyncPath(path));
  t.notThrows(() => fsyncPath(dir));
  t.throws(() => fsyncPath(join(dir, "missing")), { code: "ENOENT" });
});
