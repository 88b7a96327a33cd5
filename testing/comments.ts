/**
 * Fixtures for the comment tests (issue 34): comments made on the simulator directly, as another user
 * would, and read back from it; and the refusal of someone else's comment changed, on any backend.
 */
import type { ExecutionContext } from "ava";
import type { SimComment } from "../server/sim/comment-store.js";
import { type GitEnv, git, type RunResult, run } from "./git.js";

/** A comment as the simulator's REST surface carries it (its extension of Document 1). */
export type SimCommentJson = SimComment;

/** Posts a comment on issue `issue` of `slug` as `author`; returns it. */
export async function postComment(
  simUrl: string,
  slug: string,
  issue: number,
  author: string,
  body: string,
): Promise<SimCommentJson> {
  const response = await fetch(`${simUrl}/projects/${slug}/issues/${issue}/comments`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-svc-agent": "test-fixture" },
    body: JSON.stringify({ author, body }),
  });
  if (response.status !== 201) throw new Error(`POST failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as SimCommentJson;
}

/** Changes a comment's body on the server, as its author would elsewhere. */
export async function patchComment(
  simUrl: string,
  slug: string,
  id: number,
  body: string,
): Promise<SimCommentJson> {
  const response = await fetch(`${simUrl}/projects/${slug}/comments/${id}`, {
    method: "PATCH",
    headers: { "content-type": "application/json", "x-svc-agent": "test-fixture" },
    body: JSON.stringify({ body }),
  });
  if (response.status !== 200) throw new Error(`PATCH failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as SimCommentJson;
}

/** Deletes a comment on the server. */
export async function deleteComment(simUrl: string, slug: string, id: number): Promise<void> {
  const response = await fetch(`${simUrl}/projects/${slug}/comments/${id}`, {
    method: "DELETE",
    headers: { "x-svc-agent": "test-fixture" },
  });
  if (response.status !== 204) throw new Error(`DELETE failed: ${response.status} ${await response.text()}`);
}

/** Every comment of `slug` on the server, in its order. */
export async function commentsOnServer(simUrl: string, slug: string): Promise<SimCommentJson[]> {
  const response = await fetch(`${simUrl}/projects/${slug}/comments`);
  if (response.status !== 200) throw new Error(`GET failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as SimCommentJson[];
}

/** The file svc writes for `comment`: frontmatter, then the body byte for byte. */
export function expectedCommentFile(comment: SimCommentJson): string {
  return (
    `---\nid: ${comment.id}\nauthor: ${JSON.stringify(comment.author)}\ncreated_at: ${comment.created_at}\n` +
    `updated_at: ${comment.updated_at}\nversion: ${comment.version}\n---\n${comment.body}`
  );
}

/**
 * Pushes clone `d` carrying an edit or a deletion of someone else's comment: the push must be refused (exit
 * 1) with `line` in its message and write nothing (`writes()`, how many writes the server has had, stays);
 * then runs the restoring command the refusal printed (`git checkout <commit> -- <file> … && git push`) as
 * printed, which must succeed. Its result, for the caller's own checks (what the command pushed);
 * undefined when a check failed.
 */
export async function refusedThenRestored(
  t: ExecutionContext,
  env: GitEnv,
  line: string,
  writes: () => number,
): Promise<RunResult | undefined> {
  const before = writes();
  const push = await git(env, ["push"], { cwd: "d" });
  t.is(push.code, 1, push.stderr);
  t.true(push.stderr.includes(line), push.stderr);
  t.is(writes(), before, "nothing was written");
  const command = /^ {2}(git checkout [0-9a-f]{40} -- .*&& git push)$/m.exec(push.stderr)?.[1];
  if (!command) {
    t.fail(`no restoring command in:\n${push.stderr}`);
    return undefined;
  }
  const fixed = await run(env, "sh", ["-c", command], { cwd: "d" });
  t.is(fixed.code, 0, fixed.stderr);
  return fixed.code === 0 ? fixed : undefined;
}
