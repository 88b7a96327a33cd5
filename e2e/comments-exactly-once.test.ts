/**
 * A comment is posted exactly once (issue 34) under a `kill -9` of the push's whole process group while
 * the simulator's answer to the POST is on its way: the next plain `git push` finds the comment through
 * the create journal and does not post it again. Real git, the real simulator, real processes.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import { commentsOnServer } from "../testing/comments.js";
import { givenFaultProxy } from "../testing/fault-proxy.js";
import { git, gitOk, givenGitEnv, manyIssues } from "../testing/git.js";
import { commitAll, givenClone, lastSimAuditId, simWrites, writeWorkFile } from "../testing/push.js";
import { givenProject, givenSim } from "../testing/sim.js";

test("a push killed while the answer to its comment POST is on its way does not post the comment twice", async (t) => {
  const sim = await givenSim(t);
  await givenProject(sim.url, "demo", manyIssues(2));
  const proxy = await givenFaultProxy(t, sim.url);
  const env = givenGitEnv(t);
  await givenClone(t, env, proxy.url, "demo", "d");
  await gitOk(t, env, ["config", "svc.author", "me@example.com"], { cwd: "d" });
  await gitOk(t, env, ["config", "user.email", "ignored@example.com"], { cwd: "d" });
  mkdirSync(join(env.dir, "d", "comments", "0002"), { recursive: true });
  writeWorkFile(env, "d", "comments/0002/once.md", "Only once, please.\n");
  await commitAll(t, env, "d", "A comment");

  const before = lastSimAuditId(sim);
  proxy.setFault((request) => (request.method === "POST" ? { kind: "late", ms: 1500 } : undefined));
  const killed = await git(env, ["push"], { cwd: "d", killWhen: proxy.answered("POST") });
  t.is(killed.code, null, killed.stderr);
  t.is((await commentsOnServer(sim.url, "demo")).length, 1, "the server committed the comment");

  proxy.setFault(undefined);
  const again = await git(env, ["push"], { cwd: "d" });
  t.is(again.code, 0, again.stderr);
  const [posted] = await commentsOnServer(sim.url, "demo");
  t.is(posted?.author, "me@example.com", "svc.author wins over user.email");
  t.true(
    again.stderr.includes(
      `svc: comments/0002/once.md was posted as comment ${posted?.id} (comments/0002/${posted?.id}.md) by a push that was cut off before the answer arrived; it is not created again`,
    ),
    again.stderr,
  );
  t.is((await commentsOnServer(sim.url, "demo")).length, 1);
  t.deepEqual(
    simWrites(sim, before)
      .filter((write) => write.status !== null && write.status < 300)
      .map((write) => `${write.method} ${write.path}`),
    ["POST /projects/demo/issues/2/comments"],
  );

  t.is((await git(env, ["pull", "-q"], { cwd: "d" })).code, 0);
  t.deepEqual((await gitOk(t, env, ["ls-files", "comments"], { cwd: "d" })).split("\n"), [
    `comments/0002/${posted?.id}.md`,
  ]);
});
