import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { SvcError, UserFacingError } from "../core/errors.js";
import { SqliteError } from "../core/sqlite.js";
import { givenTempDir } from "../testing/sim.js";
import { asLocalFault, findLocalFault, isLocalFault, probeStorage } from "./local-fault.js";
import { LocalFaultError, type LocalFaultKind } from "./root.js";

/** An error as node:fs makes them: `code`, `syscall` and, for a path operation, `path`. */
function fsError(code: string, syscall: string, path?: string): NodeJS.ErrnoException {
  const words: Record<string, string> = {
    ENOSPC: "no space left on device",
    EROFS: "read-only file system",
    EACCES: "permission denied",
    ENOENT: "no such file or directory",
    ECONNREFUSED: "connection refused",
  };
  const error: NodeJS.ErrnoException = new Error(
    `${code}: ${words[code] ?? code}, ${syscall}${path ? ` '${path}'` : ""}`,
  );
  return Object.assign(error, { code, syscall, ...(path ? { path } : {}) });
}

test("SQLite's codes for a full disk and for a failing one are local faults; corruption, a busy lock or a constraint are not", (t) => {
  const dir = givenTempDir(t, "svc-fault-");
  const db = join(dir, "cache.db");
  const cases: [number, LocalFaultKind | undefined][] = [
    [13, "full"], // SQLITE_FULL
    [778, "io"], // SQLITE_IOERR_WRITE, on a file system with room that this process may write
    [4874, "io"], // SQLITE_IOERR_SHMSIZE
    [14, "io"], // SQLITE_CANTOPEN
    [8, "io"], // SQLITE_READONLY
    [11, undefined], // SQLITE_CORRUPT: the cache's to rebuild
    [26, undefined], // SQLITE_NOTADB
    [5, undefined], // SQLITE_BUSY
    [2067, undefined], // SQLITE_CONSTRAINT_UNIQUE: a bug
  ];
  for (const [errcode, kind] of cases) {
    const error = new SqliteError("the message", errcode, { path: db });
    const fault = findLocalFault(error, "/fallback");
    t.is(fault?.kind, kind, error.code);
    if (fault && kind) t.deepEqual(fault, { kind, path: db, said: `${error.code} (the message)` });
  }
});

test("errno codes of file operations: no space and read-only by their code; a socket's EACCES and an unexplained ENOENT stay bugs", (t) => {
  const dir = givenTempDir(t, "svc-fault-");
  const file = join(dir, "objects", "ab");
  t.deepEqual(findLocalFault(fsError("ENOSPC", "write"), dir), {
    kind: "full",
    path: dir,
    said: "ENOSPC (no space left on device, write)",
  });
  t.deepEqual(findLocalFault(fsError("EROFS", "mkdir", file), dir), {
    kind: "read-only",
    path: file,
    said: "EROFS (read-only file system, mkdir)",
  });
  t.is(findLocalFault(fsError("EACCES", "open", file), dir)?.kind, "denied");
  t.is(findLocalFault(fsError("EACCES", "connect"), dir), undefined);
  t.is(findLocalFault(fsError("ECONNREFUSED", "connect"), dir), undefined);
  t.is(findLocalFault(fsError("ENOENT", "open", file), dir), undefined, "a missing file in a writable place");
  t.is(findLocalFault(new Error("plain"), dir), undefined);
  t.is(findLocalFault("a string", dir), undefined);
});

test("git's own words on its stderr, in an error of the cache's storage, and a fault under an error's causes", (t) => {
  const git = new SvcError(
    "SVC_STORE",
    "git index-pack --stdin failed (exit 128): fatal: write error\nfatal: unable to write: No space left on device",
  );
  t.deepEqual(findLocalFault(git, "/root/cache"), {
    kind: "full",
    path: "/root/cache",
    said: "fatal: unable to write: No space left on device",
  });
  t.is(
    findLocalFault(new SvcError("SVC_BACKEND", "the server said: Permission denied"), "/x"),
    undefined,
    "a server's words are not the file system's",
  );
  const writable = givenTempDir(t, "svc-fault-");
  t.is(
    findLocalFault(new SvcError("SVC_STORE", "git pack-objects: error: Permission denied"), writable),
    undefined,
    "git's EACCES about another repository, with the cache writable",
  );
  const wrapped = new SvcError("SVC_STORE", "cannot lock main.lock", {
    cause: fsError("EROFS", "open", "/c/repo.git/refs/heads/main.lock"),
  });
  t.is(findLocalFault(wrapped, "/c")?.kind, "read-only");
  t.true(isLocalFault(wrapped));
});

test("probeStorage: nothing in a writable folder with room, for a file there or a path not made yet", (t) => {
  const dir = givenTempDir(t, "svc-fault-");
  mkdirSync(join(dir, "sub"));
  writeFileSync(join(dir, "sub", "cache.db"), "");
  t.is(probeStorage(join(dir, "sub", "cache.db")), undefined);
  t.is(probeStorage(join(dir, "not", "yet")), undefined);
});

test("asLocalFault: a local fault said for the place that reports it; another user-facing error is left alone", (t) => {
  const dir = givenTempDir(t, "svc-fault-");
  const full = asLocalFault(
    new SqliteError("database or disk is full", 13, { path: join(dir, "cache.db") }),
    {
      outcome: "nothing was fetched",
      rerun: "git fetch",
      root: dir,
    },
  );
  t.true(full instanceof LocalFaultError);
  t.is(
    full?.message,
    `the file system of ${dir} is full: ${dir}/cache.db: SQLITE_FULL (database or disk is full); nothing was fetched. ` +
      `Free space on it (df -h ${dir} shows how much is left), then run: git fetch`,
  );
  t.is(full?.code, "SVC_LOCAL_FAULT");
  t.true(full?.cause instanceof SqliteError);
  const again = full?.in({ outcome: "nothing was written to the server", rerun: "git push" });
  t.regex(again?.message ?? "", /; nothing was written to the server\. .* then run: git push$/);
  t.is(asLocalFault(new UserFacingError("SVC_USAGE", "no"), {}), undefined);
  t.is(asLocalFault(new Error("a bug"), {}), undefined);
});
