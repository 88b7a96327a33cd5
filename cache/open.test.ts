import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { Backend, BackendRecord } from "../backends/backend.js";
import { SIM_SCHEMA } from "../backends/sim/schema.js";
import { SvcError } from "../core/errors.js";
import { parseRemoteUrl } from "../core/remote-url.js";
import { issueRecord, NO_HISTORY } from "../testing/cache.js";
import { isolateWorkerGit } from "../testing/git.js";
import { givenTempDir } from "../testing/sim.js";
import { cacheFolderName, ProjectCache } from "./cache.js";
import { openProjectCache, REBUILT_MARKER } from "./open.js";

const REMOTE = parseRemoteUrl("svc::http://127.0.0.1:1/projects/demo");
const IDENTITY = { backend: "sim", project: "demo", agent: "test" };

/** A cache root in a temp folder; git (run by the cache) reads no config of the machine's user. */
function givenRoot(t: ExecutionContext): string {
  return join(isolateWorkerGit(t, "svc-open-"), "cache");
}

function record(id: number): BackendRecord {
  return issueRecord(id, `2026-01-01T00:00:0${id}.000Z`, `Body ${id}\n`);
}

/** A backend whose listing is `records` (or fails with `failure`); counts its listings. */
function fakeBackend(records: readonly BackendRecord[], failure?: Error): Backend & { listings: number } {
  const backend = {
    kind: "sim",
    project: "demo",
    schema: SIM_SCHEMA,
    description: "sim project demo at http://127.0.0.1:1",
    maxRecordBytes: 1 << 20,
    overlapMs: 1000,
    listings: 0,
    async listAll() {
      backend.listings++;
      if (failure) throw failure;
      return { records, complete: true };
    },
    async listChangedSince() {
      return { records: [], complete: true };
    },
  };
  return backend;
}

async function open(
  t: ExecutionContext,
  root: string,
  backend: Backend,
  log: string[] = [],
  keepFirstBlobs = false,
) {
  const opened = await openProjectCache({
    remote: REMOTE,
    agent: "test",
    backend,
    user: NO_HISTORY,
    log: (line) => log.push(line),
    root,
    keepFirstBlobs,
  });
  t.teardown(() => opened.cache.close());
  return opened;
}

test("a failed first listing creates nothing under the cache root", async (t) => {
  const root = givenRoot(t);
  const backend = fakeBackend([], new SvcError("SVC_BACKEND", "no such project (404)"));
  await t.throwsAsync(open(t, root, backend), { message: /no such project/ });
  t.false(existsSync(root));
  t.is(backend.listings, 1);
});

test("a new cache is built from one listing without a word; an intact one is opened as it is", async (t) => {
  const root = givenRoot(t);
  const backend = fakeBackend([record(1), record(2)]);
  const log: string[] = [];
  const first = await open(t, root, backend, log);
  t.is(first.built?.full, true);
  t.is(first.built?.changed, 2);
  t.deepEqual(log, []);
  t.is(first.cache.dir, join(root, cacheFolderName(REMOTE)));
  t.true(first.cache.hasObject(first.cache.tip() ?? ""));
  t.deepEqual(readdirSync(root).sort(), [cacheFolderName(REMOTE), `${cacheFolderName(REMOTE)}.lock`]);
  first.cache.close();

  const second = await open(t, root, backend, log);
  t.is(second.built, undefined);
  t.is(backend.listings, 1, "an intact cache is not listed again");
  t.false(existsSync(join(second.cache.dir, REBUILT_MARKER)));
});

test("a build asked to keep its first state's files keeps the ones the database holds, for its tip only; one not asked keeps none", async (t) => {
  const kept = await open(t, givenRoot(t), fakeBackend([record(1), record(2)]), [], true);
  const tip = kept.cache.tip() as string;
  const files = kept.firstBlobs?.of(tip);
  const stored = kept.cache.db.treeEntries().map((entry) => kept.cache.db.blob(entry.rendered_oid)?.content);
  t.deepEqual(files, stored);
  t.is(files?.length, 2);
  t.is(kept.firstBlobs?.of("0".repeat(40)), undefined);

  const plain = await open(t, givenRoot(t), fakeBackend([record(1), record(2)]));
  t.is(plain.built?.changed, 2);
  t.is(plain.firstBlobs, undefined);
});

/** `fakeBackend`, whose listing also streams: `records` in batches of two, then `failure` if given. */
function streamingBackend(
  records: readonly BackendRecord[],
  failure?: Error,
): Backend & { listings: number } {
  const backend = fakeBackend(records);
  return Object.assign(backend, {
    async *streamAll() {
      backend.listings++;
      for (let at = 0; at < records.length; at += 2) yield records.slice(at, at + 2);
      if (failure) throw failure;
    },
  });
}

test("a listing streamed in batches makes the commit one listing makes; one cut off after its first batch leaves no folder behind", async (t) => {
  const records = [1, 2, 3, 4, 5].map(record);
  const whole = await open(t, givenRoot(t), fakeBackend(records));
  const root = givenRoot(t);
  const streamed = await open(t, root, streamingBackend(records));
  t.is(streamed.built?.changed, 5);
  t.is(streamed.cache.tip(), whole.cache.tip());
  t.is(streamed.cache.db.liveCount(), 5);
  streamed.cache.close();

  const cutRoot = givenRoot(t);
  const cut = streamingBackend(records, new SvcError("SVC_BACKEND", "the server closed the connection"));
  await t.throwsAsync(open(t, cutRoot, cut), { message: "the server closed the connection" });
  t.deepEqual(readdirSync(cutRoot), [`${cacheFolderName(REMOTE)}.lock`]);
  // The next try builds it.
  const again = await open(t, cutRoot, streamingBackend(records));
  t.is(again.cache.tip(), whole.cache.tip());
});

test.serial(
  "a git older than 2.30 gets no cache: the build says which git, the one needed and what to do, and leaves nothing but the lock",
  async (t) => {
    const root = givenRoot(t);
    const bin = givenTempDir(t, "svc-old-git-");
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    writeFileSync(
      join(bin, "git"),
      `#!/bin/sh\nfor a; do [ "$a" = version ] && { echo "git version 2.29.3"; exit 0; }; done\nexec ${realGit} "$@"\n`,
      { mode: 0o755 },
    );
    const path = process.env.PATH;
    process.env.PATH = `${bin}${delimiter}${path}`;
    try {
      await t.throwsAsync(open(t, root, fakeBackend([record(1)])), {
        message:
          "git 2.29 is too old for svc: it needs git 2.30 or newer (the oldest git svc is tested with); install a newer git and put it first on PATH, then run the same command again",
      });
    } finally {
      process.env.PATH = path;
    }
    t.deepEqual(readdirSync(root), [`${cacheFolderName(REMOTE)}.lock`]);
  },
);

test("the cache's repository, made without git, is a bare SHA-1 repository git reads with the cache's settings, whatever hash the user's git would default to", async (t) => {
  const root = givenRoot(t);
  const hash = process.env.GIT_DEFAULT_HASH;
  process.env.GIT_DEFAULT_HASH = "sha256";
  t.teardown(() => {
    if (hash === undefined) delete process.env.GIT_DEFAULT_HASH;
    else process.env.GIT_DEFAULT_HASH = hash;
  });
  const { cache } = await open(t, root, fakeBackend([record(1), record(2)]));
  const git = (...args: string[]) =>
    execFileSync("git", [`--git-dir=${cache.repo}`, ...args], { encoding: "utf8" }).trim();
  t.is(git("rev-parse", "--is-bare-repository"), "true");
  t.is(git("rev-parse", "--show-object-format"), "sha1");
  t.is(git("symbolic-ref", "HEAD"), "refs/heads/main");
  t.is(git("rev-parse", "main"), cache.tip() ?? "");
  t.is(git("config", "--get", "uploadpack.allowFilter"), "true");
  t.is(git("config", "--get", "uploadpack.hideRefs"), "refs/svc/");
  t.is(git("config", "--get", "gc.auto"), "0");
  // The blobs stay in the database until git asks for them: the tree names both files.
  t.is(git("ls-tree", "--name-only", "-r", "main"), "issues/0001.md\nissues/0002.md");
});

test("a process that finds another one building the cache waits for it and makes no listing of its own", async (t) => {
  const root = givenRoot(t);
  const records = [1, 2, 3].map(record);
  // The other process: builds the cache from a listing that pauses after its first batch, holding the lock,
  // until this process says it is waiting for it (its trace line) by creating the file `go`.
  const scratch = givenTempDir(t, "svc-open-other-");
  const script = join(scratch, "build.mjs");
  const go = join(scratch, "go");
  writeFileSync(
    script,
    `import { openProjectCache } from ${JSON.stringify(new URL("./open.js", import.meta.url).href)};
import { parseRemoteUrl } from ${JSON.stringify(new URL("../core/remote-url.js", import.meta.url).href)};
import { SIM_SCHEMA } from ${JSON.stringify(new URL("../backends/sim/schema.js", import.meta.url).href)};
import { existsSync } from "node:fs";
const records = ${JSON.stringify(records)};
const backend = {
  kind: "sim", project: "demo", schema: SIM_SCHEMA, description: "sim project demo", maxRecordBytes: 1 << 20,
  overlapMs: 1000,
  async listAll() { throw new Error("streamed"); },
  async listChangedSince() { return { records: [], complete: true }; },
  async *streamAll() {
    yield records.slice(0, 1);
    process.stdout.write("building\\n");
    while (!existsSync(${JSON.stringify(go)})) await new Promise((resolve) => setTimeout(resolve, 10));
    yield records.slice(1);
  },
};
const user = { serverRefs: [], gitOutput: async () => undefined, spawnGit: () => { throw new Error("no history"); } };
const { cache } = await openProjectCache({
  remote: parseRemoteUrl(${JSON.stringify(REMOTE.url)}), agent: "other", backend, user, log: () => {}, root: ${JSON.stringify(root)},
});
process.stdout.write(cache.tip() + "\\n");
cache.close();
`,
  );
  const other = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => {
    if (other.exitCode === null && other.signalCode === null) other.kill("SIGKILL");
  });
  let out = "";
  other.stdout.setEncoding("utf8");
  const building = new Promise<void>((resolve) =>
    other.stdout.on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("building\n")) resolve();
    }),
  );
  const exited = new Promise<number | null>((resolve) => other.on("close", resolve));
  await building;

  const backend = fakeBackend(records);
  const traced: string[] = [];
  const opened = await openProjectCache({
    remote: REMOTE,
    agent: "test",
    backend,
    user: NO_HISTORY,
    log: () => {},
    trace: (line) => {
      traced.push(line);
      // Synchronous: this process blocks on the build lock right after saying it waits.
      writeFileSync(go, "");
    },
    root,
  });
  t.teardown(() => opened.cache.close());
  // Had this process not waited, the other one would still be paused.
  writeFileSync(go, "");
  t.is(await exited, 0);
  t.is(backend.listings, 0, "no listing of its own");
  t.is(opened.built, undefined);
  t.deepEqual(traced, ["another process is building the cache; waiting for it"]);
  t.is(`${opened.cache.tip()}\n`, out.split("building\n")[1]);
  t.is(opened.cache.db.liveCount(), 3);
});

test("check names what is broken; the next open rebuilds it, says why in one line and leaves nothing aside", async (t) => {
  const root = givenRoot(t);
  const dir = join(root, cacheFolderName(REMOTE));
  const backend = fakeBackend([record(1)]);
  const breakages: [string, () => void, RegExp][] = [
    [
      "main deleted",
      () => rmSync(join(dir, "repo.git", "refs", "heads", "main")),
      /its branch main is missing/,
    ],
    ["repo.git deleted", () => rmSync(join(dir, "repo.git"), { recursive: true }), /repo\.git is missing/],
    ["cache.db deleted", () => rmSync(join(dir, "cache.db")), /its database cache\.db is missing/],
    [
      "cache.db garbage",
      () => writeFileSync(join(dir, "cache.db"), Buffer.alloc(4096, "x")),
      /cache\.db is corrupt \(file is not a database\)/,
    ],
  ];
  (await open(t, root, backend)).cache.close();
  for (const [name, breakIt, why] of breakages) {
    for (const file of ["cache.db-wal", "cache.db-shm"]) rmSync(join(dir, file), { force: true });
    breakIt();
    const check = ProjectCache.check(dir, IDENTITY);
    t.is(check.state, "broken", name);
    if (check.state === "broken") t.regex(check.why, why, name);
    const log: string[] = [];
    const reopened = await open(t, root, backend, log);
    t.is(log.length, 1, name);
    t.regex(log[0] ?? "", /^svc: rebuilt the cache /, name);
    t.regex(log[0] ?? "", why, name);
    t.true(existsSync(join(dir, REBUILT_MARKER)), name);
    t.is(ProjectCache.check(dir, IDENTITY).state, "healthy", name);
    reopened.cache.close();
    t.deepEqual(readdirSync(root).sort(), [cacheFolderName(REMOTE), `${cacheFolderName(REMOTE)}.lock`], name);
  }
});
