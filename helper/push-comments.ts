/**
 * The comment files of a push (issue 34): who pushes (the backend's answer, from the user's git config on
 * the sim: `svc.author`, else git's author email), and the plan of the comment files beside the records' plan
 * (push-plan-comments.ts). A push without comment files asks nothing.
 */
import { type CommentIdentity, type CommentSource, commentsOf, isCommentPath } from "../backends/comment.js";
import { UserFacingError } from "../core/errors.js";
import { userGitOutput } from "../git/user-git.js";
import type { PushContext, PushReply } from "./push-context.js";
import { type DiffEntry, type Plan, type PlanInput, planPush } from "./push-plan.js";
import { planComments } from "./push-plan-comments.js";

/**
 * The name the user gives for comments: `git config svc.author`, else the email git itself would write as the
 * commit's author (`git var GIT_AUTHOR_IDENT`: `GIT_AUTHOR_EMAIL`, `user.email`, `EMAIL`, … as git reads them,
 * so an agent that commits with its identity in the environment comments with it too).
 */
async function configuredAuthor(): Promise<string | undefined> {
  const author = (await userGitOutput(["config", "svc.author"]))?.trim();
  if (author) return author;
  const ident = await userGitOutput(["var", "GIT_AUTHOR_IDENT"]);
  return /<([^<>\n]+)>/.exec(ident ?? "")?.[1]?.trim() || undefined;
}

/**
 * Who the user is, as comments name authors: asked of the backend once and kept in the cache, with what
 * the git config said when it was asked (the sim's answer is that name, so a changed `svc.author` asks again).
 */
async function whoAmI(context: PushContext, source: CommentSource): Promise<CommentIdentity> {
  const configured = await configuredAuthor();
  const kept = context.cache.db.commentIdentity();
  if (kept !== undefined) {
    const known = JSON.parse(kept) as { configured?: string; id: string; author: string };
    if (known.configured === configured) return { id: known.id, author: known.author };
  }
  const me = await source.whoAmI(configured);
  context.cache.db.exclusive(() =>
    context.cache.db.setCommentIdentity(JSON.stringify({ configured, ...me })),
  );
  return me;
}

/**
 * The plan of a push: its record files by the record planner, its comment files (where the backend has
 * comments) by the comment planner, with who pushes (for the context of the writes); or the refusal when
 * the push has comment files and who pushes cannot be told.
 */
export async function planWithComments(
  context: PushContext,
  input: PlanInput,
  mergeBase: string,
): Promise<{ plan: Plan; context: PushContext } | PushReply> {
  const comments = commentsOf(context.backend);
  const commentEntries: DiffEntry[] = comments
    ? input.entries.filter((entry) => isCommentPath(entry.path))
    : [];
  if (!comments || commentEntries.length === 0) return { plan: planPush(input), context };
  let me: CommentIdentity;
  try {
    me = await whoAmI(context, comments.source);
  } catch (error) {
    if (!(error instanceof UserFacingError)) throw error;
    context.log(`svc: ${error.message}; nothing was written`);
    return {
      ok: false,
      reason: "who you are is not known for the comments (see above); nothing was written",
    };
  }
  const records = planPush({
    ...input,
    entries: input.entries.filter((entry) => !isCommentPath(entry.path)),
  });
  const planned = planComments({
    ...input,
    schema: comments.schema,
    entries: commentEntries,
    allEntries: input.entries,
    recordFolder: context.backend.schema.folder,
    recordAt: (path) => context.cache.db.keyAt(path),
    me,
    restoreFrom: mergeBase,
  });
  const plan: Plan = {
    writes: [...records.writes, ...planned.writes],
    problems: [...records.problems, ...planned.problems],
    ignoredEdits: [...records.ignoredEdits, ...planned.ignoredEdits],
  };
  return { plan, context: { ...context, me } };
}
