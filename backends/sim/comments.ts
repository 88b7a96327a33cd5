/**
 * The simulator's comments (its extension of Document 1, docs/sim.md, issue 34): `GET
 * /projects/<p>/comments` (every live comment, one JSON array read like the issue listing, `since`
 * inclusive, `X-Svc-Live-Count`), `POST /projects/<p>/issues/<id>/comments`, `PATCH` and `DELETE
 * /projects/<p>/comments/<cid>` with `If-Match: <version>`. Everything the server sends is checked before it
 * becomes a `ServerComment`.
 *
 * Who "you" are: the simulator has no accounts; a comment's `author` is the name svc sends with it, `git
 * config svc.author` if set, else the email git would write as the commit's author (`git var
 * GIT_AUTHOR_IDENT`: `GIT_AUTHOR_EMAIL`, `user.email`, …) in the repository being pushed
 * (helper/push-comments.ts reads them), and a comment whose `author` differs is someone else's.
 */
import { isObject, RFC3339 } from "../../core/checks.js";
import { excerpt, SvcError, UserFacingError } from "../../core/errors.js";
import { type HttpClient, type HttpResponse, NotJsonError } from "../../core/http.js";
import type { BaseToken } from "../backend.js";
import type {
  CommentDeleteOutcome,
  CommentIdentity,
  CommentListing,
  CommentSource,
  CommentWriteOutcome,
  ServerComment,
} from "../comment.js";
import { UnexpectedShapeError } from "../rest.js";
import { streamSimItems } from "./listing.js";

/** The simulator refuses authors longer than this (and ones with control characters). */
export const SIM_AUTHOR_MAX = 200;

/** One comment from the server, checked; the reason it is malformed otherwise. */
export function simComment(value: unknown): ServerComment | string {
  if (!isObject(value)) return "a comment must be an object";
  const { id, issue_id: issue, author, body, created_at, updated_at, version } = value;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 1)
    return `bad id ${excerpt(String(id), 30)}`;
  if (typeof issue !== "number" || !Number.isSafeInteger(issue) || issue < 1)
    return `comment ${id}: issue_id is not an issue id`;
  if (typeof author !== "string") return `comment ${id}: author is not a string`;
  if (typeof body !== "string") return `comment ${id}: body is not a string`;
  for (const [name, time] of [
    ["created_at", created_at],
    ["updated_at", updated_at],
  ] as const) {
    if (typeof time !== "string" || !RFC3339.test(time))
      return `comment ${id}: ${name} is not an RFC 3339 timestamp`;
  }
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0)
    return `comment ${id}: version is not a whole number`;
  return {
    id: String(id),
    parentKey: String(issue),
    author,
    authorId: author,
    body,
    createdAt: created_at as string,
    updatedAt: updated_at as string,
    version,
  };
}

export class SimComments implements CommentSource {
  readonly versioned = true;
  private readonly base: string;

  constructor(
    private readonly origin: string,
    private readonly project: string,
    private readonly http: HttpClient,
    private readonly description: string,
  ) {
    this.base = `${origin}/projects/${encodeURIComponent(project)}`;
  }

  listAll(): Promise<CommentListing> {
    return this.list(`${this.base}/comments`);
  }

  listChangedSince(since: string): Promise<CommentListing> {
    return this.list(`${this.base}/comments?since=${encodeURIComponent(since)}`);
  }

  /**
   * A simulator of Document 1 alone answers 404 for the comment listing of a project it has (the issue
   * listing before it found the project): it holds no comments, and the listing is empty and complete.
   */
  private async list(url: string): Promise<CommentListing> {
    try {
      return await this.listed(url);
    } catch (error) {
      if (error instanceof SvcError && error.data.status === 404) return { comments: [], complete: true };
      throw error;
    }
  }

  private async listed(url: string): Promise<CommentListing> {
    const comments: ServerComment[] = [];
    const said: { liveCount?: number } = {};
    for await (const batch of streamSimItems<ServerComment>({
      http: this.http,
      origin: this.origin,
      url,
      description: this.description,
      noun: "comment",
      listing: `listing the comments of sim project ${this.project}`,
      convert: simComment,
      idOf: (comment) => comment.id,
      refusal: (response) => this.failure("listing comments", response),
      said,
    })) {
      comments.push(...batch);
    }
    return { comments, complete: true, ...said };
  }

  async create(parentKey: string, body: string, author: string): Promise<ServerComment> {
    const what = `commenting on issue ${parentKey}`;
    const response = await this.http.request({
      method: "POST",
      url: `${this.base}/issues/${encodeURIComponent(parentKey)}/comments`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body, author }),
    });
    if (response.status !== 201) throw this.failure(what, response);
    return this.parse(what, response);
  }

  async update(id: string, body: string, base: BaseToken): Promise<CommentWriteOutcome> {
    const what = `updating comment ${id}`;
    const response = await this.http.request({
      method: "PATCH",
      url: `${this.base}/comments/${encodeURIComponent(id)}`,
      headers: { "content-type": "application/json", ...ifMatch(base) },
      body: JSON.stringify({ body }),
    });
    if (response.status === 200) return { kind: "ok", comment: this.parse(what, response) };
    if (response.status === 409) return { kind: "conflict", current: conflictVersion(response.body) };
    if (response.status === 404) return { kind: "gone" };
    throw this.failure(what, response);
  }

  async remove(id: string, base: BaseToken): Promise<CommentDeleteOutcome> {
    const response = await this.http.request({
      method: "DELETE",
      url: `${this.base}/comments/${encodeURIComponent(id)}`,
      headers: ifMatch(base),
    });
    // Only the simulator's own answer (204, no body) says the comment is gone, as for issues.
    if (response.status === 204) return { kind: "ok" };
    if (response.status === 409) return { kind: "conflict", current: conflictVersion(response.body) };
    if (response.status === 404) return { kind: "gone" };
    throw this.failure(`deleting comment ${id}`, response);
  }

  /** The simulator knows no users: the name the user's git config gives is who they are. */
  async whoAmI(configured: string | undefined): Promise<CommentIdentity> {
    const name = configured?.trim() ?? "";
    if (name === "") {
      throw new UserFacingError(
        "SVC_CONFIG",
        "the simulator records the author svc names with each comment, and neither git config svc.author nor an author email git would commit with is set; run: git config svc.author you@example.com",
      );
    }
    return { id: name, author: name };
  }

  private parse(what: string, response: HttpResponse): ServerComment {
    let value: unknown;
    try {
      value = JSON.parse(response.body.toString("utf8"));
    } catch {
      throw new NotJsonError(`${this.description}: ${what}`, response.status, response.body);
    }
    const comment = simComment(value);
    if (typeof comment === "string")
      throw new UnexpectedShapeError(
        `${this.description}: ${what} answered ${response.status} with a malformed comment (${comment})`,
        response.status,
      );
    return comment;
  }

  private failure(what: string, response: HttpResponse): SvcError {
    return new SvcError(
      "SVC_BACKEND",
      `${this.description}: ${what} answered ${response.status}: ${excerpt(response.body.toString("utf8"), 300)}`,
      { data: { status: response.status } },
    );
  }
}

function ifMatch(base: BaseToken): Record<string, string> {
  return base.version === null ? {} : { "if-match": `"${base.version}"` };
}

/** The current version a 409 names (the comment in the envelope, or its `current`), as text for messages. */
function conflictVersion(body: Buffer): string {
  try {
    const value = JSON.parse(body.toString("utf8")) as { current?: unknown };
    const current = value.current;
    if (typeof current === "number") return `version ${current}`;
    if (isObject(current) && typeof current.version === "number") return `version ${current.version}`;
  } catch {
    // not JSON: say no more than that it changed
  }
  return "a newer version";
}
