/**
 * Comments as files (issue 34) on the simulator: a clone shows each record's thread under
 * `comments/<record file stem>/<id>.md`, a fetch brings new, changed and deleted comments, and
 * `svc.comments false` (`svc init --no-comments`) clones without them. Real git, a real simulator.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import {
  commentsOnServer,
  deleteComment,
  expectedCommentFile,
  patchComment,
  postComment,
} from "../testing/comments.js";
import { git, givenGitEnv, manyIssues, svc } from "../testing/git.js";
import { givenClone, lastSimAuditId, readWorkFile } from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

test("a clone shows each record's thread; a fetch brings new, edited and deleted comments", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(3));
  const first = await postComment(sim.url, "demo", 2, "alice@example.com", "I can reproduce it.\n");
  const second = await postComment(sim.url, "demo", 2, "bob@example.com", "Fixed in `main`.\n\n- [x] test\n");
  const third = await postComment(sim.url, "demo", 3, "alice@example.com", "Duplicate of #2.");
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  await givenClone(t, env, sim.url, "demo", "d");

  t.deepEqual(readdirSync(join(env.dir, "d", "comments")).sort(), ["0002", "0003"], "no folder for issue 1");
  t.deepEqual(readdirSync(join(env.dir, "d", "comments", "0002")), [`${first.id}.md`, `${second.id}.md`]);
  t.is(first.id, 1000000001, "ten-digit ids, in order");
  for (const comment of [first, second]) {
    t.is(readWorkFile(env, "d", `comments/0002/${comment.id}.md`), expectedCommentFile(comment));
  }
  t.is(readWorkFile(env, "d", `comments/0003/${third.id}.md`), expectedCommentFile(third));
  const grep = await git(env, ["grep", "-l", "reproduce"], { cwd: "d" });
  t.is(grep.stdout.trim(), `comments/0002/${first.id}.md`);

  // Changed elsewhere: a new comment, an edit, a deletion; each fetch brings them.
  const fourth = await postComment(sim.url, "demo", 1, "carol@example.com", "New here.");
  const edited = await patchComment(sim.url, "demo", first.id, "I can reproduce it on 1.2 too.\n");
  await deleteComment(sim.url, "demo", third.id);
  const pull = await git(env, ["pull", "-q"], { cwd: "d" });
  t.is(pull.code, 0, pull.stderr);
  t.is(readWorkFile(env, "d", `comments/0001/${fourth.id}.md`), expectedCommentFile(fourth));
  t.is(readWorkFile(env, "d", `comments/0002/${first.id}.md`), expectedCommentFile(edited));
  t.false(
    existsSync(join(env.dir, "d", "comments", "0003")),
    "a deleted comment's file is gone, and its folder",
  );
  t.is((await commentsOnServer(sim.url, "demo")).length, 3);
});

test("svc.comments false and svc init --no-comments clone without comments; the issues are the same", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  await postComment(sim.url, "demo", 1, "alice@example.com", "A thread.");
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  await givenClone(t, env, sim.url, "demo", "with");
  await givenClone(t, env, sim.url, "demo", "without", ["-c", "svc.comments=false"]);
  const init = await svc(env, ["init", "sim::demo", "init-without", "--origin", sim.url, "--no-comments"]);
  t.is(init.code, 0, init.stderr);
  t.true(existsSync(join(env.dir, "with", "comments")));
  for (const dir of ["without", "init-without"]) {
    t.false(existsSync(join(env.dir, dir, "comments")), dir);
    t.deepEqual(readdirSync(join(env.dir, dir, "issues")), readdirSync(join(env.dir, "with", "issues")), dir);
    const config = await git(env, ["config", "svc.comments"], { cwd: dir });
    t.is(config.stdout.trim(), "false", dir);
  }
  // A fetch of the clone without comments still brings none.
  await postComment(sim.url, "demo", 2, "bob@example.com", "Another.");
  const pull = await git(env, ["pull", "-q"], { cwd: "without" });
  t.is(pull.code, 0, pull.stderr);
  t.false(existsSync(join(env.dir, "without", "comments")));
  // svc sync of that clone syncs the cache its fetches use: it lists no comments either.
  const asked = lastSimAuditId(sim);
  const sync = await svc(env, ["sync", "without", "--reconcile"]);
  t.is(sync.code, 0, sync.stderr);
  const paths = sim.store
    .auditRows()
    .filter((row) => row.id > asked)
    .map((row) => row.path.split("?")[0]);
  t.true(paths.includes("/projects/demo/issues"), paths.join(" "));
  t.false(
    paths.some((path) => path?.includes("/comments")),
    paths.join(" "),
  );
});

test("svc init --at and svc log of a clone without comments read the cache its fetches use", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  await postComment(sim.url, "demo", 1, "alice@example.com", "A thread.");
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  // Only the cache without comments exists on this machine.
  const init = await svc(env, ["init", "sim::demo", "without", "--origin", sim.url, "--no-comments"]);
  t.is(init.code, 0, init.stderr);
  const state = (await git(env, ["rev-parse", "origin/main"], { cwd: "without" })).stdout.trim();
  const at = new Date().toISOString();

  const log = await svc(env, ["log", "without"]);
  t.is(log.code, 0, log.stderr);
  t.regex(log.stdout, /^state \w+ {2}seen \S+ {2}first listing {2}2 records\n$/);

  for (const [dir, args] of [
    ["then", ["--no-comments"]],
    ["then-global", []],
  ] as const) {
    if (dir === "then-global") await git(env, ["config", "--global", "svc.comments", "false"]);
    const past = await svc(env, ["init", "sim::demo", dir, "--origin", sim.url, "--at", at, ...args]);
    t.is(past.code, 0, past.stderr);
    t.regex(past.stderr, new RegExp(`${dir} shows .* as this machine's cache saw it at `));
    t.is((await git(env, ["rev-parse", "HEAD"], { cwd: dir })).stdout.trim(), state, dir);
    t.deepEqual(readdirSync(join(env.dir, dir, "issues")), ["0001.md", "0002.md"], dir);
    t.false(existsSync(join(env.dir, dir, "comments")), dir);
  }
});

test("svc log shows a comment's changes as a record's: created, its body changed, deleted, and by whom", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const first = await postComment(sim.url, "demo", 1, "alice@example.com", "A thread.\n");
  const env = givenGitEnv(t, { SVC_SYNC_INTERVAL: "0" });
  await givenClone(t, env, sim.url, "demo", "d");

  const edited = await patchComment(sim.url, "demo", first.id, "A thread, edited.\n");
  t.is((await git(env, ["fetch", "-q"], { cwd: "d" })).code, 0);
  const second = await postComment(sim.url, "demo", 2, "bob@example.com", "Another.\n");
  t.is((await git(env, ["fetch", "-q"], { cwd: "d" })).code, 0);
  await deleteComment(sim.url, "demo", second.id);
  t.is((await git(env, ["fetch", "-q"], { cwd: "d" })).code, 0);

  const text = await svc(env, ["log", "d"]);
  t.is(text.code, 0, text.stderr);
  const changes = text.stdout.split("\n").filter((line) => line.startsWith("  "));
  t.deepEqual(changes, [
    `  deleted  comments/0002/${second.id}.md`,
    `  created  comments/0002/${second.id}.md  at ${second.updated_at}  by bob@example.com`,
    `  changed  comments/0001/${first.id}.md  body  at ${edited.updated_at}  by alice@example.com`,
  ]);
  const json = await svc(env, ["log", "d", "--json", "--", `comments/0001/${first.id}.md`]);
  t.is(json.code, 0, json.stderr);
  const states = (JSON.parse(json.stdout) as { states: { changes: unknown[] }[] }).states;
  t.deepEqual(
    states.flatMap((state) => state.changes),
    [
      {
        path: `comments/0001/${first.id}.md`,
        change: "changed",
        fields: [],
        bodyChanged: true,
        updatedAt: edited.updated_at,
        changedBy: "alice@example.com",
      },
    ],
  );
});
