import { mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { givenTempDir } from "../testing/sim.js";
import {
  cacheRoot,
  checkCacheRootFolder,
  defaultCacheRoot,
  type LocalFault,
  LocalFaultError,
  otherCacheRoot,
} from "./root.js";

test("cacheRoot: SVC_CACHE_DIR, else an absolute XDG_CACHE_HOME/svc, else ~/.cache/svc (a relative XDG_CACHE_HOME is ignored)", (t) => {
  t.is(cacheRoot({ SVC_CACHE_DIR: "/srv/svc", XDG_CACHE_HOME: "/x" }), "/srv/svc");
  t.is(cacheRoot({ XDG_CACHE_HOME: "/x" }), "/x/svc");
  t.is(cacheRoot({ XDG_CACHE_HOME: "x" }), join(homedir(), ".cache", "svc"));
  t.is(cacheRoot({}), join(homedir(), ".cache", "svc"));
  t.is(defaultCacheRoot({ SVC_CACHE_DIR: "/srv/svc" }), join(homedir(), ".cache", "svc"));
});

test("cacheRoot refuses a relative SVC_CACHE_DIR, naming svc's default folder and the command that uses it", (t) => {
  const home = givenTempDir(t, "svc-root-");
  const env = { SVC_CACHE_DIR: "./.cache", XDG_CACHE_HOME: home };
  const error = t.throws(() => cacheRoot(env), { instanceOf: LocalFaultError });
  t.deepEqual(error?.fault, { kind: "relative", path: "./.cache", said: "" });
  t.is(
    error?.in({ outcome: "nothing was fetched", rerun: "git fetch" }).message,
    "SVC_CACHE_DIR=./.cache is a relative path, which names another folder for each folder svc runs in (git " +
      "starts it in the folder of a git clone, at the top of the working tree for a fetch or a push), one of them " +
      "inside your working tree, where git add -A would stage the cache's files; nothing was fetched. Set " +
      `SVC_CACHE_DIR to an absolute path outside your working trees, or to use svc's default folder ${home}/svc, ` +
      "run: unset SVC_CACHE_DIR && git fetch",
  );
  t.is(error?.summary, "SVC_CACHE_DIR is a relative path");
});

test("checkCacheRootFolder: a root that is a file, or lies under one, is refused naming the file; one not made yet is fine", (t) => {
  const dir = givenTempDir(t, "svc-root-");
  const file = join(dir, "notes.txt");
  writeFileSync(file, "mine\n");
  const env = { SVC_CACHE_DIR: file, XDG_CACHE_HOME: join(dir, "xdg") };
  for (const root of [file, join(file, "svc", "deeper")]) {
    const error = t.throws(() => checkCacheRootFolder(root, env), { instanceOf: LocalFaultError });
    t.deepEqual(error?.fault, { kind: "not-a-folder", path: file, said: "" });
  }
  t.notThrows(() => checkCacheRootFolder(join(dir, "not", "yet")));
  mkdirSync(join(dir, "there"));
  t.notThrows(() => checkCacheRootFolder(join(dir, "there")));
});

test("otherCacheRoot: svc's default folder when SVC_CACHE_DIR names another, else a new private folder", (t) => {
  const dir = givenTempDir(t, "svc-root-");
  const xdg = join(dir, "xdg");
  t.deepEqual(otherCacheRoot({ SVC_CACHE_DIR: join(dir, "mine"), XDG_CACHE_HOME: xdg }), {
    command: "unset SVC_CACHE_DIR",
    root: join(xdg, "svc"),
  });
  // The default is where the fault is (or SVC_CACHE_DIR is not set): a folder of mktemp's.
  t.is(
    otherCacheRoot({ SVC_CACHE_DIR: join(dir, "mine"), XDG_CACHE_HOME: xdg }, xdg)?.command,
    'export SVC_CACHE_DIR="$(mktemp -d)"',
  );
  t.is(otherCacheRoot({ XDG_CACHE_HOME: xdg })?.command, 'export SVC_CACHE_DIR="$(mktemp -d)"');
});

test("each fault's message: the path, what the system said, what was done, and the command", (t) => {
  const dir = givenTempDir(t, "svc-root-");
  const cache = join(dir, "sim-h-demo");
  mkdirSync(cache);
  const env = { SVC_CACHE_DIR: dir, XDG_CACHE_HOME: join(dir, "xdg") };
  const say = (fault: LocalFault) =>
    new LocalFaultError(fault, { outcome: "nothing was fetched", rerun: "git fetch", root: dir, env })
      .message;
  t.is(
    say({
      kind: "read-only",
      path: join(cache, "cache.db"),
      said: "SQLITE_CANTOPEN (unable to open database file)",
    }),
    `the file system of ${cache} is read-only: ${cache}/cache.db: SQLITE_CANTOPEN (unable to open database file); ` +
      "nothing was fetched. Once it is writable again, run: git fetch\n" +
      "  or keep svc's caches on another file system (a new cache is built there from a full listing; it does not " +
      `know the creates of a push that was cut off before): to use svc's default folder ${dir}/xdg/svc, run: ` +
      "unset SVC_CACHE_DIR && git fetch",
  );
  t.is(
    say({
      kind: "denied",
      path: join(cache, "cache.db"),
      said: "SQLITE_READONLY (attempt to write a readonly database)",
    }),
    `permission denied: svc cannot write ${cache}/cache.db: SQLITE_READONLY (attempt to write a readonly database); ` +
      `nothing was fetched. Make it writable again, run: chmod -R u+rwX ${cache} && git fetch`,
  );
  t.is(
    say({ kind: "io", path: join(cache, "cache.db"), said: "SQLITE_IOERR_READ (disk I/O error)" }),
    `the file system failed on ${cache}/cache.db: SQLITE_IOERR_READ (disk I/O error); nothing was fetched. ` +
      "svc doctor tells a damaged cache from a failing disk; once the disk works, run: git fetch",
  );
  const file = join(dir, "notes.txt");
  t.is(
    new LocalFaultError(
      { kind: "not-a-folder", path: file, said: "" },
      {
        outcome: "nothing was fetched",
        rerun: "git fetch",
        root: join(file, "svc"),
        env: { ...env, SVC_CACHE_DIR: join(file, "svc") },
      },
    ).message,
    `SVC_CACHE_DIR=${file}/svc cannot be used: ${file} is a file, not a folder, so no folder ${file}/svc can be made; ` +
      `nothing was fetched. Move that file away, or to use svc's default folder ${dir}/xdg/svc, run: unset SVC_CACHE_DIR && git fetch`,
  );
  t.is(
    new LocalFaultError({ kind: "full", path: join(cache, "cache.db"), said: "" }).message,
    `the file system of ${cache} is full: ${cache}/cache.db; nothing was changed. ` +
      `Free space on it (df -h ${cache} shows how much is left), then run: the same command again`,
  );
});
