/**
 * The fake wiki's state: spaces, pages (current, archived or in the trash) and their labels, with ids and a
 * strictly increasing clock of its own. Everything the handlers and the test helpers change goes through
 * `WikiStore`; `readablePage` and `guardSpace` are where a request is refused a page it may not read.
 */
import { HttpFailure } from "../fake-server.js";
import { CommentStore } from "./comments.js";
import { fail, vendorError } from "./http.js";
import { TRICKY_BODIES, TRICKY_TITLES } from "./seed-data.js";
import type { FakeWikiPage, FakeWikiSpace, FakeWikiSpaceSpec, FakeWikiVersion, PageStatus } from "./types.js";
import { ACCOUNT_ID, SEED_EPOCH } from "./vendor-data.js";

/** A space as the store keeps it: a homepage may be added after it is made. */
export interface Space extends Omit<FakeWikiSpace, "homepageId"> {
  homepageId: string | null;
}

export interface Page {
  readonly id: string;
  status: PageStatus;
  title: string;
  readonly spaceId: string;
  parentId: string | null;
  position: number | null;
  readonly authorId: string;
  readonly ownerId: string;
  readonly createdAt: string;
  version: FakeWikiVersion;
  body: string;
}

interface NewPage {
  readonly title: string;
  readonly body: string;
  readonly parentId: string | null;
  readonly createdAt: string;
  readonly version?: number;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

export const copyPage = (page: Page): FakeWikiPage => ({
  ...page,
  parentType: page.parentId === null ? null : "page",
  lastOwnerId: null,
  version: { ...page.version },
});

export class WikiStore {
  readonly spaces: Space[] = [];
  readonly pages = new Map<string, Page>();
  /** Footer comments and the accounts that write them (comments.ts). */
  readonly comments: CommentStore;
  /** Page id → label names (global prefix); the v2 API reads them, only the v1 API adds them. */
  private readonly pageLabels = new Map<string, string[]>();
  private nextLabelId = 9000;
  private readonly labelIds = new Map<string, number>();
  private nextPageId: number;
  private nextSpaceId = 98_305;
  private seeded = 0;
  private lastStamp = 0;

  constructor(
    private readonly clock: () => number,
    firstPageId: number,
    /** The status for pages of a `denied` space (403 as Document 3 says, or the description's 404). */
    private readonly deniedStatus: 403 | 404,
    firstCommentId: number,
  ) {
    this.nextPageId = firstPageId;
    this.comments = new CommentStore(firstCommentId);
  }

  /** A strictly increasing clock, so two changes in one millisecond still order. */
  stamp(): string {
    this.lastStamp = Math.max(this.clock(), this.lastStamp + 1);
    return rfc3339(this.lastStamp);
  }

  findSpace(keyOrAlias: string): Space {
    const space =
      this.spaces.find((s) => s.key === keyOrAlias) ?? this.spaces.find((s) => s.alias === keyOrAlias);
    if (!space) throw new Error(`the fake wiki has no space ${JSON.stringify(keyOrAlias)}`);
    return space;
  }

  spaceById(id: string): Space | undefined {
    return this.spaces.find((s) => s.id === id);
  }

  /** A space as its spec says, with its homepage (version 1) when it asks for one. */
  addSpace(spec: FakeWikiSpaceSpec): void {
    if (this.spaces.some((s) => s.key === spec.key || s.alias === (spec.alias ?? spec.key))) {
      throw new Error(`the fake wiki got space ${spec.key} twice`);
    }
    const space: Space = {
      id: String(this.nextSpaceId++),
      key: spec.key,
      alias: spec.alias ?? spec.key,
      name: spec.name ?? `${spec.key} space`,
      type: spec.type ?? "global",
      status: spec.status ?? "current",
      description: spec.description ?? "",
      homepageId: null,
      denied: spec.denied ?? false,
      createdAt: rfc3339(SEED_EPOCH - 86_400_000),
    };
    this.spaces.push(space);
    if (spec.homepage) {
      space.homepageId = this.insertPage(space, {
        title: `${space.name} Home`,
        body: `<p>Welcome to ${space.name}.</p>`,
        parentId: null,
        createdAt: space.createdAt,
      }).id;
    }
  }

  siblingsCount(spaceId: string, parentId: string | null): number {
    let count = 0;
    for (const page of this.pages.values()) {
      if (page.spaceId === spaceId && page.parentId === parentId && page.status !== "trashed") count++;
    }
    return count;
  }

  titleTaken(spaceId: string, title: string, exceptId?: string): boolean {
    for (const page of this.pages.values()) {
      if (
        page.spaceId === spaceId &&
        page.title === title &&
        page.status !== "trashed" &&
        page.id !== exceptId
      ) {
        return true;
      }
    }
    return false;
  }

  insertPage(space: Space, fields: NewPage): Page {
    const id = String(this.nextPageId++);
    const page: Page = {
      id,
      status: "current",
      title: fields.title,
      spaceId: space.id,
      parentId: fields.parentId,
      position: this.siblingsCount(space.id, fields.parentId),
      authorId: ACCOUNT_ID,
      ownerId: ACCOUNT_ID,
      createdAt: fields.createdAt,
      version: {
        number: fields.version ?? 1,
        createdAt: fields.createdAt,
        message: "",
        minorEdit: false,
        authorId: ACCOUNT_ID,
      },
      body: fields.body,
    };
    this.pages.set(id, page);
    return page;
  }

  /** Creates `count` current pages with tricky storage bodies; every tenth a root, the nine after it its children. */
  seedPages(spaceKey: string, count: number): string[] {
    const space = this.findSpace(spaceKey);
    const ids: string[] = [];
    let groupParent: string | null = space.homepageId;
    for (let i = 0; i < count; i++) {
      const seq = this.seeded++;
      const n = String(seq + 1).padStart(4, "0");
      const titleOf = TRICKY_TITLES[seq % TRICKY_TITLES.length] as (n: string) => string;
      const bodyOf = TRICKY_BODIES[seq % TRICKY_BODIES.length] as (n: number) => string;
      // Every tenth page is a root; the nine after it are its children.
      const parentId = i % 10 === 0 ? space.homepageId : groupParent;
      const createdMs = SEED_EPOCH + seq * 61_001;
      const versionNumber = 1 + (seq % 3);
      const page = this.insertPage(space, {
        title: titleOf(n),
        body: bodyOf(seq + 1),
        parentId,
        createdAt: rfc3339(createdMs),
        version: versionNumber,
      });
      page.version = { ...page.version, createdAt: rfc3339(createdMs + (versionNumber - 1) * 3_600_000) };
      if (i % 10 === 0) groupParent = page.id;
      ids.push(page.id);
    }
    return ids;
  }

  /** The page's next version, stamped now. */
  nextVersion(page: Page, message: string): FakeWikiVersion {
    return {
      number: page.version.number + 1,
      createdAt: this.stamp(),
      message,
      minorEdit: false,
      authorId: ACCOUNT_ID,
    };
  }

  /**
   * ASSUMPTION: moving a page to the trash (or archiving it) makes no version, so its modified date stays its
   * last edit's; the reference does not say. (The harder case for a client: a page trashed just now can sort
   * after pages edited later.)
   */
  trash(page: Page): void {
    page.status = "trashed";
    // ASSUMPTION: children move up to the trashed page's parent (versions unchanged), as deleting a parent
    // does in the product; the reference does not say.
    for (const child of this.pages.values()) {
      if (child.parentId === page.id) child.parentId = page.parentId;
    }
  }

  labelJson(name: string): { id: string; name: string; prefix: string } {
    if (!this.labelIds.has(name)) this.labelIds.set(name, this.nextLabelId++);
    return { id: String(this.labelIds.get(name)), name, prefix: "global" };
  }

  addLabel(pageId: string, name: string): void {
    const names = this.pageLabels.get(pageId) ?? [];
    if (!names.includes(name)) names.push(name);
    this.pageLabels.set(pageId, names);
  }

  /** The page's label names, in the order they were added. */
  labelsOf(pageId: string): readonly string[] {
    return this.pageLabels.get(pageId) ?? [];
  }

  /** For the test helpers: an unknown id is the test's bug. */
  pageOrThrow(id: string): Page {
    const page = this.pages.get(id);
    if (!page) throw new Error(`the fake wiki has no page ${id}`);
    return page;
  }

  /** A page a request may read: in one of `statuses`, in a space the account may read; else 404 (or 403). */
  readablePage(id: string, statuses: readonly string[]): Page {
    const page = this.pages.get(id);
    if (!page || !statuses.includes(page.status)) fail(404, "NOT_FOUND", "Not Found");
    this.guardSpace(this.spaceById(page.spaceId));
    return page;
  }

  /** The space, when the account may read its pages; else 404 (or 403 for a denied space). */
  guardSpace(space: Space | undefined): Space {
    if (!space) fail(404, "NOT_FOUND", "Not Found");
    if (space.denied) {
      if (this.deniedStatus === 404) fail(404, "NOT_FOUND", "Not Found");
      throw new HttpFailure({
        ...vendorError(403, "FORBIDDEN", "You do not have permission to view or edit content in this space"),
        // The test chose Document 3's status over the description's (which documents 404 here).
        deliberate:
          "a denied space answering 403, as Document 3 says (deniedStatus: 404 is the description's)",
      });
    }
    return space;
  }
}
