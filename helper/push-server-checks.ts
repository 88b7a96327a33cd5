/**
 * The checks of a push the server must be asked for, made after planning and before any write
 * (`WritableBackend.checkWrites`: the forge's milestone titles and issue types) on the records' creates and
 * updates (not the comments'). What the backend refuses
 * joins the plan's problems, so the push is refused as for any other problem: each file named, nothing
 * written, one command to run after fixing them.
 */
import type { WriteCheck } from "../backends/backend.js";
import { isCommentPath } from "../backends/comment.js";
import type { PushContext, PushReply } from "./push-context.js";
import type { Plan } from "./push-plan.js";
import { notReached } from "./push-refusals.js";

/** `plan` with the backend's problems added, or the reply when the server could not be asked. */
export async function withServerProblems(
  context: PushContext,
  plan: Plan,
): Promise<{ readonly plan: Plan } | { readonly reply: PushReply }> {
  const { backend } = context;
  if (!backend.checkWrites) return { plan };
  const writes: WriteCheck[] = [];
  for (const write of plan.writes) {
    // A comment's fields are no record's: only the records' writes are the backend's to check.
    if (isCommentPath(write.path)) continue;
    if (write.kind === "create") writes.push({ path: write.path, changes: write.changes });
    if (write.kind === "update")
      writes.push({ path: write.path, changes: write.changes, original: write.original });
  }
  if (writes.length === 0) return { plan };
  try {
    const found = await backend.checkWrites(writes);
    if (found.length === 0) return { plan };
    const problems = found.map((problem) => ({
      ...problem,
      remedy: { kind: "edit", file: problem.path } as const,
    }));
    return { plan: { ...plan, problems: [...plan.problems, ...problems] } };
  } catch (error) {
    return { reply: notReached(context, error) };
  }
}
