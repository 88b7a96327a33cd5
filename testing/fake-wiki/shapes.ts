/**
 * The fake wiki's JSON, as the v2 description has it: SpaceBulk, PageBulk and PageSingle, FooterCommentModel
 * and PageCommentModel, User, and a listing's `{results, _links}` with its `Link` header. `_links.base` is whatever the fake was told to send (by default
 * the hostile base server: testing/fake-wiki/hostile.ts).
 */
import { type Comment, currentVersion } from "./comments.js";
import type { Answer } from "./http.js";
import { notModelled, oneOf } from "./http.js";
import { type CursorPosition, nextUrl } from "./pagination.js";
import type { Page, Space, WikiStore } from "./store.js";
import { ACCOUNT_ID } from "./vendor-data.js";

function titleSlug(title: string): string {
  return encodeURIComponent(title).replace(/%20/g, "+");
}

/** The vendor's tiny links encode the content id little-endian in base64url. */
function tinyLink(id: string): string {
  let value = BigInt(id);
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.push(Number(value & 0xffn));
    value >>= 8n;
  }
  return `/x/${Buffer.from(bytes).toString("base64url")}`;
}

export class Shapes {
  constructor(
    private readonly store: WikiStore,
    readonly linksBase: string,
  ) {}

  /**
   * SpaceBulk. `homepageId`, `description` and `icon` are not nullable in the description: a member with
   * nothing to say is left out (the description only when `description-format` asks for it, the icon only
   * with `include-icon=true`), never sent as null.
   */
  space(space: Space, params: URLSearchParams): Record<string, unknown> {
    const descriptionFormat = params.get("description-format");
    if (descriptionFormat !== null) oneOf(descriptionFormat, ["plain", "view"], "description-format");
    return {
      id: space.id,
      key: space.key,
      name: space.name,
      type: space.type,
      status: space.status,
      authorId: ACCOUNT_ID,
      createdAt: space.createdAt,
      ...(space.homepageId === null ? {} : { homepageId: space.homepageId }),
      ...(descriptionFormat === "plain"
        ? { description: { plain: { representation: "plain", value: space.description } } }
        : descriptionFormat === "view"
          ? { description: { view: { representation: "view", value: `<p>${space.description}</p>` } } }
          : {}),
      ...(params.get("include-icon") === "true"
        ? {
            icon: {
              path: `/wiki/aa-avatar/space/${space.key}`,
              apiDownloadLink: `/wiki/download/space/${space.key}`,
            },
          }
        : {}),
      spaceOwnerId: ACCOUNT_ID,
      currentActiveAlias: space.alias,
      _links: { webui: `/spaces/${space.alias}` },
    };
  }

  /** PageBulk, or PageSingle (`single`: with `_links.base`). Only storage bodies are kept. */
  page(page: Page, bodyFormat: string | null, single: boolean): Record<string, unknown> {
    const space = this.store.spaceById(page.spaceId);
    let body: Record<string, unknown> = {};
    if (bodyFormat === "storage") body = { storage: { representation: "storage", value: page.body } };
    else if (bodyFormat !== null)
      notModelled(`body-format=${bodyFormat}: the fake keeps storage bodies only`);
    const links: Record<string, string> = {
      editui: `/pages/resumedraft.action?draftId=${page.id}`,
      webui: `/spaces/${space?.alias ?? ""}/pages/${page.id}/${titleSlug(page.title)}`,
      tinyui: tinyLink(page.id),
    };
    if (single) links.base = this.linksBase;
    return {
      parentType: page.parentId === null ? null : "page",
      parentId: page.parentId,
      ownerId: page.ownerId,
      lastOwnerId: null,
      createdAt: page.createdAt,
      authorId: page.authorId,
      position: page.position,
      version: { ...page.version },
      body,
      status: page.status,
      title: page.title,
      spaceId: page.spaceId,
      id: page.id,
      _links: links,
    };
  }

  /**
   * FooterCommentModel (or PageCommentModel, which has the same members but fewer), with `_links.base` when
   * `single`. The body only when `bodyFormat` asks for it, and only storage bodies are kept.
   */
  comment(comment: Comment, bodyFormat: string | null, single: boolean): Record<string, unknown> {
    const page = this.store.pages.get(comment.pageId);
    const space = page ? this.store.spaceById(page.spaceId) : undefined;
    let body: Record<string, unknown> = {};
    if (bodyFormat === "storage") body = { storage: { representation: "storage", value: comment.body } };
    else if (bodyFormat !== null)
      notModelled(`body-format=${bodyFormat}: the fake keeps storage bodies only`);
    const links: Record<string, string> = {
      webui: `/spaces/${space?.alias ?? ""}/pages/${comment.pageId}/${titleSlug(page?.title ?? "")}?focusedCommentId=${comment.id}`,
    };
    if (single) links.base = this.linksBase;
    return {
      id: comment.id,
      status: "current",
      title: `Re: ${page?.title ?? ""}`,
      pageId: comment.pageId,
      version: { ...currentVersion(comment) },
      body,
      _links: links,
    };
  }

  /** User (v2, `POST /users-bulk`). */
  user(accountId: string, displayName: string): Record<string, unknown> {
    return {
      accountId,
      accountType: "atlassian",
      accountStatus: "active",
      displayName,
      publicName: displayName,
      email: "",
      isExternalCollaborator: false,
      profilePicture: { path: "/wiki/aa-avatar/default.png", isDefault: true },
    };
  }

  /** One result page; `_links.next` and the `Link` header only when there is a next one. */
  listing(url: URL, results: unknown[], next: CursorPosition | undefined): Answer {
    const links: Record<string, string> = {};
    const headers: Record<string, string> = {};
    if (next) {
      links.next = nextUrl(url, next);
      headers.link = `<${links.next}>; rel="next", <${this.linksBase}>; rel="base"`;
    }
    links.base = this.linksBase;
    return { status: 200, headers, body: { results, _links: links } };
  }
}
