/**
 * Fixtures for the comment tests (issue 34): comments made on the simulator directly, as another user
 * would, and read back from it.
 */
import type { SimComment } from "../server/sim/comment-store.js";

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
