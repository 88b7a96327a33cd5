/**
 * The wiki's wire shapes (Confluence Cloud REST API v2). Answers from the model types `confluence.js`
 * (version 3, package-lock.json) generates from Atlassian's description; type-only, so neither it nor zod
 * reaches the bundle (`verbatimModuleSyntax` keeps `import type` out of the emitted JavaScript).
 *
 * Two departures, written down in fixtures/vendor/SHAPES.md: confluence.js types the description's
 * date-time strings as `Date` (its zod schemas coerce them; on the wire they are strings), so `WirePage`,
 * `WireFooterComment` and `WireCommentVersion` put the strings back; and it types the page write bodies as
 * `Record<string, any>`, so the two request bodies svc sends are written here from the description
 * ("Confluence Cloud REST API v2" 2.0.0: `createPage`, `updatePage`). The comment write bodies narrow
 * confluence.js's models to what svc sends; the calling user comes from the v1 models (`confluence.js/v1`).
 */
import type { User as V1User } from "confluence.js/v1";
import type {
  BulkUserLookup,
  CommentBodyWrite,
  CommentVersion,
  CreateFooterCommentModel,
  FooterComment,
  Page,
  PageBodyWrite,
  UpdateFooterCommentModel,
} from "confluence.js/v2";

type PageVersion = NonNullable<Page["version"]>;

/** A page as `GET /wiki/api/v2/pages/{id}` and the listings answer it (every member optional). */
export type WirePage = Omit<Page, "createdAt" | "version"> & {
  readonly createdAt?: string;
  readonly version?: (Omit<PageVersion, "createdAt"> & { readonly createdAt?: string }) | null;
};

/** The body of `POST /wiki/api/v2/pages` ("Create page") as svc sends it. */
export interface CreatePageBody {
  readonly spaceId: string;
  readonly status?: "current" | "draft";
  readonly title?: string;
  readonly parentId?: string;
  readonly body?: PageBodyWrite;
}

/** The body of `PUT /wiki/api/v2/pages/{id}` ("Update page") as svc sends it. */
export interface UpdatePageBody {
  readonly id: string;
  readonly status: "current" | "draft";
  readonly title: string;
  readonly body: PageBodyWrite;
  readonly version: { readonly number: number; readonly message?: string };
}

// confluence.js's comment models are loose zod objects (an index signature): `Omit` would drop every named
// member, so the members svc reads are picked instead.
type VersionMembers = "number" | "message" | "minorEdit" | "authorId";

/**
 * A footer comment as `GET /footer-comments`, `GET /pages/{id}/footer-comments` (PageCommentModel: the same
 * members, fewer of them) and `GET|POST|PUT /footer-comments/{id}` answer it (every member optional).
 */
export type WireFooterComment = Pick<
  FooterComment,
  | "id"
  | "status"
  | "title"
  | "blogPostId"
  | "pageId"
  | "attachmentId"
  | "customContentId"
  | "parentCommentId"
  | "body"
  | "_links"
> & {
  readonly version?:
    | (Pick<NonNullable<FooterComment["version"]>, VersionMembers> & { readonly createdAt?: string })
    | null;
};

/** One entry of `GET /footer-comments/{id}/versions`. */
export type WireCommentVersion = Pick<CommentVersion, VersionMembers> & { readonly createdAt?: string };

/** The body of `POST /wiki/api/v2/footer-comments` ("Create footer comment") as svc sends it: on a page. */
export interface CreateFooterCommentBody extends Pick<CreateFooterCommentModel, "pageId"> {
  readonly pageId: string;
  readonly body: CommentBodyWrite;
}

/** The body of `PUT /wiki/api/v2/footer-comments/{comment-id}` ("Update footer comment") as svc sends it. */
export interface UpdateFooterCommentBody extends Pick<UpdateFooterCommentModel, "version"> {
  readonly version: { readonly number: number; readonly message?: string };
  readonly body: CommentBodyWrite;
}

/** The body of `POST /wiki/api/v2/users-bulk` ("Create bulk user lookup using ids"): 1 to 250 ids. */
export interface BulkUsersBody {
  readonly accountIds: readonly string[];
}

/** The answer of `POST /wiki/api/v2/users-bulk`. */
export type WireUsers = BulkUserLookup;

/** The answer of v1 `GET /wiki/rest/api/user/current` (v2 has no operation for the calling user). */
export type WireCurrentUser = Pick<V1User, "accountId" | "displayName" | "type">;
