/**
 * The backend's own check of a push's planned record writes, before any write (`WritableBackend.checkWrites`:
 * the tracker's edit screen and allowed values, the forge's milestones and issue types, issue 35). Its problems join the plan's, so a push they
 * refuse writes nothing and prints the one command that brings the files back: an edited file restored from
 * the push's base (`git checkout <base> -- <file>`), a new file to fix.
 */

import type { WriteToCheck } from "../backends/backend.js";
import { isWritable } from "../backends/backend.js";
import { isCommentPath } from "../backends/comment.js";
import type { PushContext, PushReply } from "./push-context.js";
import type { Plan, PlanProblem } from "./push-plan.js";
import { notReached } from "./push-refusals.js";

/** `plan` with the backend's problems added, or the reply when the server could not be asked. */
export async function withBackendCheck(
  context: PushContext,
  plan: Plan,
  mergeBase: string,
): Promise<Plan | PushReply> {
  const { backend } = context;
  if (!isWritable(backend) || !backend.checkWrites) return plan;
  const writes: WriteToCheck[] = plan.writes.flatMap((write): WriteToCheck[] => {
    if (isCommentPath(write.path)) return [];
    if (write.kind === "create") return [{ kind: "create", path: write.path, changes: write.changes }];
    if (write.kind === "update")
      return [
        {
          kind: "update",
          path: write.path,
          key: write.key,
          changes: write.changes,
          original: write.original,
        },
      ];
    return [];
  });
  if (writes.length === 0) return plan;
  let found: readonly { readonly path: string; readonly message: string }[];
  try {
    found = await backend.checkWrites(writes);
  } catch (error) {
    return notReached(context, error);
  }
  if (found.length === 0) return plan;
  const creates = new Set(writes.filter((write) => write.kind === "create").map((write) => write.path));
  const problems: PlanProblem[] = found.map(({ path, message }) => ({
    path,
    message,
    remedy: creates.has(path)
      ? { kind: "edit", file: path }
      : { kind: "restore", file: path, source: mergeBase },
  }));
  return { ...plan, problems: [...plan.problems, ...problems] };
}
